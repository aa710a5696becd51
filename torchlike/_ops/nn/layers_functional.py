"""torch.nn.functional: linear, convolution, pooling, normalization, dropout, embedding."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..._core import dtype as D
from ..._core.kernel_cache import LRU
from ..._core.tensor import Tensor
from . import dropout as DR
from . import layers as N
from . import vision as N_V
from .._common import special_ord
from ..registry import expose
from ..._core import grad_mode


@expose("nn.functional")
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    return N.layer_norm(input, normalized_shape, weight, bias, eps)


@expose("nn.functional")
def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    from . import vision as V

    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = (input * input).unsqueeze(1)
    if dim == 3:
        div = V.pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = V.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = (div * alpha + k) ** beta
    return input / div


# --- pooling -----------------------------------------------------------------------------------------------


@expose("nn.functional")
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return N.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@expose("nn.functional")
def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return N.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@expose("nn.functional")
def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return N.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


@expose("nn.functional")
def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    return N.fractional_max_pool(2, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


@expose("nn.functional")
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    return N.fractional_max_pool(2, input, kernel_size, output_size, output_ratio, True, _random_samples)


@expose("nn.functional")
def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                          return_indices: bool = False, _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    return N.fractional_max_pool(3, input, kernel_size, output_size, output_ratio, return_indices, _random_samples)


@expose("nn.functional")
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any, output_size: Any = None,
                                       output_ratio: Any = None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> Any:  # fmt: skip
    return N.fractional_max_pool(3, input, kernel_size, output_size, output_ratio, True, _random_samples)


@expose("nn.functional")
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
    return N.avg_pool_nd(
        2, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


@expose("nn.functional")
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:  # fmt: skip
    return N.avg_pool_nd(
        3, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
    )


def _adaptive_size(name: str, n: int, input: Tensor, output_size: Any) -> tuple:
    if input.dim() not in (n + 1, n + 2):
        dims = " or ".join(f"{d}D" for d in (n + 1, n + 2))
        raise RuntimeError(f"{name}(): Expected {dims} tensor, but got {list(input.shape)}")
    sizes = (output_size,) * n if not isinstance(output_size, (list, tuple)) else tuple(output_size)
    if len(sizes) != n:
        raise RuntimeError(f"{name}: internal error: output_size.size() must be {n}")
    spatial = input.shape[-n:]
    return tuple(s if o is None else int(o) for o, s in zip(sizes, spatial))


@expose("nn.functional")
def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    return N._adaptive_avg_pool(input, _adaptive_size("adaptive_avg_pool2d", 2, input, output_size))


@expose("nn.functional")
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    return N._adaptive_avg_pool(input, _adaptive_size("adaptive_avg_pool3d", 3, input, output_size))


@expose("nn.functional")
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    size = _adaptive_size("adaptive_max_pool2d", 2, input, output_size)
    return N._adaptive_max_pool(input, size, bool(return_indices))


@expose("nn.functional")
def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    size = _adaptive_size("adaptive_max_pool3d", 3, input, output_size)
    return N._adaptive_max_pool(input, size, bool(return_indices))


@expose("nn.functional")
def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return N.adaptive_max_pool1d(input, output_size, True)


@expose("nn.functional")
def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return adaptive_max_pool2d(input, output_size, True)


@expose("nn.functional")
def lp_pool1d(
    input: Tensor, norm_type: float, kernel_size: int, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    from .activation import relu

    out = N.avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kernel_size).pow(1.0 / norm_type)


@expose("nn.functional")
def lp_pool2d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    from .activation import relu

    kw, kh = N._ntuple(kernel_size, 2)
    if norm_type == float("inf"):
        return N.max_pool2d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -N.max_pool2d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kw * kh).pow(1.0 / norm_type)


@expose("nn.functional")
def lp_pool3d(
    input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False
) -> Tensor:
    from .activation import relu

    kd, kw, kh = N._ntuple(kernel_size, 3)
    if norm_type == float("inf"):
        return N.max_pool3d(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -N.max_pool3d(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(kd * kw * kh).pow(1.0 / norm_type)


@expose("nn.functional")
def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    return adaptive_max_pool3d(input, output_size, True)


def _unpool_output_size(
    input: Tensor, kernel_size: tuple, stride: tuple, padding: tuple, output_size: Any
) -> list:
    n = len(kernel_size)
    default = [(input.size(-n + d) - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(
                f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a length of "
                f"'{len(output_size)}'"
            )
        for d in range(n):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})'
                )
        ret = output_size
    for d in range(n):
        if ret[d] < 0:
            raise ValueError(
                f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                f"output_size[{d}]={ret[d]}"
            )
    return ret


def _max_unpool_nd(n: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
                   output_size: Any) -> Tensor:  # fmt: skip
    k = N._ntuple(kernel_size, n)
    s = k if stride is None else N._ntuple(stride, n)
    p = N._ntuple(padding, n)
    size = _unpool_output_size(input, k, s, p, output_size)
    if indices.dtype is not D.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {indices.dtype}")
    return N_V._max_unpool(input, indices, tuple(int(v) for v in size), n)


@expose("nn.functional")
def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    return _max_unpool_nd(1, input, indices, kernel_size, stride, padding, output_size)


@expose("nn.functional")
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    return _max_unpool_nd(2, input, indices, kernel_size, stride, padding, output_size)


@expose("nn.functional")
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 output_size: Any = None) -> Tensor:  # fmt: skip
    return _max_unpool_nd(3, input, indices, kernel_size, stride, padding, output_size)


# --- dropout -------------------------------------------------------------------------------------------------


keep_mask = DR.keep_mask
_scaled_noise = DR._scaled_noise
_check_p = DR._check_p
_finish = DR._finish
_dropout_impl = DR.dropout_impl


@expose("nn.functional")
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, False)


@expose("nn.functional")
def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


@expose("nn.functional")
def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


@expose("nn.functional")
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d exists to provide "
            "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    if d == 2:
        out = _dropout_impl(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
        return _finish(input, out, inplace) if inplace and out is not input else out
    return _dropout_impl(input, p, training, inplace, True, False)


@expose("nn.functional")
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    d = input.dim()
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will change "
            "in a future release to interpret the input as one without a batch dimension, i.e. shape (C, H, W). To "
            "maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, inplace, True, False)


@expose("nn.functional")
def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    _check_p(p)
    d = input.dim()
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if d == 4:
        out = _dropout_impl(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
        return _finish(input, out, inplace) if inplace and out is not input else out
    return _dropout_impl(input, p, training, inplace, True, False)


# --- embedding --------------------------------------------------------------------------------------------------


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """torch.embedding_renorm_: rows looked up by ``input`` with norm > max_norm are scaled to max_norm."""
    w = weight._data()
    norm_type = float(norm_type)
    static_p = norm_type if special_ord(norm_type) else None  # max_norm and a general p are traced
    kernel = _renorm_kernel(static_p)
    with grad_mode.no_grad():
        weight._assign(kernel(w, input._data(), np.float64(max_norm), np.float64(norm_type)))


_renorm_kernels: LRU = LRU()


def _renorm_kernel(static_p: float | None) -> Any:
    k = _renorm_kernels.get(static_p)
    if k is None:
        import jax
        import jax.numpy as jnp

        def renorm(w: Any, idx: Any, max_norm: Any, norm_type: Any) -> Any:
            used = jnp.zeros(w.shape[0], bool).at[idx.reshape(-1)].set(True)
            acc = jnp.float64 if w.dtype == jnp.float64 else jnp.float32
            a = jnp.abs(w.astype(acc))
            bound = max_norm.astype(acc)
            if static_p == math.inf:
                norms = a.max(axis=1)
            elif static_p is not None:
                norms = (a**static_p).sum(axis=1) ** (1.0 / static_p)
            else:
                norms = (a ** norm_type.astype(acc)).sum(axis=1) ** (1 / norm_type).astype(acc)
            scale = jnp.where(used & (norms > bound), bound / (norms + 1e-7), 1.0)
            return (w * scale[:, None].astype(w.dtype)).astype(w.dtype)

        k = _renorm_kernels[static_p] = jax.jit(renorm)
    return k


@expose("nn.functional")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:  # fmt: skip
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        N._index_check(input, weight, "embedding")
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return N.embedding(weight, input, padding_idx, bool(scale_grad_by_freq), bool(sparse))


@expose("nn.functional")
def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:  # fmt: skip
    if weight.dtype is D.int64 and input.is_floating_point():
        warnings.warn(
            "Argument order of nn.functional.embedding_bag was changed. Usage `embedding_bag(weight, input, ...)` is "
            "deprecated, and should now be `embedding_bag(input, weight, ...)`.",
            stacklevel=2,
        )
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it must have the "
            f"same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length "
                f"sequences. However, found offsets of type {str(type(offsets)).replace('torchlike', 'torch')}"
            )
        n_bags = input.shape[0]
        seq = input.shape[1]
        from .. import creation

        offsets = (
            creation.arange(0, input.numel(), seq, dtype=input.dtype, device=input.device) if seq else None
        )
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        n_bags = offsets.shape[0] - (1 if include_last_offset else 0)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if sparse:
        raise NotImplementedError(
            "torchlike: embedding_bag with sparse=True (sparse gradients) is not supported"
        )
    if scale_grad_by_freq:
        raise NotImplementedError("torchlike: embedding_bag with scale_grad_by_freq=True is not supported")
    N._index_check(input, weight, "embedding_bag")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' "
            f"(got mode='{mode}'). Please open a feature request on GitHub."
        )
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx = weight.shape[0] + padding_idx
    return N._embedding_bag(weight, input, offsets, per_sample_weights, mode, int(padding_idx),
                            bool(include_last_offset), int(n_bags))  # fmt: skip


@expose("nn.functional")
def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    vals = N.host_values(tensor) if tensor.numel() else None
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    elif vals is None:  # inside compiled code: the number of classes must be known
        if num_classes == -1:
            num_classes = int(tensor.max()) + 1
    else:
        if vals.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(vals.max()) + 1
        elif vals.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return N._one_hot(tensor, int(num_classes))
