"""torchlike.vision.datasets from small fake files in tmp dirs: indexing, class maps, targets, reprs, errors."""

from __future__ import annotations

import gzip
import os
import pickle

import numpy as np
import pytest
from PIL import Image

import torchlike
from torchlike.utils.data import DataLoader
from torchlike.vision import datasets, transforms

pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
RNG = np.random.default_rng(0)


def write_idx(path, arr, gz=False):
    codes = {np.uint8: 8, np.int8: 9, np.int16: 11, np.int32: 12, np.float32: 13, np.float64: 14}
    header = (codes[arr.dtype.type] * 256 + arr.ndim).to_bytes(4, "big")
    header += b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    body = arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    opener = gzip.open if gz else open
    with opener(path + (".gz" if gz else ""), "wb") as f:
        f.write(header + body)


def make_mnist(root, name, prefix="", gz=False, n=5):
    raw = os.path.join(root, name, "raw")
    os.makedirs(raw, exist_ok=True)
    images = RNG.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = RNG.integers(0, 10, n).astype(np.uint8)
    for split in ["train", "t10k"] if not prefix else ["train", "test"]:
        write_idx(os.path.join(raw, f"{prefix}{split}-images-idx3-ubyte"), images, gz)
        write_idx(os.path.join(raw, f"{prefix}{split}-labels-idx1-ubyte"), labels, gz)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("cls", [datasets.MNIST, datasets.FashionMNIST, datasets.KMNIST])
def test_mnist_family(tmp_path, cls, gz):
    images, labels = make_mnist(str(tmp_path), cls.__name__, gz=gz)
    ds = cls(str(tmp_path), train=False, transform=transforms.ToTensor())
    assert len(ds) == 5 and ds.data.dtype == torchlike.uint8 and ds.targets.dtype == torchlike.int64
    np.testing.assert_array_equal(ds.targets.numpy(), labels)
    img, target = ds[2]
    assert target == int(labels[2]) and isinstance(target, int)
    np.testing.assert_allclose(img.numpy()[0], images[2] / np.float32(255), rtol=1e-6)
    assert ds.class_to_idx[ds.classes[3]] == 3
    assert repr(ds).splitlines()[:4] == [
        f"Dataset {cls.__name__}",
        "    Number of datapoints: 5",
        f"    Root location: {tmp_path}",
        "    Split: Test",
    ]


def test_emnist_split_and_errors(tmp_path):
    make_mnist(str(tmp_path), "EMNIST", prefix="emnist-letters-", n=4)
    ds = datasets.EMNIST(str(tmp_path), split="letters")
    assert len(ds) == 4 and ds.classes[:3] == ["N/A", "a", "b"]
    with pytest.raises(ValueError, match="Unknown value 'nope' for argument split. Valid values are"):
        datasets.EMNIST(str(tmp_path), split="nope")


def test_missing_files_and_download_write_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="Dataset not found. You can use download=True"):
        datasets.MNIST(str(tmp_path))
    with pytest.raises(RuntimeError, match="Place train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz"):
        datasets.MNIST(str(tmp_path), download=True)
    with pytest.raises(RuntimeError, match="data_batch_1, .*batches.meta in .*cifar-10-batches-py"):
        datasets.CIFAR10(str(tmp_path), download=True)
    assert os.listdir(tmp_path) == []


def make_cifar(root, n=6, classes=10):
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder)
    data = RNG.integers(0, 256, (n, 3 * 32 * 32), dtype=np.uint8)
    labels = RNG.integers(0, classes, n).tolist()
    for name in ["data_batch_1", "test_batch"]:
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({"data": data, "labels": labels}, f)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": [f"c{i}" for i in range(classes)]}, f)
    return data, labels


class LocalCIFAR10(datasets.CIFAR10):
    """torchvision's own way to read other files: md5 None checks only that each exists."""

    train_list = [["data_batch_1", None]]
    test_list = [["test_batch", None]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": None}


def test_cifar_local_files_and_md5(tmp_path):
    data, labels = make_cifar(str(tmp_path))
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.CIFAR10(str(tmp_path))  # the real md5s do not match the fake batches
    ds = LocalCIFAR10(str(tmp_path), train=True)
    assert ds.data.shape == (6, 32, 32, 3) and ds.targets == labels and ds.classes[1] == "c1"
    img, target = ds[4]
    assert img.size == (32, 32) and img.mode == "RGB" and target == labels[4]
    np.testing.assert_array_equal(np.asarray(img), data[4].reshape(3, 32, 32).transpose(1, 2, 0))
    ds.transform, ds.target_transform = (lambda im: im.size), (lambda t: t + 100)  # read per item, as torchvision
    assert ds[4] == ((32, 32), labels[4] + 100)


def test_svhn(tmp_path):
    sio = pytest.importorskip("scipy.io")
    x = RNG.integers(0, 256, (32, 32, 3, 4), dtype=np.uint8)
    y = np.array([[10], [1], [2], [10]], np.uint8)
    sio.savemat(os.path.join(tmp_path, "test_32x32.mat"), {"X": x, "y": y})

    class LocalSVHN(datasets.SVHN):
        split_list = {"test": ["", "test_32x32.mat", None]}

    ds = LocalSVHN(str(tmp_path), split="test")
    assert ds.labels.tolist() == [0, 1, 2, 0] and ds.data.shape == (4, 3, 32, 32)
    img, target = ds[1]
    np.testing.assert_array_equal(np.asarray(img), x[:, :, :, 1])
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        datasets.SVHN(str(tmp_path), split="test")
    with pytest.raises(RuntimeError, match="Place train_32x32.mat in "):
        datasets.SVHN(str(tmp_path), split="train", download=True)


def make_folder(root):
    for cls, n in [("dog", 2), ("cat", 3)]:
        os.makedirs(os.path.join(root, cls, "sub"))
        for i in range(n):
            arr = RNG.integers(0, 256, (10, 12, 3), dtype=np.uint8)
            Image.fromarray(arr).save(os.path.join(root, cls, "sub" if i else "", f"{i}.png"))
    open(os.path.join(root, "cat", "notes.txt"), "w").close()


def test_image_folder(tmp_path):
    make_folder(str(tmp_path))
    ds = datasets.ImageFolder(str(tmp_path), transform=transforms.Compose([transforms.CenterCrop(8),
                                                                            transforms.ToTensor()]))  # fmt: skip
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert ds.targets == [0, 0, 0, 1, 1] and ds.imgs == ds.samples
    assert [os.path.relpath(p, tmp_path) for p, _ in ds.samples][:2] == ["cat/0.png", "cat/sub/1.png"]
    img, target = ds[3]
    assert tuple(img.shape) == (3, 8, 8) and target == 1
    batches = list(DataLoader(ds, batch_size=2, num_workers=2))
    assert [b[1].tolist() for b in batches] == [[0, 0], [0, 1], [1]]
    folder = datasets.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".txt",), allow_empty=True)
    assert len(folder) == 1 and folder[0][1] == 0
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes dog. Supported extensions"):
        datasets.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".txt",))


def test_fake_data_is_seeded_and_keeps_rng_state():
    ds = datasets.FakeData(size=3, image_size=(3, 6, 5), num_classes=4)
    torchlike.manual_seed(1)
    before = torchlike.rand(1)
    torchlike.manual_seed(1)
    a, ta = ds[2]
    assert torchlike.equal(torchlike.rand(1), before)
    b, tb = ds[2]
    assert a.size == (5, 6) and np.array_equal(np.asarray(a), np.asarray(b)) and ta == tb
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[3]
