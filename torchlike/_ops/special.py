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
from ._common import inplace_variant
from .pointwise import _digamma, _trigamma
from .registry import TensorArg, TensorOrScalar, defop


def _kernel_check(kernel: str, half: bool = True, integral: bool = True) -> Callable:
    """torch's "<kernel>" not implemented error for complex (and, where CPU lacks them, half/int) dtypes."""

    def check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
        bad = cdt.is_complex or (not half and cdt in (D.float16, D.bfloat16))
        bad = bad or (not integral and not cdt.is_floating_point)
        if bad:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.cpp_name(cdt)}'")

    return check


def _no_grad_for(message: str, argnums: tuple) -> Callable:
    """``f`` whose derivative raises torch's NotImplementedError when a tangent reaches an argument in
    ``argnums`` (torch has no formula there; JAX may have one). ``@f.defjvp_rule`` gives the rule for the
    others; untouched arguments arrive as symbolic zeros, so only a real gradient request raises."""

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


def _opmath(f: Callable) -> Callable:
    """``f`` on float16/bfloat16 arrays computed in float32 and rounded back, as torch's CPU kernels do."""

    def g(*args: Any) -> Any:
        low = args[0].dtype
        if low not in (jnp.float16, jnp.bfloat16):
            return f(*args)
        return f(*(a.astype(jnp.float32) for a in args)).astype(low)

    return g


