"""torch.nn.functional losses: torch's argument handling around one table op per loss."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._core import dtype as D
from ..._core.tensor import Tensor
from . import loss as L
from . import layers as N
from ..registry import expose
from .reduction import resolve


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). This will "
            "likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted(errors: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    w = errors * weight
    if reduction == "none":
        return w
    if reduction == "sum":
        return w.sum()
    if reduction == "mean":
        return w.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@expose("nn.functional")
def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:  # fmt: skip
    _size_warning(input, target)
    reduction = resolve(size_average, reduce, reduction)
    if weight is not None:
        return _weighted(L._mse_loss(input, target, "none"), weight, input, reduction)
    return L._mse_loss(input, target, reduction)


@expose("nn.functional")
def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:  # fmt: skip
    _size_warning(input, target)
    reduction = resolve(size_average, reduce, reduction)
    if reduction == "mean" and isinstance(input, Tensor) and not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {D.cpp_name(input.dtype)}"
        )
    if weight is not None:
        return _weighted(L._l1_loss(input, target, "none"), weight, input, reduction)
    return L._l1_loss(input, target, reduction)


@expose("nn.functional")
def smooth_l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:  # fmt: skip
    _size_warning(input, target)
    reduction = resolve(size_average, reduce, reduction)
    if beta == 0.0:
        return L._l1_loss(input, target, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return L._smooth_l1_loss(input, target, reduction, float(beta))


@expose("nn.functional")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:  # fmt: skip
    _size_warning(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        return _weighted(L._huber_loss(input, target, "none", float(delta)), weight, input, reduction)
    return L._huber_loss(input, target, resolve(None, None, reduction), float(delta))


@expose("nn.functional")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
             ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    return L._nll_loss(input, target, weight, reduction, int(ignore_index))


@expose("nn.functional")
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average: bool | None = None,
                  ignore_index: int = -100, reduce: bool | None = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        # torch: the log_softmax inside names its kernel (the "lastdim" one when classes are the last dim)
        kernel = "log_softmax_lastdim_kernel_impl" if input.dim() <= 2 else "log_softmax_kernel_impl"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{D.cpp_name(input.dtype)}\'')
    return L._cross_entropy(input, target, weight, reduction, int(ignore_index), float(label_smoothing))


@expose("nn.functional")
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Tensor | None = None,
                         weight: Tensor | None = None, reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:  # fmt: skip
    """torch.nn.functional.linear_cross_entropy: ``cross_entropy(linear(input, linear_weight, linear_bias), target)``
    (torch's reference path). torch's chunked kernels (``options``) are not provided."""
    if options is not None:
        raise NotImplementedError("torchlike: linear_cross_entropy's chunked path (options=) is not supported yet; "
                                  "pass options=None")  # fmt: skip
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires batched input, "
            f"(N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*batch, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = int(np.prod((classes, *out_features)))
        linear_weight = linear_weight.reshape(rows, in_features)
        linear_bias = None if linear_bias is None else linear_bias.reshape(rows)
    logits = N._linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)  # fmt: skip


@expose("nn.functional")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        weight = weight.expand(tuple(np.broadcast_shapes(tuple(target.size()), tuple(weight.size()))))
    return L._binary_cross_entropy(input, target, weight, reduction)


@expose("nn.functional")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return L._bce_with_logits(input, target, weight, pos_weight, reduction)


@expose("nn.functional")
def kl_div(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:  # fmt: skip
    if size_average is not None or reduce is not None:
        red = resolve(size_average, reduce, reduction)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size.'batchmean' "
                "divides only by the batch size, and aligns with the KL div math definition.'mean' will be changed to "
                "behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        red = "batchmean" if reduction == "batchmean" else resolve(None, None, reduction)
    return L._kl_div(input, target, red, bool(log_target))


@expose("nn.functional")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    if size_average is not None or reduce is not None:
        reduction = resolve(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return L._poisson_nll_loss(input, target, reduction, bool(log_input), bool(full), float(eps))


@expose("nn.functional")
def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    from .. import creation

    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * creation.ones_like(input)
    else:
        from .layers import host_values

        v = host_values(var)
        if v is not None and (v < 0).any():
            raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return L._gaussian_nll_loss(input, target, var, reduction, bool(full), float(eps))


@expose("nn.functional")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None, reduce: bool | None = None,
                     reduction: str = "mean") -> Tensor:  # fmt: skip
    return L._soft_margin_loss(input, target, resolve(size_average, reduce, reduction))


@expose("nn.functional")
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:  # fmt: skip
    if size_average is not None or reduce is not None:
        reduction = resolve(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return L._multilabel_soft_margin_loss(input, target, weight, reduction)


@expose("nn.functional")
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if input.dim() > 2:
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}"
        )
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    return L._multilabel_margin_loss(input, target, reduction)


def _broadcast_check(a: tuple, b: tuple) -> None:
    """torch's broadcast error for shapes ``a`` and ``b`` (right-aligned)."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")  # fmt: skip


@expose("nn.functional")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: bool | None = None, reduce: bool | None = None,
                          reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if target.dim() != input1.dim() - 1 or input2.dim() != input1.dim():
        raise RuntimeError(
            f"{input1.dim() - 1}D target tensor expects {input1.dim()}D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    _broadcast_check(tuple(target.shape), tuple(input1.shape[:-1]))  # torch: where(target == 1, ...) meets the sums
    # torch: the target only selects branches, so it gets no gradient (None)
    return L._cosine_embedding_loss(input1, input2, target.detach(), float(margin), reduction)


@expose("nn.functional")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
            f"{input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return L._margin_ranking_loss(input1, input2, target, float(margin), reduction)


@expose("nn.functional")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average: bool | None = None,
                         reduce: bool | None = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    return L._hinge_embedding_loss(input, target.detach(), float(margin), reduction)


@expose("nn.functional")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                      size_average: bool | None = None, reduce: bool | None = None,
                      reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    return L._multi_margin_loss(input, target, weight, int(p), float(margin), reduction)


@expose("nn.functional")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:  # fmt: skip
    reduction = resolve(size_average, reduce, reduction)
    a, pos, neg = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pos == neg):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but "
            f"got: anchor {a}D, positive {pos}D, and negative {neg}D inputs"
        )
    return L._triplet_margin_loss(
        anchor, positive, negative, float(margin), float(p), float(eps), bool(swap), reduction
    )


