"""Padding, pixel shuffle, interpolation, grid sampling, im2col/col2im and attention: JAX bodies.

Interpolation builds each spatial dimension's index/weight table on the host with torch's formulas
in torch's precision (float for float inputs), so the sampled positions match torch's exactly.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..._core.tensor import Tensor
from .._common import special_ord
from ..registry import OptRawTensor, OptScalar, RawTensor, Scalar, ScalarOrStatic, TensorArg, defop, expose


# --- padding ----------------------------------------------------------------------------------------------


@defop(promote=None, method=False, grad_name="ConstantPadNdBackward0", saves=())
def _constant_pad_nd(input: RawTensor, pad: tuple, value: Scalar = 0) -> Any:
    n = len(pad) // 2
    cfg = [(0, 0, 0)] * (input.ndim - n)
    for i in range(n):
        lo, hi = pad[2 * (n - 1 - i)], pad[2 * (n - 1 - i) + 1]
        cfg.append((lo, hi, 0))
    return lax.pad(input, jnp.asarray(value, input.dtype), cfg)


@expose("torch")
def constant_pad_nd(input: Tensor, pad: Any, value: float = 0) -> Tensor:
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the input. Pad length is "
            f"{len(pad)} while the input has {input.dim()} dimensions."
        )
    return _constant_pad_nd(input, pad, value)


def _mode_pad_name(static: tuple, dyn: tuple) -> str:
    pad, mode = static
    k = len(pad) // 2
    if mode == "circular":
        return "CopySlices"
    return f"{'ReflectionPad' if mode == 'reflect' else 'ReplicationPad'}{k}DBackward0"


@defop(promote=None, method=False, grad_name=_mode_pad_name, saves=())
def _mode_pad(input: RawTensor, pad: tuple, mode: str) -> Any:
    n = len(pad) // 2
    widths = [(0, 0)] * (input.ndim - n)
    for i in range(n):
        widths.append((pad[2 * (n - 1 - i)], pad[2 * (n - 1 - i) + 1]))
    if mode == "replicate":  # torch: out[j] = in[clamp(j - lo, 0, size - 1)], which also covers negative pads
        x = input
        for d, (lo, hi) in enumerate(widths):
            if lo or hi:
                x = jnp.take(x, np.clip(np.arange(x.shape[d] + lo + hi) - lo, 0, x.shape[d] - 1), axis=d)
        return x
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    jmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    x = input
    if any(lo < 0 or hi < 0 for lo, hi in widths):  # negative padding crops first
        x = x[tuple(slice(-min(lo, 0), x.shape[d] + min(hi, 0)) for d, (lo, hi) in enumerate(widths))]
    return jnp.pad(x, pos, mode=jmode)


@expose("nn.functional")
def pad(input: Tensor, pad: Any, mode: str = "constant", value: float | None = None) -> Tensor:
    """torch.nn.functional.pad."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got padding length "
            f"{len(pad)} and input of dimension {input.dim()}"
        )
    if mode == "constant":
        return _constant_pad_nd(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    k = len(pad) // 2
    if not (k + 1 <= input.dim() <= k + 2 and k in (1, 2, 3)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.dim()}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    for i in range(k):
        dim = input.dim() - 1 - i
        size = input.shape[dim]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input dimension, but got: padding "
                f"({lo}, {hi}) at dimension {dim} of input {list(input.shape)}"
            )
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    return _mode_pad(input, pad, mode)


# --- pixel shuffle -------------------------------------------------------------------------------------------


def _ps_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, r = dyn[0], static[0]
    if x.dim() < 3:
        raise RuntimeError(
            f"pixel_shuffle expects input to have at least 3 dimensions, but got input with {x.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if x.shape[-3] % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
            f"but input.size(-3)={x.shape[-3]} is not divisible by {r * r}"
        )


