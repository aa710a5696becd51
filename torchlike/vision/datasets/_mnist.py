"""MNIST, FashionMNIST, KMNIST and EMNIST from their idx files (plain, or still .gz) under
``root/<ClassName>/raw``."""

from __future__ import annotations

import gzip
import os
import string
from collections.abc import Callable
from typing import Any

import numpy as np

from ._vision import VisionDataset, check_integrity, require_files, verify_str_arg

_IDX_TYPES = {8: np.uint8, 9: np.int8, 11: np.dtype(">i2"), 12: np.dtype(">i4"), 13: np.dtype(">f4"),
              14: np.dtype(">f8")}  # fmt: skip


def _read_bytes(path: str) -> bytes:
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return f.read()
    with gzip.open(path + ".gz", "rb") as f:
        return f.read()


def read_sn3_pascalvincent_tensor(path: str, strict: bool = True) -> Any:
    """An idx file (big-endian header: magic = type * 256 + ndim, then the sizes) as a tensor."""
    import torchlike

    data = _read_bytes(path)
    magic = int.from_bytes(data[0:4], "big")
    nd = magic % 256
    ty = magic // 256
    assert 1 <= nd <= 3
    assert 8 <= ty <= 14
    dtype = _IDX_TYPES[ty]
    s = [int.from_bytes(data[4 * (i + 1) : 4 * (i + 2)], "big") for i in range(nd)]
    arr = np.frombuffer(data, dtype=dtype, offset=4 * (nd + 1))
    arr = arr.astype(np.dtype(dtype).newbyteorder("=")).reshape(s)
    return torchlike.from_numpy(np.ascontiguousarray(arr))


def read_label_file(path: str) -> Any:
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    import torchlike

    if x.dtype != torchlike.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 1:
        raise ValueError(f"x should have 1 dimension instead of {x.ndimension()}")
    return x.long()


def read_image_file(path: str) -> Any:
    x = read_sn3_pascalvincent_tensor(path, strict=False)
    import torchlike

    if x.dtype != torchlike.uint8:
        raise TypeError(f"x should be of dtype torch.uint8 instead of {x.dtype}")
    if x.ndimension() != 3:
        raise ValueError(f"x should have 3 dimension instead of {x.ndimension()}")
    return x


def _exists(path: str) -> bool:
    return check_integrity(path) or check_integrity(path + ".gz")


class MNIST(VisionDataset):
    """``data`` (N, 28, 28) uint8 and ``targets`` int64, read from ``root/MNIST/raw``; items are (PIL 'L', int)."""

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six", "7 - seven",
               "8 - eight", "9 - nine"]  # fmt: skip

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:  # fmt: skip
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        require_files(self._check_exists(), download, self.raw_folder, self._raw_names(), self.mirrors[0],
                      "Dataset not found. You can use download=True to download it")  # fmt: skip
        self.data, self.targets = self._load_data()

    def _raw_names(self) -> list[str]:
        return [name for name, _ in self.resources]

    def _load_data(self) -> tuple[Any, Any]:
        prefix = "train" if self.train else "t10k"
        data = read_image_file(os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"))
        targets = read_label_file(os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))
        return data, targets

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        from PIL import Image

        return self._apply_transforms(Image.fromarray(self.data[index].numpy()), int(self.targets[index]))

    def __len__(self) -> int:
        return len(self.data)

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def processed_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "processed")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {_class: i for i, _class in enumerate(self.classes)}

    def _check_exists(self) -> bool:
        return all(
            _exists(os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0]))
            for url, _ in self.resources
        )

    def extra_repr(self) -> str:
        split = "Train" if self.train is True else "Test"
        return f"Split: {split}"


class FashionMNIST(MNIST):
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]  # fmt: skip


class KMNIST(MNIST):
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """EMNIST ``split`` from ``root/EMNIST/raw/emnist-<split>-<train|test>-{images,labels}-idx?-ubyte``."""

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(list(_all_classes)),
        "bymerge": sorted(list(_all_classes - _merged_classes)),
        "balanced": sorted(list(_all_classes - _merged_classes)),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root: str | os.PathLike, split: str, **kwargs: Any) -> None:
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = self._training_file(split)
        self.test_file = self._test_file(split)
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @staticmethod
    def _training_file(split: str) -> str:
        return f"training_{split}.pt"

    @staticmethod
    def _test_file(split: str) -> str:
        return f"test_{split}.pt"

    @property
    def _file_prefix(self) -> str:
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self) -> str:
        return os.path.join(self.raw_folder, self._file_prefix + "-images-idx3-ubyte")

    @property
    def labels_file(self) -> str:
        return os.path.join(self.raw_folder, self._file_prefix + "-labels-idx1-ubyte")

    def _raw_names(self) -> list[str]:
        return [os.path.basename(self.images_file), os.path.basename(self.labels_file)]

    def _load_data(self) -> tuple[Any, Any]:
        return read_image_file(self.images_file), read_label_file(self.labels_file)

    def _check_exists(self) -> bool:
        return all(_exists(file) for file in (self.images_file, self.labels_file))
