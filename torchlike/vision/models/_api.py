"""Weights enums and loading without a network: a given file, or the torch hub cache under TORCH_HOME."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from functools import partial
from typing import Any

from ..transforms import _functional as F
from ..transforms._functional import InterpolationMode


class ImageClassification:
    """The inference preset of torchvision's classification weights: resize, center crop, scale, normalize."""

    def __init__(self, *, crop_size: int, resize_size: int = 256, mean: tuple = (0.485, 0.456, 0.406),
                 std: tuple = (0.229, 0.224, 0.225), interpolation: InterpolationMode = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:  # fmt: skip
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def __call__(self, img: Any) -> Any:
        import torchlike

        img = F.resize(img, self.resize_size, interpolation=self.interpolation, antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        if not isinstance(img, torchlike.Tensor):
            img = F.pil_to_tensor(img)
        img = F.convert_image_dtype(img, torchlike.float)
        return F.normalize(img, mean=self.mean, std=self.std)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(\n    crop_size={self.crop_size}\n    resize_size={self.resize_size}\n"
            f"    mean={self.mean}\n    std={self.std}\n    interpolation={self.interpolation}\n)"
        )


@dataclass
class Weights:
    url: str
    transforms: Callable
    meta: dict[str, Any] = field(default_factory=dict)


def hub_checkpoint_dir() -> str:
    """torch.hub's checkpoint folder: $TORCH_HOME/hub/checkpoints (TORCH_HOME defaults to ~/.cache/torch)."""
    torch_home = os.path.expanduser(
        os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    )
    return os.path.join(torch_home, "hub", "checkpoints")


class WeightsEnum(Enum):
    """Members hold a ``Weights``; ``get_state_dict`` reads the checkpoint torchvision would download."""

    @classmethod
    def verify(cls, obj: Any) -> Any:
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError(
                    f"Invalid Weight class provided; expected {cls.__name__} but received {obj.__class__.__name__}."
                )
        return obj

    def get_state_dict(self, progress: bool = True, check_hash: bool = False, path: str | None = None) -> Any:
        """The state_dict from ``path``, else from the hub cache file torchvision downloads to; never the network."""
        import torchlike

        filename = os.path.basename(self.url)
        path = path or os.path.join(hub_checkpoint_dir(), filename)
        if not os.path.isfile(path):
            raise RuntimeError(
                f"torchlike.vision does not download weights: {self} needs {filename}. Download {self.url} and "
                f"place it at {path} (or set TORCH_HOME), or load a local file with "
                "model.load_state_dict(torch.load(path))."
            )
        return torchlike.load(path, map_location="cpu", weights_only=True)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self) -> str:
        return self.value.url

    @property
    def transforms(self) -> Callable:
        return self.value.transforms

    @property
    def meta(self) -> dict[str, Any]:
        return self.value.meta


def weights(filename: str, crop: int = 224, resize: int = 256, interpolation: InterpolationMode | None = None,
            **meta: Any) -> Weights:  # fmt: skip
    preset = partial(ImageClassification, crop_size=crop, resize_size=resize)
    if interpolation is not None:
        preset = partial(ImageClassification, crop_size=crop, resize_size=resize, interpolation=interpolation)
    return Weights(url="https://download.pytorch.org/models/" + filename, transforms=preset, meta=meta)


def _ovewrite_named_param(kwargs: dict[str, Any], param: str, new_value: Any) -> None:
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    else:
        kwargs[param] = new_value


def build(model_fn: Callable, weights_enum: type, weights_obj: Any, progress: bool, kwargs: dict,
          fix_state_dict: Callable | None = None, num_classes: int = 1000) -> Any:  # fmt: skip
    """What every builder does: take torchvision's legacy ``pretrained=`` keyword, validate ``weights``, build the
    model, and load the weights' state_dict into it."""
    weights_obj = weights_enum.verify(handle_legacy_interface(kwargs, weights_enum) or weights_obj)
    if weights_obj is not None:
        _ovewrite_named_param(kwargs, "num_classes", num_classes)
    model = model_fn(**kwargs)
    if weights_obj is not None:
        state_dict = weights_obj.get_state_dict(progress=progress, check_hash=True)
        if fix_state_dict is not None:
            state_dict = fix_state_dict(state_dict)
        model.load_state_dict(state_dict)
    return model


def handle_legacy_interface(kwargs: dict, weights_enum: type) -> Any:
    """torchvision's old ``pretrained=True`` keyword: the enum's DEFAULT (with its deprecation warning)."""
    import warnings

    if "pretrained" not in kwargs:
        return None
    pretrained = kwargs.pop("pretrained")
    warnings.warn(
        "The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use "
        "'weights' instead."
    )
    return weights_enum.DEFAULT if pretrained else None
