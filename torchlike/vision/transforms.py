"""torchvision.transforms: Compose, ToTensor, Normalize, Lambda (and their functions to_tensor, normalize).

Values, dtypes, shapes, reprs and errors follow torchvision. Conversions and normalisation of CPU
tensors without autograd history are computed with numpy (the same IEEE float operations torch
runs), so they cost no JAX call per sample and work inside DataLoader worker processes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core.tensor import Tensor
from ..utils.data import _host

__all__ = ["Compose", "ToTensor", "Normalize", "Lambda", "to_tensor", "normalize"]


def _torch() -> Any:
    import torchlike

    return torchlike


def _is_pil_image(img: Any) -> bool:
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def to_tensor(pic: Any) -> Tensor:
    """A PIL image or an HWC numpy array as a CHW tensor; uint8 data becomes the default float dtype / 255."""
    if not (_is_pil_image(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray) and pic.ndim not in (2, 3):
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    t = _torch()
    float_dt = t.get_default_dtype()
    if isinstance(pic, np.ndarray):
        chw = (pic[:, :, None] if pic.ndim == 2 else pic).transpose((2, 0, 1))
        if chw.dtype != np.uint8:
            img = t.from_numpy(chw)  # raises torch's error for unsupported dtypes
            # torch: .contiguous() keeps sharing pic's memory when the transposed view is already contiguous
            return img if chw.flags.c_contiguous else _host.wrap(np.ascontiguousarray(chw), img.dtype)
        return _host.wrap(chw.astype(float_dt.np) / float_dt.np.type(255), float_dt)
    nptype = {"I": np.int32, "I;16" if sys.byteorder == "little" else "I;16B": np.int16, "F": np.float32}
    arr = np.array(pic, nptype.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = arr * np.uint8(255)
    chw = np.ascontiguousarray(
        arr.reshape(pic.size[1], pic.size[0], len(pic.getbands())).transpose((2, 0, 1))
    )
    if chw.dtype == np.uint8:
        return _host.wrap(chw.astype(float_dt.np) / float_dt.np.type(255), float_dt)
    return t.from_numpy(chw)


def _broadcast_into(shape: tuple, other: tuple) -> None:
    """torch's errors for an in-place op whose other operand does not broadcast to ``shape``."""
    nd = max(len(shape), len(other))
    a = (1,) * (nd - len(shape)) + shape
    b = (1,) * (nd - len(other)) + other
    out = []
    for d in range(nd):
        if a[d] != b[d] and a[d] != 1 and b[d] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[d]}) must match the size of tensor b ({b[d]}) at non-singleton dimension {d}"
            )
        out.append(b[d] if a[d] == 1 else a[d])
    if tuple(out) != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {out}")


def normalize(tensor: Tensor, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> Tensor:
    """``(tensor - mean) / std`` per channel of a (..., C, H, W) float tensor."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if tensor.ndim < 2:
        raise TypeError("Tensor is not a torch image.")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError(
            f"Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = {tensor.size()}"
        )
    dtype = tensor.dtype
    if not inplace and _host.is_host_readable(tensor) and dtype.np in (np.float32, np.float64):
        m = np.asarray(mean).astype(dtype.np)
        s = np.asarray(std).astype(dtype.np)
        if (s == 0).any():
            raise ValueError(
                f"std evaluated to zero after conversion to {dtype}, leading to division by zero."
            )
        m = m.reshape(-1, 1, 1) if m.ndim == 1 else m
        s = s.reshape(-1, 1, 1) if s.ndim == 1 else s
        shape = tuple(tensor.shape)
        _broadcast_into(shape, m.shape)
        _broadcast_into(shape, s.shape)
        return _host.wrap((_host.host_array(tensor) - m) / s, dtype)
    t = _torch()
    if not inplace:
        tensor = tensor.clone()
    mean_t = t.as_tensor(mean, dtype=dtype, device=tensor.device)
    std_t = t.as_tensor(std, dtype=dtype, device=tensor.device)
    if (std_t == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    if mean_t.ndim == 1:
        mean_t = mean_t.view(-1, 1, 1)
    if std_t.ndim == 1:
        std_t = std_t.view(-1, 1, 1)
    return tensor.sub_(mean_t).div_(std_t)


class Compose:
    """Apply ``transforms`` one after the other."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class ToTensor:
    """``to_tensor`` as a transform."""

    def __call__(self, pic: Any) -> Tensor:
        return to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class Normalize:
    """``normalize`` with fixed per-channel ``mean`` and ``std``. (torchvision's is an nn.Module; this is a
    plain callable with ``forward``.)"""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return normalize(tensor, self.mean, self.std, self.inplace)

    __call__ = forward

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """A user function as a transform."""

    def __init__(self, lambd: Callable) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {repr(type(lambd).__name__)}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"
