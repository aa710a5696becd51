"""torch's CPU random number generator, reproduced bit for bit with numpy.

torch's ``CPUGeneratorImpl`` is a plain mt19937 seeded by ``init_genrand(seed & 0xffffffff)``;
numpy's ``MT19937`` produces the same 32-bit words from the same key, so it serves as the engine.
``Generator`` adds torch's bookkeeping (the 64-bit initial seed, the cached Box-Muller sample, the
5056-byte state layout), and the sampling functions apply torch 2.13's CPU transforms to those
words. Every function returns a numpy array in the order torch's serial kernels visit a contiguous
output (C order); the tensor layer permutes for non-contiguous outputs, and passes
``contiguous=False`` to ``normal``, whose algorithm depends on it.

What the transforms need, found by reading ATen and checking against torch 2.13 (x86-64, glibc):

* float32 ``normal_`` with >= 16 contiguous elements runs ``normal_fill_16_AVX2`` (AVX-512 CPUs
  included: torch does not dispatch ``normal_stub`` there): Cephes polynomial log/sincos from
  ``avx_mathfun.h``, compiled with fused multiply-adds. float16/bfloat16 run the same float kernel
  16 elements at a time and round. The fused steps are emulated exactly (``_fma_in64``).
* The double-precision kernels (float64 normal, exponential, cauchy, log-normal, geometric, the
  element-wise Box-Muller path of small or strided outputs) call glibc's ``log``/``log1p``/
  ``sin``/``cos``/``tan``/``exp``. numpy's SIMD versions differ from glibc in the last bit, so
  these go through CPython's ``math`` (the same libm torch links) element-wise via ``map``; the
  multiply-adds GCC contracts in them (``x * std + mean`` and friends) are emulated exactly
  (``_fma64``).
* ``random_(from, to)`` draws 64-bit words once the range reaches 2**28; ``bernoulli_`` draws one
  double per element (no MKL stream in 2.13); ``multinomial`` without replacement (or with one
  sample) takes torch's exponential/top-k route, and ties in that top-k are ordered as libstdc++'s
  ``partial_sort``/``nth_element`` leave them (``_stl_sort`` replays those algorithms).
* Casts from double to float16/bfloat16 go through float32, as ``c10::Half(double)`` does.

Assumed, not reproducible otherwise: torch's x86-64 build on a CPU with AVX2 (torch's ARM and
pre-AVX2 float kernels compute ``normal_`` differently), and torch-valid states only (a state
whose ``left``/``next`` make torch read past its 624 words raises NotImplementedError).

Layout: the stream is ``_mt19937``, the float emulation ``_float_emulation``, libstdc++'s sorting
``_stl_sort``; this module holds the samplers and re-exports ``Generator``.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from torchlike._core import dtype as D
from torchlike._core._float_emulation import _TWO_PI, _f, _fma32, _fma32_one, _fma64, _libm, _log256, _sincos256, _to_dtype
from torchlike._core._mt19937 import _DEFAULT_SEED, _I64_MAX, _I64_MIN, _U64, Generator, _u24, _u53  # noqa: F401
from torchlike._core._stl_sort import topk_row

__all__ = [
    "Generator",
    "uniform",
    "normal",
    "normal_tensor",
    "randint",
    "random_",
    "random_from_to",
    "randperm",
    "exponential",
    "geometric",
    "log_normal",
    "cauchy",
    "bernoulli",
    "multinomial",
    "standard_gamma",
    "dirichlet",
    "poisson",
    "binomial",
]

# --- messages --------------------------------------------------------------------------

# caffe2::TypeMeta names, which some of torch's checks print
_TYPEMETA = {
    D.bool: "bool", D.uint8: "unsigned char", D.int8: "signed char", D.int16: "short int", D.int32: "int",
    D.int64: "long int", D.uint16: "short unsigned int", D.uint32: "unsigned int",
    D.uint64: "long unsigned int", D.float16: "c10::Half", D.bfloat16: "c10::BFloat16", D.float32: "float",
    D.float64: "double", D.complex64: "c10::complex<float>", D.complex128: "c10::complex<double>",
}  # fmt: skip


def _g(x: float) -> str:
    """C++ ostream formatting of a double (precision 6)."""
    return f"{x:g}"


def _not_implemented(kernel: str, dtype: D.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(dtype)}'")


def _numel(shape: Sequence[int] | int) -> tuple[tuple[int, ...], int]:
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape, math.prod(shape)


def _digits(dtype: D.dtype) -> int:
    return {D.float16: 11, D.bfloat16: 8, D.float32: 24, D.float64: 53}[dtype]


def _normal_fill16(u: np.ndarray, mean: np.float32, std: np.float32) -> np.ndarray:
    """Box-Muller over blocks of 16 uniforms (rows): pairs (j, j + 8)."""
    out = np.empty_like(u)
    rows = 2048
    for i in range(0, len(u), rows):  # chunks keep the temporaries in cache
        blk = u[i : i + rows]
        k = len(blk)
        radius = np.sqrt(_f(-2) * _log256((_f(1) - blk[:, :8]).reshape(-1))).reshape(k, 8)
        sin, cos = _sincos256((_TWO_PI * blk[:, 8:]).reshape(-1))
        n = np.concatenate([radius * cos.reshape(k, 8), radius * sin.reshape(k, 8)], axis=1)
        # nonzero |n| >= 2**-60 (radius >= 2**-12, |sin|, |cos| >= 2**-48), so its spacing >= 2**-84
        out[i : i + rows] = n + mean if std == 1 else _fma32(n, std, mean, a_ulp=2.0**-84)
    return out


def _normal_fill_float(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """normal_fill_AVX2: all n uniforms first; a ragged tail redraws and redoes the last 16."""
    m, s = _f(mean), _f(std)
    u = _u24(gen, n)
    k = n // 16
    out = np.empty(n, np.float32)
    out[: 16 * k] = _normal_fill16(u[: 16 * k].reshape(k, 16), m, s).reshape(-1)
    if n % 16:
        out[n - 16 :] = _normal_fill16(_u24(gen, 16).reshape(1, 16), m, s).reshape(-1)
    return out


def _normal_fill_reduced(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """float16/bfloat16: the float kernel one block of 16 at a time; a ragged tail is one more
    block, drawn after the others and stored over the last 16 outputs."""
    k = -(-n // 16)
    buf = _normal_fill16(_u24(gen, 16 * k).reshape(k, 16), _f(mean), _f(std)).reshape(-1)
    return np.concatenate([buf[: n - 16], buf[-16:]]) if n % 16 else buf


def _normal_fill_double(gen: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """normal_fill<double>: the same blocking, with glibc's log/cos/sin in double."""

    def fill(u: np.ndarray) -> np.ndarray:
        radius = np.sqrt(-2.0 * _libm(math.log, 1.0 - u[:, :8]))
        theta = (2.0 * math.pi) * u[:, 8:]
        n = np.concatenate([radius * _libm(math.cos, theta), radius * _libm(math.sin, theta)], axis=1)
        return _fma64(n, std, mean)

    u = _u53(gen, n)
    k = n // 16
    out = np.empty(n, np.float64)
    out[: 16 * k] = fill(u[: 16 * k].reshape(k, 16)).reshape(-1)
    if n % 16:
        out[n - 16 :] = fill(_u53(gen, 16).reshape(1, 16)).reshape(-1)
    return out


