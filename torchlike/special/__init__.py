"""torch.special: re-exports. Functions torch.special shares with torch (erf, lgamma, i0, xlogy, ...) are
the same table ops; the special-only ones live in ``torchlike._ops.special``."""

from .._ops.nn_activation import log_softmax, softmax
from .._ops.pointwise import digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, logit, round, sinc, xlogy
from .._ops.pointwise import digamma as psi
from .._ops.pointwise import lgamma as gammaln
from .._ops.pointwise import sigmoid as expit
from .._ops.reduction import logsumexp
from .._ops.special import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    entr,
    erfcx,
    hermite_polynomial_h,
    hermite_polynomial_he,
    i0e,
    i1,
    i1e,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    ndtr,
    ndtri,
    polygamma,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
    spherical_bessel_j0,
    xlog1py,
    zeta,
)
from .._ops.special import igamma as gammainc
from .._ops.special import igammac as gammaincc
from .._ops.special import mvlgamma as multigammaln

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t", "chebyshev_polynomial_u",
    "chebyshev_polynomial_v", "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0",
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
    "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta",
]  # fmt: skip


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
