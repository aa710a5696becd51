"""torchlike.vision.transforms against torchvision's computations written in torch (torchvision itself is not
installed here): ToTensor is ``from_numpy(hwc.transpose(2, 0, 1)).contiguous().to(float).div(255)`` and
Normalize is ``clone().sub_(mean.view(-1, 1, 1)).div_(std.view(-1, 1, 1))``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from torchlike.vision import transforms as T

pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

MEAN, STD = (0.1307, 0.5, 0.2), (0.3081, 0.25, 0.9)


def torch_to_tensor(pic):
    if pic.ndim == 2:
        pic = pic[:, :, None]
    img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
    return img.to(dtype=torch.get_default_dtype()).div(255) if img.dtype == torch.uint8 else img


def torch_normalize(t, mean, std):
    mean = torch.as_tensor(mean, dtype=t.dtype)
    std = torch.as_tensor(std, dtype=t.dtype)
    return (
        t.clone()
        .sub_(mean.view(-1, 1, 1) if mean.ndim == 1 else mean)
        .div_(std.view(-1, 1, 1) if std.ndim == 1 else std)
    )


def images(n=6, h=5, w=4, c=3):
    return (np.random.default_rng(0).integers(0, 256, (n, h, w, c))).astype(np.uint8)


def test_to_tensor_and_normalize_values():
    for pic in list(images(3)) + [images(1, c=1)[0, :, :, 0], images(1, c=1)[0]]:
        ref = torch_to_tensor(pic)
        got = T.to_tensor(pic)
        assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(got.numpy(), ref.numpy())
        c = ref.shape[0]
        mean, std = MEAN[:c], STD[:c]
        np.testing.assert_array_equal(
            T.normalize(got, mean, std).numpy(), torch_normalize(ref, mean, std).numpy()
        )
        np.testing.assert_array_equal(T.normalize(got.double(), mean, std).numpy(),
                                      torch_normalize(ref.double(), mean, std).numpy())  # fmt: skip


@pytest.mark.parametrize("shape, c", [((1, 4, 4), 3), ((3, 4, 4), 2), ((2, 1, 4, 4), 3), ((2, 3, 4, 4), 3)])
def test_normalize_broadcasting_and_errors(shape, c):
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    results = []
    for run in (lambda: torch_normalize(torch.from_numpy(x), MEAN[:c], STD[:c]),
                lambda: T.normalize(torchlike.from_numpy(x), MEAN[:c], STD[:c])):  # fmt: skip
        try:
            results.append(run().numpy())
        except RuntimeError as e:
            results.append(str(e))
    ref, got = results
    if isinstance(ref, str):
        assert got == ref
    else:
        np.testing.assert_array_equal(got, ref)


class ImageDataset:
    def __init__(self, transform):
        self.images = images(7)
        self.labels = np.arange(7) % 3
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.transform(self.images[i]), int(self.labels[i])


@pytest.mark.parametrize("workers", [0, 2])
def test_dataset_with_transforms_in_a_loader(workers):
    pipelines = {
        torch: lambda pic: torch_normalize(torch_to_tensor(pic), MEAN, STD),
        torchlike: T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)]),
    }
    out = []
    for lib, transform in pipelines.items():
        lib.manual_seed(0)
        loader = lib.utils.data.DataLoader(
            ImageDataset(transform), batch_size=3, shuffle=True, num_workers=workers
        )
        out.append([(x.numpy(), str(x.dtype), y.tolist()) for x, y in loader])
    ref, got = out
    assert len(got) == len(ref)
    for (gx, gd, gy), (rx, rd, ry) in zip(got, ref):
        np.testing.assert_array_equal(gx, rx)
        assert (gd, gy) == (rd, ry)