@expose("nn.functional")
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:  # fmt: skip
    from . import loss as nn_loss

    if margin <= 0:
        raise ValueError(
            f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
        )
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dist = distance_function if distance_function is not None else nn_loss.pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        from .. import pointwise

        d_neg = pointwise.minimum(d_neg, dist(positive, negative))
    loss = (margin + d_pos - d_neg).clamp_min(0)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def _lengths(x: Any) -> Tensor:
    from .. import creation

    if isinstance(x, Tensor):
        return x
    return creation.tensor(list(x) if isinstance(x, (list, tuple)) else [x], dtype=None)


@expose("nn.functional")
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:  # fmt: skip
    from .. import creation

    reduction = resolve(None, None, reduction)
    batched = log_probs.dim() == 3
    n = log_probs.shape[1] if batched else 1
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    tlv = np.asarray(tl._data()).reshape(-1)
    if il.numel() != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.numel() != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if targets.dim() == 1 and batched:  # concatenated targets: pad to (N, S)
        t = np.asarray(targets._data())
        s = max(int(tlv.max()) if n else 0, 1)
        padded = np.zeros((n, s), np.int64)
        pos = 0
        for i, ln in enumerate(tlv):
            padded[i, :ln] = t[pos : pos + ln]
            pos += ln
        targets = creation.tensor(padded)
    elif targets.dim() == 2 and n and int(tlv.max()) > targets.shape[1]:
        raise RuntimeError(
            f"Expected tensor to have size at least {int(tlv.max())} at dimension 1, but got size {targets.shape[1]} "
            "for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
        )
    ilv = np.asarray(il._data()).reshape(-1)
    if (ilv > log_probs.shape[0]).any():
        raise RuntimeError(
            f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value {int(ilv.max())} "
            "(while checking arguments for ctc_loss_cpu)"
        )
    return L._ctc_loss(log_probs, targets, il, tl, reduction, int(blank), bool(zero_infinity))
