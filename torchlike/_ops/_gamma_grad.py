"""The reparameterised gradient of a standard Gamma draw, d(sample)/d(alpha) = -(dCDF/dalpha) / pdf, with the
three approximations ATen's ``standard_gamma_grad_one`` picks between (a series for small x, Rice's saddle
point expansion for large alpha, a bivariate rational fit elsewhere), evaluated in float64 as torch does."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from jax.scipy.special import digamma

# coefficients of the rational fit in (log(x/alpha), log(alpha)), from torch's kernel
_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07),
)  # fmt: skip


def _small_x(alpha: Any, x: Any) -> Any:
    numer, denom = jnp.ones_like(x), alpha
    series1, series2 = numer / denom, numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_alpha = jnp.power(x, alpha)
    pdf = jnp.power(x, alpha - 1) * jnp.exp(-x)
    cdf = pow_x_alpha * series1
    cdf_alpha = (jnp.log(x) - digamma(alpha)) * cdf - pow_x_alpha * series2
    result = -cdf_alpha / pdf
    return jnp.where(jnp.isnan(result), 0.0, result)


def _large_alpha(alpha: Any, x: Any) -> Any:
    near = (0.9 * alpha <= x) & (x <= 1.1 * alpha)
    numer_1 = 1 + 24 * alpha * (1 + 12 * alpha)
    numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x)
    saddle = numer_1 * numer_2 / (1244160 * (alpha * alpha) * (alpha * alpha))
    denom = jnp.sqrt(8 * alpha)
    term2 = denom / (alpha - x)
    term3 = jnp.power(x - alpha - alpha * jnp.log(x / alpha), -1.5)
    term23 = jnp.where(x < alpha, term2 - term3, term2 + term3)
    term1 = jnp.log(x / alpha) * term23 - jnp.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * (x * term1) / denom
    return jnp.where(near, saddle, far)


def _rational(alpha: Any, x: Any) -> Any:
    u, v = jnp.log(x / alpha), jnp.log(alpha)
    c = [_UV[0][i] + u * (_UV[1][i] + u * _UV[2][i]) for i in range(8)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return jnp.exp(p / q)


def standard_gamma_grad(alpha: Any, x: Any) -> Any:
    """d x / d alpha for x ~ Gamma(alpha, 1), in ``x``'s dtype (computed in float64)."""
    a, s = alpha.astype(jnp.float64), x.astype(jnp.float64)
    # keep every branch finite where it is not taken, so the where() picks clean values
    small = s < 0.8
    large = ~small & (a > 8.0)
    s_small = jnp.where(small, s, 0.5)
    s_other = jnp.where(small, a, s)
    out = jnp.where(small, _small_x(a, s_small), jnp.where(large, _large_alpha(a, s_other), _rational(a, s_other)))
    return out.astype(x.dtype)
