"""Layers' JAX bodies: linear, bilinear, convolution, pooling, normalization, dropout, embedding.

Each layer's forward is one table op (so one kernel, one backward node with torch's name). The
public wrappers here do torch's argument normalisation and shape checks in Python on static
shapes, then call the op. torchlike.nn.functional builds on these.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..._core import dtype as D
from ..._core import buckets, lazy
from ..._core.tensor import Tensor
from ..._core.graph import show_as
from ..linalg import _same_dtype
from .. import registry
from ..registry import OptRawTensor, OptScalar, RawTensor, Scalar, defop, expose


def host_values(t: Tensor) -> np.ndarray | None:
    """``t``'s values on the host for torch's value checks, or None inside compiled code (the checks are
    skipped there: reading a traced value would force a graph break)."""
    arr = t._peek()
    if type(arr) is lazy.LazyArray:
        # A pending view (``target.reshape(-1)``) of a concrete tensor holding the same elements: read the
        # base, so the check needs no flush of the lazy graph
        base = t._buf.peek()
        if (type(base) is not lazy.LazyArray and not isinstance(base, jax.core.Tracer) and base.size == t.numel()
                and base.dtype == t._dtype.np):
            arr = base
        else:
            arr = arr.materialize("value check")
    if isinstance(arr, jax.core.Tracer):
        return None
    seen = _host_seen.get(id(arr))
    if seen is not None and seen[0] is arr:
        return seen[1]  # the same targets/indices as before (a training loop's fixed batch)
    host = np.asarray(arr)
    if arr.ndim and not isinstance(arr, np.ndarray) and next(iter(arr.devices())).platform != "cpu":
        if len(_host_seen) >= 8:  # reading a GPU array is a sync and a copy: keep the last few
            del _host_seen[next(iter(_host_seen))]
        _host_seen[id(arr)] = (arr, host)
    return host


_host_seen: dict = {}


def _ntuple(x: Any, n: int) -> tuple:
    if isinstance(x, (list, tuple)):
        if len(x) == 1 and n > 1:
            return tuple(int(v) for v in x) * n
        return tuple(int(v) for v in x)
    return (int(x),) * n


def _acc(x: Any) -> Any:
    """Compute dtype: float32 for half/bfloat16 inputs (torch's opmath), else the input's."""
    return jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else x.dtype


def _channel_shape(ndim: int) -> tuple:
    return (1, -1) + (1,) * (ndim - 2)


# --- linear -----------------------------------------------------------------------------------------


def _T(i: int) -> tuple:
    return ("TBackward0", [i])


# torch's nodes for linear (inputs: 0 input, 1 weight, 2 bias); see autograd.graph.show_as
_FLAT = ("UnsafeViewBackward0", [("CloneBackward0", [0])])  # reshape of a non-contiguous input
show_as("linear2d", [2, 0, _T(1)])
show_as("linear_nd", [("AddmmBackward0", [2, ("ViewBackward0", [0]), _T(1)])])
show_as("linear_nd_strided", [("UnsafeViewBackward0", [("MmBackward0", [_FLAT, _T(1)])]), 2])
show_as("linear2d_nobias", [0, _T(1)])
show_as("linear1d_nobias", [("MmBackward0", [("UnsqueezeBackward0", [0]), _T(1)])])
show_as("linear_nd_nobias", [("MmBackward0", [("ViewBackward0", [0]), _T(1)])])
show_as("linear_nd_strided_nobias", [("MmBackward0", [_FLAT, _T(1)])])


def _linear_name(static: tuple, dyn: tuple) -> str:
    x, w, b = dyn
    nd = x.dim()
    shown = w.dim() == 2
    if b is not None:
        if nd == 2:
            return "AddmmBackward0@linear2d" if shown else "AddmmBackward0"
        if nd == 1 or x.is_contiguous():
            return "ViewBackward0@linear_nd" if shown else "ViewBackward0"
        return "AddBackward0@linear_nd_strided" if shown else "AddBackward0"
    if nd == 1:
        return "SqueezeBackward4@linear1d_nobias" if shown else "SqueezeBackward4"
    if nd == 2:
        return "MmBackward0@linear2d_nobias" if shown else "MmBackward0"
    if not shown:
        return "UnsafeViewBackward0"
    return "UnsafeViewBackward0@linear_nd" + ("" if x.is_contiguous() else "_strided") + "_nobias"


@jax.custom_vjp
def _low_linear(input: Any, weight: Any) -> Any:
    """``input @ weight.T`` of half/bfloat16 operands, accumulated and returned in float32 (torch's CPU
    addmm rounds once, after the bias). Its backward keeps low-precision operands with float32
    accumulation: the float32 cotangent would otherwise turn the backward GEMMs into float32 ones (8x slower
    on a GPU)."""
    return jnp.matmul(input, weight.T, preferred_element_type=jnp.float32)


def _low_linear_fwd(input: Any, weight: Any) -> tuple:
    return _low_linear(input, weight), (input, weight)


def _low_linear_bwd(saved: tuple, g: Any) -> tuple:
    input, weight = saved
    g = g.astype(input.dtype)  # the output was rounded to it: the cotangent holds its values exactly
    grad_input = registry.round_to(jnp.matmul(g, weight, preferred_element_type=jnp.float32), input.dtype)
    g2, x2 = g.reshape(-1, g.shape[-1]), input.reshape(-1, input.shape[-1])
    grad_weight = registry.round_to(jnp.matmul(g2.T, x2, preferred_element_type=jnp.float32), weight.dtype)
    return grad_input, grad_weight


_low_linear.defvjp(_low_linear_fwd, _low_linear_bwd)


def _linear_pad(static: tuple, shapes: tuple) -> tuple:
    """The rows padded with zeros. XLA's CPU dot computes each row alike at every row count from 2 (checked by
    tests/test_buckets.py), so the forward's padded results are the exact ones; the backward's weight
    gradient sums over the rows, so its are not."""
    return (buckets.rows(shapes[0], 1),)


_linear_pad.exact = "forward"


@defop(promote=None, namespaces=("nn.functional:linear",), grad_name=_linear_name, saves=("input", "weight"),
       pad=_linear_pad)
def _linear(input: RawTensor, weight: RawTensor, bias: OptRawTensor = None) -> Any:
    """torch.nn.functional.linear: input @ weight.T + bias, one kernel."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(
            f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and {weight.ndim}D"
        )
    _same_dtype(input, weight, "mm")
    k = weight.shape[-1]
    if input.shape[-1] != k:
        rows = int(np.prod(input.shape[:-1]))
        wt = weight.shape[::-1] if weight.ndim == 2 else (k, 1)
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and {wt[0]}x{wt[1]})"
        )
    low = input.dtype in (jnp.float16, jnp.bfloat16)
    # torch: half/bfloat16 linear accumulates in float32 and adds the bias there, rounding once (addmm's beta*C)
    y = _low_linear(input, weight) if low and weight.dtype == input.dtype else (
        jnp.matmul(input, weight.T, preferred_element_type=jnp.float32) if low else jnp.matmul(input, weight.T))
    if bias is not None:
        if bias.dtype != weight.dtype:
            bd, wd = D.from_numpy_dtype(bias.dtype), D.from_numpy_dtype(weight.dtype)
            raise RuntimeError(
                f"self and mat2 must have the same dtype, but got {D.cpp_name(bd)} and {D.cpp_name(wd)}"
            )
        try:
            jnp.broadcast_shapes(bias.shape, y.shape)
        except ValueError:
            raise RuntimeError(
                f"The expanded size of the tensor ({y.shape[-1]}) must match the existing size ({bias.shape[-1]}) at "
                f"non-singleton dimension {y.ndim - 1}.  Target sizes: [{', '.join(map(str, y.shape))}].  Tensor "
                f"sizes: [{', '.join(map(str, bias.shape))}]"
            ) from None
        y = y + bias.astype(y.dtype)
    return registry.round_to(y, input.dtype) if low else y


