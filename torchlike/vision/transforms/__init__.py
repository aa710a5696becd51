"""torchvision.transforms: the v1 transform classes, ``functional`` and ``v2``."""

from . import _autoaugment, functional, v2
from ._autoaugment import AutoAugment, AutoAugmentPolicy, RandAugment, TrivialAugmentWide
from ._functional import normalize, to_tensor
from . import _transforms
from ._transforms import (
    CenterCrop,
    ColorJitter,
    Compose,
    ConvertImageDtype,
    FiveCrop,
    GaussianBlur,
    Grayscale,
    InterpolationMode,
    Lambda,
    LinearTransformation,
    Normalize,
    PILToTensor,
    Pad,
    RandomAdjustSharpness,
    RandomAffine,
    RandomApply,
    RandomAutocontrast,
    RandomChoice,
    RandomCrop,
    RandomEqualize,
    RandomErasing,
    RandomGrayscale,
    RandomHorizontalFlip,
    RandomInvert,
    RandomOrder,
    RandomPosterize,
    RandomResizedCrop,
    RandomRotation,
    RandomSolarize,
    RandomVerticalFlip,
    Resize,
    TenCrop,
    ToPILImage,
    ToTensor,
)

__all__ = [*_transforms.__all__, *_autoaugment.__all__, "functional", "v2", "to_tensor", "normalize"]
