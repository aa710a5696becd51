"""torch.special's own ops (``special_*`` in aten, hidden here as ``_special_*``) and the torch.* special
functions torchlike lacked (polygamma, mvlgamma, igamma, igammac). Functions torch.special shares with
torch (erf, lgamma, i0, xlogy, ...) are the existing table ops, re-exported by ``torchlike.special``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .._core import dtype as D
from .._core.tensor import Tensor
from .pointwise import _digamma, _inplace_commit, _trigamma
from .registry import METHODS, TensorArg, TensorOrScalar, defop

__all__: list = []


def _kernel_check(kernel: str, half: bool = True, integral: bool = True) -> Callable:
    """torch's "<kernel>" not implemented error for complex (and, where CPU lacks them, half/int) dtypes."""

    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        bad = cdt.is_complex or (not half and cdt in (D.float16, D.bfloat16))
        bad = bad or (not integral and not cdt.is_floating_point)
        if bad:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(cdt)}'")

    return check


def _no_grad_for(message: str, argnums: tuple) -> Callable:
    """``f`` with a jvp of ``jvp_rest`` for the other arguments and torch's NotImplementedError when a
    gradient flows into an argument of ``argnums`` (torch has no formula there; JAX may have one)."""

    def deco(f: Callable) -> Callable:
        g = jax.custom_jvp(f)

        def defjvp(rule: Callable) -> Callable:
            def jvp(primals: tuple, tangents: tuple) -> tuple:
                for i in argnums:
                    if not isinstance(tangents[i], jax.custom_derivatives.SymbolicZero):
                        raise NotImplementedError(message)
                return rule(primals, tangents)

            g.defjvp(jvp, symbolic_zeros=True)
            return rule

        g.defjvp_rule = defjvp
        return g

    return deco


def _zero_if_symbolic(t: Any, like: Any) -> Any:
    return jnp.zeros_like(like) if isinstance(t, jax.custom_derivatives.SymbolicZero) else t


def _unary(name: str, f: Callable, kernel: str, grad_name: str, half: bool = True) -> Callable:
    def body(input: TensorArg) -> Any:
        return f(input)

    body.__doc__ = f"torch.special.{name}; integer and bool inputs give the default float dtype."
    return defop(f"_special_{name}", promote="float", method=False, out=True, grad_name=grad_name,
                 check=_kernel_check(kernel, half))(body)  # fmt: skip


# --- error functions and the normal distribution ----------------------------------------------------------


@jax.custom_jvp
def _erfcx(x: Any) -> Any:
    return jsp.erfcx(x)


# torch: d erfcx = 2 x erfcx(x) - 2 / sqrt(pi)
_erfcx.defjvp(lambda p, t: (_erfcx(p[0]), t[0] * (2 * p[0] * _erfcx(p[0]) - 2 / math.sqrt(math.pi))))


def _ndtr(x: Any) -> Any:
    return jsp.ndtr(x).astype(x.dtype)


erfcx = _unary("erfcx", _erfcx, "erfcx_cpu", "SpecialErfcxBackward0", half=False)
ndtr = _unary("ndtr", _ndtr, "erf_vml_cpu", "MulBackward1")
ndtri = _unary("ndtri", jsp.ndtri, "ndtri_cpu", "SpecialNdtriBackward0", half=False)
log_ndtr = _unary("log_ndtr", jsp.log_ndtr, "log_ndtr_cpu", "SpecialLogNdtrBackward0", half=False)

# --- Bessel functions of imaginary argument ----------------------------------------------------------------


@jax.custom_jvp
def _i1(x: Any) -> Any:
    return jsp.i1(x)


# torch: d i1 = i0(x) - i1(x) / x, 0.5 at 0
_i1.defjvp(
    lambda p, t: (
        _i1(p[0]),
        t[0] * jnp.where(p[0] == 0, 0.5, jsp.i0(p[0]) - _i1(p[0]) / p[0]).astype(p[0].dtype),
    )
)


