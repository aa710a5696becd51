"""torch.optim.SGD (momentum, dampening, nesterov, weight decay, maximize)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import optax

from .._core.tensor import Tensor
from . import _math as M
from ._fused import FusedOptimizer, hyper

__all__ = ["SGD"]


class SGD(FusedOptimizer):
    """torch.optim.SGD, with torch's single-tensor maths (``foreach``/``fused`` are accepted, same maths)."""

    _state_order = ("momentum_buffer",)
    _scalar_keys = ()

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Tensor = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
            "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
            "fused": fused,
        }  # fmt: skip
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def _group_defaults(self) -> dict[str, Any]:
        return {**super()._group_defaults(), "nesterov": False, "fused": False}

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["momentum"] != 0, group["nesterov"])

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["momentum"], group["dampening"], group["weight_decay"])

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd, has_momentum, nesterov = static
        lr, momentum, dampening, weight_decay = h[0], h[1], h[2], h[3]
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        new = {}
        if has_momentum:
            buf = st.get("momentum_buffer")
            buf = g if buf is None else M.add(M.mul_scalar(buf, momentum), g, 1 - dampening)
            new["momentum_buffer"] = buf
            g = M.add(g, buf, momentum) if nesterov else buf
        return M.add(p, g, -lr), new

    @staticmethod
    def _optax_ok(static: tuple) -> bool:
        return True

    @staticmethod
    def _update_optax(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        """The update as an optax chain: decayed weights, dampening, trace (momentum, Nesterov), scale
        by -lr. torch starts the momentum buffer at the first gradient -- optax's trace from zeros --
        and dampens the gradient only from the second step on."""
        maximize, has_wd, has_momentum, nesterov = static
        lr, momentum, dampening, weight_decay = h[0], h[1], h[2], h[3]
        if maximize:
            g = -g
        chain, state = [], []
        if has_wd:
            chain.append(optax.add_decayed_weights(weight_decay))
            state.append(optax.EmptyState())
        buf = st.get("momentum_buffer")
        if has_momentum:
            if buf is not None:
                chain.append(optax.scale(1 - dampening))
                state.append(optax.EmptyState())
            chain.append(optax.trace(decay=momentum, nesterov=nesterov))
            state.append(optax.TraceState(trace=jnp.zeros_like(p) if buf is None else buf))
        chain.append(optax.scale(-lr))
        state.append(optax.EmptyState())
        updates, new_state = optax.chain(*chain).update(g, tuple(state), p)
        new = {}
        if has_momentum:
            new["momentum_buffer"] = next(s.trace for s in new_state if isinstance(s, optax.TraceState))
        return optax.apply_updates(p, updates), new