def _bilinear_name(static: tuple, dyn: tuple) -> str:
    return "AddBackward0" if dyn[3] is not None else "ViewBackward0"


@defop(promote=None, namespaces=("torch", "nn.functional"), grad_name=_bilinear_name)
def bilinear(input1: RawTensor, input2: RawTensor, weight: RawTensor, bias: OptRawTensor = None) -> Any:
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {input1.shape[0]} and {input2.shape[0]}"
        )
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected "
            f"{weight.shape[1]}"
        )
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected "
            f"{weight.shape[2]}"
        )
    y = jnp.einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


# --- convolution --------------------------------------------------------------------------------------


show_as("conv_nobias", [0, 1, None])  # torch keeps an empty edge for the missing bias


def _conv_name(static: tuple, dyn: tuple) -> str:
    return "ConvolutionBackward0" if dyn[2] is not None else "ConvolutionBackward0@conv_nobias"


@defop(promote=None, method=False, grad_name=_conv_name, saves=("input", "weight"))
def _convolution(input: RawTensor, weight: RawTensor, bias: OptRawTensor, stride: tuple, padding: tuple,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int) -> Any:  # fmt: skip
    """N-d convolution; ``padding`` is ((lo, hi), ...) per spatial dim. Unbatched inputs get a batch dim."""
    n = weight.ndim - 2
    unbatched = input.ndim == n + 1
    x = input[None] if unbatched else input
    spatial = "DHW"[3 - n :] if n <= 3 else None
    dn = lax.conv_dimension_numbers(x.shape, weight.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial))
    # torch: half/bfloat16 convolutions (oneDNN) accumulate in float32 and add the bias there, rounding once
    acc = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else None
    if not transposed:
        y = lax.conv_general_dilated(
            x, weight, stride, list(padding), rhs_dilation=dilation, dimension_numbers=dn,
            feature_group_count=groups, preferred_element_type=acc,
        )  # fmt: skip
    else:
        cin = weight.shape[0]
        cout_g = weight.shape[1]
        ks = weight.shape[2:]
        w = weight.reshape((groups, cin // groups, cout_g) + ks)
        w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + ks)
        w = jnp.flip(w, axis=tuple(range(2, 2 + n)))
        pads = [
            (
                dilation[i] * (ks[i] - 1) - padding[i][0],
                dilation[i] * (ks[i] - 1) - padding[i][1] + output_padding[i],
            )
            for i in range(n)
        ]
        dn = lax.conv_dimension_numbers(x.shape, w.shape, ("NC" + spatial, "OI" + spatial, "NC" + spatial))
        y = lax.conv_general_dilated(
            x, w, (1,) * n, pads, lhs_dilation=stride, rhs_dilation=dilation, dimension_numbers=dn,
            feature_group_count=groups, preferred_element_type=acc,
        )  # fmt: skip
    if bias is not None:
        y = y + bias.reshape(_channel_shape(y.ndim)).astype(y.dtype)
    y = registry.round_to(y, x.dtype)  # once, after the bias (a rounding point XLA keeps)
    return y[0] if unbatched else y


def _autocast_casts(*tensors: Tensor | None) -> bool:
    """Whether an active autocast region casts these convolution inputs (all floating, none float64) to its dtype."""
    adjust = registry.autocast
    if adjust is None or adjust(registry.OPS["_convolution"], tensors[0].device.type, None, [], ()) is None:
        return False
    return all(t is None or (t.dtype.is_floating_point and t.dtype is not D.float64) for t in tensors)


def _conv_checks(name: str, input: Tensor, weight: Tensor, bias: Tensor | None, n: int, groups: int,
                 transposed: bool) -> None:  # fmt: skip
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to {name}, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.dim() != n + 2:
        raise RuntimeError(
            "weight should have at least three dimensions" if weight.dim() < 3 else
            f"Expected {n + 2}-dimensional input for {n + 2}-dimensional weight {list(weight.shape)}, but got "
            f"{weight.dim()}-dimensional input of size {list(input.shape)} instead"
        )  # fmt: skip
    if _autocast_casts(input, weight, bias):
        pass  # autocast casts them to one dtype before torch's convolution checks them
    elif input.dtype is not weight.dtype:
        raise RuntimeError(
            f"expected scalar type {D.cpp_name(input.dtype)} but found {D.cpp_name(weight.dtype)}"
        )
    elif bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(
            f"Input type ({D.c_type(input.dtype)}) and bias type "
            f"({D.c_type(bias.dtype)}) should be the same"
        )
    shape = list(input.shape) if input.dim() == n + 2 else [1] + list(input.shape)
    channels = shape[1]
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if not transposed:
        expected = weight.shape[1] * groups
        if channels != expected:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{shape} to have "
                f"{expected} channels, but got {channels} channels instead"
            )
        if weight.shape[0] % groups:
            raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension 0, but got weight "
                               "of size %s instead" % (groups, groups, list(weight.shape)))  # fmt: skip
        out_channels = weight.shape[0]
    else:
        if channels != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {list(weight.shape)}, expected input{shape} to have "
                f"{weight.shape[0]} channels, but got {channels} channels instead"
            )
        out_channels = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out_channels):
        raise RuntimeError(
            f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {out_channels} "
            f"elements, but got bias of size {list(bias.shape)} instead"
        )


