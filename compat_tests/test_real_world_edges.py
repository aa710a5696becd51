"""Edge cases real scripts hit: NaN through relu and its clamping cousins, BCE's clamped logs (finite
gradients at inputs 0 and 1), and indexing with a Python range."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check

_SPECIAL = np.array([np.nan, -5.0, -3.0, -1.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, np.inf, -np.inf], np.float32)

_ACTIVATIONS = {
    "relu": lambda t, x: t.relu(x),
    "F.relu": lambda t, x: t.nn.functional.relu(x),
    "F.relu_inplace": lambda t, x: t.nn.functional.relu(x * 1, inplace=True),
    "ReLU": lambda t, x: t.nn.ReLU()(x),
    "relu6": lambda t, x: t.nn.functional.relu6(x),
    "hardtanh": lambda t, x: t.nn.functional.hardtanh(x, -2.0, 2.5),
    "hardsigmoid": lambda t, x: t.nn.functional.hardsigmoid(x),
    "hardswish": lambda t, x: t.nn.functional.hardswish(x),
    "threshold": lambda t, x: t.nn.functional.threshold(x, 0.1, 20.0),
    "clamp": lambda t, x: t.clamp(x, -0.5, 0.6),
    "clamp_min": lambda t, x: t.clamp_min(x, 0.0),
    "clamp_max": lambda t, x: x.clamp_max(0.0),
    "clip": lambda t, x: x.clip(min=0.0),
    "clamp_tensor": lambda t, x: t.clamp(x, min=t.zeros(12), max=t.full((12,), 2.0)),
}


@pytest.mark.parametrize("name", list(_ACTIVATIONS))
def test_nan_and_infinities_propagate(name: str) -> None:
    check(_ACTIVATIONS[name], [_SPECIAL])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_at_zero_and_one(reduction: str) -> None:
    p = np.array([0.0, 1.0, 0.5, 1e-30, 1.0, 0.0], np.float32)
    y = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], np.float32)
    w = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 3.0], np.float32)
    check(lambda t, p, y: t.nn.functional.binary_cross_entropy(p, y, reduction=reduction), [p, y], rtol=1e-5)
    check(lambda t, p, y, w: t.nn.BCELoss(weight=w.detach(), reduction=reduction)(p, y), [p, y, w], rtol=1e-5)


def test_binary_cross_entropy_target_gradient() -> None:
    p = np.array([0.0, 1.0, 0.25, 0.75], np.float64)
    y = np.array([0.3, 0.2, 1.0, 0.0], np.float64)
    check(lambda t, p, y: t.nn.functional.binary_cross_entropy(p.detach(), y), [p, y])


_RANGES = {
    "rows": lambda t, a: a[range(2)],
    "rows_and_int": lambda t, a: a[range(1, 3), 2],
    "columns_stepped": lambda t, a: a[:, range(0, 4, 2)],
    "empty": lambda t, a: a[range(0)],
    "two_ranges": lambda t, a: a[range(2), range(1, 3)],
}


@pytest.mark.parametrize("name", list(_RANGES))
def test_range_index(name: str) -> None:
    check(_RANGES[name], [np.arange(12.0).reshape(3, 4)])


def test_range_index_assignment() -> None:
    def run(t, a):  # noqa: ANN001, ANN202
        b = a.clone()
        b[range(2)] = 0
        b[:, range(1, 3)] += 5
        return b

    check(run, [np.arange(12.0).reshape(3, 4)])