def _unary(name: str, f: Callable, kernel: str, grad_name: str, half: bool = True) -> Callable:
    f = _opmath(f)

    def body(input: TensorArg) -> Any:
        return f(input)

    body.__doc__ = f"torch.special.{name}; integer and bool inputs give the default float dtype."
    return defop(f"_special_{name}", promote="float", namespaces=(f"special:{name}",), out=True, grad_name=grad_name,
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


@defop("_special_xlog1py", promote="float", namespaces=("special:xlog1py",), out=True, grad_name=_by_operands("SpecialXlog1PyBackward"),
       check=_kernel_check("xlog1py_cpu"))  # fmt: skip
def xlog1py(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.special.xlog1py: ``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    x, y = jnp.broadcast_arrays(input, other)
    return _opmath(_xlog1py)(x, y)


# --- zeta, incomplete gamma, polygamma, multivariate log-gamma -----------------------------------------------


@_no_grad_for("the derivative for 'zeta' is not implemented.", (0,))
def _zeta(x: Any, q: Any) -> Any:
    return _hurwitz(x, q)


def _hurwitz(x: Any, q: Any) -> Any:
    """Hurwitz zeta in float64 (JAX's float32 one loses digits for negative q), with torch's pole at every
    non-positive integer q (JAX gives NaN there for non-integer x)."""
    x64, q64 = x.astype(jnp.float64), q.astype(jnp.float64)
    # NOTE: JAX's zeta is wrong for negative q; with an integer x, zeta(x, q) = q**-x + zeta(x, q + 1) moves q
    # above 1 first (torch's Cephes kernel sums the same leading terms)
    shift = (q64 < 1) & (x64 == jnp.floor(x64)) & (q64 != jnp.floor(q64))

    def body(carry: tuple) -> tuple:
        qs, acc = carry
        todo = shift & (qs < 1)
        return jnp.where(todo, qs + 1, qs), acc + jnp.where(todo, jnp.power(qs, -x64), 0.0)

    qs, acc = jax.lax.while_loop(lambda c: jnp.any(shift & (c[0] < 1)), body, (q64, jnp.zeros_like(q64)))
    r = jsp.zeta(x64, qs) + acc
    r = jnp.where((q <= 0) & (q == jnp.floor(q)) & (x > 1), jnp.inf, r)
    r = jnp.where(x == 1, jnp.inf, jnp.where(x < 1, jnp.nan, r))  # torch's Cephes kernel: x < 1 is outside its domain
    return r.astype(jnp.result_type(x, q))


@_zeta.defjvp_rule
def _zeta_jvp(primals: tuple, tangents: tuple) -> tuple:
    # torch: d/dq zeta(x, q) = -x zeta(x + 1, q)
    (x, q), (_, dq) = primals, tangents
    return _zeta(x, q), _zero_if_symbolic(dq, q) * (-x * _hurwitz(x + 1, q))


@defop("_special_zeta", promote="float", namespaces=("special:zeta",), out=True, grad_name=_by_operands("SpecialZetaBackward"),
       check=_kernel_check("zeta_cpu", half=False))  # fmt: skip
def zeta(input: TensorOrScalar, other: TensorOrScalar) -> Any:
    """torch.special.zeta: the Hurwitz zeta function; no gradient for ``input`` (as torch)."""
    x, q = jnp.broadcast_arrays(input, other)
    return _zeta(x, q)


def _igamma_fn(upper: bool) -> Callable:
    name = "igammac" if upper else "igamma"

    @_no_grad_for(f"the derivative for '{name}: input' is not implemented.", (0,))
    def f(a: Any, x: Any) -> Any:
        r = (jsp.gammaincc if upper else jsp.gammainc)(a, x)
        # torch: a = inf with finite x >= 0 is the limit (P = 0, Q = 1); JAX gives NaN
        return jnp.where(jnp.isposinf(a) & jnp.isfinite(x) & (x >= 0), 1.0 if upper else 0.0, r).astype(
            r.dtype
        )

    @f.defjvp_rule
    def f_jvp(primals: tuple, tangents: tuple) -> tuple:
        (a, x), (_, dx) = primals, tangents
        d = jnp.exp((a - 1) * jnp.log(x) - x - jsp.gammaln(a))
        return f(a, x), _zero_if_symbolic(dx, x) * (-d if upper else d)

    return f


_igamma, _igammac = _igamma_fn(False), _igamma_fn(True)


@defop(promote="default", namespaces=("torch", "Tensor", "special:gammainc"), inplace=True, out=True,
       check=_kernel_check("igamma_cpu", integral=False))  # fmt: skip
def igamma(input: TensorArg, other: TensorArg) -> Any:
    """torch.igamma / torch.special.gammainc: the regularised lower incomplete gamma function."""
    a, x = jnp.broadcast_arrays(input, other)
    return _opmath(_igamma)(a, x)


@defop(promote="default", namespaces=("torch", "Tensor", "special:gammaincc"), inplace=True, out=True,
       check=_kernel_check("igammac_cpu", integral=False))  # fmt: skip
def igammac(input: TensorArg, other: TensorArg) -> Any:
    """torch.igammac / torch.special.gammaincc: the regularised upper incomplete gamma function."""
    a, x = jnp.broadcast_arrays(input, other)
    return _opmath(_igammac)(a, x)


def _polygamma_fn(n: int, x: Any) -> Any:
    @jax.custom_jvp
    def f(x: Any) -> Any:
        if n == 0:
            return _digamma(x)
        if n == 1:
            return _trigamma(x)
        # (-1)^(n+1) n! zeta(n + 1, x)
        sign = -1.0 if n % 2 == 0 else 1.0
        return (sign * math.exp(math.lgamma(n + 1)) * _hurwitz(jnp.full_like(x, n + 1), x)).astype(x.dtype)

    f.defjvp(lambda p, t: (f(p[0]), t[0] * _polygamma_fn(n + 1, p[0])))
    return f(x)


def _polygamma_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if cdt.is_complex:
        raise NotImplementedError(f"\"polygamma\" not implemented for '{D.cpp_name(cdt)}'")
    if static[0] < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


@defop(promote="float", namespaces=("torch", "special"), out=True, check=_polygamma_check)
def polygamma(n: int, input: TensorArg) -> Any:
    """torch.polygamma: the n-th derivative of digamma."""
    return _opmath(lambda x: _polygamma_fn(int(n), x))(input)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


_polygamma_inplace = inplace_variant(_polygamma_method, "polygamma_")


def _mvlgamma_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    if cdt.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{D.cpp_name(cdt)}'")
    p = static[0]
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


@defop(promote="float", namespaces=("torch", "Tensor", "special:multigammaln"), inplace=True, out=True,
       check=_mvlgamma_check)  # fmt: skip
def mvlgamma(input: TensorArg, p: int) -> Any:
    """torch.mvlgamma / torch.special.multigammaln: the multivariate log-gamma function of dimension p."""
    from .pointwise import _lgamma

    j = jnp.arange(p, dtype=input.dtype) * 0.5
    total = jnp.sum(_lgamma(input[..., None] - j), axis=-1)
    return (total + p * (p - 1) / 4 * math.log(math.pi)).astype(input.dtype)


# --- orthogonal polynomials (no gradient in torch) -------------------------------------------------------


def _recurrence(first: Callable, step: Callable) -> Callable:
    """p_n(x) from p_0 = 1, p_1 = first(x) and p_{k+1} = step(k, x, p_k, p_{k-1}); torch truncates n to an
    integer and gives 0 for n < 0."""

    def f(x: Any, n: Any) -> Any:
        x, n = jnp.broadcast_arrays(x, n)
        k_n = n.astype(jnp.int64) if jnp.issubdtype(n.dtype, jnp.floating) else n.astype(jnp.int64)
        p0, p1 = jnp.ones_like(x), first(x)
        top = jnp.max(k_n, initial=1)

        def body(k: Any, carry: tuple) -> tuple:
            p, q = carry
            r = step(k.astype(x.dtype), x, q, p)
            live = k < k_n
            return jnp.where(live, q, p), jnp.where(live, r, q)

        _, pn = jax.lax.fori_loop(1, top, body, (p0, p1))
        out = jnp.where(k_n == 0, p0, jnp.where(k_n == 1, p1, pn))
        return jnp.where(k_n < 0, 0, out).astype(x.dtype)

    return f


_POLYNOMIALS = {
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, q, p: 2 * x * q - p),
    "chebyshev_polynomial_u": (lambda x: 2 * x, lambda k, x, q, p: 2 * x * q - p),
    "chebyshev_polynomial_v": (lambda x: 2 * x - 1, lambda k, x, q, p: 2 * x * q - p),
    "chebyshev_polynomial_w": (lambda x: 2 * x + 1, lambda k, x, q, p: 2 * x * q - p),
    "hermite_polynomial_h": (lambda x: 2 * x, lambda k, x, q, p: 2 * x * q - 2 * k * p),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, q, p: x * q - k * p),
    "laguerre_polynomial_l": (lambda x: 1 - x, lambda k, x, q, p: ((2 * k + 1 - x) * q - k * p) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x, lambda k, x, q, p: ((2 * k + 1) * x * q - k * p) / (k + 1)),
}


