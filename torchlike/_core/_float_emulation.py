"""Float emulation for the samplers: exact fused multiply-adds (``_fma32``, ``_fma64``) as GCC
contracts them, glibc's libm called element-wise, and the Cephes log/sincos of ATen's
``avx_mathfun.h`` as the AVX2 ``normal_fill_16`` kernel computes them in float32."""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

from torchlike._core import dtype as D

# --- exact arithmetic helpers ---------------------------------------------------------

_TOP = np.uint64(1 << 63)  # a float64 shifted left by 35 equals this exactly when it lies halfway
_S35 = np.uint64(35)  # between two float32s (low 29 bits 0x10000000)
_EXP_BITS = np.uint64(0x7FF0000000000000)
_F32_NORMAL_MIN = np.uint64(897 << 52)  # float64 exponent field of 2**-126
_F64 = struct.Struct("<d")


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _add_round_odd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b rounded to odd: rounding that result once more never double-rounds (Boldo-Melquiond)."""
    s, e = _two_sum(a, b)
    s = np.array(s, np.float64)
    fix = (e != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s[fix] = np.nextafter(s[fix], np.where(np.broadcast_to(e, s.shape)[fix] > 0, np.inf, -np.inf))
    return s


def _redo_halfway(s: np.ndarray, mask: np.ndarray, a: Any, b: Any, c: Any) -> None:
    """s = RN64(a*b + c) with a*b exact: rounding s to float32 can only go wrong where s landed
    exactly halfway between float32s; redo those elements (rare) with round-to-odd."""
    if mask.any():
        i = np.flatnonzero(mask)
        a, b, c = (np.broadcast_to(v, s.shape).reshape(-1)[i] if np.ndim(v) else v for v in (a, b, c))
        s.reshape(-1)[i] = _add_round_odd(np.multiply(a, b, dtype=np.float64), np.float64(c))


def _fma_in64(a: Any, b: Any, c: Any) -> np.ndarray:
    """RN32(a*b + c) for float32 values carried in float64 (results assumed normal, as in the
    AVX2 kernel); returns float64."""
    s = a * b
    s += c
    _redo_halfway(s, np.left_shift(s.view(np.uint64), _S35) == _TOP, a, b, c)
    return s.astype(np.float32).astype(np.float64)


def _fma32(a: Any, b: Any, c: Any, a_ulp: float = 0.0) -> np.ndarray:
    """float32 fused multiply-add, exactly rounded. Results below float32's normal range need a
    check too, skipped when ``a_ulp`` (a lower bound on the spacing of a's nonzero values) and
    scalar b, c prove that no nonzero result can be that small."""
    if type(a) is np.ndarray and a.size == 1 and np.ndim(b) == 0 and np.ndim(c) == 0:
        one = _fma32_one(float(np.float32(a.reshape(-1)[0])), float(np.float32(b)), float(np.float32(c)))
        if one is not None:
            return np.array(one, np.float32).reshape(a.shape)
    a, b, c = (np.asarray(v, np.float32) for v in (a, b, c))
    s = np.array(a.astype(np.float64) * b.astype(np.float64), ndmin=1)
    s += c.astype(np.float64)
    risky = np.left_shift(s.view(np.uint64), _S35) == _TOP
    grid = a_ulp * float(np.spacing(abs(b))) if b.ndim == 0 else 0.0
    if c.ndim or c != 0:
        grid = min(grid, float(np.spacing(abs(c)))) if c.ndim == 0 else 0.0
    if grid < 2.0**-126:  # nonzero results are multiples of `grid`
        risky |= (s.view(np.uint64) & _EXP_BITS) < _F32_NORMAL_MIN
    _redo_halfway(s, risky, a, b, c)
    return s.astype(np.float32).reshape(np.broadcast_shapes(a.shape, b.shape, c.shape))


def _fma32_one(a: float, b: float, c: float) -> float | None:
    """``_fma32`` of one element in Python floats (a small draw's whole cost was NumPy's per-call overhead): the
    same float64 product and sum, None where that sum needs the array path's care (halfway between two float32s,
    or below float32's normal range)."""
    s = a * b + c  # a * b is exact: two float32s carried in float64
    bits = int.from_bytes(_F64.pack(s), "little")
    if bits & 0x1FFFFFFF == 0x10000000 or bits & 0x7FF0000000000000 < 897 << 52:
        return None
    return s


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * a  # Veltkamp split at 27 bits
    hi = c - (c - a)
    return hi, a - hi


def _fma64(a: Any, b: Any, c: Any) -> np.ndarray:
    """float64 fused multiply-add, exactly rounded: Dekker's exact product, then the correctly
    rounded sum of three via round-to-odd (valid away from overflow and underflow)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    ph = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
    sh, sl = _two_sum(c, ph)
    out = sh + _add_round_odd(sl, pl)
    # exact zeros/infinities/NaNs: the compensation terms are meaningless there
    plain = ~np.isfinite(ph) | (ph == 0) | ~np.isfinite(out)
    if plain.any():
        out[plain] = (a * b + c)[plain]
    return out


def _libm(fn: Any, x: np.ndarray) -> np.ndarray:
    """glibc's fn element-wise (CPython's math calls the same libm torch links)."""
    flat = np.asarray(x, np.float64).reshape(-1)
    return np.fromiter(map(fn, flat.tolist()), np.float64, len(flat)).reshape(np.shape(x))


def _to_dtype(x: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """static_cast<scalar_t>(float or double): half and bfloat16 convert through float."""
    if dtype in (D.float16, D.bfloat16):
        return x.astype(np.float32, copy=False).astype(dtype.np)
    return x.astype(dtype.np, copy=False)


# --- normal_fill_16_AVX2: Cephes log/sincos from ATen's avx_mathfun.h, as GCC compiles them ------

_f = np.float32
_LOG_P = [_f(v) for v in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                          1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                          3.3333331174e-1)]  # fmt: skip
_LOG_Q1, _LOG_Q2 = _f(-2.12194440e-4), _f(0.693359375)
_SQRTHF = _f(0.707106781186547524)
_DP = (_f(-0.78515625), _f(-2.4187564849853515625e-4), _f(-3.77489497744594108e-8))
_SIN_P = (_f(-1.9515295891e-4), _f(8.3321608736e-3), _f(-1.6666654611e-1))
_COS_P = (_f(2.443315711809948e-5), _f(-1.388731625493765e-3), _f(4.166664568298827e-2))
_FOPI = _f(1.27323954473516)
_TWO_PI = _f(2.0 * math.pi)


def _r32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32).astype(np.float64)


def _log256(u: np.ndarray) -> np.ndarray:
    """log256_ps for u in (0, 1] (float32), every mul feeding an add fused as in torch's build.
    Values are carried in float64, rounded to float32 after each step."""
    bits = u.view(np.int32)
    e = ((bits >> 23) - 126).astype(np.float64)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(np.float32)  # mantissa scaled to [0.5, 1)
    small = m < _SQRTHF
    x = np.where(small, m + m - 1, m - 1).astype(np.float64)  # both exact, as the intrinsics are
    e -= small
    z = _r32(x * x)
    y = _fma_in64(x, float(_LOG_P[0]), float(_LOG_P[1]))
    for p in _LOG_P[2:]:
        y = _fma_in64(y, x, float(p))
    y = _fma_in64(_r32(y * x), z, _r32(e * float(_LOG_Q1)))
    y = _fma_in64(z, -0.5, y)
    return _fma_in64(e, float(_LOG_Q2), _r32(x + y)).astype(np.float32)


def _sincos256(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sincos256_ps for theta in [0, 2pi) (float32), with torch's fused multiply-adds."""
    j = (theta * _FOPI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float64)
    x = theta.astype(np.float64)
    for dp in _DP:  # exact in float64: theta >= 0.5 when j > 0, so each sum fits 48 bits
        x = _r32(y * float(dp) + x)
    z = _r32(x * x)
    c = _fma_in64(z, float(_COS_P[0]), float(_COS_P[1]))
    c = _fma_in64(c, z, float(_COS_P[2]))
    c = (_fma_in64(_r32(c * z), z, -0.5 * z) + 1.0).astype(np.float32)
    s = _fma_in64(z, float(_SIN_P[0]), float(_SIN_P[1]))
    s = _fma_in64(s, z, float(_SIN_P[2]))
    s = _fma_in64(_r32(s * z), x, x).astype(np.float32)
    sign_sin = ((j & 4) << 29).view(np.uint32)
    sign_cos = ((~(j - 2) & 4) << 29).view(np.uint32)
    use_sin_poly = (j & 2) == 0
    # the kernel selects by masking and adding +0.0, which turns -0.0 into +0.0
    sin = np.where(use_sin_poly, s, c) + _f(0)
    cos = np.where(use_sin_poly, c, s) + _f(0)
    return (sin.view(np.uint32) ^ sign_sin).view(np.float32), (cos.view(np.uint32) ^ sign_cos).view(np.float32)
