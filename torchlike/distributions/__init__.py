"""torch.distributions (a subset), written on torchlike's tensor API.

Sampling draws from torchlike's CPU generator exactly as torch's Python code does, so after
``manual_seed`` the draws are torch's: samples equal torch's bit for bit, except where a sample passes
through log/exp-type functions (Relaxed*, Pareto, GeneralizedPareto, ContinuousBernoulli), whose float32
results may differ from torch's kernels in the last ulp. ``rsample`` and ``log_prob`` are differentiable.

Supported: Distribution, ExponentialFamily, Normal, Uniform, Bernoulli, ContinuousBernoulli, Categorical,
OneHotCategorical, OneHotCategoricalStraightThrough, Independent, MultivariateNormal,
LowRankMultivariateNormal, Exponential, Laplace, Cauchy, HalfNormal, HalfCauchy, Gumbel, Geometric,
LogNormal, LogisticNormal, Kumaraswamy, Pareto, Weibull, GeneralizedPareto, VonMises, Multinomial,
MixtureSameFamily, RelaxedBernoulli, RelaxedOneHotCategorical, TransformedDistribution (and, as in torch,
only in their modules: relaxed_bernoulli.LogitRelaxedBernoulli, relaxed_categorical.ExpRelaxedCategorical);
Gamma, Chi2, Beta, Dirichlet, StudentT and FisherSnedecor (torch._standard_gamma / _sample_dirichlet draws
bit for bit; Dirichlet and Beta ``rsample`` gradients agree with torch's to its approximations' accuracy);
Binomial, Poisson and NegativeBinomial (torch.binomial / torch.poisson draws bit for bit).
Also ``constraints``, ``transforms`` and ``biject_to``/``transform_to`` (all of torch's), ``utils``
(broadcast_all, logits_to_probs, probs_to_logits, clamp_probs, lazy_property, tril_matrix_to_vec,
vec_to_tril_matrix), and ``kl_divergence``/``register_kl`` with torch's closed forms for every pair torch
registers among the classes above.

Not implemented (the names are absent, so using them raises AttributeError):
- not built yet: InverseGamma, LKJCholesky, Wishart;
"""

from __future__ import annotations

from . import constraint_registry, constraints, kl, transforms, utils
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .chi2 import Chi2
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Gamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .kl import kl_divergence, register_kl
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .pareto import Pareto
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403  (torch re-exports the transform classes here too)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet", "Distribution",
    "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "Kumaraswamy",
    "Laplace", "LogNormal", "LogisticNormal", "LowRankMultivariateNormal", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution", "Uniform", "VonMises",
    "Weibull", "biject_to", "constraints", "kl_divergence", "register_kl", "transform_to", "transforms",
    *transforms.__all__,
]  # fmt: skip


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
