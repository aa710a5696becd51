"""torch.amp.GradScaler: dynamic loss scaling with inf/nan step skipping.

The unscale-and-check over all gradients of an optimizer is one jitted call, and so is the
scale update, mirroring torch's _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

import jax
import jax.numpy as jnp

from .._core import device as _device
from .._core import tensor as T
from .._core.tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


@jax.jit
def _unscale_and_check(grads: list, inv_scale: Any) -> tuple:
    found = jnp.zeros((), jnp.float32)
    out = []
    for g in grads:
        found = jnp.maximum(found, jnp.any(~jnp.isfinite(g)).astype(jnp.float32))
        out.append((g * inv_scale.astype(g.dtype)).astype(g.dtype))
    return out, found


@jax.jit
def _update_scale(scale: Any, growth_tracker: Any, found_inf: Any, growth_factor: Any, backoff_factor: Any,
                  growth_interval: Any) -> tuple:
    # torch's _amp_update_scale_: back off on inf, grow after growth_interval clean steps.
    inf = found_inf > 0
    successful = growth_tracker + 1
    grow = successful >= growth_interval
    new_scale = jnp.where(inf, scale * backoff_factor, jnp.where(grow, scale * growth_factor, scale))
    new_tracker = jnp.where(inf, 0, jnp.where(grow, 0, successful))
    return new_scale.astype(scale.dtype), new_tracker.astype(growth_tracker.dtype)


class GradScaler:
    """torch.amp.GradScaler(device='cuda', init_scale=2**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda":
            if enabled and not _device.cuda_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.", stacklevel=2
                )
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    def _dev(self) -> Any:
        return _device.canonical(self._device)

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        from .._ops import creation

        self._scale = creation.full((), self._init_scale, dtype=_f32(), device=dev)
        self._growth_tracker = creation.full((), self._init_growth_tracker, dtype=_i32(), device=dev)

    def scale(self, outputs: Any) -> Any:
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        def apply(v: Any) -> Any:
            if isinstance(v, Tensor):
                return self.scale(v)
            if isinstance(v, (list, tuple)):
                return type(v)(apply(x) for x in v)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor, allow_fp16: bool) -> dict:
        grads_by_device: dict = defaultdict(list)
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if (not allow_fp16) and param.grad.dtype is _f16():
                    raise ValueError("Attempting to unscale FP16 gradients.")
                grads_by_device[param.grad.device].append(param.grad)
        per_device = {}
        for dev, grads in grads_by_device.items():
            new, found = _unscale_and_check([g._data() for g in grads], inv_scale._data())
            for g, a in zip(grads, new):
                g._assign(a)
            per_device[dev] = T.make(jnp.maximum(found_inf._data(), found), dev)
        return per_device

    def unscale_(self, optimizer: Any) -> None:
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = T.make(jnp.reciprocal(self._scale._data().astype(jnp.float64)).astype(jnp.float32),
                           self._scale.device)  # fmt: skip
        found_inf = T.make_on(jnp.zeros((), jnp.float32), self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf, False)
        state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer: Any, state: dict, *args: Any, **kwargs: Any) -> Any:
        if not sum(float(v.item()) for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or torch.FloatTensor "
                          "with requires_grad=False.")  # fmt: skip
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [f for s in self._per_optimizer_states.values() for f in s["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = found_infs[0]._data()
            for f in found_infs[1:]:
                found = found + f._data()
            new_scale_arr, new_tracker = _update_scale(
                _scale._data(), _growth_tracker._data(), found, self._growth_factor, self._backoff_factor,
                self._growth_interval,
            )  # fmt: skip
            _scale._assign(new_scale_arr)
            _growth_tracker._assign(new_tracker)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        if self._enabled:
            return {
                "scale": self.get_scale(),
                "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker(),
            }
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")  # fmt: skip
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        if self._enabled:
            state["_per_optimizer_states"] = {}
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)


def _f32() -> Any:
    from .._core import dtype as D

    return D.float32


def _i32() -> Any:
    from .._core import dtype as D

    return D.int32


def _f16() -> Any:
    from .._core import dtype as D

    return D.float16
