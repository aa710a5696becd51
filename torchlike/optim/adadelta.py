"""torch.optim.Adadelta."""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_lr, check_nonnegative
from ._fused import FusedOptimizer, hyper, zeros_init

__all__ = ["Adadelta"]


class Adadelta(FusedOptimizer):
    """torch.optim.Adadelta with torch's single-tensor maths."""

    _state_order = ("step", "square_avg", "acc_delta")
    _capturable_xla = False

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        check_nonnegative(epsilon=eps, weight_decay=weight_decay)
        defaults = {
            "lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
            "capturable": capturable, "foreach": foreach, "differentiable": differentiable,
        }  # fmt: skip
        super().__init__(params, defaults)

    def _hyper(self, group: dict[str, Any]) -> tuple:
        return hyper(group["lr"], group["rho"], group["eps"], group["weight_decay"])

    _init = zeros_init("step", "square_avg", "acc_delta")

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd = static
        lr, rho, eps, weight_decay = h[0], h[1], h[2], h[3]
        g = M.decayed_grad(p, g, weight_decay, maximize, has_wd)
        square_avg = M.addcmul(M.mul_scalar(st["square_avg"], rho), g, g, 1 - rho)
        std = M.sqrt(M.add_scalar(square_avg, eps))
        delta = M.mul(M.div(M.sqrt(M.add_scalar(st["acc_delta"], eps)), std), g)
        acc_delta = M.addcmul(M.mul_scalar(st["acc_delta"], rho), delta, delta, 1 - rho)
        new = {"step": c["step"], "square_avg": square_avg, "acc_delta": acc_delta}
        return M.add(p, delta, -lr), new
