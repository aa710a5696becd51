"""torchvision.transforms.v2 for plain tensors and PIL images.

Each v2 class is its v1 counterpart (same parameters, same random draws in the same order) behind v2's
calling convention: it takes any structure of inputs (``t(img, label)``, ``t((img, target))``, dicts), transforms
the first PIL image or tensor in it and passes everything else through. What differs from v1 is written here:
RandomChoice draws with ``torch.multinomial`` and RandomOrder with ``torch.randperm``; ToImage, ToDtype,
ToPureTensor and Identity are v2-only. torchvision's tv_tensors (BoundingBoxes, Mask, ...) are not provided, and
uint8 tensors are resized through float32 as in v1 (torchvision's v2 has a native uint8 kernel that can differ by 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..._core.tensor import Tensor
from ...nn.modules._module import Module
from . import _autoaugment as AA
from . import _functional as F
from . import _transforms as V1
from ._functional import InterpolationMode


def _torch() -> Any:
    import torchlike

    return torchlike


def _is_image(x: Any) -> bool:
    return isinstance(x, Tensor) or F._is_pil_image(x)


def _map_first_image(inputs: Any, fn: Callable, done: list) -> Any:
    if not done and _is_image(inputs):
        done.append(True)
        return fn(inputs)
    if isinstance(inputs, (list, tuple)) and not _is_image(inputs):
        return type(inputs)(_map_first_image(x, fn, done) for x in inputs)
    if isinstance(inputs, dict):
        return {k: _map_first_image(v, fn, done) for k, v in inputs.items()}
    return inputs


class _V2:
    """v2's calling convention on top of a v1 ``forward``."""

    def __call__(self, *inputs: Any) -> Any:
        data = inputs if len(inputs) > 1 else inputs[0]
        forward = super().__call__  # type: ignore[misc]
        return _map_first_image(data, forward, [])


def _v2(cls: type) -> type:
    return type(cls.__name__, (_V2, cls), {"__module__": __name__, "__doc__": cls.__doc__})


Resize = _v2(V1.Resize)
CenterCrop = _v2(V1.CenterCrop)
Pad = _v2(V1.Pad)
RandomCrop = _v2(V1.RandomCrop)
RandomResizedCrop = _v2(V1.RandomResizedCrop)
RandomHorizontalFlip = _v2(V1.RandomHorizontalFlip)
RandomVerticalFlip = _v2(V1.RandomVerticalFlip)
RandomRotation = _v2(V1.RandomRotation)
RandomAffine = _v2(V1.RandomAffine)
ColorJitter = _v2(V1.ColorJitter)
Grayscale = _v2(V1.Grayscale)
RandomGrayscale = _v2(V1.RandomGrayscale)
GaussianBlur = _v2(V1.GaussianBlur)
Normalize = _v2(V1.Normalize)
RandomErasing = _v2(V1.RandomErasing)
FiveCrop = _v2(V1.FiveCrop)
TenCrop = _v2(V1.TenCrop)
RandomInvert = _v2(V1.RandomInvert)
RandomPosterize = _v2(V1.RandomPosterize)
RandomSolarize = _v2(V1.RandomSolarize)
RandomAdjustSharpness = _v2(V1.RandomAdjustSharpness)
RandomAutocontrast = _v2(V1.RandomAutocontrast)
RandomEqualize = _v2(V1.RandomEqualize)
AutoAugment = _v2(AA.AutoAugment)
RandAugment = _v2(AA.RandAugment)
TrivialAugmentWide = _v2(AA.TrivialAugmentWide)
ToPILImage = _v2(V1.ToPILImage)
PILToTensor = _v2(V1.PILToTensor)
ToTensor = _v2(V1.ToTensor)
Lambda = V1.Lambda
AutoAugmentPolicy = AA.AutoAugmentPolicy


class Compose(V1.Compose):
    def __call__(self, *inputs: Any) -> Any:
        outputs = inputs if len(inputs) > 1 else inputs[0]
        for transform in self.transforms:
            outputs = transform(*outputs) if len(inputs) > 1 else transform(outputs)
        return outputs


class RandomApply(Compose):
    def __init__(self, transforms: Sequence[Callable], p: float = 0.5) -> None:
        super().__init__(transforms)
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.p = p

    def __call__(self, *inputs: Any) -> Any:
        r, p = V1._rand_one_vs(self.p)
        if r >= p:
            return inputs if len(inputs) > 1 else inputs[0]
        return super().__call__(*inputs)


class RandomChoice:
    def __init__(self, transforms: Sequence[Callable], p: list[float] | None = None) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}")
        total = sum(p)
        self.p = [prob / total for prob in p]
        self.transforms = transforms

    def __call__(self, *inputs: Any) -> Any:
        t = _torch()
        idx = int(t.multinomial(t.tensor(self.p), 1))
        return self.transforms[idx](*inputs)


class RandomOrder:
    def __init__(self, transforms: Sequence[Callable]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def __call__(self, *inputs: Any) -> Any:
        outputs = inputs if len(inputs) > 1 else inputs[0]
        for idx in _torch().randperm(len(self.transforms)).tolist():
            outputs = self.transforms[idx](*outputs) if len(inputs) > 1 else self.transforms[idx](outputs)
        return outputs


class ToImage(_V2, Module):
    """A PIL image or HWC ndarray as a CHW tensor of its own dtype; tensors pass through."""

    def forward(self, inpt: Any) -> Tensor:
        import numpy as np

        if isinstance(inpt, np.ndarray):
            arr = inpt[:, :, None] if inpt.ndim == 2 else inpt
            return _torch().from_numpy(arr).permute((2, 0, 1)).contiguous()
        if F._is_pil_image(inpt):
            return F.pil_to_tensor(inpt)
        return inpt


class ToDtype(_V2, Module):
    """``dtype`` conversion; with ``scale=True`` values are rescaled as convert_image_dtype does."""

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        super().__init__()
        if isinstance(dtype, dict):
            raise ValueError("torchlike.vision.transforms.v2.ToDtype: a dict of dtypes needs tv_tensors, not provided")
        self.dtype = dtype
        self.scale = scale

    def forward(self, inpt: Tensor) -> Tensor:
        if not isinstance(inpt, Tensor):
            return inpt
        if self.scale:
            return F.convert_image_dtype(inpt, self.dtype)
        return inpt.to(self.dtype)


class ToPureTensor(_V2, Module):
    def forward(self, inpt: Any) -> Any:
        return inpt


class Identity(_V2, Module):
    def forward(self, inpt: Any) -> Any:
        return inpt


ConvertImageDtype = _v2(V1.ConvertImageDtype)

__all__ = [
    "Compose", "RandomApply", "RandomChoice", "RandomOrder", "Resize", "CenterCrop", "Pad", "RandomCrop",
    "RandomResizedCrop", "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomAffine",
    "ColorJitter", "Grayscale", "RandomGrayscale", "GaussianBlur", "Normalize", "RandomErasing", "FiveCrop",
    "TenCrop", "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness", "RandomAutocontrast",
    "RandomEqualize", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AutoAugmentPolicy", "ToPILImage",
    "PILToTensor", "ToTensor", "Lambda", "ToImage", "ToDtype", "ToPureTensor", "Identity", "ConvertImageDtype",
    "InterpolationMode",
]  # fmt: skip
