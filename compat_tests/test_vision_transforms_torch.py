"""torchlike.vision.transforms against real torchvision's outputs (fixtures made by
compat_tests/vision/make_fixtures.py; torchvision itself cannot be imported here), and tensor pieces that
are plain torch ops against torch directly."""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest
import torch

import torchlike
import torchlike.vision as tv
from torchlike.vision.transforms import functional as F

HERE = os.path.join(os.path.dirname(__file__), "vision")
sys.path.insert(0, HERE)
import cases  # noqa: E402  (the case table shared with make_fixtures.py)

FIXTURE = os.path.join(HERE, "fixtures", "transforms.pkl")
NOT_GENERATED = "fixtures not generated: run compat_tests/vision/make_fixtures.py"


def _load() -> dict:
    if not os.path.exists(FIXTURE):
        return {}
    with open(FIXTURE, "rb") as f:
        return pickle.load(f)["results"]


REF = _load()


def assert_plain_equal(ref, got, path="out"):
    if isinstance(ref, dict) and "pil_mode" in ref:
        assert isinstance(got, dict) and "pil_mode" in got, f"{path}: expected a PIL image, got {got!r:.80}"
        assert got["pil_mode"] == ref["pil_mode"], f"{path}: mode {got['pil_mode']} != {ref['pil_mode']}"
        assert_plain_equal(ref["pixels"], got["pixels"], path)
    elif isinstance(ref, dict):
        assert isinstance(got, dict) and list(got) == list(ref), f"{path}: {got!r} != {ref!r}"
        for k in ref:
            assert_plain_equal(ref[k], got[k], f"{path}[{k!r}]")
    elif isinstance(ref, np.ndarray):
        assert isinstance(got, np.ndarray), f"{path}: expected an array, got {type(got).__name__}"
        assert got.dtype == ref.dtype and got.shape == ref.shape, (
            f"{path}: {got.dtype}{got.shape} != {ref.dtype}{ref.shape}"
        )
        if ref.dtype.kind == "f":
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=2e-6, err_msg=path)
        else:
            np.testing.assert_array_equal(got, ref, err_msg=path)
    elif isinstance(ref, list):
        assert isinstance(got, list) and len(got) == len(ref), f"{path}: {got!r} != {ref!r}"
        for i, (r, g) in enumerate(zip(ref, got)):
            assert_plain_equal(r, g, f"{path}[{i}]")
    else:
        assert got == ref, f"{path}: {got!r} != {ref!r}"


@pytest.mark.skipif(not REF, reason=NOT_GENERATED)
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_torchvision(name):
    if name not in REF:
        pytest.fail(f"{name} is not in the fixture file: regenerate it with make_fixtures.py")
    ref = REF[name]
    try:
        got = ("ok", cases.to_plain(cases.CASES[name](torchlike, tv)))
    except Exception as e:
        got = ("error", type(e).__name__, str(e))
    if ref[0] == "error" or got[0] == "error":
        assert got == ref
        return
    assert_plain_equal(ref[1], got[1], name)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("size", [(6, 8), (20, 9), (13, 30), (4, 17), (2, 3)])
def test_antialiased_resize_equals_torch_interpolate(mode, size):
    """Bit for bit on CPU tensors (torch's kernel arithmetic, so uint8 images round to the same levels); within
    float32 rounding on tensors that need autograd (one matmul per axis)."""
    x = np.random.default_rng(0).random((2, 3, 13, 17), dtype=np.float32)
    for scale in (1.0, 255.0):
        ref = torch.nn.functional.interpolate(torch.tensor(x * scale), size=size, mode=mode, antialias=True,
                                              align_corners=False)  # fmt: skip
        got = F.resize(torchlike.tensor(x * scale), list(size), interpolation=F.InterpolationMode(mode))
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
    u8 = (x * 255).astype(np.uint8)
    ref = tv_resize_u8(torch.tensor(u8), size, mode)
    got = F.resize(torchlike.tensor(u8), list(size), interpolation=F.InterpolationMode(mode))
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    leaf = torchlike.tensor(x, requires_grad=True)
    got = F.resize(leaf, list(size), interpolation=F.InterpolationMode(mode))
    ref = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode, antialias=True, align_corners=False)
    np.testing.assert_allclose(got.detach().numpy(), ref.numpy(), rtol=1e-5, atol=2e-6)
    got.sum().backward()
    assert leaf.grad is not None and tuple(leaf.grad.shape) == x.shape