def _conv_padding(padding: Any, n: int, ks: tuple, dilation: tuple, stride: tuple) -> tuple:
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            out = []
            for k, d in zip(ks, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    pad = _ntuple(padding, n)
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    return tuple((p, p) for p in pad)


def _conv(name: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
          dilation: Any, groups: int) -> Tensor:  # fmt: skip
    _conv_checks(name, input, weight, bias, n, groups, False)
    stride, dilation = _ntuple(stride, n), _ntuple(dilation, n)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    ks = tuple(weight.shape[2:])
    pads = _conv_padding(padding, n, ks, dilation, stride)
    spatial = input.shape[-n:]
    padded = [s + lo + hi for s, (lo, hi) in zip(spatial, pads)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, ks)]
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel size: "
            f"({' x '.join(map(str, eff))}). Kernel size can't be greater than actual input size"
        )
    return _convolution(input, weight, bias, stride, pads, dilation, False, (0,) * n, int(groups))


@expose("torch")
@expose("nn.functional")
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


@expose("torch")
@expose("nn.functional")
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


@expose("torch")
@expose("nn.functional")
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:  # fmt: skip
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(name: str, n: int, input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                    padding: Any, output_padding: Any, groups: int, dilation: Any) -> Tensor:  # fmt: skip
    _conv_checks(name, input, weight, bias, n, groups, True)
    stride, dilation = _ntuple(stride, n), _ntuple(dilation, n)
    pad, opad = _ntuple(padding, n), _ntuple(output_padding, n)
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in pad):
        raise RuntimeError("negative padding is not supported")
    for op_, s, d in zip(opad, stride, dilation):
        if op_ >= s and op_ >= d:
            raise RuntimeError(
                f"output padding must be smaller than either stride or dilation, but got output_padding_height: "
                f"{op_} output_padding_width: {op_} stride_height: {s} stride_width: {s} dilation_height: {d} "
                f"dilation_width: {d}"
            )
    return _convolution(
        input, weight, bias, stride, tuple((p, p) for p in pad), dilation, True, opad, int(groups)
    )


