"""torchlike.vision.transforms: to_tensor, normalize, Compose, Lambda (torchvision's behaviour)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import torchlike
from torchlike.utils import data as D
from torchlike.vision import transforms as T


def test_to_tensor_numpy():
    hwc = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    t = T.ToTensor()(hwc)
    assert t.dtype is torchlike.float32 and tuple(t.shape) == (3, 2, 4)
    np.testing.assert_array_equal(t.numpy(), hwc.transpose(2, 0, 1).astype(np.float32) / np.float32(255))
    gray = T.to_tensor(np.ones((2, 2), np.uint8) * 255)
    assert tuple(gray.shape) == (1, 2, 2) and gray.tolist() == [[[1.0, 1.0], [1.0, 1.0]]]
    f = np.arange(4, dtype=np.float64).reshape(2, 2)
    shared = T.to_tensor(f)  # not uint8: values kept; a contiguous (1, H, W) view shares memory, like torch
    assert shared.dtype is torchlike.float64
    f[0, 0] = 7.0
    assert shared[0, 0, 0].item() == 7.0
    assert T.to_tensor(np.zeros((2, 2, 3), np.int32)).dtype is torchlike.int32
    with pytest.raises(TypeError, match="pic should be PIL Image or ndarray. Got <class 'list'>"):
        T.to_tensor([1])
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional. Got 1 dimensions."):
        T.to_tensor(np.zeros(3, np.uint8))


def test_to_tensor_default_dtype():
    torchlike.set_default_dtype(torchlike.float64)
    try:
        assert T.to_tensor(np.zeros((1, 1, 1), np.uint8)).dtype is torchlike.float64
    finally:
        torchlike.set_default_dtype(torchlike.float32)


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "1", "I", "F"])
def test_to_tensor_pil(mode):
    rgb = (np.arange(2 * 3 * 3) * 23 % 256).astype(np.uint8).reshape(2, 3, 3)
    img = Image.fromarray(rgb).convert(mode)
    t = T.to_tensor(img)
    ref = np.array(img)
    if ref.ndim == 2:
        ref = ref[:, :, None]
    ref = ref.transpose(2, 0, 1)
    if mode == "1":
        ref = ref.astype(np.uint8) * 255
    if ref.dtype == np.uint8:
        ref = ref.astype(np.float32) / np.float32(255)
    assert tuple(t.shape) == ref.shape
    np.testing.assert_array_equal(t.numpy(), ref)


def test_normalize():
    x = torchlike.arange(12.0).view(3, 2, 2) / 10
    out = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.25, 2.0))(x)
    ref = (x.numpy() - np.array([0.1, 0.2, 0.3], np.float32).reshape(3, 1, 1)) / np.array(
        [0.5, 0.25, 2.0], np.float32
    ).reshape(3, 1, 1)
    np.testing.assert_array_equal(out.numpy(), ref)
    batch = T.normalize(torchlike.zeros(2, 3, 1, 1), [1.0, 2.0, 3.0], [1.0, 1.0, 1.0])
    assert batch[:, :, 0, 0].tolist() == [[-1.0, -2.0, -3.0]] * 2
    y = x.clone()
    assert T.normalize(y, 0.5, 2.0, inplace=True) is y and np.allclose(y.numpy(), (x.numpy() - 0.5) / 2)
    w = x.clone().requires_grad_(True)
    T.normalize(w, [0.0] * 3, [2.0] * 3).sum().backward()  # with autograd: through torchlike ops
    assert w.grad.tolist() == [[[0.5, 0.5], [0.5, 0.5]]] * 3


@pytest.mark.parametrize(
    "args, error, message",
    [
        ((np.zeros((3, 2, 2)), [0.0], [1.0]), TypeError, "img should be Tensor Image. Got <class 'numpy.ndarray'>"),
        ((torchlike.zeros(3), [0.0], [1.0]), TypeError, "Tensor is not a torch image."),
        ((torchlike.zeros(3, 2, 2, dtype=torchlike.uint8), [0.0], [1.0]), TypeError,
         "Input tensor should be a float tensor. Got torch.uint8."),
        ((torchlike.zeros(2, 2), [0.0], [1.0]), ValueError,
         "Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = torch.Size([2, 2])"),
        ((torchlike.zeros(3, 2, 2), [0.0], [1.0, 0.0, 1.0]), ValueError,
         "std evaluated to zero after conversion to torch.float32, leading to division by zero."),
        ((torchlike.zeros(1, 2, 2), [0.5] * 3, [0.5] * 3), RuntimeError,
         "output with shape [1, 2, 2] doesn't match the broadcast shape [3, 2, 2]"),
        ((torchlike.zeros(3, 2, 2), [0.5] * 2, [0.5] * 2), RuntimeError,
         "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0"),
    ],
)  # fmt: skip
def test_normalize_errors(args, error, message):
    with pytest.raises(error) as info:
        T.normalize(*args)
    assert str(info.value) == message


def test_compose_lambda_repr():
    pipeline = T.Compose([T.ToTensor(), T.Normalize([0.5], [0.5]), T.Lambda(lambda t: t * 2)])
    assert repr(pipeline) == "Compose(\n    ToTensor()\n    Normalize(mean=[0.5], std=[0.5])\n    Lambda()\n)"
    out = pipeline(np.full((1, 1, 1), 255, np.uint8))
    assert out.tolist() == [[[2.0]]]
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)


class Images(D.Dataset):
    def __init__(self, transform):
        self.images = (np.arange(4 * 3 * 3 * 2) % 251).astype(np.uint8).reshape(4, 3, 3, 2)
        self.transform = transform

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return self.transform(self.images[i]), i


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_transforms_in_worker_processes():
    transform = T.Compose([T.ToTensor(), T.Normalize((0.5, 0.25), (0.5, 0.5))])
    main = [(x.numpy(), y.tolist()) for x, y in D.DataLoader(Images(transform), batch_size=2)]
    workers = [
        (x.numpy(), y.tolist()) for x, y in D.DataLoader(Images(transform), batch_size=2, num_workers=2)
    ]
    for (a, la), (b, lb) in zip(main, workers):
        np.testing.assert_array_equal(a, b)
        assert la == lb