def tv_resize_u8(img, size, mode):
    """torchvision v1's tensor resize of a uint8 image: float32, interpolate, clamp (bicubic), round, cast."""
    out = torch.nn.functional.interpolate(img.float(), size=size, mode=mode, antialias=True, align_corners=False)
    if mode == "bicubic":
        out = out.clamp(0, 255)
    return out.round().to(torch.uint8)


def test_gaussian_blur_equals_torch_conv():
    x = np.random.default_rng(1).random((3, 9, 10), dtype=np.float32)
    sigma = (0.7, 1.4)
    kx = torch.exp(-0.5 * (torch.linspace(-1, 1, 3) / sigma[0]) ** 2)
    ky = torch.exp(-0.5 * (torch.linspace(-2, 2, 5) / sigma[1]) ** 2)
    k = torch.outer(ky / ky.sum(), kx / kx.sum()).expand(3, 1, 5, 3)
    padded = torch.nn.functional.pad(torch.tensor(x)[None], [1, 1, 2, 2], mode="reflect")
    ref = torch.nn.functional.conv2d(padded, k, groups=3)[0]
    got = F.gaussian_blur(torchlike.tensor(x), [3, 5], list(sigma))
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def test_random_params_draw_like_torch():
    """get_params draws are the same torch calls: replayed in torch, they give the same numbers."""
    torch.manual_seed(5)
    log_ratio = torch.log(torch.tensor((3 / 4, 4 / 3)))
    for _ in range(10):
        area = 13 * 17 * torch.empty(1).uniform_(0.08, 1.0).item()
        ar = torch.exp(torch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w, h = int(round((area * ar) ** 0.5)), int(round((area / ar) ** 0.5))
        if 0 < w <= 17 and 0 < h <= 13:
            ref = (torch.randint(0, 13 - h + 1, (1,)).item(), torch.randint(0, 17 - w + 1, (1,)).item(), h, w)
            break
    torchlike.manual_seed(5)
    got = tv.transforms.RandomResizedCrop.get_params(torchlike.zeros(3, 13, 17), (0.08, 1.0), (3 / 4, 4 / 3))
    assert got == ref


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_tensor_moves_and_casts_equal_torch_ops(dtype):
    """The tensor pad/flip/convert paths against the torch ops torchvision's tensor code runs."""
    x = np.random.default_rng(2).integers(0, 256, (2, 3, 7, 9)).astype(dtype)
    tx, lx = torch.from_numpy(x), torchlike.from_numpy(x)
    fl = tx.float() if dtype == "uint8" else tx
    pairs = [
        (F.hflip(lx), tx.flip(-1)),
        (F.vflip(lx), tx.flip(-2)),
        (F.pad(lx, [2, 1, 3, 4], 7), torch.nn.functional.pad(tx, [2, 3, 1, 4], value=7.0)),
        (F.pad(lx, [2, 3], padding_mode="edge"), torch.nn.functional.pad(fl, [2, 2, 3, 3], mode="replicate").to(tx.dtype)),
        (F.pad(lx, [6, 5, 1, 2], padding_mode="reflect"),
         torch.nn.functional.pad(fl, [6, 1, 5, 2], mode="reflect").to(tx.dtype)),
    ]  # fmt: skip
    if dtype == "uint8":
        pairs.append((F.convert_image_dtype(lx, torchlike.float32), tx.to(torch.float32) / 255.0))
        pairs.append((F.convert_image_dtype(lx, torchlike.float64), tx.to(torch.float64) / 255.0))
    for got, ref in pairs:
        assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