def _polynomial(name: str, shifted: bool) -> Callable:
    first, step = _POLYNOMIALS[name]
    f = _recurrence(first, step)
    full = f"shifted_{name}" if shifted else name

    def body(input: TensorOrScalar, n: TensorOrScalar) -> Any:
        return f(2 * input - 1 if shifted else input, n)

    body.__doc__ = f"torch.special.{full} (n truncated to an integer; no gradient, as torch)."
    return defop(f"_special_{full}", promote="float", namespaces=(f"special:{full}",), out=True, differentiable=False,
                 check=_kernel_check(f"{full}_cpu", half=False))(body)  # fmt: skip


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", False)
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", False)
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", False)
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", False)
shifted_chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", True)
shifted_chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", True)
shifted_chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", True)
shifted_chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", True)
hermite_polynomial_h = _polynomial("hermite_polynomial_h", False)
hermite_polynomial_he = _polynomial("hermite_polynomial_he", False)
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", False)
legendre_polynomial_p = _polynomial("legendre_polynomial_p", False)


# --- Bessel and Airy functions (no gradient in torch) --------------------------------------------------------
# Computed in float64 and rounded to the input's dtype: power series for small arguments, Hankel's
# asymptotic expansions for large ones (each truncated where its error is below float64 rounding), and for
# K_nu the trapezoidal rule on K_nu(x) = int_0^inf exp(-x cosh t) cosh(nu t) dt, which converges
# exponentially for this integrand.

_EULER = 0.57721566490153286061
_SERIES_TERMS = 48
_HANKEL_TERMS = 24
_CROSSOVER = 12.0