@defop(promote=None, namespaces=("torch", "nn.functional"), check=_ps_check, saves=())
def pixel_shuffle(input: RawTensor, upscale_factor: int) -> Any:
    r = upscale_factor
    *lead, c, h, w = input.shape
    x = input.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _pu_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, r = dyn[0], static[0]
    if x.dim() < 3:
        raise RuntimeError(
            f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with {x.dim()} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    if x.shape[-2] % r:
        raise RuntimeError(
            f"pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={x.shape[-2]} is "
            f"not divisible by {r}"
        )
    if x.shape[-1] % r:
        raise RuntimeError(
            f"pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={x.shape[-1]} is "
            f"not divisible by {r}"
        )


@defop(promote=None, namespaces=("torch", "nn.functional"), check=_pu_check, saves=())
def pixel_unshuffle(input: RawTensor, downscale_factor: int) -> Any:
    r = downscale_factor
    *lead, c, h, w = input.shape
    n = len(lead)
    x = input.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


# --- interpolation ---------------------------------------------------------------------------------------------


def _scale_value(ftype: Any, scale: Any, in_size: int, out_size: int) -> Any:
    """torch's compute_scales_value in the kernel's precision."""
    if scale is not None and scale > 0:
        return ftype(1.0 / scale)
    return ftype(in_size) / ftype(out_size)


def nearest_indices(in_size: int, out_size: int, scale: Any, exact: bool) -> np.ndarray:
    if not exact and out_size == in_size:
        return np.arange(out_size)
    if not exact and out_size == 2 * in_size:
        return np.arange(out_size) >> 1
    s = _scale_value(np.float32, scale, in_size, out_size)
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def _linear_scale(ftype: Any, in_size: int, out_size: int, align_corners: bool, scale: Any) -> Any:
    if align_corners:
        return ftype(in_size - 1) / ftype(out_size - 1) if out_size > 1 else ftype(0)
    return _scale_value(ftype, scale, in_size, out_size)


def _source_index(ftype: Any, s: Any, out_size: int, align_corners: bool, cubic: bool) -> np.ndarray:
    dst = np.arange(out_size).astype(ftype)
    if align_corners:
        return s * dst
    src = s * (dst + ftype(0.5)) - ftype(0.5)
    return src if cubic else np.maximum(src, ftype(0))


def linear_matrix(ftype: Any, in_size: int, out_size: int, align_corners: bool, scale: Any) -> np.ndarray:
    s = _linear_scale(ftype, in_size, out_size, align_corners, scale)
    src = _source_index(ftype, s, out_size, align_corners, False)
    i0 = src.astype(np.int64)
    lam1 = np.clip(src - i0.astype(ftype), ftype(0), ftype(1)).astype(ftype)
    lam0 = (ftype(1) - lam1).astype(ftype)
    i1 = i0 + (i0 < in_size - 1)
    m = np.zeros((out_size, in_size), ftype)
    rows = np.arange(out_size)
    np.add.at(m, (rows, i0), lam0)
    np.add.at(m, (rows, i1), lam1)
    return m


def cubic_matrix(ftype: Any, in_size: int, out_size: int, align_corners: bool, scale: Any) -> np.ndarray:
    a = ftype(-0.75)
    s = _linear_scale(ftype, in_size, out_size, align_corners, scale)
    src = _source_index(ftype, s, out_size, align_corners, True)
    idx = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    t = np.clip(src - idx.astype(ftype), ftype(0), ftype(1)).astype(ftype)

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    coeffs = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    m = np.zeros((out_size, in_size), ftype)
    rows = np.arange(out_size)
    for j, c in enumerate(coeffs):
        np.add.at(m, (rows, np.clip(idx - 1 + j, 0, in_size - 1)), c.astype(ftype))
    return m


_UPSAMPLE_NAMES = {"nearest": "UpsampleNearest", "nearest-exact": "UpsampleNearestExact", "linear": "UpsampleLinear",
                   "bilinear": "UpsampleBilinear", "trilinear": "UpsampleTrilinear", "bicubic": "UpsampleBicubic"}  # fmt: skip


def _upsample_name(static: tuple, dyn: tuple) -> str:
    out_size, mode = static[0], static[1]
    return f"{_UPSAMPLE_NAMES[mode]}{len(out_size)}DBackward0"


@defop(promote=None, method=False, grad_name=_upsample_name, saves=())
def _upsample(input: RawTensor, output_size: tuple, mode: str, align_corners: bool, scales: tuple) -> Any:
    n = len(output_size)
    x = input
    ftype = np.float64 if input.dtype == jnp.float64 else np.float32
    for i, (o, sc) in enumerate(zip(output_size, scales)):
        axis = x.ndim - n + i
        size = x.shape[axis]
        if mode in ("nearest", "nearest-exact"):
            x = jnp.take(x, jnp.asarray(nearest_indices(size, o, sc, mode == "nearest-exact")), axis=axis)
            continue
        m = (cubic_matrix if mode == "bicubic" else linear_matrix)(ftype, size, o, align_corners, sc)
        acc = jnp.float32 if x.dtype in (jnp.float16, jnp.bfloat16) else x.dtype
        y = jnp.tensordot(x.astype(acc), jnp.asarray(m, acc), axes=([axis], [1]))
        x = jnp.moveaxis(y, -1, axis).astype(input.dtype)
    return x


# --- grid sampling ----------------------------------------------------------------------------------------------


def _unnormalize(coord: Any, size: int, align_corners: bool) -> Any:
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x: Any, twice_low: int, twice_high: int) -> Any:
    """torch's reflect_coordinates (bounds given doubled)."""
    if twice_low == twice_high:
        return jnp.zeros_like(x)
    mn = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = jnp.abs(x - mn)
    extra = jnp.fmod(x, span)
    flips = jnp.floor(x / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + mn, span - extra + mn)