@jax.custom_jvp
def _i0e(x: Any) -> Any:
    return jsp.i0e(x)


# torch: d i0e = i1e(x) - sign(x) i0e(x)
_i0e.defjvp(lambda p, t: (_i0e(p[0]), t[0] * (jsp.i1e(p[0]) - jnp.sign(p[0]) * _i0e(p[0]))))


@jax.custom_jvp
def _i1e(x: Any) -> Any:
    return jsp.i1e(x)


def _i1e_jvp(p: tuple, t: tuple) -> tuple:
    # torch: d i1e = i0e(x) - i1e(x) (sign(x) + 1 / x), 0.5 at 0
    x = p[0]
    safe = jnp.where(x == 0, 1, x)
    d = jnp.where(x == 0, 0.5, jsp.i0e(x) - _i1e(x) * (jnp.sign(x) + 1 / safe))
    return _i1e(x), t[0] * d.astype(x.dtype)


_i1e.defjvp(_i1e_jvp)

i0e = _unary("i0e", _i0e, "i0e_cpu", "SpecialI0EBackward0")
i1 = _unary("i1", _i1, "i1_cpu", "SpecialI1Backward0")
i1e = _unary("i1e", _i1e, "i1e_cpu", "SpecialI1EBackward0")

# --- entropy and logarithms ------------------------------------------------------------------------------


@jax.custom_jvp
def _entr(x: Any) -> Any:
    r = jnp.where(x > 0, -x * jnp.log(jnp.where(x > 0, x, 1)), jnp.where(x == 0, 0, -jnp.inf))
    return jnp.where(jnp.isnan(x), x, r).astype(x.dtype)


# torch: d entr = -(1 + log x) (inf at 0, NaN below)
_entr.defjvp(lambda p, t: (_entr(p[0]), t[0] * -(1 + jnp.log(p[0]))))

entr = _unary("entr", _entr, "entr_cpu", "SpecialEntrBackward0")


@jax.custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    # torch: NaN when y is NaN even if x == 0
    return jnp.where(jnp.isnan(y), jnp.nan, jnp.where(x == 0, 0, x * jnp.log1p(y))).astype(x.dtype)


@_xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dx is 0 where x == 0
    (x, y), (dx, dy) = primals, tangents
    gx = jnp.where(x == 0, 0, jnp.log1p(y))
    return _xlog1py(x, y), (dx * gx + dy * x / (1 + y)).astype(x.dtype)


def _by_operands(name: str) -> Callable:
    """torch's node name for a binary op taking Python numbers: ...0 (two tensors), 1 (self a number),
    2 (other a number)."""

    def grad_name(static: tuple, dyn: tuple) -> str:
        if not isinstance(dyn[0], Tensor):
            return name + "1"
        return name + ("0" if isinstance(dyn[1], Tensor) else "2")

    return grad_name


@defop("_special_xlog1py", promote="float", method=False, out=True, grad_name=_by_operands("SpecialXlog1PyBackward"),
       check=_kernel_check("xlog1py_cpu"))  # fmt: skip