def _jy_series(x: Any, order: int) -> tuple:
    """(J_order, Y_order) for 0 < x <= _CROSSOVER from the power series."""
    half = x / 2
    z = -(half * half)
    term = jnp.ones_like(x) if order == 0 else half
    j_sum = term
    h_k, h_k1 = 0.0, 1.0  # harmonic numbers H_k, H_{k+1}
    # Y0: sum of (-1)^(k+1) H_k (x/2)^(2k) / k!^2; Y1: -sum of (psi(k+1) + psi(k+2)) (-1)^k (x/2)^(2k+1) / (k! (k+1)!)
    y_sum = term * (0.0 if order == 0 else -(1.0 - 2 * _EULER))
    for k in range(1, _SERIES_TERMS):
        term = term * z / (k * (k + order))
        j_sum = j_sum + term
        h_k += 1.0 / k
        h_k1 += 1.0 / (k + 1)
        if order == 0:
            y_sum = y_sum - term * h_k
        else:
            y_sum = y_sum - term * (h_k + h_k1 - 2 * _EULER)
    log_term = jnp.log(half)
    if order == 0:
        return j_sum, (2 / math.pi) * ((log_term + _EULER) * j_sum + y_sum)
    return j_sum, -2 / (math.pi * x) + (2 / math.pi) * log_term * j_sum + y_sum / math.pi


def _jy_hankel(x: Any, order: int) -> tuple:
    """(J_order, Y_order) for large x from Hankel's asymptotic expansion."""
    mu = 4.0 * order * order
    a = 1.0
    p, q = jnp.ones_like(x), jnp.zeros_like(x)
    inv = 1 / x
    power = jnp.ones_like(x)
    for k in range(1, _HANKEL_TERMS):
        a = a * (mu - (2 * k - 1) ** 2) / (k * 8)
        power = power * inv
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * a * power
        else:
            p = p + sign * a * power
    chi = x - (order / 2 + 0.25) * math.pi
    amp = jnp.sqrt(2 / (math.pi * x))
    c, s = jnp.cos(chi), jnp.sin(chi)
    return amp * (p * c - q * s), amp * (p * s + q * c)


def _jy(x: Any, order: int) -> tuple:
    ax = jnp.abs(x)
    small = ax <= _CROSSOVER
    js, ys = _jy_series(jnp.where(small, jnp.where(ax == 0, 1.0, ax), 1.0), order)
    jh, yh = _jy_hankel(jnp.where(small, _CROSSOVER * 2, jnp.where(jnp.isinf(ax), 1e300, ax)), order)
    j = jnp.where(small, js, jh)
    y = jnp.where(small, ys, yh)
    if order == 0:
        j = jnp.where(ax == 0, 1.0, j)
    else:
        j = jnp.where(ax == 0, 0.0, jnp.sign(x) * j)
    y = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, y))
    # torch: NaN at +-inf
    return jnp.where(jnp.isinf(x), jnp.nan, j), jnp.where(jnp.isinf(x), jnp.nan, y)


_QUAD_POINTS = 160


def _k_scaled(x: Any, nu: float) -> Any:
    """exp(x) K_nu(x) for x > 0 (trapezoid on [0, T], T where the integrand drops below e^-50)."""
    t_end = jnp.arccosh(1 + 50 / x)
    h = t_end / _QUAD_POINTS
    t = h[..., None] * jnp.arange(_QUAD_POINTS + 1, dtype=x.dtype)
    f = jnp.exp(-2 * x[..., None] * jnp.sinh(t / 2) ** 2) * jnp.cosh(nu * t)
    return h * (jnp.sum(f, axis=-1) - 0.5 * f[..., 0])


def _k(x: Any, nu: float, scaled: bool) -> Any:
    pos = jnp.where(x > 0, x, 1.0)
    pos = jnp.where(jnp.isinf(pos), 1e300, pos)
    r = _k_scaled(pos, nu)
    # below 1e-10 the quadrature's range outgrows its step; the leading terms are exact there
    tiny = -(jnp.log(pos / 2) + _EULER) if nu == 0 else 1 / pos
    r = jnp.where(pos < 1e-10, tiny, r)
    r = r if scaled else r * jnp.exp(-pos)
    r = jnp.where(jnp.isinf(x), 0.0, r)
    return jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, r))


_AI0 = 0.355028053887817239260  # Ai(0)
_AIP0 = 0.258819403792806798405  # -Ai'(0)


