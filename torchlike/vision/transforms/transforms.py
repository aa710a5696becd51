"""torchvision.transforms.transforms."""

from ._transforms import *  # noqa: F403
from ._transforms import __all__  # noqa: F401