@expose("torch")
@expose("nn.functional")
def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    return _conv_transpose(
        "conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@expose("torch")
@expose("nn.functional")
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    return _conv_transpose(
        "conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@expose("torch")
@expose("nn.functional")
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:  # fmt: skip
    return _conv_transpose(
        "conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation
    )


@expose("torch")
def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int) -> Tensor:  # fmt: skip
    n = weight.dim() - 2
    pads = tuple((int(p), int(p)) for p in _ntuple(padding, n))
    return _convolution(input, weight, bias, _ntuple(stride, n), pads, _ntuple(dilation, n), bool(transposed),
                        _ntuple(output_padding, n), int(groups))  # fmt: skip


# --- pooling ------------------------------------------------------------------------------------------


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape."""
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _window_pads(spatial: tuple, out: tuple, k: tuple, s: tuple, p: tuple, d: tuple) -> tuple:
    """((lo, hi), ...) so that reduce_window yields exactly ``out`` windows; hi < 0 means crop."""
    return tuple(
        (pi, (o - 1) * si + di * (ki - 1) + 1 - n - pi)
        for n, o, ki, si, pi, di in zip(spatial, out, k, s, p, d)
    )


def _crop_for(x: Any, pads: tuple, n: int) -> tuple:
    """Crop where the high padding is negative (lax.reduce_window wants padding >= 0)."""
    lead = x.ndim - n
    idx = [slice(None)] * lead
    fixed = []
    for i, (lo, hi) in enumerate(pads):
        if hi < 0:
            idx.append(slice(0, x.shape[lead + i] + hi))
            hi = 0
        else:
            idx.append(slice(None))
        fixed.append((lo, hi))
    return x[tuple(idx)], ((0, 0),) * lead + tuple(fixed)


def _max_pool_name(static: tuple, dyn: tuple) -> str:
    n = len(static[0])
    return {1: "SqueezeBackward1", 2: "MaxPool2DWithIndicesBackward0", 3: "MaxPool3DWithIndicesBackward0"}[n]


def _lowest(dtype: Any) -> Any:
    """The identity of max in ``dtype``: -inf, or the smallest integer (integer max-pooling)."""
    if jnp.issubdtype(dtype, jnp.integer):
        return np.array(jnp.iinfo(dtype).min, dtype)
    return np.array(-np.inf, dtype)


def _window_argmax(x: Any, window: tuple, strides: tuple, pads: tuple, dilation: tuple) -> Any:
    """Flat spatial index of each window's first maximum (torch's max-pool indices)."""
    n = len(window)
    spatial = x.shape[-n:]
    flat = lax.broadcasted_iota(jnp.int64, spatial, 0) * 0
    for i in range(n):
        flat = flat * spatial[i] + lax.broadcasted_iota(jnp.int64, spatial, i)
    flat = jnp.broadcast_to(flat, x.shape)
    lead = (1,) * (x.ndim - n)
    big = jnp.iinfo(jnp.int64).max

    def pick(a: tuple, b: tuple) -> tuple:
        av, ai = a
        bv, bi = b
        take_b = (bv > av) | ((bv == av) & (bi < ai)) | (jnp.isnan(bv) & ~jnp.isnan(av))
        return jnp.where(take_b, bv, av), jnp.where(take_b, bi, ai)

    init = (jnp.asarray(_lowest(x.dtype)), jnp.array(big, jnp.int64))
    _, idx = lax.reduce_window((x, flat), init, pick, lead + window, lead + strides, pads,
                               window_dilation=lead + dilation)  # fmt: skip
    return idx


def _gather_spatial(x: Any, idx: Any, n: int) -> Any:
    lead = x.shape[:-n]
    xf = x.reshape(lead + (-1,))
    vals = jnp.take_along_axis(xf, idx.reshape(lead + (-1,)), axis=-1)
    return vals.reshape(idx.shape)


@defop(promote=None, method=False, grad_name=_max_pool_name, saves=("input",))
def _max_pool(input: RawTensor, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple,
              ceil_mode: bool, return_indices: bool) -> Any:  # fmt: skip
    n = len(kernel_size)
    spatial = input.shape[-n:]
    out = tuple(pool_out_size(*a, ceil_mode) for a in zip(spatial, kernel_size, stride, padding, dilation))
    x, pads = _crop_for(input, _window_pads(spatial, out, kernel_size, stride, padding, dilation), n)
    lead = (1,) * (x.ndim - n)
    if not return_indices and all(d == 1 for d in dilation):
        # reduce_window max's gradient goes to the first maximum of each window, as torch's
        return lax.reduce_window(
            x, _lowest(x.dtype), lax.max, lead + kernel_size, lead + stride, pads
        )
    idx = lax.stop_gradient(_window_argmax(lax.stop_gradient(x), kernel_size, stride, pads, dilation))
    vals = _gather_spatial(input, idx, n)
    return (vals, idx) if return_indices else vals


def _fractional_name(static: tuple, dyn: tuple) -> str:
    return f"FractionalMaxPool{len(static[0])}DBackward0"


def _fractional_starts(u: Any, size: int, out: int, pool: int) -> Any:
    """Window starts along one dim from each plane's sample ``u`` in [0, 1): torch's generate_intervals,
    computed in u's dtype as torch's kernel does (the rounding decides which windows overlap)."""
    last = jnp.full(u.shape + (1,), size - pool, jnp.int32)
    if out == 1:
        return last
    alpha = np.array(size - pool, u.dtype) / np.array(out - 1, u.dtype)
    i = jnp.arange(out - 1, dtype=u.dtype)
    starts = ((i + u[..., None]) * alpha).astype(jnp.int32) - (u * alpha).astype(jnp.int32)[..., None]
    return jnp.concatenate([starts, last], axis=-1)


@defop(promote=None, method=False, grad_name=_fractional_name, saves=("input",))
def _fractional_max_pool(input: RawTensor, kernel_size: tuple, output_size: tuple, samples: RawTensor) -> Any:
    """(values, indices) of torch's fractional max pooling over the last len(kernel_size) dims. Each
    window keeps its first maximum, or its last NaN, as torch's loop does."""
    n = len(kernel_size)
    x = input if input.ndim == n + 2 else input[None]
    u = lax.stop_gradient(samples).astype(x.dtype)
    spatial = x.shape[2:]
    which = (1, 0) if n == 2 else (0, 1, 2)  # torch: 2-D samples are (w, h); 3-D ones (t, h, w)
    lead = x.shape[:2]
    flat = jnp.zeros((), jnp.int64)
    for d in range(n):
        starts = _fractional_starts(u[..., which[d]], spatial[d], output_size[d], kernel_size[d])
        pos = starts[..., None].astype(jnp.int64) + jnp.arange(kernel_size[d], dtype=jnp.int64)
        shape = lead + tuple(output_size[d] if j == d else 1 for j in range(n))
        shape += tuple(kernel_size[d] if j == d else 1 for j in range(n))
        flat = flat + pos.reshape(shape) * math.prod(spatial[d + 1 :])
    flat = jnp.broadcast_to(flat, lead + tuple(output_size) + tuple(kernel_size))
    flat = flat.reshape(lead + (-1, math.prod(kernel_size)))
    xf = x.reshape(lead + (-1,))
    windows = jnp.take_along_axis(xf, flat.reshape(lead + (-1,)), axis=-1).reshape(flat.shape)
    windows = lax.stop_gradient(windows)
    isnan = jnp.isnan(windows)
    last_nan = windows.shape[-1] - 1 - jnp.argmax(isnan[..., ::-1], axis=-1)
    k = jnp.where(isnan.any(-1), last_nan, jnp.argmax(windows, axis=-1))
    idx = jnp.take_along_axis(flat, k[..., None], axis=-1)[..., 0]
    values = jnp.take_along_axis(xf, idx, axis=-1)
    out_shape = lead + tuple(output_size)
    values, idx = values.reshape(out_shape), idx.reshape(out_shape)
    return (values, idx) if input.ndim == n + 2 else (values[0], idx[0])


def fractional_max_pool(n: int, input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                        return_indices: bool, samples: Tensor | None) -> Any:  # fmt: skip
    """torch.nn.functional.fractional_max_pool{2,3}d (with torch's argument checks and sample draws)."""
    from .. import random

    name = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        # torch: the 2-D function takes len() of the ratio (a bare float raises TypeError), 3-D repeats it
        if n == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * n
        output_size = [int(input.size(-n + d) * ratio[d]) for d in range(n)]
    k, out = _ntuple(kernel_size, n), _ntuple(output_size, n)
    if samples is None:
        batch = 1 if input.dim() == n + 1 else input.size(0)
        samples = random.rand(batch, input.size(-n - 1), n, dtype=input.dtype, device=input.device)
    if len(k) != n or len(out) != n:
        what = "kernel_size" if len(k) != n else "output_size"
        ints = "a single Int or tuple of Ints" if n == 2 else "a single Int or tuple of three Ints"
        raise RuntimeError(f"{name}: {what} must either be {ints}")
    if input.numel() == 0 or input.dim() not in (n + 1, n + 2):
        if n == 2:
            raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, but got: {input.dim()}")
        raise RuntimeError(
            f"fractional_max_pool3d_out(): non-empty 4D or 5D (batch mode) tensor  expected for input, but got: "
            f"{input.dim()}"
        )
    spatial = tuple(input.shape[-n:])
    names = ("height", "width") if n == 2 else ("time", "height", "width")
    check = (0, 1) if n == 2 else (0, 2, 1)  # torch checks 3-D's width before its height
    for d in check:
        too_large = out[d] + k[d] - 1 > spatial[d] if n == 2 else out[d] + k[d] - 1 >= spatial[d]
        if too_large:
            where = f"{name}()" if n == 2 else "fractional_max_pool3d_out()"
            raise RuntimeError(
                f"{where}: pool {names[d]} {k[d]} too large relative to input {names[d]} {spatial[d]}"
            )
    values, indices = _fractional_max_pool(input, tuple(k), tuple(out), samples)
    return (values, indices) if return_indices else values


