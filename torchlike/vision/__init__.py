"""torchvision on torchlike: ``transforms`` (v1 and v2), ``datasets`` read from local files, ``models``,
``utils``, ``io`` and ``ops``. ``import torchvision`` resolves here under ``python -m torchlike run``."""

from . import datasets, io, models, ops, transforms, utils

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils"]
