"""torchvision.utils."""

from ._utils import make_grid, save_image

__all__ = ["make_grid", "save_image"]
