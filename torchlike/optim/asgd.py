"""torch.optim.ASGD (averaged SGD)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core.tensor import Tensor
from . import _math as M
from ._fused import FusedOptimizer, hyper

__all__ = ["ASGD"]


class ASGD(FusedOptimizer):
    """torch.optim.ASGD with torch's single-tensor maths (its step, eta and mu live on the parameter's device)."""

    _state_order = ("step", "eta", "mu", "ax")
    _capturable_what = "params, mus, etas, and state_steps"

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {
            "lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay, "foreach": foreach,
            "maximize": maximize, "differentiable": differentiable, "capturable": capturable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _group_defaults(self) -> dict[str, Any]:
        return {"foreach": None, "maximize": False, "differentiable": False, "capturable": False}

    def _scalar_state_keys(self) -> tuple[str, ...]:
        return ("step", "eta", "mu")

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["lambd"], group["alpha"], group["t0"], group["weight_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        return {"step": jnp.zeros((), sdt), "eta": h[0].astype(sdt), "mu": jnp.ones((), sdt), "ax": jnp.zeros_like(p)}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict) -> tuple:
        maximize, has_wd = static
        lr, lambd, alpha, t0, weight_decay = h[0], h[1], h[2], h[3], h[4]
        if maximize:
            g = -g
        step_t = st["step"] + 1
        if has_wd:
            g = M.add(g, p, weight_decay)
        eta, mu, ax = st["eta"], st["mu"], st["ax"]
        eta_value = eta.astype(jnp.float64)
        p = M.mul_scalar(p, 1 - lambd * eta_value)
        p = M.add(p, g, -eta_value)
        # torch: `if mu.item() != 1: ax += (p - ax) * mu else: ax = p`
        ax = jnp.where(mu != 1, M.add(ax, M.mul(M.sub(p, ax), mu)), p)
        step = step_t.astype(jnp.float64)
        new_eta = (lr / ((1 + lambd * lr * step) ** alpha)).astype(eta.dtype)
        new_mu = (1 / jnp.maximum(1.0, step - t0)).astype(mu.dtype)
        return p, {"step": step_t, "eta": new_eta, "mu": new_mu, "ax": ax}
