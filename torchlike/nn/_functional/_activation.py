"""torch.nn.functional activations and the softmax family."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor
from ..._ops import _inplace
from ..._ops import nn_activation as A
from ..._ops import pointwise as P


def _maybe_inplace(fn: Any, inplace: bool, input: Tensor, *args: Any) -> Tensor:
    if inplace:
        return _inplace(fn._op)(input, *args)
    return fn(input, *args)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A.threshold, inplace, input, threshold, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _maybe_inplace(A.threshold, True, input, threshold, value)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A.relu, inplace, input)


def relu_(input: Tensor) -> Tensor:
    return _maybe_inplace(A.relu, True, input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    return A._glu(input, dim)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(A._hardtanh, inplace, input, float(min_val), float(max_val))


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._hardtanh, inplace, input, 0.0, 6.0)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._elu, inplace, input, float(alpha))


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A.selu, inplace, input)


def selu_(input: Tensor) -> Tensor:
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A.celu, inplace, input, float(alpha))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._leaky_relu, inplace, input, float(negative_slope))


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, True)


prelu = A.prelu


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:  # fmt: skip
    if inplace:
        return A.rrelu_(input, lower, upper, training)
    return A.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    return A.rrelu_(input, lower, upper, training)


def logsigmoid(input: Tensor) -> Tensor:
    return A._log_sigmoid(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return A._gelu(input, approximate)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return A.hardshrink(input, float(lambd))


def tanhshrink(input: Tensor) -> Tensor:
    return A._tanhshrink(input)


def softsign(input: Tensor) -> Tensor:
    return A._softsign(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return A._softplus(input, float(beta), float(threshold))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    return A._softshrink(input, float(lambd))


def tanh(input: Tensor) -> Tensor:
    return P.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return P.sigmoid(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._hardsigmoid, inplace, input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._silu, inplace, input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._mish, inplace, input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(A._hardswish, inplace, input)


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return A._softmin(input, dim, dtype)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return A.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return A.log_softmax(input, dim, dtype)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """torch's gumbel_softmax: Gumbel noise from exponential_ draws of the generator, as torch draws it."""
    from ..._ops import creation

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
