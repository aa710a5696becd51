"""torchvision on torchlike: ``transforms`` (v1 and v2), ``datasets`` read from local files, ``models``,
``utils``, ``io`` and ``ops``. ``import torchvision`` resolves here under ``python -m torchlike run``."""

from . import datasets, models, ops, transforms

__all__ = ["datasets", "models", "ops", "transforms"]
