"""torch.distributions.GeneralizedPareto."""

from __future__ import annotations

import math
from typing import Any

import torchlike

from .._core.size import Size
from .._core.tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import _Number, broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Generalized Pareto with ``loc``, ``scale`` and shape ``concentration`` (sampled by inverse CDF)."""

    arg_constraints = {
        "loc": constraints.real,
        "scale": constraints.positive,
        "concentration": constraints.real,
    }
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, concentration: Tensor | float,
                 validate_args: bool | None = None) -> None:  # fmt: skip
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, _Number) for v in (loc, scale, concentration))
        super().__init__(Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> GeneralizedPareto:
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, "loc", "scale", "concentration")

    def rsample(self, sample_shape: Any = Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return self.icdf(torchlike.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def _safe_concentration(self) -> tuple[Tensor, Tensor]:
        """(concentration == 0 mask, concentration with the zeros replaced by 1) for the two branches."""
        eq_zero = torchlike.isclose(self.concentration, torchlike.tensor(0.0))
        return eq_zero, torchlike.where(eq_zero, torchlike.ones_like(self.concentration), self.concentration)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + torchlike.ones_like(z)
        where_nonzero = torchlike.where(y == 0, y, y * torchlike.log1p(safe_conc * z))
        return -self.scale.log() - torchlike.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        return torchlike.where(eq_zero, -z, -torchlike.log1p(safe_conc * z) / safe_conc)

    def log_cdf(self, value: Tensor) -> Tensor:
        return torchlike.log1p(-torchlike.exp(self.log_survival_function(value)))

    def cdf(self, value: Tensor) -> Tensor:
        return torchlike.exp(self.log_cdf(value))

    def icdf(self, value: Tensor) -> Tensor:
        concentration = self.concentration
        eq_zero = torchlike.isclose(concentration, torchlike.zeros_like(concentration))
        safe_conc = torchlike.where(eq_zero, torchlike.ones_like(concentration), concentration)
        logu = torchlike.log1p(-value)
        where_nonzero = self.loc + self.scale / safe_conc * torchlike.expm1(-safe_conc * logu)
        return torchlike.where(eq_zero, self.loc - self.scale * logu, where_nonzero)

    def _z(self, x: Tensor) -> Tensor:
        return (x - self.loc) / self.scale

    @property
    def mean(self) -> Tensor:
        valid = self.concentration < 1
        safe_conc = torchlike.where(valid, self.concentration, 0.5)
        return torchlike.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self) -> Tensor:
        valid = self.concentration < 0.5
        safe_conc = torchlike.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return torchlike.where(valid, result, math.nan)

    def entropy(self) -> Tensor:
        return torchlike.broadcast_to(torchlike.log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> constraints.Constraint:
        lower = self.loc
        upper = torchlike.where(self.concentration < 0, lower - self.scale / self.concentration, math.inf)
        return constraints.interval(lower, upper)
