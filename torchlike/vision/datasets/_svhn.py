"""SVHN from ``root/<split>_32x32.mat`` (needs scipy to read .mat files, as torchvision does)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ._vision import VisionDataset, check_integrity, require_files, verify_str_arg


class SVHN(VisionDataset):
    """``data`` (N, 3, 32, 32) uint8 and ``labels`` int64 (label 10 stored for digit 0 becomes 0)."""

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }  # fmt: skip

    def __init__(self, root: str | os.PathLike, split: str = "train", transform: Callable | None = None,
                 target_transform: Callable | None = None, download: bool = False) -> None:  # fmt: skip
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.url = self.split_list[split][0]
        self.filename = self.split_list[split][1]
        self.file_md5 = self.split_list[split][2]
        require_files(self._check_integrity(), download, str(self.root), [self.filename], self.url,
                      "Dataset not found or corrupted. You can use download=True to download it")  # fmt: skip
        import scipy.io as sio

        loaded_mat = sio.loadmat(os.path.join(self.root, self.filename))
        self.data = loaded_mat["X"]
        self.labels = loaded_mat["y"].astype(np.int64).squeeze()
        np.place(self.labels, self.labels == 10, 0)
        self.data = np.transpose(self.data, (3, 2, 0, 1))

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        from PIL import Image

        img = Image.fromarray(np.transpose(self.data[index], (1, 2, 0)))
        return self._apply_transforms(img, int(self.labels[index]))

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"
