"""torch's CPU kernel arithmetic for optimizer updates, as pure JAX.

torch's optimizers are chains of tensor ops, and their results depend on where each kernel
rounds. These helpers reproduce torch's CPU kernels op for op:

- a Python-number argument is cast to the kernel's ``opmath`` type (float32 for float16,
  bfloat16 and float32 tensors; float64 for float64) before it meets the tensor; float16 and
  bfloat16 tensors are computed in float32 and rounded after each op;
- ``add(alpha=)``, ``addcmul`` and ``lerp`` are fused multiply-adds (torch's vectorised CPU
  loops call ``fmadd``) where torch runs its AVX2 or AVX-512 kernels; its baseline x86-64 kernels
  (``ATEN_CPU_CAPABILITY=default``, or a CPU without AVX2 and FMA) round the product first, and
  so does ``_fma`` there (see ``_torch_fuses``); ``addcdiv`` is ``self + (value * t1) / t2`` with
  no fma;
- ``scalar / tensor`` is ``tensor.reciprocal() * scalar`` (torch's ``Tensor.__rtruediv__``).

XLA rounds differently unless told not to. LLVM contracts a product feeding a sum into an fma
wherever it can, so every product that torch rounds on its own goes through ``_fence`` (an
integer xor with a zero the compiler cannot see), which no floating-point rewrite crosses.
Where torch does use an fma, float32 computes it in float64 (the product of two float32 values
is exact there, so one rounding remains). XLA also turns division by a scalar into
multiplication by its reciprocal, so that division is taken in float64 (float32) or kept with an
optimization barrier (float64).

Not reproduced: torch's CPU ``sqrt`` is MKL's vsSqrt, which is not correctly rounded, and MKL
picks its code path from the CPU (vendor and instruction set; ``ATEN_CPU_CAPABILITY`` does not
change it): about 0.5% of float32 results were one ulp off the IEEE square root used here on the
machine this was written on, 17% on an AMD EPYC with AVX-512. float64 fmas are left to LLVM's
contraction. Both leave one-ulp differences in some steps.
"""

from __future__ import annotations

import contextlib
import os
import platform
from typing import Any, Iterator

import jax
import jax.numpy as jnp

_F64 = jnp.dtype("float64")
_F32 = jnp.dtype("float32")
_INT_OF = {_F32: jnp.int32, _F64: jnp.int64}

_zero: list = [None]  # the opaque zero of the kernel being traced
_exact: list = [True]  # reproduce torch's CPU rounding (False: plain arithmetic, XLA fuses freely)


@contextlib.contextmanager
def fence_zero(zero: Any, exact: bool = True) -> Iterator[None]:
    """Within a traced kernel, use ``zero`` (a runtime int64 argument equal to 0) for fences."""
    old = _zero[0], _exact[0]
    _zero[0], _exact[0] = zero, exact
    try:
        yield
    finally:
        _zero[0], _exact[0] = old


def _fence(x: Any) -> Any:
    """``x`` unchanged, but opaque to floating-point contraction."""
    if not _exact[0]:
        return x
    z = _zero[0]
    if z is None:
        raise RuntimeError("torchlike.optim._math used outside fence_zero()")
    it = _INT_OF[x.dtype]
    return jax.lax.bitcast_convert_type(jax.lax.bitcast_convert_type(x, it) ^ z.astype(it), x.dtype)


def _opmath(dt: Any) -> Any:
    return _F64 if dt == _F64 else _F32


def _up(x: Any) -> Any:
    return x.astype(_opmath(x.dtype))


def _s(value: Any, dt: Any) -> Any:
    """A Python-number argument as torch's kernel sees it: cast to the opmath type."""
    return jnp.asarray(value).astype(_opmath(dt))


def _s_add(value: Any, dt: Any) -> Any:
    """``add``'s scalar (``alpha``, or a number added): torch's vectorised loop casts it to the
    tensor's own dtype first, which only differs from ``_s`` for float16/bfloat16 (its tail loop,
    the last ``numel % vector width`` elements, does not: those may differ by an ulp)."""
    return jnp.asarray(value).astype(dt).astype(_opmath(dt))


