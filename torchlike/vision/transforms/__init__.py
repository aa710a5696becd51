"""torchvision.transforms: the v1 transform classes, ``functional`` and ``v2``."""

from . import _autoaugment, functional, v2
from ._autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from ._functional import normalize, to_tensor
from . import _transforms
from ._transforms import *

__all__ = [*_transforms.__all__, *_autoaugment.__all__, "functional", "v2", "to_tensor", "normalize"]
