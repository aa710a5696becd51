"""torchvision.ops.boxes."""

from ._boxes import (
    batched_nms,
    box_area,
    box_iou,
    nms,
)

__all__ = ["batched_nms", "box_area", "box_iou", "nms"]  # fmt: skip
