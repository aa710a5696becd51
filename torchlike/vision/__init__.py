"""torchvision on torchlike: ``transforms`` (v1 and v2), ``datasets`` read from local files, ``models``,
``utils``, ``io`` and ``ops``. ``import torchvision`` resolves here under ``python -m torchlike run``."""

from . import datasets, io, models, ops, transforms, utils

# the torchvision release that pairs with the torch version torchlike reports (torch 2.13 <-> torchvision 0.28)
__version__ = "0.28.0+torchlike0.1"

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils"]
