"""torchvision.transforms.v2 (plain tensors and PIL images; see ``_v2`` for what differs)."""

from .. import _v2
from .._v2 import *
from . import functional

__all__ = [*_v2.__all__, "functional"]
