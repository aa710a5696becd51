"""torch.optim.Adagrad (lr decay, initial accumulator value)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_lr, check_nonnegative
from ._fused import FusedOptimizer, hyper

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
        check_lr(lr)
        check_nonnegative(lr_decay=lr_decay, weight_decay=weight_decay, initial_accumulator_value=initial_accumulator_value,
                          epsilon=eps)  # fmt: skip
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
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        state_sum = M.addcmul(st["sum"], g, g, 1.0)
        std = M.add_scalar(M.sqrt(state_sum), eps)
        return M.addcdiv(p, g, std, -c["clr"]), {"step": c["step"], "sum": state_sum}