def _check_pool_nonempty(name: str, n: int, input: Tensor) -> None:
    """torch: a batched input may have 0 samples; every other dimension must be non-empty."""
    shape = list(input.shape)
    if all(shape[input.dim() - n - 1:]):
        return
    if n == 3:
        where = "avg_pool3d" if name.startswith("avg") else "max_pool3d_with_indices_out_cpu_template"
        raise RuntimeError(
            f"{where}(): Expected input's non-batch dimensions to have positive length, but input has a shape of "
            f"{shape} and non-batch dimension 0 has length zero!"
        )
    if name.startswith("max") and n == 1:
        raise RuntimeError(
            f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{shape}"
        )
    if n == 1:  # torch runs avg_pool1d as avg_pool2d on a height-1 input
        shape = shape[:-1] + [1] + shape[-1:]
    raise RuntimeError(
        f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:{shape}"
    )


def _pool_args(name: str, n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               ceil_mode: bool) -> tuple:  # fmt: skip
    k = _ntuple(kernel_size, n)
    s = (
        k
        if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0)
        else _ntuple(stride, n)
    )
    p, d = _ntuple(padding, n), _ntuple(dilation, n)
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for input" if n > 1 else
            f"{name}() Expected 2D or 3D input, but got {input.dim()}D"
        )  # fmt: skip
    _check_pool_nonempty(name, n, input)
    if any(v <= 0 for v in k):
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_size: {k}")
    if any(v <= 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got stride: {s}")
    if any(v <= 0 for v in d):
        raise RuntimeError(f"dilation should be greater than zero, but got dilation: {d}")
    for pi, ki, di in zip(p, k, d):
        if pi > (di * (ki - 1) + 1) // 2 or pi < 0:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pi}, kernel_size={ki} and "
                f"dilation={di}"
            )
    spatial = tuple(input.shape[-n:])
    out = tuple(pool_out_size(*a, ceil_mode) for a in zip(spatial, k, s, p, d))
    if any(o < 1 for o in out):
        c = input.shape[-n - 1]
        fmt = "x".join
        raise RuntimeError(
            f"Given input size: ({fmt(map(str, (c,) + spatial))}). Calculated output size: "
            f"({fmt(map(str, (c,) + out))}). Output size is too small"
        )
    return k, s, p, d


def _max_pool_nd(name: str, n: int, input: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
                 ceil_mode: bool, return_indices: bool) -> Any:  # fmt: skip
    k, s, p, d = _pool_args(name, n, input, kernel_size, stride, padding, dilation, ceil_mode)
    dt = input._dtype
    if n == 1 and not return_indices and not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{D.cpp_name(dt)}'")
    if dt is D.bool:
        raise NotImplementedError(f"\"max_pool{max(n, 2)}d\" not implemented for 'Bool'")
    return _max_pool(input, k, s, p, d, bool(ceil_mode), bool(return_indices))


