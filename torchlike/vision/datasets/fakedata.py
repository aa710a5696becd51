"""torchvision.datasets.fakedata."""

from ._fakedata import (
    FakeData,
)

__all__ = ["FakeData"]  # fmt: skip
