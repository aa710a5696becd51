"""torch's process-wide settings: thread counts and deterministic algorithms."""

from __future__ import annotations

import os
import warnings

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads", "get_num_interop_threads",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]  # fmt: skip


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_num_threads = _cores()
_num_interop_threads: int | None = None


def set_num_threads(int: int) -> None:
    """Record the intra-op thread count.

    Differs from torch: XLA sizes its CPU thread pool when JAX starts, so the number is only
    reported back by ``get_num_threads`` (a warning says so once); set ``XLA_FLAGS`` before import instead.
    """
    global _num_threads
    if not isinstance(int, (type(1),)) or isinstance(int, bool) or int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    if int != _num_threads:
        warnings.warn(
            "torchlike: set_num_threads() is recorded, but XLA's CPU thread pool is sized when JAX starts "
            "(use XLA_FLAGS before importing torchlike to change it)",
            UserWarning,
            stacklevel=2,
        )
    _num_threads = int


def get_num_threads() -> int:
    return _num_threads


def set_num_interop_threads(int: int) -> None:
    """Record the inter-op thread count; as in torch, only once (XLA schedules its own work)."""
    global _num_interop_threads
    if _num_interop_threads is not None:
        raise RuntimeError(
            "Error: cannot set number of interop threads after parallel work has started or "
            "set_num_interop_threads called"
        )
    if not isinstance(int, (type(1),)) or isinstance(int, bool) or int <= 0:
        raise RuntimeError("Expected positive number of threads")
    _num_interop_threads = int


def get_num_interop_threads() -> int:
    return _cores() if _num_interop_threads is None else _num_interop_threads


# XLA's CPU kernels are deterministic, so torchlike has no nondeterministic op to refuse: these
# flags are kept for scripts that set and read them.
_deterministic = False
_warn_only = False


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    global _deterministic, _warn_only
    if not isinstance(mode, bool):
        raise TypeError(
            f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not {type(mode).__name__}"
        )
    if not isinstance(warn_only, bool):
        raise TypeError(
            f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not {type(warn_only).__name__}"
        )
    _deterministic, _warn_only = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _warn_only


def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    if not isinstance(debug_mode, (type(1), str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        names = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in names:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}"
            )
        debug_mode = names[debug_mode]
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode() -> int:
    if not _deterministic:
        return 0
    return 1 if _warn_only else 2
