"""torch's argument checks for the optimizers' constructors, with torch's messages."""

from __future__ import annotations

from typing import Any

from .._core.tensor import Tensor


def check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_lr_eps(lr: Any, eps: Any = 0.0) -> None:
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_betas(betas: Any) -> None:
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")


def check_nonnegative(**values: Any) -> None:
    """Each value is >= 0, checked in the order given: torch's ``Invalid <name> value: <value>``."""
    for name, value in values.items():
        if not 0.0 <= value:
            raise ValueError(f"Invalid {name} value: {value}")