def _source_coord(coord: Any, size: int, padding_mode: int, align_corners: bool) -> Any:
    c = _unnormalize(coord, size, align_corners)
    if padding_mode == 1:
        c = jnp.clip(c, 0, size - 1)
    elif padding_mode == 2:
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        c = jnp.clip(c, 0, size - 1)
    return c


def _grid_name(static: tuple, dyn: tuple) -> str:
    return f"GridSampler{dyn[0].dim() - 2}DBackward0"


@defop(promote=None, grad_name=_grid_name, method=False, aliases=("grid_sampler_2d", "grid_sampler_3d"))
def grid_sampler(input: RawTensor, grid: RawTensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Any:  # fmt: skip
    """torch.grid_sampler for 4-D and 5-D inputs (bilinear/trilinear and nearest)."""
    if input.ndim not in (4, 5):
        raise NotImplementedError("torchlike: grid_sample supports 4-D and 5-D inputs only")
    if interpolation_mode == 2:
        raise NotImplementedError("torchlike: grid_sample mode='bicubic' is not supported")
    n, c = input.shape[:2]
    spatial = input.shape[2:]
    k = len(spatial)
    # grid's last axis is (x, y[, z]): x indexes the last spatial dimension
    coords = [_source_coord(grid[..., k - 1 - j], spatial[j], padding_mode, align_corners) for j in range(k)]
    flat = input.reshape(n, c, -1)

    def gather(idx: list) -> Any:
        ok = functools.reduce(lambda a, b: a & b, [(i >= 0) & (i < size) for i, size in zip(idx, spatial)])
        lin = functools.reduce(lambda a, b: a * b[1] + b[0], [(jnp.clip(i, 0, size - 1), size)
                                                            for i, size in zip(idx, spatial)], 0)  # fmt: skip
        lin = lin.reshape(n, 1, -1)
        vals = jnp.take_along_axis(flat, jnp.broadcast_to(lin, (n, c, lin.shape[-1])), axis=2)
        vals = vals.reshape((n, c) + idx[0].shape[1:])
        return jnp.where(ok[:, None], vals, jnp.zeros_like(vals))

    if interpolation_mode == 1:
        return gather([jnp.round(x).astype(jnp.int64) for x in coords])  # torch: nearbyint, round half to even
    lows = [jnp.floor(x) for x in coords]
    highs = [x - lo for x, lo in zip(coords, lows)]  # the weight of the upper neighbour
    out = None
    for corner in itertools.product((0, 1), repeat=k):  # torch's order: nw, ne, sw, se (then the far face)
        w = functools.reduce(lambda a, b: a * b, [h if up else 1 - h for h, up in zip(highs, corner)])
        term = gather([lo.astype(jnp.int64) + up for lo, up in zip(lows, corner)]) * w[:, None]
        out = term if out is None else out + term
    return out


# --- im2col / col2im (unfold / fold) ------------------------------------------------------------------------------


def _im2col_body(x: Any, kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Any:
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    n, c = x.shape[:2]
    patches = lax.conv_general_dilated_patches(
        x, kernel_size, stride, [(p, p) for p in padding], rhs_dilation=dilation,
        dimension_numbers=("NCHW", "OIHW", "NCHW"), precision=lax.Precision.HIGHEST,
    )  # fmt: skip
    out = patches.reshape(n, c * kernel_size[0] * kernel_size[1], patches.shape[2] * patches.shape[3])
    return out[0] if unbatched else out


@defop(promote=None, method=False, grad_name="Im2ColBackward0", saves=())
def _im2col(input: RawTensor, kernel_size: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Any:
    return _im2col_body(input, kernel_size, dilation, padding, stride)


@defop(promote=None, method=False, grad_name="Col2ImBackward0", saves=())
def _col2im(input: RawTensor, output_size: tuple, kernel_size: tuple, dilation: tuple, padding: tuple,
            stride: tuple) -> Any:  # fmt: skip
    unbatched = input.ndim == 2
    cols = input[None] if unbatched else input
    n = cols.shape[0]
    c = cols.shape[1] // (kernel_size[0] * kernel_size[1])
    spec = jax.ShapeDtypeStruct((n, c) + tuple(output_size), cols.dtype)
    # col2im is the adjoint of im2col
    (img,) = jax.linear_transpose(lambda im: _im2col_body(im, kernel_size, dilation, padding, stride), spec)(
        cols
    )
    return img[0] if unbatched else img


# --- attention ---------------------------------------------------------------------------------------------------


def _sdpa_name(static: tuple, dyn: tuple) -> str:
    return "ScaledDotProductFlashAttentionForCpuBackward0" if dyn[0].dim() == 4 else "UnsafeViewBackward0"


def attention_scores(
    query: Any, key: Any, attn_mask: Any, is_causal: bool, scale: Any, enable_gqa: bool
) -> Any:
    """softmax(q k^T * scale + mask) over the last dim, in the query's dtype."""
    l, s = query.shape[-2], key.shape[-2]
    if enable_gqa and key.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = jnp.repeat(key, rep, axis=-3)
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    logits = jnp.matmul(query, jnp.swapaxes(key, -1, -2)) * jnp.asarray(sc, query.dtype)
    if is_causal:
        causal = jnp.tril(jnp.ones((l, s), bool))
        logits = jnp.where(causal, logits, -jnp.inf)
    if attn_mask is not None:
        if attn_mask.dtype == jnp.bool_:
            logits = jnp.where(attn_mask, logits, -jnp.inf)
        else:
            logits = logits + attn_mask.astype(logits.dtype)
    return jax.nn.softmax(logits, axis=-1)


def _values(value: Any, query: Any, enable_gqa: bool) -> Any:
    if enable_gqa and value.ndim >= 3 and value.shape[-3] != query.shape[-3]:
        value = jnp.repeat(value, query.shape[-3] // value.shape[-3], axis=-3)
    return value


@defop(promote=None, method=False, grad_name=_sdpa_name)
def _sdpa(query: RawTensor, key: RawTensor, value: RawTensor, attn_mask: OptRawTensor, is_causal: bool,
          scale: OptScalar, enable_gqa: bool, fused: bool = False) -> Any:  # fmt: skip
    """``fused`` (4-D inputs on a GPU): JAX's dot_product_attention, which uses cuDNN's fused
    attention where it can, instead of materialising the attention matrix."""
    if fused:
        return _fused_attention(query, key, value, attn_mask, is_causal, scale)
    w = attention_scores(query, key, attn_mask, is_causal, scale, enable_gqa)
    return jnp.matmul(w, _values(value, query, enable_gqa))


def _fused_attention(query: Any, key: Any, value: Any, attn_mask: Any, is_causal: bool, scale: Any) -> Any:
    # torch's layout is (batch, heads, seq, dim); JAX's is (batch, seq, heads, dim)
    q, k, v = (jnp.swapaxes(x, 1, 2) for x in (query, key, value))
    mask = bias = None
    if attn_mask is not None:
        m = attn_mask.reshape((1,) * (4 - attn_mask.ndim) + attn_mask.shape)
        if m.dtype == jnp.bool_:
            mask = m
        else:
            bias = m.astype(q.dtype)
    out = jax.nn.dot_product_attention(q, k, v, bias=bias, mask=mask, is_causal=is_causal, scale=scale)
    return jnp.swapaxes(out, 1, 2)


@defop(promote=None, method=False, grad_name="SoftmaxBackward0")
def _sdpa_weights(query: RawTensor, key: RawTensor, attn_mask: OptRawTensor, is_causal: bool, scale: OptScalar,
                  enable_gqa: bool) -> Any:  # fmt: skip
    return attention_scores(query, key, attn_mask, is_causal, scale, enable_gqa)


@defop(promote=None, method=False, grad_name="UnsafeViewBackward0")
def _sdpa_apply(weights: RawTensor, value: RawTensor, query_heads: int, enable_gqa: bool) -> Any:
    v = value
    if enable_gqa and v.ndim >= 3 and v.shape[-3] != query_heads:
        v = jnp.repeat(v, query_heads // v.shape[-3], axis=-3)
    return jnp.matmul(weights, v)


def _mha_name(static: tuple, dyn: tuple) -> str:
    need_weights, average = static[1], static[2]
    return "MeanBackward1" if need_weights and average else "ViewBackward0"


@defop(promote=None, method=False, grad_name=_mha_name)
def _mha_attention(q: RawTensor, k: RawTensor, v: RawTensor, attn_mask: OptRawTensor, key_padding_mask: OptRawTensor,
                   bias_k: OptRawTensor, bias_v: OptRawTensor, noise: OptRawTensor, num_heads: int, need_weights: bool,
                   average_attn_weights: bool, add_zero_attn: bool) -> Any:  # fmt: skip
    """multi_head_attention_forward between the projections: q (L, N, E), k and v (S, N, E) -> (L, N, E), weights.

    Masks are bool (True = masked) or additive floats, as torch's _canonical_mask makes them; ``noise`` is the
    dropout multiplier for the attention weights (None without dropout).
    """
    tgt, bsz, e = q.shape
    hd = e // num_heads

    def additive(m: Any) -> Any:
        if m.dtype == jnp.bool_:
            return jnp.where(m, -jnp.inf, 0.0).astype(q.dtype)
        return m.astype(q.dtype)

    mask = None if attn_mask is None else additive(attn_mask)
    kpm = None if key_padding_mask is None else additive(key_padding_mask)
    if mask is not None and mask.ndim == 2:
        mask = mask[None]
    if bias_k is not None:
        k = jnp.concatenate([k, jnp.broadcast_to(bias_k.reshape(1, 1, e), (1, bsz, e))])
        v = jnp.concatenate([v, jnp.broadcast_to(bias_v.reshape(1, 1, e), (1, bsz, e))])
        mask = None if mask is None else jnp.pad(mask, [(0, 0), (0, 0), (0, 1)])
        kpm = None if kpm is None else jnp.pad(kpm, [(0, 0), (0, 1)])
    qh = jnp.swapaxes(q.reshape(tgt, bsz * num_heads, hd), 0, 1)
    kh = jnp.swapaxes(k.reshape(k.shape[0], bsz * num_heads, hd), 0, 1)
    vh = jnp.swapaxes(v.reshape(v.shape[0], bsz * num_heads, hd), 0, 1)
    if add_zero_attn:
        zeros = jnp.zeros((bsz * num_heads, 1, hd), q.dtype)
        kh = jnp.concatenate([kh, zeros], axis=1)
        vh = jnp.concatenate([vh, zeros], axis=1)
        mask = None if mask is None else jnp.pad(mask, [(0, 0), (0, 0), (0, 1)])
        kpm = None if kpm is None else jnp.pad(kpm, [(0, 0), (0, 1)])
    src = kh.shape[1]
    if kpm is not None:
        kpm = jnp.broadcast_to(kpm.reshape(bsz, 1, 1, src), (bsz, num_heads, 1, src)).reshape(
            bsz * num_heads, 1, src
        )
        mask = kpm if mask is None else mask + kpm
    scores = jnp.matmul(qh * math.sqrt(1.0 / float(hd)), jnp.swapaxes(kh, -1, -2))
    if mask is not None:
        scores = scores + mask
    w = jax.nn.softmax(scores, axis=-1)
    if noise is not None:
        w = w * noise.reshape(w.shape).astype(w.dtype)
    out = jnp.matmul(w, vh)
    out = jnp.swapaxes(out, 0, 1).reshape(tgt, bsz, e)
    if not need_weights:
        return out
    w = w.reshape(bsz, num_heads, tgt, src)
    return out, (w.mean(axis=1) if average_attn_weights else w)


# --- channel shuffle, unpooling, pdist -----------------------------------------------------------------------------


def _cs_check(cdt: Any, dyn: tuple, static: tuple) -> None:
    x, g = dyn[0], static[0]
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    if x.dim() < 3:
        raise RuntimeError(
            f"channel_shuffle expects input to have at least 3 dimensions, but got input with sizes {list(x.shape)}"
        )
    if x.shape[1] % g:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {x.shape[1]} channels and {g} groups."
        )


@defop(promote=None, check=_cs_check, saves=(),
       namespaces=("torch", "nn.functional", "torch:native_channel_shuffle", "nn.functional:native_channel_shuffle"))
def channel_shuffle(input: RawTensor, groups: int) -> Any:
    n, c = input.shape[:2]
    rest = input.shape[2:]
    x = input.reshape((n, groups, c // groups) + rest)
    return jnp.swapaxes(x, 1, 2).reshape(input.shape)


def _unpool_name(static: tuple, dyn: tuple) -> str:
    return {1: "SqueezeBackward1", 2: "MaxUnpool2DBackward0", 3: "MaxUnpool3DBackward0"}[static[1]]


@defop(promote=None, method=False, grad_name=_unpool_name, saves=("indices",))
def _max_unpool(input: RawTensor, indices: RawTensor, output_size: tuple, n: int) -> Any:
    lead = input.shape[: input.ndim - len(output_size)]
    flat_in = input.reshape(lead + (-1,))
    idx = indices.reshape(lead + (-1,)).astype(jnp.int64)
    size = int(np.prod(output_size))
    out = jnp.zeros(lead + (size,), input.dtype)
    out = _unpool_scatter(out, flat_in, idx)
    return out.reshape(lead + tuple(output_size))


@jax.custom_vjp
def _unpool_scatter(out: Any, flat_in: Any, idx: Any) -> Any:
    batch = jnp.indices(idx.shape)[:-1]
    return out.at[tuple(batch) + (idx,)].set(flat_in)


def _unpool_scatter_fwd(out: Any, flat_in: Any, idx: Any) -> tuple:
    return _unpool_scatter(out, flat_in, idx), idx


def _unpool_scatter_bwd(idx: Any, g: Any) -> tuple:
    # torch: every input gets the output gradient at its index, also where indices repeat (JAX's scatter
    # would give it only to the value that was written)
    return None, jnp.take_along_axis(g, idx, axis=-1), None


_unpool_scatter.defvjp(_unpool_scatter_fwd, _unpool_scatter_bwd)


@defop(promote="float", namespaces=("torch", "nn.functional"), grad_name="PdistBackward0", bake=special_ord)
def pdist(input: TensorArg, p: ScalarOrStatic = 2) -> Any:
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    from .loss import _pnorm

    n = input.shape[0]
    i, j = np.triu_indices(n, 1)
    d = input[i] - input[j]
    return _pnorm(d, p, 1) if d.size else jnp.zeros((0,), input.dtype)

