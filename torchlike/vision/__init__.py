"""The part of torchvision that torch tutorials use with torch.utils.data: ``torchlike.vision.transforms``.

``from torchvision import transforms`` becomes ``from torchlike.vision import transforms``.
"""

from . import transforms

__all__ = ["transforms"]
