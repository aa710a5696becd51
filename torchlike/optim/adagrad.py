"""torch.optim.Adagrad (lr decay, initial accumulator value)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor
from . import _math as M
from ._fused import FusedOptimizer, hyper
from .adam import check_lr_eps

__all__ = ["Adagrad"]


class Adagrad(FusedOptimizer):
    """torch.optim.Adagrad with torch's single-tensor maths; like torch, state is made at construction."""

    _state_order = ("step", "sum")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_lr_eps(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {
            "lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach, "maximize": maximize,
            "differentiable": differentiable, "fused": fused,
        }  # fmt: skip
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            self._init_states(group, self._static(group), None, group["params"])

    def _init_states(self, group: dict[str, Any], static: tuple, h: Any, params: list) -> None:
        # torch: the accumulator starts at the optimizer's *default* initial_accumulator_value
        h = np.array(hyper(self.defaults["initial_accumulator_value"]), dtype=np.float64)
        super()._init_states(group, static, h, params)

    def _group_defaults(self) -> dict[str, Any]:
        return {"foreach": None, "maximize": False, "differentiable": False, "fused": None}

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["lr_decay"], group["eps"], group["weight_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        init = h[0].astype(p.real.dtype)
        fill = jax.lax.complex(init, init) if jnp.iscomplexobj(p) else init
        return {"step": jnp.zeros((), sdt), "sum": jnp.full_like(p, fill)}

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        lr, lr_decay = h[0], h[1]
        step_t = s["step"] + 1
        return {"step": step_t, "clr": lr / (1 + (step_t.astype(jnp.float64) - 1) * lr_decay)}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd = static
        eps, weight_decay = h[2], h[3]
        if maximize:
            g = -g
        if has_wd:
            g = M.add(g, p, weight_decay)
        state_sum = M.addcmul(st["sum"], g, g, 1.0)
        std = M.add_scalar(M.sqrt(state_sum), eps)
        return M.addcdiv(p, g, std, -c["clr"]), {"step": c["step"], "sum": state_sum}
