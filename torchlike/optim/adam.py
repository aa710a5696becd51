"""torch.optim.Adam (amsgrad, weight decay coupled or decoupled, maximize)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import optax

from .._core.tensor import Tensor
from . import _math as M
from ._args import check_betas, check_lr_eps, check_nonnegative
from ._fused import FusedOptimizer, hyper

__all__ = ["Adam"]


class Adam(FusedOptimizer):
    """torch.optim.Adam with torch's single-tensor maths.

    ``foreach``/``fused`` are accepted and recorded (the maths is the single-tensor one);
    ``capturable=True`` raises torch's device error on CPU.
    """

    _state_order = ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")

    def __init__(
        self,
        params: Any,
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        check_lr_eps(lr, eps)
        check_betas(betas)
        check_nonnegative(weight_decay=weight_decay)
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b for b in betas)
        defaults = {
            "lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
            "maximize": maximize, "foreach": foreach, "capturable": capturable, "differentiable": differentiable,
            "fused": fused, "decoupled_weight_decay": decoupled_weight_decay,
        }  # fmt: skip
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def _group_defaults(self) -> dict[str, Any]:
        return {**super()._group_defaults(), "amsgrad": False}

    def _static(self, group: dict[str, Any]) -> tuple:
        return (group["maximize"], group["weight_decay"] != 0, group["decoupled_weight_decay"], group["amsgrad"])

    def _hyper(self, group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        return hyper(group["lr"], beta1, beta2, group["eps"], group["weight_decay"])

    @staticmethod
    def _init(static: tuple, h: Any, p: Any, sdt: Any) -> dict:
        st = {"step": jnp.zeros((), sdt), "exp_avg": jnp.zeros_like(p), "exp_avg_sq": jnp.zeros_like(p)}
        if static[3]:
            st["max_exp_avg_sq"] = jnp.zeros_like(p)
        return st

    @staticmethod
    def _prepare(static: tuple, h: Any, s: dict) -> dict:
        lr, beta1, beta2 = h[0], h[1], h[2]
        step_t = s["step"] + 1
        step = step_t.astype(jnp.float64)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        return {"step": step_t, "step_size": lr / bias_correction1, "bc2_sqrt": jnp.sqrt(bias_correction2)}

    @staticmethod
    def _update(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        maximize, has_wd, decoupled, amsgrad = static
        lr, beta1, beta2, eps, weight_decay = h[0], h[1], h[2], h[3], h[4]
        p, g, exp_avg, exp_avg_sq = M.adam_moments(p, g, st, lr, beta1, beta2, weight_decay, maximize, has_wd, decoupled)
        new = {"step": c["step"], "exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
        if amsgrad:
            v = new["max_exp_avg_sq"] = M.maximum(st["max_exp_avg_sq"], exp_avg_sq)
        else:
            v = exp_avg_sq
        denom = M.add_scalar(M.div_scalar(M.sqrt(v), c["bc2_sqrt"]), eps)
        return M.addcdiv(p, exp_avg, denom, -c["step_size"]), new

    @staticmethod
    def _optax_ok(static: tuple) -> bool:
        return not static[3]  # optax's amsgrad keeps the max of the bias-corrected moment, torch of the raw one

    @staticmethod
    def _update_optax(static: tuple, h: Any, p: Any, g: Any, st: dict, c: dict) -> tuple:
        """The update as optax's scale_by_adam (torch's eps placement: m_hat / (sqrt(v_hat) + eps)),
        with L2 weight decay as add_decayed_weights before it, or AdamW's decoupled decay on ``p``."""
        maximize, has_wd, decoupled, _ = static
        lr, beta1, beta2, eps, weight_decay = h[0], h[1], h[2], h[3], h[4]
        if maximize:
            g = -g
        if has_wd and decoupled:
            p = p * (1 - lr * weight_decay)
        chain, state = [], []
        if has_wd and not decoupled:
            chain.append(optax.add_decayed_weights(weight_decay))
            state.append(optax.EmptyState())
        count = (c["step"] - 1).astype(jnp.int32)  # optax counts completed steps
        chain += [optax.scale_by_adam(beta1, beta2, eps), optax.scale(-lr)]
        state += [optax.ScaleByAdamState(count=count, mu=st["exp_avg"], nu=st["exp_avg_sq"]), optax.EmptyState()]
        # optax raises its float hyperparameters (here program inputs, not Python floats) to the power of
        # its int32 step count, relying on JAX's standard promotion
        with jax.numpy_dtype_promotion("standard"):
            updates, new_state = optax.chain(*chain).update(g, tuple(state), p)
        adam = next(s for s in new_state if isinstance(s, optax.ScaleByAdamState))
        new = {"step": c["step"], "exp_avg": adam.mu, "exp_avg_sq": adam.nu}
        return optax.apply_updates(p, updates), new