@expose("torch")
@expose("nn.functional")
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return _max_pool_nd(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@expose("torch")
def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                            dilation: Any = 1, ceil_mode: bool = False) -> Any:  # fmt: skip
    return _max_pool_nd("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, True)


@expose("torch")
@expose("nn.functional")
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return _max_pool_nd(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@expose("torch")
@expose("nn.functional")
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
               ceil_mode: bool = False, return_indices: bool = False) -> Any:  # fmt: skip
    return _max_pool_nd(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def _avg_pool_name(static: tuple, dyn: tuple) -> str:
    return {1: "SqueezeBackward1", 2: "AvgPool2DBackward0", 3: "AvgPool3DBackward0"}[len(static[0])]


@defop(promote=None, method=False, grad_name=_avg_pool_name, saves=())
def _avg_pool(input: RawTensor, kernel_size: tuple, stride: tuple, padding: tuple, ceil_mode: bool,
              count_include_pad: bool, divisor_override: OptScalar) -> Any:  # fmt: skip
    n = len(kernel_size)
    ones = (1,) * n
    spatial = input.shape[-n:]
    out = tuple(pool_out_size(*a, 1, ceil_mode) for a in zip(spatial, kernel_size, stride, padding))
    x, pads = _crop_for(input, _window_pads(spatial, out, kernel_size, stride, padding, ones), n)
    lead = (1,) * (x.ndim - n)
    acc = _acc(x)
    total = lax.reduce_window(
        x.astype(acc), np.array(0, acc), lax.add, lead + kernel_size, lead + stride, pads
    )
    if divisor_override is not None:  # traced (one kernel for every divisor); None keeps the counting program
        return (total / jnp.asarray(divisor_override).astype(acc)).astype(input.dtype)
    # the divisor of each window: its cells inside the input (and, with count_include_pad, inside the padding)
    sp = pads[-n:]
    cells = np.ones(x.shape[-n:], np.float64)
    if count_include_pad:
        cells = np.pad(cells, [(lo, min(hi, p)) for (lo, hi), p in zip(sp, padding)], constant_values=1)
        sp = tuple((0, hi - min(hi, p)) for (lo, hi), p in zip(sp, padding))
    cnt = lax.reduce_window(jnp.asarray(cells), 0.0, lax.add, kernel_size, stride, sp)
    return (total / cnt.astype(acc)).astype(input.dtype)


@expose("torch")
@expose("nn.functional")
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:  # fmt: skip
    k, s, p, _ = _pool_args("avg_pool1d", 1, input, kernel_size, stride, padding, 1, ceil_mode)
    return _avg_pool(input, k, s, p, bool(ceil_mode), bool(count_include_pad), None)


def avg_pool_nd(n: int, input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
                ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Any = None) -> Tensor:  # fmt: skip
    if n == 2 and input.dim() < 3:
        input.size(-3)  # torch: avg_pool2d reads the plane count first (IndexError for a 1-d or 2-d input)
    k, s, p, _ = _pool_args(f"avg_pool{n}d", n, input, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    # torch's CPU kernel has no half types (an autocast region casts the input to float32 first)
    if n == 3 and input.dtype in (D.float16, D.bfloat16) and input.device.type == "cpu" and registry.autocast is None:
        raise NotImplementedError(f"\"avg_pool3d_out_frame\" not implemented for '{D.cpp_name(input.dtype)}'")
    return _avg_pool(input, k, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)


def _adaptive_bins(size: int, out: int) -> list:
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _adaptive_avg_name(static: tuple, dyn: tuple) -> str:
    out = static[0]
    if len(out) == 2 and out == (1, 1):
        return "MeanBackward1"
    return {1: "SqueezeBackward1", 2: "AdaptiveAvgPool2DBackward0", 3: "AdaptiveAvgPool3DBackward0"}[len(out)]


@defop(promote=None, method=False, grad_name=_adaptive_avg_name, saves=())
def _adaptive_avg_pool(input: RawTensor, output_size: tuple) -> Any:
    n = len(output_size)
    acc = _acc(input)
    y = input.astype(acc)
    for i, o in enumerate(output_size):
        size = input.shape[input.ndim - n + i]
        m = np.zeros((o, size), np.float64)
        for j, (a, b) in enumerate(_adaptive_bins(size, o)):
            m[j, a:b] = 1.0 / (b - a)
        axis = y.ndim - n + i
        y = jnp.moveaxis(jnp.tensordot(y, jnp.asarray(m, acc), axes=([axis], [1])), -1, axis)
    return y.astype(input.dtype)


def _adaptive_max_name(static: tuple, dyn: tuple) -> str:
    return {1: "SqueezeBackward1", 2: "AdaptiveMaxPool2DBackward0", 3: "AdaptiveMaxPool3DBackward0"}[
        len(static[0])
    ]


@defop(promote=None, method=False, grad_name=_adaptive_max_name, saves=("input",))
def _adaptive_max_pool(input: RawTensor, output_size: tuple, return_indices: bool) -> Any:
    n = len(output_size)
    lead = input.shape[:-n]
    spatial = input.shape[-n:]
    # gather each bin padded to the widest bin, masked with -inf, and take the first maximum
    idx_parts, masks = [], []
    for size, o in zip(spatial, output_size):
        bins = _adaptive_bins(size, o)
        k = max(b - a for a, b in bins)
        ix = np.array([[min(a + j, size - 1) for j in range(k)] for a, b in bins])
        ok = np.array([[a + j < b for j in range(k)] for a, b in bins])
        idx_parts.append(ix)
        masks.append(ok)
    # flat spatial index for every (o_1, k_1, ..., o_n, k_n)
    flat = np.zeros((), np.int64)
    valid = np.ones((), bool)
    for size, ix, ok in zip(spatial, idx_parts, masks):
        flat = flat[..., None, None] * size + ix
        valid = valid[..., None, None] & ok
    perm = tuple(range(0, 2 * n, 2)) + tuple(range(1, 2 * n, 2))
    flat = flat.transpose(perm).reshape(tuple(output_size) + (-1,))
    valid = valid.transpose(perm).reshape(tuple(output_size) + (-1,))
    x = lax.stop_gradient(input).reshape(lead + (-1,))
    cand = jnp.take(x, jnp.asarray(flat.reshape(-1)), axis=-1).reshape(lead + flat.shape)
    cand = jnp.where(jnp.asarray(valid), cand, -jnp.inf)
    best = jnp.argmax(jnp.where(jnp.isnan(cand), jnp.inf, cand), axis=-1)
    idx = jnp.take_along_axis(jnp.broadcast_to(jnp.asarray(flat), cand.shape), best[..., None], axis=-1)[
        ..., 0
    ]
    vals = _gather_spatial(input, idx, n)
    return (vals, idx) if return_indices else vals


@expose("torch")
@expose("nn.functional")
def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"adaptive_avg_pool1d() argument 'input' should be 2D or 3D, but got {input.dim()}D"
        )
    return _adaptive_avg_pool(input, _ntuple(output_size, 1))


@expose("torch")
@expose("nn.functional")
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"adaptive_max_pool1d() argument 'input' should be 2D or 3D, but got {input.dim()}D"
        )
    return _adaptive_max_pool(input, _ntuple(output_size, 1), bool(return_indices))


# --- normalization -----------------------------------------------------------------------------------------


def _bn_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, w, b, rm, rv = dyn[:5]
    if x.numel() == 0:  # torch returns an empty input before checking the statistics' sizes
        return
    c = x.shape[1] if x.dim() > 1 else 1
    for name, t in (("running_mean", rm), ("running_var", rv), ("weight", w), ("bias", b)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


@defop(
    promote=None,
    method=False,
    grad_name="NativeBatchNormBackward0",
    saves=("input", "weight"),
    check=_bn_check,
    nondiff=("running_mean", "running_var"),
    optional_edges=("weight", "bias"),
)
def _batch_norm(input: RawTensor, weight: OptRawTensor, bias: OptRawTensor, running_mean: OptRawTensor,
                running_var: OptRawTensor, momentum: Scalar, training: bool, eps: Scalar) -> Any:  # fmt: skip
    """Returns ``out``, or ``(out, new_running_mean, new_running_var)`` when training with running stats."""
    if input.size == 0:  # torch: an empty input comes back as it is, the statistics unchanged
        return (input, running_mean, running_var) if training and running_mean is not None else input
    acc = _acc(input)
    x = input.astype(acc)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = _channel_shape(x.ndim)
    if training:
        mean = jnp.mean(x, axis=axes)
        var = jnp.mean(jnp.square(x - mean.reshape(shape)), axis=axes)
    else:
        mean, var = running_mean.astype(acc), running_var.astype(acc)
    out = (x - mean.reshape(shape)) * lax.rsqrt(var + eps.astype(acc)).reshape(shape)
    if weight is not None:
        out = out * weight.astype(acc).reshape(shape)
    if bias is not None:
        out = out + bias.astype(acc).reshape(shape)
    out = out.astype(input.dtype)
    if not (training and running_mean is not None):
        return out
    n = x.size // x.shape[1]
    mean, var = lax.stop_gradient(mean), lax.stop_gradient(var)
    dt = jnp.float64 if jnp.asarray(momentum).dtype == jnp.float64 else acc  # momentum arrives as a double
    m, mean, var = jnp.asarray(momentum, dt), mean.astype(dt), var.astype(dt)
    new_mean = (m * mean + (1 - m) * running_mean.astype(dt)).astype(running_mean.dtype)
    new_var = (m * var * (n / max(n - 1, 1)) + (1 - m) * running_var.astype(dt)).astype(running_var.dtype)
    return out, new_mean, new_var


@expose("torch")
@expose("nn.functional")
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:  # fmt: skip
    """torch.nn.functional.batch_norm: updates the running statistics in place when training."""
    from ..._core import grad_mode

    if training:
        size = input.shape
        prod = size[0]
        for s in size[2:]:
            prod *= s
        if prod == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    res = _batch_norm(input, weight, bias, running_mean, running_var, float(momentum or 0.0), bool(training),
                      float(eps))  # fmt: skip
    if not isinstance(res, tuple):
        return res
    out, new_mean, new_var = res
    with grad_mode.no_grad():
        running_mean._assign(new_mean._data())
        running_var._assign(new_var._data())
    return out


def _instance_name(static: tuple, dyn: tuple) -> str:
    return "ViewBackward0"


@defop(promote=None, method=False, grad_name=_instance_name, saves=("input", "weight"))
def _instance_norm(input: RawTensor, weight: OptRawTensor, bias: OptRawTensor, running_mean: OptRawTensor,
                   running_var: OptRawTensor, momentum: Scalar, use_input_stats: bool, eps: Scalar) -> Any:  # fmt: skip
    acc = _acc(input)
    x = input.astype(acc)
    axes = tuple(range(2, x.ndim))
    shape = _channel_shape(x.ndim)
    if use_input_stats:
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    else:
        mean = running_mean.astype(acc).reshape(shape)
        var = running_var.astype(acc).reshape(shape)
    out = (x - mean) * lax.rsqrt(var + eps.astype(acc))
    if weight is not None:
        out = out * weight.astype(acc).reshape(shape)
    if bias is not None:
        out = out + bias.astype(acc).reshape(shape)
    out = out.astype(input.dtype)
    if not (use_input_stats and running_mean is not None):
        return out
    n = int(np.prod(x.shape[2:]))
    m = lax.stop_gradient(mean).reshape(x.shape[:2]).mean(0)
    v = lax.stop_gradient(var).reshape(x.shape[:2]).mean(0) * (n / max(n - 1, 1))
    new_mean = (momentum * m + (1 - momentum) * running_mean.astype(acc)).astype(running_mean.dtype)
    new_var = (momentum * v + (1 - momentum) * running_var.astype(acc)).astype(running_var.dtype)
    return out, new_mean, new_var


@expose("torch")
@expose("nn.functional")
def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:  # fmt: skip
    from ..._core import grad_mode

    if use_input_stats:
        prod = 1
        for s in input.shape[2:]:
            prod *= s
        if prod == 1:
            raise ValueError(
                f"Expected more than 1 spatial element when training, got input size {input.shape}"
            )
    res = _instance_norm(input, weight, bias, running_mean, running_var, float(momentum or 0.0),
                         bool(use_input_stats), float(eps))  # fmt: skip
    if not isinstance(res, tuple):
        return res
    out, new_mean, new_var = res
    with grad_mode.no_grad():
        running_mean._assign(new_mean._data())
        running_var._assign(new_var._data())
    return out


def _norm_shape_check(input: Any, normalized_shape: tuple) -> None:
    n = len(normalized_shape)
    if input.shape[input.ndim - n :] != tuple(normalized_shape) or input.ndim < n:
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}"
        )


