"""box_area, box_iou, nms, batched_nms and roi_align.

box_area/box_iou are written with torchlike ops (any device, autograd). nms and roi_align follow torchvision's
CPU kernels and run in NumPy on the host (the boxes' dtype throughout); roi_align has no backward here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._core.tensor import Tensor


def _torch() -> Any:
    import torchlike

    return torchlike


def _upcast(t: Tensor) -> Tensor:
    tl = _torch()
    if t.is_floating_point():
        return t if t.dtype in (tl.float32, tl.float64) else t.float()
    return t if t.dtype in (tl.int32, tl.int64) else t.int()


def box_area(boxes: Tensor) -> Tensor:
    """Areas of (x1, y1, x2, y2) boxes."""
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """(N, M) intersection over union of two sets of (x1, y1, x2, y2) boxes."""
    tl = _torch()
    area1 = box_area(boxes1)
    area2 = box_area(boxes2)
    lt = tl.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = tl.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    union = area1[:, None] + area2 - inter
    return inter / union


def nms(boxes: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Indices (int64, by decreasing score) of the boxes kept after suppressing IoU > ``iou_threshold``."""
    tl = _torch()
    if boxes.dim() != 2 or boxes.size(1) != 4:
        raise RuntimeError(f"boxes should have 2 dimensions and 4 columns, got {tuple(boxes.shape)}")
    if scores.dim() != 1 or scores.size(0) != boxes.size(0):
        raise RuntimeError("boxes and scores should have the same number of elements in dimension 0")
    b = boxes.detach().cpu().numpy()
    s = scores.detach().cpu().numpy()
    if b.shape[0] == 0:
        return tl.empty((0,), dtype=tl.int64, device=boxes.device)
    x1, y1, x2, y2 = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-s, kind="stable")
    suppressed = np.zeros(b.shape[0], bool)
    keep = []
    for _i, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[_i + 1 :]
        xx1 = np.maximum(x1[i], x1[rest])
        yy1 = np.maximum(y1[i], y1[rest])
        xx2 = np.minimum(x2[i], x2[rest])
        yy2 = np.minimum(y2[i], y2[rest])
        w = np.maximum(np.zeros((), b.dtype), xx2 - xx1)
        h = np.maximum(np.zeros((), b.dtype), yy2 - yy1)
        inter = w * h
        ovr = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[ovr > iou_threshold]] = True
    return tl.tensor(np.asarray(keep, np.int64), device=boxes.device)


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float) -> Tensor:
    """nms within each category of ``idxs`` (boxes of different categories never suppress each other)."""
    tl = _torch()
    if boxes.numel() == 0:
        return tl.empty((0,), dtype=tl.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + tl.tensor(1).to(boxes))
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def _bilinear(img: np.ndarray, y: float, x: float) -> np.ndarray:
    c, height, width = img.shape
    if y < -1.0 or y > height or x < -1.0 or x > width:
        return np.zeros(c, img.dtype)
    y = max(y, 0.0)
    x = max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_high = y_low = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_high = x_low = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    dt = img.dtype.type
    ly, lx = dt(y - y_low), dt(x - x_low)
    hy, hx = dt(1.0) - ly, dt(1.0) - lx
    return (hy * hx) * img[:, y_low, x_low] + (hy * lx) * img[:, y_low, x_high] + (ly * hx) * img[:, y_high, x_low] \
        + (ly * lx) * img[:, y_high, x_high]  # fmt: skip


def _rois(boxes: Any) -> np.ndarray:
    if isinstance(boxes, Tensor):
        if boxes.dim() != 2 or boxes.size(1) != 5:
            raise ValueError("The boxes tensor shape is not correct as Tensor[K, 5]")
        return boxes.detach().cpu().numpy()
    if isinstance(boxes, (list, tuple)):
        rows = []
        for i, b in enumerate(boxes):
            if b.size(1) != 4:
                raise ValueError("The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
            arr = b.detach().cpu().numpy()
            rows.append(np.concatenate([np.full((arr.shape[0], 1), i, arr.dtype), arr], axis=1))
        return np.concatenate(rows) if rows else np.zeros((0, 5), np.float32)
    raise ValueError("boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def roi_align(input: Tensor, boxes: Any, output_size: Any, spatial_scale: float = 1.0, sampling_ratio: int = -1,
              aligned: bool = False) -> Tensor:  # fmt: skip
    """Average of bilinear samples over each output bin of each region, as torchvision's CPU kernel."""
    tl = _torch()
    if input.requires_grad and tl.is_grad_enabled():
        raise NotImplementedError("torchlike.vision.ops.roi_align has no backward; call it under no_grad()")
    ph, pw = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    x = input.detach().cpu().numpy()
    rois = _rois(boxes).astype(x.dtype)
    dt = x.dtype.type
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), x.dtype)
    offset = dt(0.5) if aligned else dt(0.0)
    for n, roi in enumerate(rois):
        img = x[int(roi[0])]
        start_w, start_h = roi[1] * dt(spatial_scale) - offset, roi[2] * dt(spatial_scale) - offset
        end_w, end_h = roi[3] * dt(spatial_scale) - offset, roi[4] * dt(spatial_scale) - offset
        roi_w, roi_h = end_w - start_w, end_h - start_h
        if not aligned:
            roi_w, roi_h = max(roi_w, dt(1.0)), max(roi_h, dt(1.0))
        bin_h, bin_w = roi_h / dt(ph), roi_w / dt(pw)
        grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_h / ph))
        grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil(roi_w / pw))
        count = dt(max(grid_h * grid_w, 1))
        for py in range(ph):
            for px in range(pw):
                acc = np.zeros(x.shape[1], x.dtype)
                for iy in range(grid_h):
                    yy = start_h + dt(py) * bin_h + (dt(iy) + dt(0.5)) * bin_h / dt(grid_h)
                    for ix in range(grid_w):
                        xx = start_w + dt(px) * bin_w + (dt(ix) + dt(0.5)) * bin_w / dt(grid_w)
                        acc = acc + _bilinear(img, float(yy), float(xx))
                out[n, :, py, px] = acc / count
    return tl.from_numpy(out).to(input.device)
