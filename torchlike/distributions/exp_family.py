"""torch.distributions.ExponentialFamily: entropy (and KL) from the log normalizer via autograd."""

from __future__ import annotations

from typing import Any

import torchlike

from .._core.tensor import Tensor
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of exponential-family distributions; subclasses give natural params and the log normalizer."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """Entropy as the Bregman divergence of the log normalizer (gradients by autograd)."""
        result: Any = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torchlike.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result += lg_normal
        for p, g in zip(nparams, gradients):
            result -= (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