def _cpu_flags() -> set[str] | None:
    """The CPU's feature flags from /proc/cpuinfo (None where that file is not there)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def _torch_fuses() -> bool:
    """Whether torch's CPU kernels on this machine compute ``fmadd`` as one fused multiply-add.

    torch picks its kernels once per process: ``ATEN_CPU_CAPABILITY`` if set (capped at what the
    CPU supports), else the best the CPU supports; x86-64's AVX2 level needs ``avx2`` and ``fma``.
    Its AVX2 and AVX-512 kernels fuse, its baseline x86-64 ("default") kernels do not. Other
    architectures (NEON's ``fmadd`` fuses), or an x86-64 CPU whose flags can't be read, count as
    fusing."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return True
    if os.environ.get("ATEN_CPU_CAPABILITY", "").lower() == "default":
        return False
    flags = _cpu_flags()
    return flags is None or {"avx2", "fma"} <= flags


_FUSES = _torch_fuses()


def _fma(a: Any, b: Any, c: Any, dt: Any) -> Any:
    """``a * b + c`` (opmath operands) rounded as torch's CPU kernels here round it, then cast to ``dt``:
    one rounding where they fuse, the product rounded first where they don't."""
    if not _exact[0]:
        return (a * b + c).astype(dt)  # plain arithmetic: XLA fuses freely
    if not _FUSES:
        return (_fence(a * b) + c).astype(dt)
    if _opmath(dt) == _F64:
        return (a * b + c).astype(dt)  # left to LLVM's contraction
    return (a.astype(_F64) * b.astype(_F64) + c.astype(_F64)).astype(_F32).astype(dt)


def add(x: Any, other: Any, alpha: Any = None) -> Any:
    """``x.add(other, alpha=alpha)``: fma(other, alpha, x)."""
    if alpha is None:
        return (_up(x) + _up(other)).astype(x.dtype)
    return _fma(_up(other), _s_add(alpha, x.dtype), _up(x), x.dtype)


def add_scalar(x: Any, value: Any) -> Any:
    return (_up(x) + _s_add(value, x.dtype)).astype(x.dtype)


def sub(x: Any, other: Any) -> Any:
    return (_up(x) - _up(other)).astype(x.dtype)


def mul(x: Any, other: Any) -> Any:
    """``x.mul(other)`` for a tensor ``other``."""
    return _fence(_up(x) * _up(other)).astype(x.dtype)


def mul_scalar(x: Any, value: Any) -> Any:
    return _fence(_up(x) * _s(value, x.dtype)).astype(x.dtype)


def div(x: Any, other: Any) -> Any:
    return (_up(x) / _up(other)).astype(x.dtype)


def div_scalar(x: Any, value: Any) -> Any:
    """``x / value`` for a Python number (a true division, not a reciprocal multiply)."""
    v = _s(value, x.dtype)
    if not _exact[0]:
        return (_up(x) / v).astype(x.dtype)
    if _opmath(x.dtype) == _F64:
        return (x / jax.lax.optimization_barrier(jnp.broadcast_to(v, x.shape))).astype(x.dtype)
    # a float64 quotient of float32 operands rounds to the correctly rounded float32 quotient
    return (_up(x).astype(_F64) / v.astype(_F64)).astype(_F32).astype(x.dtype)


def rdiv_scalar(value: Any, x: Any) -> Any:
    """``value / x`` for a Python number: torch computes ``x.reciprocal() * value``."""
    recip = (1 / _up(x)).astype(x.dtype)
    return mul_scalar(recip, value)


def sqrt(x: Any) -> Any:
    return jnp.sqrt(_up(x)).astype(x.dtype)


def addcmul(x: Any, t1: Any, t2: Any, value: Any = 1.0) -> Any:
    """``x.addcmul(t1, t2, value=value)``: fma(value * t1, t2, x)."""
    return _fma(_s(value, x.dtype) * _up(t1), _up(t2), _up(x), x.dtype)


def addcdiv(x: Any, t1: Any, t2: Any, value: Any = 1.0) -> Any:
    """``x.addcdiv(t1, t2, value=value)``: x + (value * t1) / t2."""
    return (_up(x) + (_s(value, x.dtype) * _up(t1)) / _up(t2)).astype(x.dtype)


def lerp(x: Any, end: Any, weight: Any) -> Any:
    """``x.lerp(end, weight)`` for a Python-number weight (torch's two-sided formula, with fma)."""
    w = _s(weight, x.dtype)
    small = jnp.abs(w) < 0.5
    coeff = jnp.where(small, w, w - 1)
    base = jnp.where(small, _up(x), _up(end))
    return _fma(coeff, _up(end) - _up(x), base, x.dtype)


def maximum(x: Any, y: Any) -> Any:
    return jnp.maximum(x, y)


def clamp(x: Any, lo: Any, hi: Any) -> Any:
    """``x.clamp(lo, hi)`` for Python-number bounds (NaN propagates)."""
    return jnp.minimum(jnp.maximum(_up(x), _s(lo, x.dtype)), _s(hi, x.dtype)).astype(x.dtype)


def decayed_grad(p: Any, g: Any, weight_decay: Any, maximize: bool, has_wd: bool) -> Any:
    """The head most of torch's single-tensor updates share: negate for ``maximize``, then L2 weight
    decay into the gradient."""
    if maximize:
        g = -g
    return add(g, p, weight_decay) if has_wd else g


def adam_moments(p: Any, g: Any, st: dict, lr: Any, beta1: Any, beta2: Any, weight_decay: Any, maximize: bool,
                 has_wd: bool, decoupled: bool) -> tuple:
    """The shared head of torch's Adam family (Adam/AdamW, NAdam, RAdam): maximize, weight decay
    (L2 into the gradient, or decoupled into the parameter), then the two moment updates.
    Returns ``(p, g, exp_avg, exp_avg_sq)`` with ``p`` and ``g`` after weight decay."""
    if has_wd and decoupled:
        p = mul_scalar(p, 1 - lr * weight_decay)
    g = decayed_grad(p, g, weight_decay, maximize, has_wd and not decoupled)
    exp_avg = lerp(st["exp_avg"], g, 1 - beta1)
    exp_avg_sq = addcmul(mul_scalar(st["exp_avg_sq"], beta2), g, g, 1 - beta2)
    return p, g, exp_avg, exp_avg_sq
