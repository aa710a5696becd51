"""multiprocessing's API with start methods that can run torchlike in the child.

A child made by ``fork`` inherits JAX's runtime without its threads: any JAX computation there
hangs. So where torch's default on Linux is ``fork``, torchlike.multiprocessing's default is
``spawn``: ``Process``, ``Queue``, ``Pool`` and the rest come from this module's own default
context, which starts children fresh. ``forkserver`` works too (its server preloads nothing, so the
children import torchlike after the fork). Asking for ``fork`` raises when a process starts, naming
the problem, instead of hanging. The standard library's ``multiprocessing`` module is left as it is.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
from multiprocessing import context as _mpc
from multiprocessing import process as _process
from typing import Any

FORK_ERROR = (
    "torchlike.multiprocessing: the 'fork' start method cannot run torchlike in the child process (JAX's runtime "
    "does not survive fork, so the child would hang). Use 'spawn' (torchlike.multiprocessing's default) or "
    "'forkserver'."
)


class _RefusedForkProcess(_mpc.ForkProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        raise RuntimeError(FORK_ERROR)


class _ForkContext(_mpc.ForkContext):
    Process = _RefusedForkProcess


class _CleanForkServerProcess(_mpc.ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        # The server must not import the main module (and with it torchlike and JAX) before forking:
        # the children import it themselves, after the fork.
        server = multiprocessing.forkserver._forkserver
        if server._forkserver_pid is None:
            server.set_forkserver_preload([])
        return _mpc.ForkServerProcess._Popen(process_obj)


class _ForkServerContext(_mpc.ForkServerContext):
    Process = _CleanForkServerProcess


_CONTEXTS: dict[str, _mpc.BaseContext] = {"spawn": _mpc.SpawnContext()}
if "fork" in multiprocessing.get_all_start_methods():
    _CONTEXTS["fork"] = _ForkContext()
if "forkserver" in multiprocessing.get_all_start_methods():
    _CONTEXTS["forkserver"] = _ForkServerContext()


class _DefaultContext(_mpc.DefaultContext):
    """multiprocessing's default context over the contexts above, with ``spawn`` as the default."""

    def get_context(self, method: str | None = None) -> Any:
        if method is None:
            if self._actual_context is None:
                self._actual_context = self._default_context
            return self._actual_context
        if method not in _CONTEXTS:
            raise ValueError(f"cannot find context for {method!r}")
        return _CONTEXTS[method]

    def get_all_start_methods(self) -> list[str]:
        return multiprocessing.get_all_start_methods()


default_context = _DefaultContext(_CONTEXTS["spawn"])


class Process(_process.BaseProcess):
    """multiprocessing.Process, started with torchlike.multiprocessing's start method."""

    _start_method = None

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        return default_context.get_context().Process._Popen(process_obj)

    @staticmethod
    def _after_fork() -> None:
        return default_context.get_context().Process._after_fork()


def api() -> dict:
    """multiprocessing's public names, with the context functions bound to this module's default context
    (exceptions, ``cpu_count``, ``current_process`` and the like as they are)."""
    names = {}
    for name in multiprocessing.__all__:
        bound = getattr(default_context, name, None)
        from_context = callable(bound) and hasattr(_mpc.BaseContext, name)
        names[name] = bound if from_context else getattr(multiprocessing, name)
    names["Process"] = Process
    names["get_all_start_methods"] = default_context.get_all_start_methods
    return names
