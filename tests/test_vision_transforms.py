"""torchlike.vision.transforms alone: PIL and tensor paths agree where torchvision's do, v2's calling
convention, and transforms inside DataLoader worker processes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import torchlike
from torchlike.utils.data import DataLoader, Dataset
from torchlike.vision import transforms as T
from torchlike.vision.transforms import functional as F
from torchlike.vision.transforms import v2

pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")

ARR = np.random.default_rng(0).integers(0, 256, (13, 17, 3), dtype=np.uint8)


def as_tensor():
    return torchlike.tensor(ARR).permute(2, 0, 1).contiguous()


@pytest.mark.parametrize(
    "fn",
    [
        lambda img: F.hflip(img),
        lambda img: F.vflip(img),
        lambda img: F.crop(img, 2, 3, 7, 9),
        lambda img: F.center_crop(img, [7, 9]),
        lambda img: F.pad(img, [2, 1, 3, 4], padding_mode="reflect"),
        lambda img: F.pad(img, [2, 1], padding_mode="symmetric"),
        lambda img: F.pad(img, 3, padding_mode="edge"),
        lambda img: F.pad(img, [1, 2, 3, 4], fill=9),
        lambda img: F.rotate(img, 90.0),
        lambda img: F.five_crop(img, 5)[3],
    ],
)
def test_pil_and_tensor_paths_agree_on_exact_ops(fn):
    from_pil = np.asarray(fn(Image.fromarray(ARR)))
    from_tensor = fn(as_tensor()).permute(1, 2, 0).numpy()
    np.testing.assert_array_equal(from_tensor, from_pil)


def test_to_tensor_to_pil_round_trip_and_dtypes():
    x = F.to_tensor(Image.fromarray(ARR))
    assert x.dtype == torchlike.float32 and tuple(x.shape) == (3, 13, 17)
    np.testing.assert_array_equal(np.asarray(F.to_pil_image(as_tensor())), ARR)
    assert F.pil_to_tensor(Image.fromarray(ARR)).dtype == torchlike.uint8
    np.testing.assert_array_equal(F.convert_image_dtype(x, torchlike.uint8).numpy(), ARR.transpose(2, 0, 1))
    assert F.to_pil_image(torchlike.zeros(1, 4, 5)).mode == "L"


def test_errors_follow_torchvision():
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(as_tensor(), 0.7)
    with pytest.raises(ValueError, match="Required crop size"):
        T.RandomCrop(20)(as_tensor())
    with pytest.raises(ValueError, match="Padding mode should be"):
        T.Pad(2, padding_mode="wrap")
    with pytest.raises(TypeError, match="Input tensor should be a float tensor"):
        F.normalize(as_tensor(), [0.5], [0.5])


def test_seeded_transforms_repeat():
    pipe = T.Compose([T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.ColorJitter(0.3, 0.3, 0.3, 0.05),
                      T.ToTensor(), T.RandomErasing(1.0)])  # fmt: skip
    torchlike.manual_seed(4)
    a = pipe(Image.fromarray(ARR)).numpy()
    torchlike.manual_seed(4)
    b = pipe(Image.fromarray(ARR)).numpy()
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 8, 8)


def test_v2_passes_labels_through():
    t = v2.Compose([v2.ToImage(), v2.RandomHorizontalFlip(1.0), v2.ToDtype(torchlike.float32, scale=True)])
    img, label = t(Image.fromarray(ARR), 3)
    assert label == 3 and img.dtype == torchlike.float32
    np.testing.assert_allclose(img.numpy(), ARR[:, ::-1].transpose(2, 0, 1) / 255, rtol=1e-6)
    out = v2.RandomCrop(5)({"image": as_tensor(), "id": "x"})
    assert out["id"] == "x" and tuple(out["image"].shape) == (3, 5, 5)


class Images(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(Image.fromarray(np.roll(ARR, i, axis=1))), i


def test_pil_pipeline_in_dataloader_workers():
    tf = T.Compose([T.RandomCrop(12, padding=2), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize((0.5, 0.5, 0.5), (0.25, 0.25, 0.25))])  # fmt: skip
    batches = list(DataLoader(Images(tf), batch_size=4, num_workers=2))
    assert [tuple(b[0].shape) for b in batches] == [(4, 3, 12, 12)] * 2
    assert batches[1][1].tolist() == [4, 5, 6, 7]


def test_tensor_resize_in_dataloader_workers():
    """Antialiased resize of uint8 tensors runs on the host (no JAX call in the forked worker, where one would hang),
    with the same values as in the main process."""
    tf = T.Compose([T.PILToTensor(), T.Resize([7, 9]), T.Resize(5, interpolation=T.InterpolationMode.BICUBIC)])
    batches = list(DataLoader(Images(tf), batch_size=4, num_workers=1))
    assert [tuple(b[0].shape) for b in batches] == [(4, 3, 5, 6)] * 2 and batches[0][0].dtype == torchlike.uint8
    np.testing.assert_array_equal(batches[1][0][2].numpy(), Images(tf)[6][0].numpy())
    crops = list(DataLoader(Images(T.Compose([T.PILToTensor(), T.RandomResizedCrop(6)])), batch_size=4, num_workers=1))
    assert [tuple(b[0].shape) for b in crops] == [(4, 3, 6, 6)] * 2
