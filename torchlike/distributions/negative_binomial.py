"""torch.distributions.NegativeBinomial."""

from __future__ import annotations

from typing import Any

import torchlike

from .._core.size import Size
from .._core.tensor import Tensor
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryProbsOrLogits, _expand_probs_or_logits, _init_probs_or_logits, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryProbsOrLogits, Distribution):
    """Successes before ``total_count`` failures, success probability ``probs`` (or ``logits``). Samples are
    torch's: a Poisson draw at a Gamma(total_count, exp(-logits)) rate."""

    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count: Tensor | float, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        _init_probs_or_logits(self, probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> NegativeBinomial:
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _new(self, *args: Any, **kwargs: Any) -> Tensor:
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * torchlike.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / torchlike.sigmoid(-self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # the Poisson rate's mixing distribution
        return Gamma(concentration=self.total_count, rate=torchlike.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        with torchlike.no_grad():
            return torchlike.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        unnormalised = self.total_count * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        normaliser = (
            -torchlike.lgamma(self.total_count + value) + torchlike.lgamma(1.0 + value) + torchlike.lgamma(self.total_count)
        )
        # the mass at total_count + value == 0 is 1 (lgamma(0) would make it nan)
        normaliser = normaliser.masked_fill(self.total_count + value == 0.0, 0.0)
        return unnormalised - normaliser
