"""torchvision.transforms.v2.functional: the v1 functions (plain tensors and PIL images), plus v2's names."""

from ..functional import *  # noqa: F403
from ..functional import __all__ as _all
from ..functional import pil_to_tensor as to_image

__all__ = [*_all, "to_image"]
