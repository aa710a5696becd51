"""torch.special: re-exports. Functions torch.special shares with torch (erf, lgamma, i0, xlogy, ...) are
the same table ops; the special-only ones live in ``torchlike._ops.special``."""

from .._ops.nn_activation import log_softmax, softmax
from .._ops.pointwise import digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, logit, round, sinc, xlogy
from .._ops.pointwise import digamma as psi
from .._ops.pointwise import lgamma as gammaln
from .._ops.pointwise import sigmoid as expit
from .._ops.reduction import logsumexp
from .._ops.special import entr, erfcx, i0e, i1, i1e, log_ndtr, ndtr, ndtri, polygamma, xlog1py, zeta
from .._ops.special import igamma as gammainc
from .._ops.special import igammac as gammaincc
from .._ops.special import mvlgamma as multigammaln

__all__ = [
    "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
    "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr",
    "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta",
]  # fmt: skip