def _normal_double_stream(gen: Generator, n: int) -> np.ndarray:
    """n draws of normal_distribution<double>(0, 1): Box-Muller pairs whose sine is cached in the
    generator and returned by the next draw."""
    out = np.empty(n, np.float64)
    if n == 0:
        return out
    start = 0
    if gen._next_double_normal is not None:
        out[0] = gen._next_double_normal
        gen._next_double_normal = None
        start = 1
    pairs = (n - start + 1) // 2
    u = _u53(gen, 2 * pairs).reshape(pairs, 2)
    r = np.sqrt(-2.0 * _libm(math.log1p, -u[:, 1]))
    theta = (2.0 * math.pi) * u[:, 0]
    vals = np.stack([r * _libm(math.cos, theta), r * _libm(math.sin, theta)], axis=1).reshape(-1)
    out[start:] = vals[: n - start]
    if (n - start) % 2:
        gen._next_double_normal = float(vals[-1])
    return out


# --- uniform and normal ---------------------------------------------------------------------


def _complex_view(x: np.ndarray, dtype: D.dtype, shape: tuple[int, ...]) -> np.ndarray:
    return np.ascontiguousarray(x).view(dtype.np).reshape(shape)


@functools.lru_cache(maxsize=None)
def _float_range(dtype: D.dtype) -> tuple[float, float]:
    info = D.finfo(dtype)
    return info.min, info.max


def uniform(
    gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, low: float = 0.0, high: float = 1.0
) -> np.ndarray:
    """torch.rand / Tensor.uniform_(low, high)."""
    shape, n = _numel(shape)
    if dtype.is_complex:
        real = uniform(gen, (*shape, 2), dtype.to_real(), low, high) if n else np.empty(0)
        return _complex_view(real, dtype, shape)
    if not dtype.is_floating_point:
        raise _not_implemented("check_uniform_bounds", dtype)
    lo, hi = _float_range(dtype)
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {_TYPEMETA[dtype]}")
    if not lo <= high <= hi:
        raise RuntimeError(f"to is out of bounds for {_TYPEMETA[dtype]}")
    if not low <= high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_g(low)} > to={_g(high)}")
    if not high - low <= hi:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{D.cpp_name(dtype)}>::max(), but found "
            f"to={_g(high)} and from={_g(low)} which result in to-from to exceed the limit"
        )
    if n == 0:
        return np.empty(shape, dtype.np)
    unit = (low, high) == (0.0, 1.0)  # x * 1 + 0 is x itself, and stays below 1
    if n == 1 and dtype is D.float32:
        return np.array(_uniform_one(gen, unit, low, high), np.float32).reshape(shape)
    if dtype is D.float64:
        x = _u53(gen, n)
        r = x if unit else _fma64(x, high - low, low)
        to, frm = high, low
    else:  # float, half and bfloat16 all compute in float
        x = _u24(gen, n)
        f, t = _f(low), _f(high)
        r = _to_dtype(x if unit else _fma32(x, t - f, f, a_ulp=2.0**-24), dtype)
        to, frm = _to_dtype(np.array(high), dtype), _to_dtype(np.array(low), dtype)
    if not (unit and dtype in (D.float32, D.float64)):
        # torch: a value rounded up to `to` is replaced by `from`, keeping [from, to)
        r = np.where(r >= to, frm, r).astype(dtype.np)
    return r.reshape(shape)


def _uniform_one(gen: Generator, unit: bool, low: float, high: float) -> float:
    """``uniform``'s float32 path for one element in Python numbers (a transform's parameter draw: NumPy's
    per-call overhead was its whole cost), the same bits."""
    x = (int(gen._words(1)[0]) & 0xFFFFFF) * 2.0**-24
    if unit:
        return x
    f, t = _f(low), _f(high)
    s = _fma32_one(x, float(t - f), float(f))
    r = float(_f(s)) if s is not None else float(_fma32(np.array([x], np.float32), t - f, f, a_ulp=2.0**-24)[0])
    return float(f) if r >= float(t) else r


