"""torch.autocast: per-device-type mixed precision, applied by the op table.

While a region is active the registry asks ``adjust`` how to run each op: its policy category
(see _policy) picks a dtype that eligible inputs (floating, not float64) are cast to *inside* the
op's kernel, so the cast is differentiable and gradients come back in the inputs' dtypes.
"""

from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable

from .._core import device as _device
from .._core import dtype as D
from . import _policy

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]



class _ThreadState(threading.local):
    """Autocast state of the calling thread (torch keeps it per thread; a new thread starts off)."""

    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": D.bfloat16, "cuda": D.float16}
        self.cache_enabled = True
        self.active = False  # counted in _active_threads


_state = _ThreadState()
_active_threads = 0  # threads with autocast on somewhere: while 0 the op table skips the hook
_lock = threading.Lock()


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


def state_key() -> tuple:
    """What a compiled program must be specialised on."""
    st = _state
    return tuple((d, st.dtype[d]) for d in ("cpu", "cuda") if st.enabled[d])


def _sync_registry() -> None:
    global _active_threads
    from .._ops import registry

    st = _state
    now = any(st.enabled.values())
    if now != st.active:
        with _lock:
            st.active = now
            _active_threads += 1 if now else -1
            registry.autocast = _adjust if _active_threads > 0 else None


def _adjust(op: Any, device_type: str, cdt: D.dtype | None, promo: list, static: tuple) -> tuple | None:
    """(target dtype, new compute dtype) for this op under the active autocast, or None."""
    st = _state
    if not st.enabled.get(device_type):
        return None
    cat = _policy.category(op.name, device_type, static)
    if cat is None:
        return None
    if cat == "banned":
        raise RuntimeError(_policy.BANNED_MESSAGE)
    floats = [d for d, _ in promo if d.is_floating_point and d is not D.float64]
    if cat == "lower":
        target = st.dtype[device_type]
    elif cat == "fp32" or (cat == "fp32_opt" and "dtype" in op.static_names
                           and static[op.static_names.index("dtype")] is None):  # fmt: skip
        target = D.float32
    elif cat == "promote":
        if not floats:
            return None
        target = floats[0]
        for d in floats[1:]:
            target = D.promote_types(target, d)
    else:
        return None
    if cdt is not None and cdt.is_floating_point and cdt is not D.float64:
        cdt = target
    return target, cdt


_adjust.state_key = state_key  # what the op table's guarded replay compares (see registry._replay)


def get_autocast_dtype(device_type: str) -> D.dtype:
    return _state.dtype[device_type]


def set_autocast_dtype(device_type: str, dtype: D.dtype) -> None:
    _state.dtype[device_type] = dtype


def is_autocast_enabled(device_type: str | None = None) -> bool:
    return _state.enabled["cuda" if device_type is None else device_type]


def set_autocast_enabled(device_type: Any, enabled: bool | None = None) -> None:
    if enabled is None:  # torch's old one-argument form is for CUDA
        device_type, enabled = "cuda", device_type
    _state.enabled[device_type] = bool(enabled)
    _sync_registry()


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = enabled


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager
    and decorator; nestable."""

    def __init__(self, device_type: str, dtype: D.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device = device_type
        self.fast_dtype = _state.dtype[device_type] if dtype is None else dtype
        self._cache_enabled = _state.cache_enabled if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                if not _device.cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (D.bfloat16, D.float16):
                warnings.warn(
                    f"In {device_type.upper()} autocast, but the target dtype is not supported. Disabling autocast.\n"
                    f"{device_type.upper()} Autocast only supports dtypes of torch.bfloat16, torch.float16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled

    def __enter__(self) -> None:
        st = _state
        self.prev = (st.enabled[self.device], st.dtype[self.device], st.cache_enabled)
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        set_autocast_cache_enabled(self._cache_enabled)
        _sync_registry()

    def __exit__(self, *exc: Any) -> bool:
        st = _state
        st.enabled[self.device], st.dtype[self.device], cache = self.prev
        set_autocast_cache_enabled(cache)
        _sync_registry()
        return False

    def __call__(self, func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return wrapper


def custom_fwd(fwd: Callable | None = None, *, device_type: str = "cuda", cast_inputs: D.dtype | None = None) -> Any:
    """torch.amp.custom_fwd for autograd.Function.forward: optionally run it with autocast off and
    floating inputs cast to ``cast_inputs``."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        from .._core.tensor import Tensor

        def cast(x: Any) -> Any:
            return x.to(cast_inputs) if isinstance(x, Tensor) and x.is_floating_point() else x

        with autocast(device_type, enabled=False):
            return fwd(*[cast(a) for a in args], **{k: cast(v) for k, v in kwargs.items()})

    return decorate_fwd


def custom_bwd(bwd: Callable | None = None, *, device_type: str = "cuda") -> Any:
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
