"""torch.distributions (core subset), written on torchlike's tensor API.

Sampling draws from torchlike's CPU generator exactly as torch's Python code does, so after
``manual_seed`` samples equal torch's bit for bit; ``rsample`` and ``log_prob`` are differentiable.

Supported: Distribution, ExponentialFamily, Normal, Uniform, Bernoulli, Categorical, OneHotCategorical,
OneHotCategoricalStraightThrough, Independent, MultivariateNormal, Exponential, Laplace, LogNormal,
TransformedDistribution; ``transforms`` (Transform, ComposeTransform, identity_transform,
IndependentTransform, ExpTransform, PowerTransform, SigmoidTransform, TanhTransform, AbsTransform,
AffineTransform);
``constraints`` (all of torch's public constraints); ``utils`` (broadcast_all, logits_to_probs,
probs_to_logits, clamp_probs, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix);
``kl_divergence``/``register_kl`` with torch's closed forms for the pairs among the classes above.

Not implemented (absent names, so ``AttributeError``): Beta, Binomial, Cauchy, Chi2, ContinuousBernoulli,
Dirichlet, FisherSnedecor, Gamma, GeneralizedPareto, Geometric, Gumbel, HalfCauchy, HalfNormal,
InverseGamma, Kumaraswamy, LKJCholesky, LogisticNormal, LowRankMultivariateNormal,
MixtureSameFamily, Multinomial, NegativeBinomial, Pareto, Poisson, RelaxedBernoulli,
RelaxedOneHotCategorical, StudentT, VonMises, Weibull, Wishart; the transforms ReshapeTransform,
SoftmaxTransform, StickBreakingTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
CorrCholeskyTransform, CatTransform, StackTransform, CumulativeDistributionTransform; and
``constraint_registry`` (``biject_to``/``transform_to``).
"""

from __future__ import annotations

from . import constraints, kl, transforms, utils
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403  (torch re-exports the transform classes here too)
from .uniform import Uniform

__all__ = [
    "Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Exponential", "Independent", "Laplace",
    "LogNormal", "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "TransformedDistribution", "Uniform", "constraints", "kl_divergence", "register_kl", "transforms",
    *transforms.__all__,
]  # fmt: skip
