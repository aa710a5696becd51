"""Run a torch script or module under the import alias, the way `python script.py` would."""

from __future__ import annotations

import builtins
import importlib.machinery
import importlib.util
import io
import os
import runpy
import signal
import sys
import types
from collections.abc import Sequence

from torchlike.compat._alias import install

# A directory holding a `torch` package that installs the alias when imported. It is put on
# PYTHONPATH for the script's child processes (multiprocessing spawn/forkserver workers, subprocesses
# of the interpreter), so `import torch` there resolves to torchlike too.
SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_env_pythonpath(pythonpath: str | None) -> str:
    """PYTHONPATH for a child process of an aliased run: the shim first, then torchlike's parent."""
    parts = [p for p in (pythonpath or "").split(os.pathsep) if p and p not in (SHIM_DIR, _PACKAGE_PARENT)]
    return os.pathsep.join([SHIM_DIR, _PACKAGE_PARENT, *parts])


# Frames of these modules are the runner's, not the script's: tracebacks leave them out.
_RUNNER_MODULES = {"runpy", __name__, "torchlike._cli", "torchlike.compat._alias"}


def _without_runner_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The traceback `tb` without the frames that belong to this runner (executing the script, the
    import alias answering `import torch...`); unchanged if nothing else is left."""
    kept = []
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") not in _RUNNER_MODULES:
            kept.append(tb)
        tb = tb.tb_next
    if not kept:
        return None
    linked = None
    for entry in reversed(kept):
        linked = types.TracebackType(linked, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return linked


def _hide_runner_frames(exc: BaseException) -> None:
    """Drop runner frames from `exc` and the exceptions chained to it (`raise ... from`, context)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        trimmed = _without_runner_frames(e.__traceback__)
        if trimmed is not None:
            e.__traceback__ = trimmed
        todo += [e.__cause__, e.__context__]


def _report_uncaught(exc: BaseException) -> int:
    """Print an uncaught exception as the interpreter would and return the interpreter's exit code."""
    _hide_runner_frames(exc)
    sys.excepthook(type(exc), exc, exc.__traceback__)
    sys.stderr.flush()
    if isinstance(exc, KeyboardInterrupt):
        # python re-raises SIGINT on itself so the parent sees "killed by SIGINT".
        sys.stdout.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    return 1


def _prepare(argv0: str, args: Sequence[str]) -> None:
    install()
    if os.environ.get("TORCHLIKE_TRACE"):  # `compare --trace` runs this process: log its ops
        from torchlike.compat._tracer import install_from_env

        install_from_env()
    os.environ["PYTHONPATH"] = child_env_pythonpath(os.environ.get("PYTHONPATH"))
    sys.argv = [argv0, *args]


def run_script(path: str, args: Sequence[str] = ()) -> int:
    """Run `path` as `__main__` with `torch` aliased to torchlike; returns the process exit code.

    Like `python path args...`: `sys.argv`, `sys.path[0]` (the script's directory), `__name__`,
    `SystemExit` (propagates) and uncaught exceptions (traceback printed, exit code 1).
    """
    if not os.path.exists(path):
        message = f"can't open file {os.path.abspath(path)!r}: [Errno 2] No such file or directory"
        print(f"{sys.executable}: {message}", file=sys.stderr)
        return 2
    _prepare(path, args)
    script_dir = os.path.dirname(os.path.realpath(path))
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = script_dir  # `python -m torchlike` put the cwd there; `python script.py` puts this
    else:
        sys.path.insert(0, script_dir)
    _add_shim_to_path()
    try:
        if os.path.isfile(path):
            _exec_main(path)
        else:  # a directory or zip file with a __main__.py
            runpy.run_path(path, run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:  # any uncaught exception ends the script, as in python
        return _report_uncaught(exc)
    return 0


def _exec_main(path: str) -> None:
    """Execute a script file as the `__main__` module, as the interpreter does (not runpy: that sets
    `sys.argv[0]` to `__file__`, and python keeps the path as given there but makes `__file__` absolute)."""
    filename = os.path.join(os.getcwd(), path)
    with io.open_code(path) as f:
        code = compile(f.read(), filename, "exec", dont_inherit=True)
    main = types.ModuleType("__main__")
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    main.__dict__.update(
        __annotations__={},
        __builtins__=builtins,
        __file__=filename,
        __cached__=None,
    )
    # Kept after the script ends, like python's own: atexit handlers and pickling may look it up.
    sys.modules["__main__"] = main
    exec(code, main.__dict__)


def _add_shim_to_path() -> None:
    # multiprocessing's spawn/forkserver children take the parent's sys.path, not PYTHONPATH: the
    # shim must come before site-packages there. Here the alias finder answers first anyway.
    if SHIM_DIR not in sys.path:
        sys.path.insert(1, SHIM_DIR)


def run_module(module: str, args: Sequence[str] = ()) -> int:
    """Like `python -m module args...` with `torch` aliased to torchlike; returns the exit code."""
    _prepare(module, args)
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        print(f"{sys.executable}: No module named {module}", file=sys.stderr)
        return 1
    _add_shim_to_path()
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit:
        raise
    except BaseException as exc:
        return _report_uncaught(exc)
    return 0
