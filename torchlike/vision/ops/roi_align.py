"""torchvision.ops.roi_align."""

from ._boxes import (
    roi_align,
)

__all__ = ["roi_align"]  # fmt: skip