def normal(
    gen: Generator,
    shape: Sequence[int] | int,
    dtype: D.dtype,
    mean: float = 0.0,
    std: float = 1.0,
    contiguous: bool = True,
) -> np.ndarray:
    """torch.randn / Tensor.normal_(mean, std) / torch.normal(mean, std, size).

    ``contiguous=False`` selects the element-wise path torch takes for non-contiguous outputs."""
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    if dtype.is_complex:  # torch: the real view, with half the variance in each part
        real = normal(gen, (*shape, 2), dtype.to_real(), mean, std / math.sqrt(2), contiguous)
        return _complex_view(real, dtype, shape)
    if not dtype.is_floating_point:
        raise _not_implemented("normal_kernel_cpu", dtype)
    if n >= 16 and contiguous:
        if dtype is D.float64:
            out = _normal_fill_double(gen, n, mean, std)
        elif dtype is D.float32:
            out = _normal_fill_float(gen, n, mean, std)
        else:
            out = _to_dtype(_normal_fill_reduced(gen, n, mean, std), dtype)
    else:
        out = _to_dtype(_fma64(_normal_double_stream(gen, n), std, mean), dtype)
    return out.reshape(shape)


def normal_tensor(gen: Generator, mean: Any, std: Any, contiguous: bool = True) -> np.ndarray:
    """torch.normal(mean, std) with a tensor (numpy array) for mean and/or std.

    As torch does: draw N(0, 1) (or N(0, std) for a scalar std) into the output, then multiply by
    std and add mean as separate in-place ops in the output's dtype."""
    mean_t, std_t = isinstance(mean, np.ndarray), isinstance(std, np.ndarray)
    if not (mean_t or std_t):
        raise TypeError("normal_tensor needs mean or std as an array; use normal() for scalars")
    if std_t:
        if std.dtype.kind == "c":
            raise RuntimeError("normal expects standard deviation to be non-complex")
        if std.size and not np.min(std) >= 0:
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_g(std)}")
    out_dt = D.from_numpy_dtype(mean.dtype if mean_t else std.dtype)
    shape = np.broadcast_shapes(mean.shape if mean_t else (), std.shape if std_t else ())
    if not std_t:
        return _inplace(normal(gen, shape, out_dt, 0.0, std, contiguous), mean, np.add)
    out = normal(gen, shape, out_dt, 0.0, 1.0, contiguous)
    out = _inplace(out, std, np.multiply)
    return _inplace(out, mean if mean_t else _to_dtype(np.array(float(mean)), out_dt), np.add)


def _inplace(out: np.ndarray, other: np.ndarray, op: Any) -> np.ndarray:
    """out.op_(other): computed in the promoted dtype, stored in out's dtype."""
    common = D.promote_types(D.from_numpy_dtype(out.dtype), D.from_numpy_dtype(other.dtype))
    res = op(out.astype(common.np), np.asarray(other).astype(common.np))
    return _to_dtype(np.broadcast_to(res, out.shape), D.from_numpy_dtype(out.dtype))


# --- integers ---------------------------------------------------------------------------------

_INT_RANGE = {d: (int(np.iinfo(d.np).min), int(np.iinfo(d.np).max)) for d in
              (D.uint8, D.int8, D.int16, D.int32, D.int64, D.uint16, D.uint32, D.uint64)}  # fmt: skip
_INT_RANGE[D.bool] = (0, 1)


def _from_int64(v: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """static_cast<scalar_t>(int64_t) for every dtype (wrapping for narrow integers)."""
    if dtype is D.bool:
        return v != 0
    return _to_dtype(v.astype(np.int64), dtype)


def _wrap64(v: int) -> int:
    v &= _U64
    return v - (1 << 64) if v >> 63 else v


def _round_trip(v: int, dtype: D.dtype) -> int:
    """static_cast<int64_t>(static_cast<scalar_t>(v)) as x86 computes it (out of range: INT64_MIN)."""
    f = float(_to_dtype(np.array([_wrap64(v)], np.int64), dtype).astype(np.float64)[0])
    if math.isnan(f) or not -(2.0**63) <= f < 2.0**63:
        return _I64_MIN
    return int(f)


def _update_from(frm: int, dtype: D.dtype) -> int:
    """Move `from` right until casting to dtype cannot push a value below it (ATen's update_from)."""
    plus1 = _round_trip(frm + 1, dtype)
    if plus1 < frm:
        n = abs(_wrap64(frm + 1)).bit_length() - 1
        frm = _wrap64(plus1 + (1 << (n - _digits(dtype) + 1)))
    return frm


def _update_to(to: int, dtype: D.dtype) -> int:
    minus1 = _round_trip(to - 1, dtype)
    if minus1 >= to:
        n = abs(_wrap64(to - 1)).bit_length() - 1
        to = _wrap64(minus1 - (1 << (n - _digits(dtype) + 1)))
    return to


_WARN_AT = "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:{}.)"


def _check_from_to(frm: int, to_inc: int, dtype: D.dtype) -> None:
    name = _TYPEMETA[dtype]
    if dtype.is_floating_point:
        lo, hi = _float_range(dtype)
    elif dtype is D.uint64:
        lo, hi = 0, _I64_MAX
    else:
        lo, hi = _INT_RANGE[dtype]
    if not lo <= frm <= hi:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    if dtype.is_floating_point:
        digits = _digits(dtype)
        for var, what, line in ((frm, "from", 110), (to_inc, "to - 1", 111)):
            if var < -(1 << digits) or var > (1 << digits):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision limitations {name} "
                    "can support discrete uniform distribution only within this range. This warning will "
                    f"become an error in version 1.7 release, please fix the code in advance {_WARN_AT.format(line)}",
                    UserWarning,
                    stacklevel=3,
                )


