"""torch.distributions.Binomial."""

from __future__ import annotations

from typing import Any

import torchlike

from .._core.size import Size
from .._core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _BinaryProbsOrLogits, _init_probs_or_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x: Tensor) -> Tensor:
    # torch: like clamp(min=0), but with gradient 1/2 at zero
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryProbsOrLogits, Distribution):
    """Successes in ``total_count`` trials with success probability ``probs`` (or ``logits``); samples are
    torch.binomial's draws."""

    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count: Tensor | int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        _init_probs_or_logits(self, probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Binomial:
        return self._expand_params(Binomial, batch_shape, _instance, "total_count", probs_or_logits=True)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with torchlike.no_grad():
            return torchlike.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torchlike.lgamma(self.total_count + 1)
        log_factorial_k = torchlike.lgamma(value + 1)
        log_factorial_nmk = torchlike.lgamma(self.total_count - value + 1)
        # log(1 + exp(logits)) computed stably
        normalize_term = (
            self.total_count * _clamp_by_zero(self.logits)
            + self.total_count * torchlike.log1p(torchlike.exp(-torchlike.abs(self.logits)))
            - log_factorial_n
        )
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torchlike.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = torchlike.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