def xlog1py(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.special.xlog1py: ``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    x, y = jnp.broadcast_arrays(input, other)
    return _xlog1py(x, y)


# --- zeta, incomplete gamma, polygamma, multivariate log-gamma -----------------------------------------------


@_no_grad_for("the derivative for 'zeta' is not implemented.", (0,))
def _zeta(x: Any, q: Any) -> Any:
    return jsp.zeta(x, q)


@_zeta.defjvp_rule
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dq zeta(x, q) = -x zeta(x + 1, q)
    (x, q), (_, dq) = primals, tangents
    return _zeta(x, q), _zero_if_symbolic(dq, q) * (-x * jsp.zeta(x + 1, q))


@defop("_special_zeta", promote="float", method=False, out=True, grad_name=_by_operands("SpecialZetaBackward"),
       check=_kernel_check("zeta_cpu", half=False))  # fmt: skip
def zeta(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.special.zeta: the Hurwitz zeta function; no gradient for ``input`` (as torch)."""
    x, q = jnp.broadcast_arrays(input, other)
    r = _zeta(x, q)
    # torch: a pole at every non-positive integer q, whatever x (JAX gives NaN for non-integer x)
    return jnp.where((q <= 0) & (q == jnp.floor(q)) & (x > 1), jnp.inf, r)


def _igamma_fn(upper: bool) -> Callable:
    name = "igammac" if upper else "igamma"

    @_no_grad_for(f"the derivative for '{name}: input' is not implemented.", (0,))
    def f(a: Any, x: Any) -> Any:
        return (jsp.gammaincc if upper else jsp.gammainc)(a, x)

    @f.defjvp_rule
    def f_jvp(primals: tuple, tangents: tuple) -> tuple:
        (a, x), (_, dx) = primals, tangents
        d = jnp.exp((a - 1) * jnp.log(x) - x - jsp.gammaln(a))
        return f(a, x), _zero_if_symbolic(dx, x) * (-d if upper else d)

    return f


_igamma, _igammac = _igamma_fn(False), _igamma_fn(True)


@defop(promote="default", inplace=True, out=True, check=_kernel_check("igamma_cpu", integral=False))
def igamma(input: TensorArg, other: TensorArg) -> Any:
    """torch.igamma / torch.special.gammainc: the regularised lower incomplete gamma function."""
    a, x = jnp.broadcast_arrays(input, other)
    return _igamma(a, x)


@defop(promote="default", inplace=True, out=True, check=_kernel_check("igammac_cpu", integral=False))
def igammac(input: TensorArg, other: TensorArg) -> Any:
    """torch.igammac / torch.special.gammaincc: the regularised upper incomplete gamma function."""
    a, x = jnp.broadcast_arrays(input, other)
    return _igammac(a, x)


def _polygamma_fn(n: int, x: Any) -> Any:
    @jax.custom_jvp
    def f(x: Any) -> Any:
        if n == 0:
            return _digamma(x)
        if n == 1:
            return _trigamma(x)
        # (-1)^(n+1) n! zeta(n + 1, x)
        sign = -1.0 if n % 2 == 0 else 1.0
        return (sign * math.exp(math.lgamma(n + 1)) * jsp.zeta(jnp.asarray(n + 1, x.dtype), x)).astype(
            x.dtype
        )

    f.defjvp(lambda p, t: (f(p[0]), t[0] * _polygamma_fn(n + 1, p[0])))
    return f(x)


def _polygamma_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if cdt.is_complex:
        raise NotImplementedError(f"\"polygamma\" not implemented for '{D.cpp_name(cdt)}'")
    if static[0] < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@defop(promote="float", method=False, out=True, check=_polygamma_check)
def polygamma(n: int, input: TensorArg) -> Any:
    """torch.polygamma: the n-th derivative of digamma."""
    return _polygamma_fn(int(n), input)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


def _polygamma_inplace(self: Tensor, n: int) -> Tensor:
    return _inplace_commit(self, polygamma(n, self))


METHODS["polygamma"] = _polygamma_method
METHODS["polygamma_"] = _polygamma_inplace


def _mvlgamma_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if cdt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{D.cpp_name(cdt)}'")
    p = static[0]
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@defop(promote="float", inplace=True, out=True, check=_mvlgamma_check)
def mvlgamma(input: TensorArg, p: int) -> Any:
    """torch.mvlgamma / torch.special.multigammaln: the multivariate log-gamma function of dimension p."""
    from .pointwise import _lgamma

    j = jnp.arange(p, dtype=input.dtype) * 0.5
    total = jnp.sum(_lgamma(input[..., None] - j), axis=-1)
    return (total + p * (p - 1) / 4 * math.log(math.pi)).astype(input.dtype)
