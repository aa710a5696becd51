"""torch.distributions.HalfCauchy: |X| for a centred Cauchy."""

from __future__ import annotations

import math
from typing import Any

import torchlike

from .._core.tensor import Tensor
from .cauchy import Cauchy
from .half_normal import _Half
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(_Half):
    """``|X|`` for ``X ~ Cauchy(0, scale)``."""

    base_dist: Cauchy

    def __init__(self, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return torchlike.full(
            self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device
        )

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = torchlike.as_tensor(
            value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device
        )
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torchlike.where(value >= 0, log_prob, -math.inf)
