"""torchlike.vision.utils, io and ops alone: grids, PNG round trips, box IoU, NMS and RoIAlign on cases whose
answers are known by hand."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import torchlike
from torchlike.vision import io, ops, utils


def test_make_grid_layout_and_save_image(tmp_path):
    imgs = torchlike.arange(4 * 3 * 2 * 2, dtype=torchlike.float32).reshape(4, 3, 2, 2) / 48
    grid = utils.make_grid(imgs, nrow=3, padding=1, pad_value=0.25)
    assert tuple(grid.shape) == (3, 2 * 3 + 1, 3 * 3 + 1)
    np.testing.assert_array_equal(grid[:, 1:3, 4:6].numpy(), imgs[1].numpy())
    np.testing.assert_array_equal(grid[:, 4:6, 1:3].numpy(), imgs[3].numpy())
    assert float(grid[0, 0, 0]) == 0.25 and float(grid[0, 5, 8]) == 0.25  # the empty 6th slot is padding
    gray = utils.make_grid(torchlike.zeros(1, 5, 5))
    assert tuple(gray.shape) == (3, 5, 5)
    utils.save_image(imgs, str(tmp_path / "g.png"), nrow=2)
    saved = np.asarray(Image.open(tmp_path / "g.png"))
    expected = (utils.make_grid(imgs, nrow=2).permute(1, 2, 0).numpy() * 255 + 0.5).clip(0, 255).astype(np.uint8)
    np.testing.assert_array_equal(saved, expected)
    with pytest.raises(TypeError, match="tensor or list of tensors expected"):
        utils.make_grid(np.zeros((3, 2, 2)))


def test_png_round_trip_and_modes(tmp_path):
    arr = np.random.default_rng(0).integers(0, 256, (3, 6, 7), dtype=np.uint8)
    path = str(tmp_path / "x.png")
    io.write_png(torchlike.tensor(arr), path)
    np.testing.assert_array_equal(io.read_image(path).numpy(), arr)
    gray = io.read_image(path, io.ImageReadMode.GRAY)
    assert tuple(gray.shape) == (1, 6, 7)
    # libpng's rgb_to_gray with torchvision's weights 0.2989/0.587 as 1/32768 fixed point, truncated
    r, g, b = arr.astype(np.int64)
    np.testing.assert_array_equal(gray.numpy()[0], (9794 * r + 19234 * g + 3740 * b) >> 15)
    gray_alpha = io.read_image(path, io.ImageReadMode.GRAY_ALPHA).numpy()
    np.testing.assert_array_equal(gray_alpha, np.stack([gray.numpy()[0], np.full((6, 7), 255, np.uint8)]))
    assert tuple(io.decode_image(io.read_file(path), io.ImageReadMode.RGB_ALPHA).shape) == (4, 6, 7)
    with pytest.raises(RuntimeError, match="dtype should be uint8"):
        io.encode_png(torchlike.zeros(3, 2, 2))


def test_box_iou_and_area():
    a = torchlike.tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]])
    b = torchlike.tensor([[1.0, 0.0, 3.0, 2.0], [5.0, 5.0, 6.0, 6.0]])
    np.testing.assert_allclose(ops.box_iou(a, b).numpy(), [[2 / 6, 0.0], [2 / 6, 0.0]], rtol=1e-6)
    assert ops.box_area(torchlike.tensor([[0, 0, 2, 3]], dtype=torchlike.uint8)).dtype == torchlike.int32


def test_nms_and_batched_nms():
    boxes = torchlike.tensor([[0.0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30], [0, 0, 10, 9]])
    scores = torchlike.tensor([0.9, 0.8, 0.7, 0.95])
    keep = ops.nms(boxes, scores, 0.5)
    assert keep.dtype == torchlike.int64 and keep.tolist() == [3, 2]
    assert ops.nms(boxes, scores, 0.95).tolist() == [3, 0, 1, 2]
    assert ops.batched_nms(boxes, scores, torchlike.tensor([0, 1, 0, 0]), 0.5).tolist() == [3, 1, 2]
    assert ops.nms(torchlike.zeros(0, 4), torchlike.zeros(0), 0.5).tolist() == []


def test_roi_align_constant_and_linear_images():
    x = torchlike.ones(1, 2, 8, 8) * torchlike.tensor([3.0, 5.0])[None, :, None, None]
    out = ops.roi_align(x, torchlike.tensor([[0, 1.0, 1.0, 6.0, 6.0]]), (2, 3))
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(np.array([3.0, 5.0])[None, :, None, None], (1, 2, 2, 3)))
    ramp = torchlike.arange(8, dtype=torchlike.float32).expand(1, 1, 8, 8).contiguous()
    out = ops.roi_align(ramp, [torchlike.tensor([[0.0, 0.0, 4.0, 4.0]])], 2, aligned=True, sampling_ratio=2)
    # aligned: bins of [-.5, 1.5] and [1.5, 3.5] in x; bilinear samples at .0/1.0 and 2.0/3.0 (0 clamps at 0)
    np.testing.assert_allclose(out.numpy()[0, 0], [[0.5, 2.5], [0.5, 2.5]], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="no backward"):
        ops.roi_align(ramp.requires_grad_(), torchlike.tensor([[0, 0.0, 0, 4, 4]]), 2)
