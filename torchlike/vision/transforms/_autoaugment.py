"""AutoAugment, RandAugment and TrivialAugmentWide: torchvision's op lists, magnitude tables and draw order
(``randint`` for the op/policy, ``rand`` for probabilities, ``randint(2)`` for signs)."""

from __future__ import annotations

import math
from enum import Enum
from typing import Any

from ..._core.tensor import Tensor
from ...nn.modules._module import Module
from . import _functional as F
from ._functional import InterpolationMode
from ._transforms import _randint

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide"]


def _torch() -> Any:
    import torchlike

    return torchlike


def _apply_op(img: Any, op_name: str, magnitude: float, interpolation: InterpolationMode, fill: Any) -> Any:
    if op_name in ("ShearX", "ShearY"):
        shear = math.degrees(math.atan(magnitude))
        return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                        shear=[shear, 0.0] if op_name == "ShearX" else [0.0, shear],
                        interpolation=interpolation, fill=fill, center=[0, 0])  # fmt: skip
    if op_name in ("TranslateX", "TranslateY"):
        translate = [int(magnitude), 0] if op_name == "TranslateX" else [0, int(magnitude)]
        return F.affine(img, angle=0.0, translate=translate, scale=1.0, interpolation=interpolation,
                        shear=[0.0, 0.0], fill=fill)  # fmt: skip
    if op_name == "Rotate":
        return F.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    color = {"Brightness": F.adjust_brightness, "Color": F.adjust_saturation, "Contrast": F.adjust_contrast,
             "Sharpness": F.adjust_sharpness}  # fmt: skip
    if op_name in color:
        return color[op_name](img, 1.0 + magnitude)
    if op_name == "Posterize":
        return F.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return F.solarize(img, magnitude)
    plain = {"AutoContrast": F.autocontrast, "Equalize": F.equalize, "Invert": F.invert}
    if op_name in plain:
        return plain[op_name](img)
    if op_name == "Identity":
        return img
    raise ValueError(f"The provided operator {op_name} is not recognized.")


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# (op, probability, magnitude bin) pairs, written "Op p m" with "-" for no magnitude
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: """
        Posterize .4 8, Rotate .6 9; Solarize .6 5, AutoContrast .6 -; Equalize .8 -, Equalize .6 -;
        Posterize .6 7, Posterize .6 6; Equalize .4 -, Solarize .2 4; Equalize .4 -, Rotate .8 8;
        Solarize .6 3, Equalize .6 -; Posterize .8 5, Equalize 1 -; Rotate .2 3, Solarize .6 8;
        Equalize .6 -, Posterize .4 6; Rotate .8 8, Color .4 0; Rotate .4 9, Equalize .6 -;
        Equalize 0 -, Equalize .8 -; Invert .6 -, Equalize 1 -; Color .6 4, Contrast 1 8;
        Rotate .8 8, Color 1 2; Color .8 8, Solarize .8 7; Sharpness .4 7, Invert .6 -;
        ShearX .6 5, Equalize 1 -; Color .4 0, Equalize .6 -; Equalize .4 -, Solarize .2 4;
        Solarize .6 5, AutoContrast .6 -; Invert .6 -, Equalize 1 -; Color .6 4, Contrast 1 8;
        Equalize .8 -, Equalize .6 -""",
    AutoAugmentPolicy.CIFAR10: """
        Invert .1 -, Contrast .2 6; Rotate .7 2, TranslateX .3 9; Sharpness .8 1, Sharpness .9 3;
        ShearY .5 8, TranslateY .7 9; AutoContrast .5 -, Equalize .9 -; ShearY .2 7, Posterize .3 7;
        Color .4 3, Brightness .6 7; Sharpness .3 9, Brightness .7 9; Equalize .6 -, Equalize .5 -;
        Contrast .6 7, Sharpness .6 5; Color .7 7, TranslateX .5 8; Equalize .3 -, AutoContrast .4 -;
        TranslateY .4 3, Sharpness .2 6; Brightness .9 6, Color .2 8; Solarize .5 2, Invert 0 -;
        Equalize .2 -, AutoContrast .6 -; Equalize .2 -, Equalize .6 -; Color .9 9, Equalize .6 -;
        AutoContrast .8 -, Solarize .2 8; Brightness .1 3, Color .7 0; Solarize .4 5, AutoContrast .9 -;
        TranslateY .9 9, TranslateY .7 9; AutoContrast .9 -, Solarize .8 3; Equalize .8 -, Invert .1 -;
        TranslateY .7 9, AutoContrast .9 -""",
    AutoAugmentPolicy.SVHN: """
        ShearX .9 4, Invert .2 -; ShearY .9 8, Invert .7 -; Equalize .6 -, Solarize .6 6;
        Invert .9 -, Equalize .6 -; Equalize .6 -, Rotate .9 3; ShearX .9 4, AutoContrast .8 -;
        ShearY .9 8, Invert .4 -; ShearY .9 5, Solarize .2 6; Invert .9 -, AutoContrast .8 -;
        Equalize .6 -, Rotate .9 3; ShearX .9 4, Solarize .3 3; ShearY .8 8, Invert .7 -;
        Equalize .9 -, TranslateY .6 6; Invert .9 -, Equalize .6 -; Contrast .3 3, Rotate .8 4;
        Invert .8 -, TranslateY 0 2; ShearY .7 6, Solarize .4 8; Invert .6 -, Rotate .8 4;
        ShearY .3 7, TranslateX .9 3; ShearX .1 6, Invert .6 -; Solarize .7 2, TranslateY .6 7;
        ShearY .8 4, Invert .8 -; ShearX .7 9, TranslateY .8 3; ShearY .8 5, AutoContrast .7 -;
        ShearX .7 2, Invert .1 -""",
}