@defop(
    promote=None,
    method=False,
    grad_name="NativeLayerNormBackward0",
    saves=("input", "weight"),
    pad=lambda static, shapes: (buckets.rows(shapes[0], len(static[0])),),
    optional_edges=("weight", "bias"),
)
def _layer_norm(input: RawTensor, weight: OptRawTensor, bias: OptRawTensor, normalized_shape: tuple,
                eps: Scalar) -> Any:  # fmt: skip
    _norm_shape_check(input, normalized_shape)
    acc = _acc(input)
    x = input.astype(acc)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    out = (x - mean) * lax.rsqrt(var + eps.astype(acc))
    if weight is not None:
        out = out * weight.astype(acc)
    if bias is not None:
        out = out + bias.astype(acc)
    return out.astype(input.dtype)


@expose("torch")
def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enable: bool = True) -> Tensor:  # fmt: skip
    shape = (
        (int(normalized_shape),)
        if isinstance(normalized_shape, int)
        else tuple(int(s) for s in normalized_shape)
    )
    return _layer_norm(input, weight, bias, shape, float(eps))


def _gn_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x = dyn[0]
    g = static[0]
    if x.dim() < 2 or x.shape[1] % g:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(x.shape)} and num_groups={g}"
        )


@defop(promote=None, method=False, grad_name="NativeGroupNormBackward0", saves=("input", "weight"), check=_gn_check,
       optional_edges=("weight", "bias"))  # fmt: skip
def _group_norm(
    input: RawTensor, weight: OptRawTensor, bias: OptRawTensor, num_groups: int, eps: Scalar
) -> Any:
    acc = _acc(input)
    x = input.astype(acc)
    n, c = x.shape[:2]
    g = x.reshape((n, num_groups, -1))
    mean = jnp.mean(g, axis=2, keepdims=True)
    var = jnp.mean(jnp.square(g - mean), axis=2, keepdims=True)
    out = ((g - mean) * lax.rsqrt(var + eps.astype(acc))).reshape(x.shape)
    shape = _channel_shape(x.ndim)
    if weight is not None:
        out = out * weight.astype(acc).reshape(shape)
    if bias is not None:
        out = out + bias.astype(acc).reshape(shape)
    return out.astype(input.dtype)


@expose("torch")
@expose("nn.functional")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:  # fmt: skip
    return _group_norm(input, weight, bias, int(num_groups), float(eps))


