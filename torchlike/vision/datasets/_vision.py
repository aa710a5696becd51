"""VisionDataset and the file helpers every dataset uses."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from typing import Any

from ...utils.data import Dataset


class StandardTransform:
    def __init__(self, transform: Callable | None = None, target_transform: Callable | None = None) -> None:
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input: Any, target: Any) -> tuple[Any, Any]:
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def _format_transform_repr(self, transform: Callable, head: str) -> list[str]:
        lines = transform.__repr__().splitlines()
        return [f"{head}{lines[0]}"] + ["{}{}".format(" " * len(head), line) for line in lines[1:]]

    def __repr__(self) -> str:
        body = [self.__class__.__name__]
        if self.transform is not None:
            body += self._format_transform_repr(self.transform, "Transform: ")
        if self.target_transform is not None:
            body += self._format_transform_repr(self.target_transform, "Target transform: ")
        return "\n".join(body)


class VisionDataset(Dataset):
    """Base of the datasets: ``root`` plus ``transform``/``target_transform`` (or a joint ``transforms``)."""

    _repr_indent = 4

    def __init__(self, root: Any = None, transforms: Callable | None = None, transform: Callable | None = None,
                 target_transform: Callable | None = None) -> None:  # fmt: skip
        if isinstance(root, str):
            root = os.path.expanduser(root)
        self.root = root
        has_transforms = transforms is not None
        has_separate_transform = transform is not None or target_transform is not None
        if has_transforms and has_separate_transform:
            raise ValueError("Only transforms or transform/target_transform can be passed as argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate_transform:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def _apply_transforms(self, sample: Any, target: Any) -> tuple[Any, Any]:
        """``transform`` and ``target_transform`` as they are set now (torchvision's datasets read the attributes
        per item, so assigning ``ds.transform`` later takes effect)."""
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self) -> int:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        head = "Dataset " + self.__class__.__name__
        body = [f"Number of datapoints: {self.__len__()}"]
        if self.root is not None:
            body.append(f"Root location: {self.root}")
        body += self.extra_repr().splitlines()
        if hasattr(self, "transforms") and self.transforms is not None:
            body += [repr(self.transforms)]
        lines = [head] + [" " * self._repr_indent + line for line in body]
        return "\n".join(lines)


def calculate_md5(fpath: str, chunk_size: int = 1024 * 1024) -> str:
    md5 = hashlib.md5(usedforsecurity=False)
    with open(fpath, "rb") as f:
        while chunk := f.read(chunk_size):
            md5.update(chunk)
    return md5.hexdigest()


def check_md5(fpath: str, md5: str, **kwargs: Any) -> bool:
    return md5 == calculate_md5(fpath, **kwargs)


def check_integrity(fpath: str, md5: str | None = None) -> bool:
    """Whether ``fpath`` is a file and, when ``md5`` is given, has that checksum."""
    if not os.path.isfile(fpath):
        return False
    if md5 is None:
        return True
    return check_md5(fpath, md5)


def iterable_to_str(iterable: Iterable) -> str:
    return "'" + "', '".join([str(item) for item in iterable]) + "'"


def verify_str_arg(value: Any, arg: str | None = None, valid_values: Iterable | None = None,
                   custom_msg: str | None = None) -> str:  # fmt: skip
    if not isinstance(value, str):
        msg = "Expected type str" if arg is None else f"Expected type str for argument {arg}"
        raise ValueError(f"{msg}, but got type {type(value)}.")
    if valid_values is None:
        return value
    if value not in valid_values:
        if custom_msg is not None:
            raise ValueError(custom_msg)
        msg = "Unknown value '{value}' for argument {arg}. Valid values are {{{valid_values}}}."
        raise ValueError(msg.format(value=value, arg=arg, valid_values=iterable_to_str(valid_values)))
    return value


def no_download(folder: str, files: Iterable[str], source: str) -> RuntimeError:
    """torchlike.vision never downloads: the error names what to place where (nothing is written)."""
    listed = ", ".join(files)
    return RuntimeError(
        f"torchlike.vision does not download datasets (download=True found no local copy). Place {listed} "
        f"in {folder} (from {source}), then run again."
    )


def require_files(found: bool, download: bool, folder: str, files: Iterable[str], source: str, missing: str) -> None:
    """The check a dataset makes when it is built: nothing when ``found``; with ``download=True``, the error naming
    the files to place (nothing is fetched or written); else torchvision's own error, ``missing``."""
    if found:
        return
    if download:
        raise no_download(folder, files, source)
    raise RuntimeError(missing)