def _parse_policy(text: str) -> list:
    def op(s: str) -> tuple:
        name, p, m = s.split()
        return name, float(p), None if m == "-" else int(m)

    return [tuple(op(s) for s in pair.split(",")) for pair in text.split(";")]


def _fill_for(img: Any, fill: Any) -> Any:
    if isinstance(img, Tensor):
        if isinstance(fill, (int, float)):
            return [float(fill)] * F.get_image_num_channels(img)
        if fill is not None:
            return [float(f) for f in fill]
    return fill


def _space(num_bins: int, shear: float, translate: tuple[float, float], rotate: float, color: float,
           posterize_div: int) -> dict:  # fmt: skip
    t = _torch()
    return {
        "ShearX": (t.linspace(0.0, shear, num_bins), True),
        "ShearY": (t.linspace(0.0, shear, num_bins), True),
        "TranslateX": (t.linspace(0.0, translate[0], num_bins), True),
        "TranslateY": (t.linspace(0.0, translate[1], num_bins), True),
        "Rotate": (t.linspace(0.0, rotate, num_bins), True),
        "Brightness": (t.linspace(0.0, color, num_bins), True),
        "Color": (t.linspace(0.0, color, num_bins), True),
        "Contrast": (t.linspace(0.0, color, num_bins), True),
        "Sharpness": (t.linspace(0.0, color, num_bins), True),
        "Posterize": (8 - (t.arange(num_bins) / ((num_bins - 1) / posterize_div)).round().int(), False),
        "Solarize": (t.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (t.tensor(0.0), False),
        "Equalize": (t.tensor(0.0), False),
    }


class AutoAugment(Module):
    def __init__(self, policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST, fill: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.policy = policy
        self.interpolation = interpolation
        self.fill = fill
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        self.policies = _parse_policy(_POLICIES[policy])

    def _augmentation_space(self, num_bins: int, image_size: list[int]) -> dict:
        translate = (150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1])
        space = _space(num_bins, 0.3, translate, 30.0, 0.9, 4)
        space["Invert"] = (_torch().tensor(0.0), False)
        return space

    @staticmethod
    def get_params(transform_num: int) -> tuple:
        t = _torch()
        policy_id = int(_randint(0, transform_num))
        probs = t.rand((2,))
        signs = t.randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        transform_id, probs, signs = self.get_params(len(self.policies))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = self._augmentation_space(10, F.get_image_size(img))[op_name]
                magnitude = float(magnitudes[magnitude_id].item()) if magnitude_id is not None else 0.0
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(Module):
    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST, fill: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins: int, image_size: list[int]) -> dict:
        translate = (150.0 / 331.0 * image_size[0], 150.0 / 331.0 * image_size[1])
        return {"Identity": (_torch().tensor(0.0), False), **_space(num_bins, 0.3, translate, 30.0, 0.9, 4)}

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        for _ in range(self.num_ops):
            op_meta = self._augmentation_space(self.num_magnitude_bins, F.get_image_size(img))
            op_index = int(_randint(0, len(op_meta)))
            op_name = list(op_meta.keys())[op_index]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            if signed and _randint(0, 2):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
            f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, fill={self.fill})"
        )


class TrivialAugmentWide(Module):
    def __init__(self, num_magnitude_bins: int = 31, interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins: int) -> dict:
        return {"Identity": (_torch().tensor(0.0), False), **_space(num_bins, 0.99, (32.0, 32.0), 135.0, 0.99, 6)}

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_index = int(_randint(0, len(op_meta)))
        op_name = list(op_meta.keys())[op_index]
        magnitudes, signed = op_meta[op_name]
        magnitude = (
            float(magnitudes[_randint(0, len(magnitudes))].item()) if magnitudes.ndim > 0 else 0.0
        )
        if signed and _randint(0, 2):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
            f"interpolation={self.interpolation}, fill={self.fill})"
        )