def random_from_to(
    gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, from_: int, to: int | None
) -> np.ndarray:
    """Tensor.random_(from, to): [from, to), or [from, max of dtype] for to=None; from=INT64_MIN
    with to=None draws the full 64-bit range."""
    shape, n = _numel(shape)
    if dtype.is_complex:
        if to is not None:
            raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
        if from_ != _I64_MIN:
            raise RuntimeError("random_from_to_impl handles only integral, floating-point and boolean types")
    if to is not None:
        if not from_ < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        if dtype.is_floating_point:
            from_, to = _update_from(from_, dtype), _update_to(to, dtype)
            if not from_ < to:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got "
                    f"from={from_} >= to={to}"
                )
        _check_from_to(from_, to - 1, dtype)
        rng = (to - from_) & _U64
    elif from_ != _I64_MIN:
        if dtype.is_floating_point:
            to_inc = min(1 << _digits(dtype), _I64_MAX)
            from_ = _update_from(from_, dtype)
            if not from_ < to_inc:
                raise RuntimeError(
                    "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to "
                    f"dtype, but got from={from_} > to_inc={to_inc}"
                )
        else:
            to_inc = _wrap64(_INT_RANGE[dtype][1])
        _check_from_to(from_, to_inc, dtype)
        rng = (to_inc - from_ + 1) & _U64
    else:
        if dtype not in (D.int64, D.float64, D.float32, D.bfloat16):
            if dtype in (D.float16, D.bool, D.uint16, D.uint32, D.uint64) or dtype.is_complex:
                raise _not_implemented("random_full_64_bits_range_kernel_cpu", dtype)
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        return _from_int64(gen._words64(n).view(np.int64), dtype).reshape(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    # torch 2.13 switches to 64-bit draws from a range of 2**28 on, whatever the dtype
    w = gen._words64(n) if rng >= 1 << 28 else gen._words(n)
    v = (w % np.uint64(rng) + np.uint64(from_ & _U64)).view(np.int64)  # uint64 arithmetic wraps
    return _from_int64(v, dtype).reshape(shape)


def randint_one(gen: Generator, low: int, high: int) -> int:
    """``random_from_to`` of one int64 in [low, high) as a Python int (a transform's parameter draw: NumPy's
    per-call overhead was its whole cost), the same words and value; bounds within +-2**62."""
    rng = high - low
    w = int(gen._words64(1)[0]) if rng >= 1 << 28 else int(gen._words(1)[0])
    v = (w % rng + low) & _U64
    return v - (1 << 64) if v >= 1 << 63 else v


def randint(gen: Generator, low: int, high: int, shape: Sequence[int] | int, dtype: D.dtype = D.int64) -> np.ndarray:
    """torch.randint(low, high, size): random_(low, high) on a fresh tensor."""
    return random_from_to(gen, shape, dtype, low, high)


_RANDOM_MOD = {D.bool: 2, D.int64: 1 << 63, D.float16: (1 << 11) + 1, D.bfloat16: (1 << 8) + 1,
               D.float32: (1 << 24) + 1, D.float64: (1 << 53) + 1}  # fmt: skip


def random_(gen: Generator, shape: Sequence[int] | int, dtype: D.dtype) -> np.ndarray:
    """Tensor.random_(): [0, max] for integers, [0, 2**mantissa] for floats, {0, 1} for bool."""
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    if dtype.is_complex or dtype in (D.uint16, D.uint32, D.uint64):
        raise _not_implemented("random_kernel_cpu", dtype)
    mod = _RANDOM_MOD.get(dtype) or _INT_RANGE[dtype][1] + 1
    w = gen._words64(n) if dtype in (D.int64, D.float64) else gen._words(n)
    return _from_int64((w % np.uint64(mod)).view(np.int64), dtype).reshape(shape)


_RANDPERM_SMALL = 0xFFFFFFFF // 20  # torch: below this, the classic Fisher-Yates with 32-bit draws


def randperm(gen: Generator, n: int, dtype: D.dtype = D.int64) -> np.ndarray:
    """torch.randperm(n)."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if n > 0 and not dtype.is_floating_point and not dtype.is_complex and dtype is not D.bool:
        lo, hi = _INT_RANGE[dtype]
        if n - 1 > hi:
            raise RuntimeError(f"value cannot be converted to type {dtype.np.name}_t without overflow")
    limits = {D.float16: (2049, "2049 for Half"), D.float32: ((1 << 24) + 1, "2^24+1 for Float"),
              D.float64: ((1 << 53) + 1, "2^53+1 for Double")}  # fmt: skip
    if dtype in limits and n > limits[dtype][0]:
        raise RuntimeError(f"n cannot be greater than {limits[dtype][1]} type.")
    if dtype.is_complex or dtype in (D.bool, D.uint16, D.uint32, D.uint64):
        raise _not_implemented("randperm", dtype)
    perm = _fisher_yates(gen, n) if n < _RANDPERM_SMALL else _inside_out(gen, n)
    return _to_dtype(perm, dtype)


def _prev_same(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each i, the largest j < i with keys[j] == keys[i] (or -1); plus, per key group, its
    last index (sorted keys, positions). Keys lie in [0, len(keys)]."""
    n = len(keys)
    bits = n.bit_length()
    if 2 * bits < 63:  # pack (key, position) into one int64: a stable order from numpy's fast sort
        packed = np.sort((keys << bits) | np.arange(n))
        order, ks = packed & ((1 << bits) - 1), packed >> bits
    else:
        order = np.argsort(keys, kind="stable")
        ks = keys[order]
    same = np.empty(len(keys), bool)
    same[:1] = False
    same[1:] = ks[1:] == ks[:-1]
    prev = np.full(len(keys), -1, np.int64)
    prev[order[1:][same[1:]]] = order[:-1][same[1:]]
    last = np.ones(len(keys), bool)
    last[:-1] = ~same[1:]
    return prev, ks[last], order[last]


def _resolve(parent: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Follow parent pointers to the roots (parent[i] == i) by pointer jumping; return their values."""
    while True:
        grand = parent[parent]
        if np.array_equal(grand, parent):
            return value[parent]
        parent = grand


def _fisher_yates(gen: Generator, n: int) -> np.ndarray:
    """for i < n-1: swap(a[i], a[i + random() % (n - i)]), resolved without a per-element loop.

    Position i is final after step i, when it takes what position t_i = i + z_i held. A position
    p > i last received something at the latest earlier step k with t_k == p (which brought k's
    value D(k) then), else it still holds p; D(j) is what position j held just before step j."""
    if n <= 1:
        return np.arange(n, dtype=np.int64)
    if n <= 64:  # the loop itself: fewer steps than the vectorised resolution's NumPy calls
        a = list(range(n))
        for i, w in enumerate(gen._words(n - 1).tolist()):
            j = i + w % (n - i)
            a[i], a[j] = a[j], a[i]
        return np.array(a, np.int64)
    steps = np.arange(n - 1, dtype=np.int64)
    t = steps + (gen._words(n - 1) % (np.uint64(n) - steps.astype(np.uint64))).astype(np.int64)
    prev, keys, last = _prev_same(t)
    # D(j): the latest k < j with t_k == j passes its D(k) on; otherwise j itself
    last_for = np.full(n, -1, np.int64)
    last_for[keys] = last
    src = np.where(last_for == np.arange(n), np.append(prev, -1)[np.maximum(last_for, 0)], last_for)
    parent = np.where(src >= 0, src, np.arange(n))
    d = _resolve(parent, np.arange(n, dtype=np.int64))
    out = np.empty(n, np.int64)
    out[:-1] = np.where(t == steps, d[:-1], np.where(prev >= 0, d[np.maximum(prev, 0)], t))
    out[-1] = d[-1]
    return out


def _inside_out(gen: Generator, n: int) -> np.ndarray:
    """torch's large-n randperm: for i < n: z = random64() % (i + 1); a[i] = a[z]; a[z] = i.

    Step p stores F(p): p if z_p == p, else what position z_p held, i.e. the latest step i in
    (z_p, p) with z_i == z_p (it wrote i), or failing that F(z_p). Position p ends with the latest
    i > p with z_i == p, or F(p)."""
    idx = np.arange(n, dtype=np.int64)
    z = (gen._words64(n) % (idx + 1).astype(np.uint64)).astype(np.int64)
    prev, keys, last = _prev_same(z)
    wrote = prev > z
    parent = np.where((z == idx) | wrote, idx, z)
    f = _resolve(parent, np.where(wrote, prev, idx))
    last_for = np.full(n, -1, np.int64)
    last_for[keys] = last
    return np.where(last_for > idx, last_for, f)


# --- other distributions -------------------------------------------------------------------------


def _floating_only(what: str, dtype: D.dtype, name: str) -> None:
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"{what} distribution is a continuous probability distribution. dtype must be a floating point "
            f"but you specified {name}"
        )


def exponential(gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, lambd: float = 1.0) -> np.ndarray:
    """Tensor.exponential_(lambd): -1/lambd * log1p(-u) in double."""
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_g(lambd)}")
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    _floating_only("Exponential", dtype, D.cpp_name(dtype))
    return _to_dtype((-1.0 / lambd) * _libm(math.log1p, -_u53(gen, n)), dtype).reshape(shape)


_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # torch's 1.0f / 3.0f, a float constant
_C0331_F = float(np.float32(0.0331))


class _Uniforms:
    """torch's ``standard_uniform(generator)`` draws (53-bit doubles) for a serial accept/reject kernel, read
    ahead in blocks from a copy of the stream; ``close`` advances the real generator by exactly the draws used,
    so the state after matches torch's."""

    def __init__(self, gen: Generator) -> None:
        self._gen = gen
        self._ahead = gen.clone_state()
        self._buf: list[float] = []
        self._i = 0
        self._drawn = 0
        self._block = 64  # grows: small tensors stay cheap, large ones amortise the copy

    def __call__(self) -> float:
        if self._i == len(self._buf):
            self._buf = _u53(self._ahead, self._block).tolist()
            self._drawn += self._block
            self._i = 0
            self._block = min(2 * self._block, 1 << 16)
        x = self._buf[self._i]
        self._i += 1
        return x

    def close(self) -> None:
        used = self._drawn - (len(self._buf) - self._i)
        while used:  # numpy's MT19937 cannot skip ahead: draw and drop, in chunks
            k = min(used, 1 << 20)
            self._gen._words(2 * k)
            used -= k


def _glibc() -> Any:
    """glibc's lgamma and log1pf, which torch's kernels call (CPython's math.lgamma is its own, and differs
    from glibc's in the last bit about half the time)."""
    import ctypes
    import ctypes.util

    lib = ctypes.CDLL(ctypes.util.find_library("m"))
    lib.lgamma.restype, lib.lgamma.argtypes = ctypes.c_double, [ctypes.c_double]
    lib.log1pf.restype, lib.log1pf.argtypes = ctypes.c_float, [ctypes.c_float]
    return lib


_LIBM: Any = None


def _libm_fn(name: str) -> Any:
    global _LIBM
    if _LIBM is None:
        _LIBM = _glibc()
    return getattr(_LIBM, name)


def _log(x: float) -> float:
    """std::log: -inf at 0 (math.log raises there)."""
    return math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan)


class _Normals:
    """torch's ``normal_distribution<double>(0, 1)`` draws on a ``_Uniforms`` reader: Box-Muller pairs whose sine
    waits in the generator's cache for the next draw (``_normal_double_stream``, one draw at a time)."""

    def __init__(self, gen: Generator, uni: _Uniforms) -> None:
        self._gen, self._uni = gen, uni
        self._cached = gen._next_double_normal
        gen._next_double_normal = None

    def __call__(self) -> float:
        if self._cached is not None:
            x, self._cached = self._cached, None
            return x
        theta = (2.0 * math.pi) * self._uni()
        r = math.sqrt(-2.0 * math.log1p(-self._uni()))
        self._cached = r * math.sin(theta)
        return r * math.cos(theta)

    def close(self) -> None:
        self._gen._next_double_normal = self._cached


def _gamma_one(alpha: Any, in_float: bool, uni: _Uniforms, normal: _Normals) -> float:
    """One draw of ATen's sample_gamma (Marsaglia-Tsang, boosted below alpha 1) with double accumulators; in
    float32 the steps on ``alpha`` itself round to float, as the kernel's scalar_t arithmetic does."""
    f = np.float32 if in_float else float
    alpha = f(alpha)
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= math.pow(1.0 - uni(), float(f(1.0) / alpha))
        alpha = f(alpha + f(1.0))
    d = float(alpha - np.float32(_THIRD_F)) if in_float else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = normal()
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - uni()
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if _log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _gamma_draws(gen: Generator, alpha: list, in_float: bool) -> np.ndarray:
    """Serial gamma draws for a list of alphas, the uniforms read ahead in blocks."""
    uni = _Uniforms(gen)
    normal = _Normals(gen, uni)
    try:
        return np.array([_gamma_one(a, in_float, uni, normal) for a in alpha], np.float64)
    finally:
        uni.close()
        normal.close()


def standard_gamma(gen: Generator, alpha: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """torch._standard_gamma(alpha) on the CPU: one serial draw per element, clamped below at the dtype's
    smallest normal number."""
    if dtype not in (D.float32, D.float64):
        raise _not_implemented("gamma_cpu", dtype)
    flat = np.asarray(alpha).reshape(-1)
    out = _gamma_draws(gen, flat.tolist(), dtype is D.float32).astype(dtype.np)
    return np.maximum(out, np.finfo(dtype.np).tiny).reshape(np.shape(alpha))


def dirichlet(gen: Generator, alpha: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """torch._sample_dirichlet on the CPU: double gamma draws (of the alpha values cast to double), normalised
    over the last dim, cast and clamped into [tiny, the float below 1]."""
    if dtype not in (D.float32, D.float64):
        raise _not_implemented("dirichlet", dtype)
    a = np.asarray(alpha)
    g = _gamma_draws(gen, a.reshape(-1).astype(np.float64).tolist(), False)
    g = np.maximum(g, np.finfo(np.float64).tiny).reshape(a.shape)
    total = np.zeros(a.shape[:-1] + (1,), np.float64)
    for i in range(a.shape[-1]):  # torch sums a short last dim in order
        total = total + g[..., i : i + 1]
    out = (g / total).astype(dtype.np)
    top = np.nextafter(np.ones((), dtype.np), np.zeros((), dtype.np))
    return np.minimum(top, np.maximum(np.finfo(dtype.np).tiny, out))


def _poisson_one(lam: float, uni: _Uniforms, lgamma: Any) -> int:
    """ATen's sample_poisson: Knuth's product of uniforms below rate 10, Hoermann's PTRS from 10 up."""
    if not lam >= 0:
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    if lam >= 10:
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        log_invalpha = math.log(1.1239 + 1.1328 / (b - 3.4))
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uni() - 0.5
            v = uni()
            us = 0.5 - abs(u)
            if us == 0.0:  # C divides to an infinite k and rejects it
                continue
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if _log(v) + log_invalpha - math.log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= uni()
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(gen: Generator, rates: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """torch.poisson on the CPU: one serial draw per element (the rate cast to double), cast to the dtype."""
    flat = np.asarray(rates).reshape(-1).astype(np.float64).tolist()
    uni = _Uniforms(gen)
    lgamma = _libm_fn("lgamma")
    try:
        out = [_poisson_one(lam, uni, lgamma) for lam in flat]
    finally:
        uni.close()  # torch has consumed the draws up to a bad rate too
    return _to_dtype(np.array(out, np.float64), dtype).reshape(np.shape(rates))


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)  # fmt: skip


def _stirling_tail(k: float) -> float:
    """log(k!) minus its Stirling approximation: tabulated to 9, a series above."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _binomial_inversion(count: Any, prob: Any, uni: _Uniforms, in_float: bool) -> float:
    """Count the geometric waiting times that fit in ``count`` trials; log1p(-prob) in the scalar type."""
    logprob = float(_libm_fn("log1pf")(float(-prob))) if in_float else math.log1p(-prob)
    geom_sum, num = 0.0, 0
    c = float(count)
    while True:
        g = _log(uni()) / logprob
        geom_sum += math.ceil(g) if g != math.inf else g  # a zero uniform ends the count, as in C
        if geom_sum > c:
            return float(num)
        num += 1


def _btrs(count: Any, prob: Any, uni: _Uniforms, f: Any) -> float:
    """Hoermann's BTRS; the steps on count and prob themselves round to the scalar type (``f``)."""
    stddev = float(np.sqrt(f(f(count * prob) * f(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(f(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(f(prob / f(1 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(np.floor(f(f(count + 1) * prob)))
    cnt = float(count)
    head = ((m + 0.5) * math.log((m + 1) / (r * (cnt - m + 1))), float(f(count + 1)), cnt - m + 1)
    while True:
        u = uni() - 0.5
        v = uni()
        us = 0.5 - abs(u)
        if us == 0.0:  # C divides to an infinite k and rejects it
            continue
        k = f(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return float(k)
        v = _log(v * alpha / (a / (us * us) + b))
        kd = float(k)
        ckm1 = float(f(f(count - k) + 1))
        upper = (head[0] + head[1] * math.log(head[2] / ckm1) + (kd + 0.5) * math.log(r * ckm1 / float(f(k + 1)))
                 + _stirling_tail(m)) + _stirling_tail(cnt - m) - _stirling_tail(kd) - _stirling_tail(float(f(count - k)))
        if v <= upper:
            return kd


def binomial(gen: Generator, count: np.ndarray, prob: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """torch.binomial on the CPU: per element, 0 or count at the edges, inversion below a mean of 10, BTRS
    above (on 1 - prob past one half)."""
    in_float = dtype is D.float32
    f: Any = np.float32 if in_float else float
    shape = np.broadcast_shapes(np.shape(count), np.shape(prob))
    cs = np.broadcast_to(count, shape).reshape(-1).tolist()
    ps = np.broadcast_to(prob, shape).reshape(-1).tolist()
    uni = _Uniforms(gen)
    out = []
    try:
        for cnt, p in zip(cs, ps):
            n, q = f(cnt), f(p)
            if n <= 0 or q <= 0:
                out.append(0.0)
            elif q >= 1:
                out.append(float(n))
            elif q <= 0.5:
                out.append(_btrs(n, q, uni, f) if f(n * q) >= 10 else _binomial_inversion(n, q, uni, in_float))
            elif q > 0.5:
                qq = f(1 - q)
                k = _btrs(n, qq, uni, f) if f(n * qq) >= 10 else _binomial_inversion(n, qq, uni, in_float)
                out.append(float(f(n - f(k))))
            else:
                out.append(math.nan)
    finally:
        uni.close()
    return np.array(out, np.float64).astype(dtype.np).reshape(shape)


def geometric(gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, p: float) -> np.ndarray:
    """Tensor.geometric_(p): ceil(log(u) / log(1 - p)) in double."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_g(p)}")
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    if dtype.is_complex or dtype in (D.bool, D.uint16, D.uint32, D.uint64):
        raise _not_implemented("geometric_cpu", dtype)
    v = np.ceil(_libm(math.log, _u53(gen, n)) / math.log(1 - p))
    if not dtype.is_floating_point:  # x86 converts through int32 (int64 for long): out of range wraps
        with np.errstate(invalid="ignore"):
            v = v.astype(np.int64 if dtype is D.int64 else np.int32)
    return _to_dtype(v, dtype).reshape(shape)


def log_normal(
    gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, mean: float = 1.0, std: float = 2.0
) -> np.ndarray:
    """Tensor.log_normal_(mean, std): exp of normal_distribution<double>, sharing its cached sample."""
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_g(std)}")
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    if not dtype.is_floating_point:
        raise _not_implemented("log_normal_cpu", dtype)
    return _to_dtype(_libm(math.exp, _fma64(_normal_double_stream(gen, n), std, mean)), dtype).reshape(shape)


def cauchy(
    gen: Generator, shape: Sequence[int] | int, dtype: D.dtype, median: float = 0.0, sigma: float = 1.0
) -> np.ndarray:
    """Tensor.cauchy_(median, sigma): median + sigma * tan(pi * (u - 0.5)) in double."""
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_g(sigma)}")
    _floating_only("Cauchy", dtype, _TYPEMETA[dtype])
    shape, n = _numel(shape)
    if n == 0:
        return np.empty(shape, dtype.np)
    tan = _libm(math.tan, math.pi * (_u53(gen, n) - 0.5))
    return _to_dtype(_fma64(sigma, tan, median), dtype).reshape(shape)


_BERNOULLI_P_ERROR = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be improved?  "
    "If so, please report an enhancement request to PyTorch.)"
)


def bernoulli(
    gen: Generator, p: float | np.ndarray, shape: Sequence[int] | int | None = None, dtype: D.dtype | None = None
) -> np.ndarray:
    """Tensor.bernoulli_(p) / torch.bernoulli(p): 1 where a uniform draw is below p.

    A Python float p draws in double (torch's scalar kernel); an array p (expanded to ``shape``)
    draws in double when it is float64 and in float (24 bits) otherwise, as torch's tensor kernel."""
    if not isinstance(p, np.ndarray):
        if shape is None:
            raise TypeError("bernoulli with a scalar p needs a shape")
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_g(p)}")
        dtype = dtype or D.get_default_dtype()
        shape, n = _numel(shape)
        if n == 0:
            return np.empty(shape, dtype.np)
        if dtype.is_complex or dtype in (D.uint16, D.uint32, D.uint64):
            raise _not_implemented("bernoulli_scalar_cpu_", dtype)
        return _to_dtype(_u53(gen, n) < p, dtype).reshape(shape)
    shape, n = _numel(p.shape if shape is None else shape)
    dtype = dtype or D.from_numpy_dtype(p.dtype)
    if n == 0:
        return np.empty(shape, dtype.np)
    if dtype.is_complex or dtype in (D.uint16, D.uint32, D.uint64):
        raise _not_implemented("bernoulli_tensor_cpu_self_", dtype)
    p_dt = D.from_numpy_dtype(p.dtype)
    if not p_dt.is_floating_point:
        raise _not_implemented("bernoulli_tensor_cpu_p_", p_dt)
    pe = _expand(p, shape).reshape(-1)
    wide = p_dt is D.float64
    pv = pe.astype(np.float64 if wide else np.float32)
    bad = ~((pv >= 0) & (pv <= 1))
    if bad.any():  # torch checks each p as it goes: earlier elements have drawn already
        k = int(np.argmax(bad))
        gen._words(2 * k if wide else k)
        raise RuntimeError(_BERNOULLI_P_ERROR)
    u = _u53(gen, n) if wide else _u24(gen, n)
    return _to_dtype(u < pv, dtype).reshape(shape)


def _expand(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Tensor.expand(shape), with torch's message."""
    pad = (1,) * (len(shape) - a.ndim) + a.shape
    if len(pad) > len(shape) or any(s != t and s != 1 for s, t in zip(pad, shape)):
        dim = next((i for i, (s, t) in enumerate(zip(pad, shape)) if s != t and s != 1), 0)
        raise RuntimeError(
            f"The expanded size of the tensor ({shape[dim] if shape else 0}) must match the existing size "
            f"({pad[dim]}) at non-singleton dimension {dim}.  Target sizes: {list(shape)}.  "
            f"Tensor sizes: {list(a.shape)}"
        )
    return np.broadcast_to(a.reshape(pad), shape)


def multinomial(gen: Generator, probs: np.ndarray, num_samples: int, replacement: bool = False) -> np.ndarray:
    """torch.multinomial on a 1-D or 2-D array of weights; returns int64 indices."""
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    p_dt = D.from_numpy_dtype(probs.dtype)
    if not p_dt.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {D.cpp_name(p_dt)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = probs.shape[-1]
    if not replacement and num_samples > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if cats > 1 << 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    rows = probs.reshape(-1, cats)
    out_shape = (num_samples,) if probs.ndim == 1 else (rows.shape[0], num_samples)
    if rows.size == 0:
        return np.empty(out_shape, np.int64)
    acc = np.float64 if p_dt is D.float64 else np.float32
    if not (np.max(rows.astype(acc)) < np.inf and np.min(rows.astype(acc)) >= 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(rows.astype(acc).sum(axis=1) == 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement and num_samples > 1:  # torch: a single sample always takes the argmax route
        out = _multinomial_replacement(gen, rows.astype(acc), num_samples)
    else:
        out = _multinomial_no_replacement(gen, rows, p_dt, num_samples)
    return out.reshape(out_shape)


def _multinomial_replacement(gen: Generator, rows: np.ndarray, num_samples: int) -> np.ndarray:
    """Per row: sequential cumulative sum in the accumulation dtype, normalised, last bucket set to 1;
    each sample is the first bucket >= a double uniform (torch's binary search)."""
    cum = np.cumsum(rows, axis=1, dtype=rows.dtype)  # sequential, like torch's loop
    cum /= cum[:, -1:]
    cum[:, -1] = 1
    u = _u53(gen, rows.shape[0] * num_samples).reshape(rows.shape[0], num_samples)
    cum = cum.astype(np.float64)
    out = np.empty(u.shape, np.int64)
    for r in range(len(cum)):  # one searchsorted per distribution
        out[r] = np.searchsorted(cum[r], u[r], side="left")
    return out


def _multinomial_no_replacement(gen: Generator, rows: np.ndarray, p_dt: D.dtype, num_samples: int) -> np.ndarray:
    """torch's Gumbel trick: the top num_samples of p / q with q ~ Exp(1), in p's dtype."""
    q = exponential(gen, rows.shape, p_dt, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        keys = rows / q
    if num_samples == 1:  # argmax: the first maximum (NaN counts as the maximum)
        return np.argmax(keys, axis=1, keepdims=True)
    k = keys.astype(np.float64)
    order = np.argsort(-k, axis=1, kind="stable")
    srt = np.take_along_axis(k, order, axis=1)
    upto = min(num_samples + 1, k.shape[1])
    out = order[:, :num_samples]
    # equal keys (common for float16/bfloat16, or zero weights) end up wherever libstdc++'s
    # partial_sort / nth_element leave them: replay torch's topk for those rows
    tied = np.isnan(k).any(axis=1) | np.any(srt[:, 1:upto] == srt[:, : upto - 1], axis=1)
    for r in np.nonzero(tied)[0]:
        out[r] = _stl_topk(k[r], num_samples)
    return out


def _stl_topk(values: np.ndarray, k: int) -> np.ndarray:
    """The indices torch.topk(largest, sorted) returns on CPU, ties included (libstdc++'s algorithms)."""
    return np.array(topk_row(values.tolist(), k, largest=True, sorted=True), np.int64)