def _airy_ai(x: Any) -> Any:
    # -7 <= x <= 2: Maclaurin series; x > 2: Ai = sqrt(x / 3) K_{1/3}(zeta) / pi; x < -7: asymptotic expansion
    xs = jnp.clip(x, -7.0, 2.0)
    cube = xs**3
    f_term, g_term = jnp.ones_like(xs), xs
    f_sum, g_sum = f_term, g_term
    for k in range(1, 40):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f_sum, g_sum = f_sum + f_term, g_sum + g_term
    series = _AI0 * f_sum - _AIP0 * g_sum

    xp = jnp.where(x > 2, x, 3.0)
    xp = jnp.where(jnp.isinf(xp), 1e300, xp)
    zeta = 2 / 3 * xp**1.5
    right = jnp.sqrt(xp / 3) / math.pi * _k_scaled(zeta, 1 / 3) * jnp.exp(-zeta)

    y = jnp.where(x < -7, -x, 8.0)
    y = jnp.where(jnp.isinf(y), 1e300, y)
    zeta = 2 / 3 * y**1.5
    u, p, q, power = 1.0, jnp.ones_like(y), jnp.zeros_like(y), jnp.ones_like(y)
    for k in range(1, 20):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k)
        power = power / zeta
        sign = -1.0 if (k // 2) % 2 else 1.0
        if k % 2:
            q = q + sign * u * power
        else:
            p = p + sign * u * power
    phase = zeta + math.pi / 4
    left = (jnp.sin(phase) * p - jnp.cos(phase) * q) / (math.sqrt(math.pi) * y**0.25)

    r = jnp.where(x > 2, right, jnp.where(x < -7, left, series))
    return jnp.where(jnp.isinf(x), jnp.nan, r)  # torch: NaN at +-inf


def _spherical_j0(x: Any) -> Any:
    safe = jnp.where(x == 0, 1.0, x)
    return jnp.where(x == 0, 1.0, jnp.where(jnp.isinf(x), 0.0, jnp.sin(safe) / safe))


_BESSEL = {
    "bessel_j0": lambda x: _jy(x, 0)[0],
    "bessel_j1": lambda x: _jy(x, 1)[0],
    "bessel_y0": lambda x: _jy(x, 0)[1],
    "bessel_y1": lambda x: _jy(x, 1)[1],
    "modified_bessel_i0": jsp.i0,
    "modified_bessel_i1": jsp.i1,
    "modified_bessel_k0": lambda x: _k(x, 0.0, False),
    "modified_bessel_k1": lambda x: _k(x, 1.0, False),
    "scaled_modified_bessel_k0": lambda x: _k(x, 0.0, True),
    "scaled_modified_bessel_k1": lambda x: _k(x, 1.0, True),
    "spherical_bessel_j0": _spherical_j0,
    "airy_ai": _airy_ai,
}


def _bessel(name: str) -> Callable:
    f = _BESSEL[name]

    def body(input: TensorArg) -> Any:
        r = f(input.astype(jnp.float64))
        return jnp.where(jnp.isnan(input), input.astype(jnp.float64), r).astype(input.dtype)

    body.__doc__ = f"torch.special.{name} (computed in float64; no gradient, as torch)."
    return defop(f"_special_{name}", promote="float", namespaces=(f"special:{name}",), out=True, differentiable=False,
                 check=_kernel_check(f"{name}_cpu", half=False))(body)  # fmt: skip


bessel_j0 = _bessel("bessel_j0")
bessel_j1 = _bessel("bessel_j1")
bessel_y0 = _bessel("bessel_y0")
bessel_y1 = _bessel("bessel_y1")
modified_bessel_i0 = _bessel("modified_bessel_i0")
modified_bessel_i1 = _bessel("modified_bessel_i1")
modified_bessel_k0 = _bessel("modified_bessel_k0")
modified_bessel_k1 = _bessel("modified_bessel_k1")
scaled_modified_bessel_k0 = _bessel("scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _bessel("scaled_modified_bessel_k1")
spherical_bessel_j0 = _bessel("spherical_bessel_j0")
airy_ai = _bessel("airy_ai")
