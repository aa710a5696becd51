"""torch.optim.swa_utils: weight averaging (SWA, EMA), SWALR and update_bn.

``AveragedModel.update_parameters`` with the default SWA average is one jitted update over all
parameters (torch's CPU path: ``avg + (p - avg) / (n + 1)`` per tensor); the EMA and SWA
``multi_avg_fn`` helpers (torch's ``_foreach_lerp_``) are one jitted lerp over the list.
"""

from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy
from typing import Any, Callable, Iterable

import jax
import jax.numpy as jnp

from .._core import dtype as D
from .._core.tensor import Tensor
from .._ops import creation
from ..autograd.grad_mode import no_grad
from ..nn.modules._module import Module
from ..nn.modules._normalization import _BatchNorm
from . import _math as M
from ._fused import _ZERO
from .lr_scheduler import LRScheduler, _format_param
from .optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]  # fmt: skip


@jax.jit
def _lerp_all(avg: list, cur: list, weight: Any, zero: Any) -> list:
    with M.fence_zero(zero):
        return [M.lerp(a, c, weight) for a, c in zip(avg, cur)]


@jax.jit
def _swa_all(avg: list, cur: list, n: Any) -> list:
    """torch's CPU SWA average, ``avg + (cur - avg) / (n + 1)`` with ``n`` an int64 tensor, for every tensor
    (integer buffers divide in float32 and truncate back, as ``copy_`` does)."""
    out = []
    for a, c in zip(avg, cur):
        if jnp.iscomplexobj(a):
            out.append(a + (c - a) / (n + 1).astype(a.dtype))
        elif jnp.issubdtype(a.dtype, jnp.floating):
            out.append(M.add(a, M.div_scalar(M.sub(c, a), n + 1)))
        else:
            q = M.div_scalar((c - a).astype(jnp.float32), n + 1)
            out.append((a.astype(jnp.float32) + q).astype(a.dtype))
    return out


def _assign_all(tensors: list, arrays: list) -> None:
    for t, a in zip(tensors, arrays):
        t._assign(a)


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An exponential moving average over lists of tensors (``multi_avg_fn`` of AveragedModel)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
            new = _lerp_all(
                [p._data() for p in ema_param_list], [p._data() for p in current_param_list], 1 - decay, _ZERO
            )
            _assign_all(ema_param_list, new)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The running mean over lists of tensors (``multi_avg_fn`` of AveragedModel)."""

    @no_grad()
    def swa_update(averaged_param_list: list, current_param_list: list, num_averaged: Tensor | int) -> None:
        if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
            weight = float(1 / (num_averaged + 1))
            new = _lerp_all(
                [p._data() for p in averaged_param_list], [p._data() for p in current_param_list], weight, _ZERO
            )
            _assign_all(averaged_param_list, new)
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """An exponential moving average of one tensor (``avg_fn`` of AveragedModel)."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable:
    """The running mean of one tensor (``avg_fn`` of AveragedModel)."""

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """torch.optim.swa_utils.AveragedModel: a copy of ``model`` whose parameters are an average."""

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable | None = None,
        multi_avg_fn: Callable | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", creation.tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the average."""
        if self.use_buffers:
            self_param = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            model_param = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            self_param, model_param = list(self.parameters()), list(model.parameters())
        pairs = [(a.detach(), m.detach().to(a.device)) for a, m in zip(self_param, model_param)]
        if bool(self.n_averaged == 0):
            for a, m in pairs:
                a.copy_(m)
        elif self.avg_fn is None and self.multi_avg_fn is None:
            averaged = [a for a, _ in pairs]
            _assign_all(averaged, _swa_all([a._data() for a in averaged], [m._data() for _, m in pairs],
                                           self.n_averaged._data()))  # fmt: skip
        elif self.multi_avg_fn is not None:
            by_kind: dict = {}
            for a, m in pairs:
                by_kind.setdefault((a.device, a.dtype), []).append((a, m))
            for (device, _), group in by_kind.items():
                self.multi_avg_fn([a for a, _ in group], [m for _, m in group], self.n_averaged.to(device))
        else:
            for a, m in pairs:
                a.copy_(self.avg_fn(a, m, self.n_averaged.to(a.device)))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                b_swa.detach().copy_(b_model.detach().to(b_swa.device))
        self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the BatchNorm running statistics of ``model`` with one pass over ``loader``."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to a fixed ``swa_lr`` over ``anneal_epochs`` (cosine or linear)."""

    def __init__(
        self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10, anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:  # fmt: skip
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
