"""torch's CPU ``interpolate(..., antialias=True)`` (bilinear/bicubic, float32) with the kernel's own rounding.

torch resizes one axis at a time (width, then height). Per output pixel it computes float32 weights over a window of
input pixels, then sums ``pixel * weight`` in float32. The kernel as built for AVX2/AVX512 CPUs adds the first product,
then groups of four unfused products, then the rest with fused multiply-adds (the compiler's contraction). Those last
bits decide the rounding of uint8 images, so the host path below repeats them; NumPy has no fused multiply-add, so it
is done in float64, where a product of two float32 is exact (a double rounding could differ from a true fused
multiply-add in rare ties).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

_f32 = np.float32


def _fma(a: float, b: float, c: float) -> np.float32:
    return _f32(float(a) * float(b) + float(c))


def _filter(x: np.float32, mode: str) -> np.float32:
    x = abs(x)
    if mode == "bilinear":
        return _f32(1.0 - float(x)) if x < 1.0 else _f32(0.0)
    a = _f32(-0.5)  # Keys' cubic, as torch's cubic_convolution1/2 (contracted to fused multiply-adds)
    if x < 1.0:
        return _fma(_fma(a + 2, x, -(a + 3)) * x, x, 1.0)
    if x < 2.0:
        return _fma(_fma(_fma(a, x, -5 * a), x, 8 * a), x, -4 * a)
    return _f32(0.0)


@lru_cache(maxsize=256)
def weights(in_size: int, out_size: int, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per output index: the first input index, the float32 weights (zero-padded to the widest window) and the
    window's width, as torch's ``_compute_indices_min_size_weights_aa`` computes them for float32."""
    scale = _f32(in_size) / _f32(out_size)
    half = 1.0 if mode == "bilinear" else 2.0
    support = _f32(half * float(scale)) if scale >= 1.0 else _f32(half)
    width = int(math.ceil(float(support))) * 2 + 1
    invscale = _f32(1.0 / float(scale)) if scale >= 1.0 else _f32(1.0)
    first = np.zeros(out_size, np.int64)
    sizes = np.zeros(out_size, np.int64)
    w = np.zeros((out_size, width), np.float32)
    for i in range(out_size):
        center = _f32(float(scale) * (i + 0.5))
        xmin = max(int(float(center - support) + 0.5), 0)
        xsize = min(max(min(int(float(center + support) + 0.5), in_size) - xmin, 0), width)
        total = _f32(0.0)
        for j in range(xsize):
            w[i, j] = _filter(_f32((float(_f32(j + xmin) - center) + 0.5) * float(invscale)), mode)
            total = total + w[i, j]
        if total != 0:
            w[i, :xsize] /= total
        first[i], sizes[i] = xmin, xsize
    for arr in (first, sizes, w):
        arr.flags.writeable = False
    return first, w, sizes


def weight_matrix(in_size: int, out_size: int, mode: str) -> np.ndarray:
    """The same weights as an (out_size, in_size) matrix."""
    first, w, sizes = weights(in_size, out_size, mode)
    m = np.zeros((out_size, in_size), np.float32)
    for i in range(out_size):
        m[i, first[i] : first[i] + sizes[i]] = w[i, : sizes[i]]
    return m


@lru_cache(maxsize=256)
def _plan(in_size: int, out_size: int, mode: str) -> tuple[np.ndarray, list]:
    """The input index of each tap (out_size, width) and, per tap after the first, its weights and which output
    pixels add it with a fused multiply-add: True/False where all or none do, else the mask."""
    first, w, sizes = weights(in_size, out_size, mode)
    taps = np.minimum(first[:, None] + np.arange(w.shape[1]), in_size - 1)
    steps = []
    for j in range(1, w.shape[1]):
        fused = j > 4 * ((sizes - 1) // 4)
        kind = True if fused.all() else False if not fused.any() else fused
        steps.append((np.ascontiguousarray(w[:, j]), w[:, j].astype(np.float64), kind))
    return taps, [np.ascontiguousarray(w[:, 0])] + steps


def _resize_last_axis(a: np.ndarray, out_size: int, mode: str) -> np.ndarray:
    taps, (w0, *steps) = _plan(a.shape[-1], out_size, mode)
    x = a[..., taps]
    acc = x[..., 0] * w0
    for j, (wj, wj64, fused) in enumerate(steps, 1):
        if fused is not True:
            plain = acc + x[..., j] * wj
            if fused is False:
                acc = plain
                continue
        exact = (acc.astype(np.float64) + x[..., j].astype(np.float64) * wj64).astype(_f32)
        acc = exact if fused is True else np.where(fused, exact, plain)
    return acc


def resize_host(a: np.ndarray, size: list[int], mode: str) -> np.ndarray:
    """A float32 (..., H, W) array resized to ``size`` as torch's CPU kernel does, bit for bit."""
    if size[1] != a.shape[-1]:
        a = _resize_last_axis(a, size[1], mode)
    if size[0] != a.shape[-2]:
        a = np.swapaxes(_resize_last_axis(np.swapaxes(a, -1, -2), size[0], mode), -1, -2)
    return np.array(a, dtype=_f32, order="C")  # a new array even when no axis changed (the caller owns it)
