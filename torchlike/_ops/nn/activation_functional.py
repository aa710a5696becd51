"""torch.nn.functional activations that do more than one table op: relu6 (fixed bounds), rrelu (random
slopes), the softmax family (torch's implicit-dim warning), gumbel_softmax. The other activations are table
entries in ``torchlike._ops.nn.activation``, exposed in ``nn.functional`` by their ``namespaces``."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor
from . import activation as A
from ..registry import expose


@expose("nn.functional")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """torch's relu6: hardtanh between 0 and 6 (its backward node is HardtanhBackward0, as torch's)."""
    if inplace:
        from .. import inplace_fn  # defined after the families are imported

        return inplace_fn(A.hardtanh._op)(input, 0.0, 6.0)
    return A.hardtanh(input, 0.0, 6.0)


@expose("nn.functional")
def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:  # fmt: skip
    if inplace:
        return A.rrelu_(input, lower, upper, training)
    return A.rrelu(input, lower, upper, training)


@expose("nn.functional")
def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return A.rrelu_(input, lower, upper, training)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


@expose("nn.functional")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return A._softmin(input, dim, dtype)


@expose("nn.functional")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return A.softmax(input, dim, dtype)


@expose("nn.functional")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return A.log_softmax(input, dim, dtype)


@expose("nn.functional")
def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """torch's gumbel_softmax: Gumbel noise from exponential_ draws of the generator, as torch draws it."""
    from .. import creation

    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -creation.empty_like(logits).exponential_().log()
    gumbels = (logits + gumbels) / tau
    y_soft = A.softmax(gumbels, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
