"""CIFAR10 and CIFAR100 from their python pickle batches under ``root/cifar-10-batches-py`` (or
``cifar-100-python``), md5-checked as torchvision does."""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np

from ._vision import VisionDataset, check_integrity, require_files


class CIFAR10(VisionDataset):
    """``data`` (N, 32, 32, 3) uint8 and ``targets`` (a list of ints); items are (PIL RGB image, int)."""

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root: str | os.PathLike, train: bool = True, transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:  # fmt: skip
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        names = [name for name, _ in self.train_list + self.test_list] + [self.meta["filename"]]
        require_files(self._check_integrity(), download, os.path.join(self.root, self.base_folder), names,
                      f"{self.url}, extracted",
                      "Dataset not found or corrupted. You can use download=True to download it")  # fmt: skip
        downloaded_list = self.train_list if self.train else self.test_list
        data: list = []
        self.targets: list[int] = []
        for file_name, _ in downloaded_list:
            with open(os.path.join(self.root, self.base_folder, file_name), "rb") as f:
                entry = pickle.load(f, encoding="latin1")
                data.append(entry["data"])
                self.targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use download=True to download it")
        with open(path, "rb") as infile:
            self.classes = pickle.load(infile, encoding="latin1")[self.meta["key"]]
        self.class_to_idx = {_class: i for i, _class in enumerate(self.classes)}

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        from PIL import Image

        return self._apply_transforms(Image.fromarray(self.data[index]), self.targets[index])

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        for filename, md5 in self.train_list + self.test_list:
            if not check_integrity(os.path.join(self.root, self.base_folder, filename), md5):
                return False
        return True

    def extra_repr(self) -> str:
        split = "Train" if self.train is True else "Test"
        return f"Split: {split}"


class CIFAR100(CIFAR10):
    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names", "md5": "7973b15100ade9c7d40fb424638fde48"}