@defop(promote=None, method=False, grad_name="MulBackward0")
def _rms_norm(input: RawTensor, weight: OptRawTensor, normalized_shape: tuple, eps: Scalar) -> Any:
    _norm_shape_check(input, normalized_shape)
    acc = _acc(input)
    x = input.astype(acc)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    out = x * lax.rsqrt(jnp.mean(x * x, axis=axes, keepdims=True) + jnp.asarray(eps, acc))
    if weight is not None:
        out = out * weight.astype(acc)
    return out.astype(input.dtype)


@expose("torch")
@expose("nn.functional")
def rms_norm(
    input: Tensor, normalized_shape: Any, weight: Tensor | None = None, eps: float | None = None
) -> Tensor:
    shape = (
        (int(normalized_shape),)
        if isinstance(normalized_shape, int)
        else tuple(int(s) for s in normalized_shape)
    )
    dt = input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"rms_norm\" not implemented for '{D.cpp_name(dt)}'")
    if eps is None:  # torch: the epsilon of the type it computes in (float for half inputs)
        eps = D.finfo(D.float32 if dt in (D.float16, D.bfloat16) else dt).eps
    return _rms_norm(input, weight, shape, float(eps))


# --- dropout (the masks are drawn by torchlike.nn.functional; these apply them) -------------------------------


@defop(promote=None, method=False, grad_name="MulBackward0", saves=())
def _dropout_apply(input: RawTensor, noise: RawTensor) -> Any:
    return input * noise.astype(input.dtype)


@defop(promote=None, method=False, grad_name="AddBackward0", saves=())
def _alpha_dropout_apply(input: RawTensor, noise: RawTensor, shift: RawTensor) -> Any:
    return input * noise.astype(input.dtype) + shift.astype(input.dtype)


# --- embedding ---------------------------------------------------------------------------------------------


def _index_check(indices: Tensor, weight: Tensor, fname: str) -> None:
    if indices.dtype not in (D.int64, D.int32):
        from .._common import type_name

        raise RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
            f"{type_name(indices)} instead (while checking arguments for {fname})"
        )
    arr = host_values(indices) if indices.numel() else None
    if arr is not None:
        if arr.min() < 0 or arr.max() >= weight.shape[0]:
            raise IndexError("index out of range in self")


def _emb_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    weight, indices = dyn
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if static[2]:
        raise NotImplementedError("torchlike: embedding with sparse=True (sparse gradients) is not supported")
    _index_check(indices, weight, "embedding")


def _embedding_pad(static: tuple, shapes: tuple) -> tuple:
    """Indices padded with 0 (a row every table has): their rows are sliced off, and their zero cotangents add
    nothing to row 0's gradient. Not with scale_grad_by_freq, which counts the indices."""
    return (None, None if static[1] or not shapes[1] else {a: 0 for a in range(len(shapes[1]))})


_embedding_pad.exact = True  # (a gather, and a scatter-add of zeros after the real cotangents: see _index_pad)


@defop(promote=None, grad_name="EmbeddingBackward0", saves=("indices",), check=_emb_check, method=False,
       nondiff=("indices",), pad=_embedding_pad)  # fmt: skip
def embedding(weight: RawTensor, indices: RawTensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Any:  # fmt: skip
    y = jnp.take(weight, indices, axis=0)
    scale = None
    if scale_grad_by_freq:
        counts = jnp.zeros(weight.shape[0], weight.dtype).at[indices.reshape(-1)].add(1)
        scale = (1 / counts[indices])[..., None]
    if padding_idx >= 0:
        # torch: the padding row gets no gradient
        keep = (indices != padding_idx)[..., None].astype(weight.dtype)
        scale = keep if scale is None else scale * keep
    if scale is not None:
        fixed = lax.stop_gradient(y)
        y = fixed + (y - fixed) * scale
    return y


@defop(promote=None, method=False, grad_name="EmbeddingBagBackward0", saves=("indices",))
def _embedding_bag(weight: RawTensor, indices: RawTensor, offsets: OptRawTensor, per_sample_weights: OptRawTensor,
                   mode: str, padding_idx: int, include_last_offset: bool, n_bags: int) -> Any:  # fmt: skip
    n = indices.shape[0]
    if offsets is None:
        seg = jnp.zeros(n, jnp.int64)
    else:
        off = offsets[:-1] if include_last_offset else offsets
        seg = jnp.searchsorted(off, jnp.arange(n), side="right") - 1
    rows = jnp.take(weight, indices, axis=0)
    keep = jnp.ones(n, bool) if padding_idx < 0 else indices != padding_idx
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None].astype(rows.dtype)
    if mode == "max":
        rows = jnp.where(keep[:, None], rows, -jnp.inf)
        out = jax.ops.segment_max(rows, seg, num_segments=n_bags)
        return jnp.where(jnp.isneginf(out), jnp.zeros_like(out), out)
    rows = jnp.where(keep[:, None], rows, jnp.zeros_like(rows))
    out = jax.ops.segment_sum(rows, seg, num_segments=n_bags)
    if mode == "mean":
        cnt = jax.ops.segment_sum(keep.astype(rows.dtype), seg, num_segments=n_bags)
        out = out / jnp.maximum(cnt, 1)[:, None]
    return out


@defop(promote=None, method=False, differentiable=False)
def _one_hot(input: RawTensor, num_classes: int) -> Any:
    return (input[..., None] == jnp.arange(num_classes, dtype=input.dtype)).astype(jnp.int64)


def _as_tuple(v: Any) -> Any:
    return tuple(v) if isinstance(v, list) else v


# --- weight normalisation ------------------------------------------------------------------------------------


def _except_axes(ndim: int, dim: int) -> tuple:
    if dim == -1:
        return tuple(range(ndim))
    return tuple(a for a in range(ndim) if a != dim % ndim)


@defop(promote=None, method=False, grad_name="NormExceptDimBackward0")
def _norm_except_dim(v: RawTensor, pow: float, dim: int) -> Any:
    axes = _except_axes(v.ndim, dim)
    n = jnp.sum(jnp.abs(v) ** pow, axis=axes, keepdims=dim != -1) ** (1.0 / pow)
    return n


@defop(promote=None, method=False, grad_name="WeightNormInterfaceBackward0")
def _weight_norm(v: RawTensor, g: RawTensor, dim: int) -> Any:
    axes = _except_axes(v.ndim, dim)
    norm = jnp.sqrt(jnp.sum(v * v, axis=axes, keepdims=True))
    return v * (g / norm)
