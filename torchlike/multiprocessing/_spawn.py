"""torch.multiprocessing.spawn / start_processes: run ``fn(i, *args)`` in ``nprocs`` processes and
raise in the parent, with the child's traceback, when one fails."""

from __future__ import annotations

import multiprocessing.connection
import os
import pickle
import signal
import tempfile
import traceback
import warnings
from typing import Any, Callable

from ._context import default_context


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process died of a signal or exited with a non-zero code."""

    __slots__ = ["exit_code"]

    def __init__(
        self, msg: str, error_index: int, error_pid: int, exit_code: int, signal_name: str | None = None
    ) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self) -> tuple:
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _run(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """The child's entry point: a raised exception's traceback goes to ``error_file`` for the parent."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent is shutting everything down
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        raise SystemExit(1) from None


class ProcessContext:
    """The processes ``start_processes`` started; ``join`` waits for them and raises for the first failure."""

    def __init__(self, processes: list, error_files: list) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """True once every process has exited cleanly, False while some still run (after ``timeout``)."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(list(self.sentinels), timeout=timeout):
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        self._stop_others(30.0 if grace_period is None else grace_period)
        raise self._error(failed)

    def _stop_others(self, grace: float) -> None:
        for p in self.processes:
            if p.is_alive():
                p.terminate()
        for p in self.processes:
            p.join(grace)
            if p.is_alive():
                p.kill()
                p.join()

    def _error(self, i: int) -> ProcessException:
        process = self.processes[i]
        path = self.error_files[i]
        if os.access(path, os.R_OK):
            with open(path, "rb") as f:
                trace = pickle.load(f)
            msg = f"\n\n-- Process {i:d} terminated with the following error:\n{trace}"
            return ProcessRaisedException(msg, i, process.pid)
        code = process.exitcode
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"<Unknown signal {-code}>"
            return ProcessExitedException(f"process {i:d} terminated with signal {name}", i, process.pid, code, name)
        return ProcessExitedException(f"process {i:d} terminated with exit code {code:d}", i, process.pid, code)


class SpawnContext(ProcessContext):
    pass


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """torch.multiprocessing.start_processes: ``fn(i, *args)`` in ``nprocs`` processes (index ``i``)."""
    ctx = default_context.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        fd, path = tempfile.mkstemp(prefix="torchlike-errorfile-", suffix=".pickle")
        os.close(fd)
        os.unlink(path)  # the child creates it only if it fails
        p = ctx.Process(target=_run, args=(fn, i, args, path), daemon=daemon)
        p.start()
        processes.append(p)
        error_files.append(path)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:  # fmt: skip
    """torch.multiprocessing.spawn: ``start_processes`` with the spawn start method."""
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\nTo use a different start_method "
            "use:\n\t\t torch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
