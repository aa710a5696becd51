"""torchvision.transforms (v1) classes. Random transforms draw from torchlike's generator with the same
calls in the same order as torchvision, so under ``manual_seed`` they make torchvision's choices."""

from __future__ import annotations

import math
import numbers
import random
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ..._ops import random as _random
from ...nn.modules._module import Module
from . import _functional as F
from ._functional import InterpolationMode, _interpolation_modes_from_int

__all__ = [
    "Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize", "Resize",
    "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice", "RandomOrder", "RandomCrop",
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomResizedCrop", "FiveCrop", "TenCrop",
    "LinearTransformation", "ColorJitter", "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale",
    "RandomErasing", "GaussianBlur", "InterpolationMode", "RandomInvert", "RandomPosterize", "RandomSolarize",
    "RandomAdjustSharpness", "RandomAutocontrast", "RandomEqualize",
]  # fmt: skip


def _torch() -> Any:
    import torchlike

    return torchlike


def _rand_one_vs(p: Any) -> tuple[Any, Any]:
    """``torch.rand(1)`` and ``p``, ready to compare as torch compares them, without a tensor op: torch compares
    a float32 tensor with a Python number in float32 (the number rounded to it), so the draw is read as a float
    and ``p`` rounded to float32. Any other ``p`` (a tensor) is compared with the drawn tensor itself."""
    if type(p) is float or type(p) is int:
        return _uniform(0.0, 1.0), float(np.float32(p))
    return _torch().rand(1), p


# Parameter draws, one number at a time, as torchvision writes them; ``item_draw`` takes the same words of the
# same stream without making a tensor where it may (a one-element tensor, its fill op and its read cost ten
# times the draw), else the tensor expression runs (and raises torch's errors).
def _uniform(low: Any, high: Any) -> float:
    """``torch.empty(1).uniform_(low, high).item()``."""
    x = _random.item_draw("uniform", low, high)
    return _torch().empty(1).uniform_(low, high).item() if x is None else x


def _randint(low: int, high: int) -> int:
    """``torch.randint(low, high, size=(1,)).item()``."""
    x = _random.item_draw("random", low, high)
    return _torch().randint(low, high, size=(1,)).item() if x is None else x


_F32_MAX = float(np.finfo(np.float32).max)


def _exp(x: float) -> float:
    """``torch.exp(t).item()`` for ``t`` the one-element tensor of the default dtype that holds the draw ``x``:
    computed in double and rounded once. torch's float32 exp differs from that in the last bit for about 1% of
    the inputs a crop draws (XLA's, which this used before, for about 7%); the crop sizes computed from it were
    torch's for all of 400,000 draws either way."""
    t = _torch()
    dt = t.get_default_dtype()
    if dt is t.float64 or dt is t.float32:
        y = math.exp(x) if x < 709.0 else math.inf
        return y if dt is t.float64 else (float(np.float32(y)) if y <= _F32_MAX else math.inf)
    return t.exp(t.tensor([x])).item()


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
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """``pil_to_tensor`` as a transform."""

    def __call__(self, pic: Any) -> Tensor:
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(Module):
    def __init__(self, dtype: Any) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, image: Tensor) -> Tensor:
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic: Any) -> Any:
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        format_string = self.__class__.__name__ + "("
        if self.mode is not None:
            format_string += f"mode={self.mode}"
        return format_string + ")"


class Normalize(Module):
    """``normalize`` with fixed per-channel ``mean`` and ``std``."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


def _check_interpolation(interpolation: Any) -> InterpolationMode:
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    return interpolation


class Resize(Module):
    def __init__(self, size: Any, interpolation: Any = InterpolationMode.BILINEAR, max_size: int | None = None,
                 antialias: bool | None = True) -> None:  # fmt: skip
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        self.interpolation = _check_interpolation(interpolation)
        self.antialias = antialias

    def forward(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self) -> str:
        detail = f"(size={self.size}, interpolation={self.interpolation.value}, max_size={self.max_size}, "
        return f"{self.__class__.__name__}{detail}antialias={self.antialias})"


def _setup_size(size: Any, error_msg: str) -> Sequence[int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


class CenterCrop(Module):
    def __init__(self, size: Any) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img: Any) -> Any:
        return F.center_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(Module):
    def __init__(self, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> None:
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError(
                f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple"
            )
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


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


class RandomTransforms:
    def __init__(self, transforms: Sequence[Callable]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError()

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class RandomApply(Module):
    """All of ``transforms`` with probability ``p`` (one ``torch.rand(1)`` draw)."""

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img: Any) -> Any:
        r, p = _rand_one_vs(self.p)
        if p < r:
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{body}\n)"


class RandomOrder(RandomTransforms):
    """``transforms`` in an order drawn with Python's ``random.shuffle`` (as torchvision's v1)."""

    def __call__(self, img: Any) -> Any:
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """One of ``transforms``, picked with Python's ``random.choices`` (as torchvision's v1)."""

    def __init__(self, transforms: Sequence[Callable], p: Sequence[float] | None = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args: Any) -> Any:
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self) -> str:
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(Module):
    @staticmethod
    def get_params(img: Any, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = _randint(0, h - th + 1)
        j = _randint(0, w - tw + 1)
        return i, j, th, tw

    def __init__(self, size: Any, padding: Any = None, pad_if_needed: bool = False, fill: Any = 0,
                 padding_mode: str = "constant") -> None:  # fmt: skip
        super().__init__()
        self.size = tuple(_setup_size(size, error_msg="Please provide only two dimensions (h, w) for size."))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        r, p = _rand_one_vs(self.p)
        if r < p:
            return F.hflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(Module):
    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        r, p = _rand_one_vs(self.p)
        if r < p:
            return F.vflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


_LOG_RATIOS: dict = {}


def _log_ratio(t: Any, ratio: Sequence[float]) -> list:
    """``torch.log(torch.tensor(ratio)).tolist()`` (in the default dtype, as torchvision computes it), kept per
    ratio: a pipeline asks for the same one for every image."""
    if not all(type(r) is float or type(r) is int for r in ratio):
        return t.log(t.tensor(ratio)).tolist()
    key = (tuple(ratio), t.get_default_dtype())
    got = _LOG_RATIOS.get(key)
    if got is None:
        if len(_LOG_RATIOS) > 64:
            _LOG_RATIOS.clear()
        got = _LOG_RATIOS[key] = t.log(t.tensor(ratio)).tolist()
    return list(got)


class RandomResizedCrop(Module):
    def __init__(self, size: Any, scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: Any = InterpolationMode.BILINEAR, antialias: bool | None = True) -> None:  # fmt: skip
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.interpolation = _check_interpolation(interpolation)
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img: Any, scale: Sequence[float], ratio: Sequence[float]) -> tuple[int, int, int, int]:
        t = _torch()
        _, height, width = F.get_dimensions(img)
        area = height * width
        # torchvision passes 0-dim tensors to uniform_, which reads them as doubles: the same draw from floats, and
        # no tensor comparison inside uniform_ (that one compiled JAX, and hung, in a DataLoader worker)
        log_lo, log_hi = _log_ratio(t, ratio)
        for _ in range(10):
            target_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = _exp(_uniform(log_lo, log_hi))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = _randint(0, height - h + 1)
                j = _randint(0, width - w + 1)
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w = width
            h = int(round(w / min(ratio)))
        elif in_ratio > max(ratio):
            h = height
            w = int(round(h * max(ratio)))
        else:
            w = width
            h = height
        i = (height - h) // 2
        j = (width - w) // 2
        return i, j, h, w

    def forward(self, img: Any) -> Any:
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}(size={self.size}"
        s += f", scale={tuple(round(v, 4) for v in self.scale)}"
        s += f", ratio={tuple(round(r, 4) for r in self.ratio)}"
        return s + f", interpolation={self.interpolation.value}, antialias={self.antialias})"


class FiveCrop(Module):
    def __init__(self, size: Any) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")

    def forward(self, img: Any) -> tuple:
        return F.five_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(Module):
    def __init__(self, size: Any, vertical_flip: bool = False) -> None:
        super().__init__()
        self.size = _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")
        self.vertical_flip = vertical_flip

    def forward(self, img: Any) -> tuple:
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


class LinearTransformation(Module):
    def __init__(self, transformation_matrix: Tensor, mean_vector: Tensor) -> None:
        super().__init__()
        if transformation_matrix.size(0) != transformation_matrix.size(1):
            raise ValueError(
                f"transformation_matrix should be square. Got {tuple(transformation_matrix.size())} rectangular matrix."
            )
        if mean_vector.size(0) != transformation_matrix.size(0):
            raise ValueError(
                f"mean_vector should have the same length {mean_vector.size(0)}"
                f" as any one of the dimensions of the transformation_matrix [{tuple(transformation_matrix.size())}]"
            )
        self.transformation_matrix = transformation_matrix
        self.mean_vector = mean_vector

    def forward(self, tensor: Tensor) -> Tensor:
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError(
                "Input tensor and transformation matrix have incompatible shape."
                f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != {self.transformation_matrix.shape[0]}"
            )
        flat_tensor = tensor.view(-1, n) - self.mean_vector
        transformation_matrix = self.transformation_matrix.to(flat_tensor.dtype)
        return _torch().mm(flat_tensor, transformation_matrix).view(shape)


class ColorJitter(Module):
    """Brightness, contrast, saturation and hue jitter in a random order (``randperm(4)``, then one uniform
    draw per enabled factor in that fixed b, c, s, h order)."""

    def __init__(self, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0, hue: Any = 0) -> None:
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def _check_input(self, value: Any, name: str, center: float = 1, bound: tuple = (0, float("inf")),
                     clip_first_on_zero: bool = True) -> list[float] | None:  # fmt: skip
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        if value[0] == value[1] == center:
            return None
        return tuple(value)

    @staticmethod
    def get_params(brightness: Any, contrast: Any, saturation: Any, hue: Any) -> tuple:
        t = _torch()
        fn_idx = t.randperm(4)
        b = None if brightness is None else float(_uniform(brightness[0], brightness[1]))
        c = None if contrast is None else float(_uniform(contrast[0], contrast[1]))
        s = None if saturation is None else float(_uniform(saturation[0], saturation[1]))
        h = None if hue is None else float(_uniform(hue[0], hue[1]))
        return fn_idx, b, c, s, h

    def forward(self, img: Any) -> Any:
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for fn_id in fn_idx.tolist():
            if fn_id == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif fn_id == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif fn_id == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif fn_id == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(brightness={self.brightness}, contrast={self.contrast}, "
            f"saturation={self.saturation}, hue={self.hue})"
        )


def _check_sequence_input(x: Any, name: str, req_sizes: Sequence[int]) -> None:
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join([str(s) for s in req_sizes])
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x: Any, name: str, req_sizes: Sequence[int] = (2,)) -> list[float]:
    if isinstance(x, numbers.Number):
        if x < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


def _tensor_fill(img: Any, fill: Any) -> Any:
    if isinstance(img, Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        return [float(f) for f in fill]
    return fill


class RandomRotation(Module):
    def __init__(self, degrees: Any, interpolation: Any = InterpolationMode.NEAREST, expand: bool = False,
                 center: Any = None, fill: Any = 0) -> None:  # fmt: skip
        super().__init__()
        self.interpolation = _check_interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.expand = expand
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees: list[float]) -> float:
        return float(_uniform(float(degrees[0]), float(degrees[1])))

    def forward(self, img: Any) -> Any:
        fill = _tensor_fill(img, self.fill)
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}(degrees={self.degrees}, interpolation={self.interpolation.value}"
        s += f", expand={self.expand}"
        if self.center is not None:
            s += f", center={self.center}"
        if self.fill is not None:
            s += f", fill={self.fill}"
        return s + ")"


class RandomAffine(Module):
    def __init__(self, degrees: Any, translate: Any = None, scale: Any = None, shear: Any = None,
                 interpolation: Any = InterpolationMode.NEAREST, fill: Any = 0, center: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.interpolation = _check_interpolation(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if translate is not None:
            _check_sequence_input(translate, "translate", req_sizes=(2,))
            for t in translate:
                if not (0.0 <= t <= 1.0):
                    raise ValueError("translation values should be between 0 and 1")
        self.translate = translate
        if scale is not None:
            _check_sequence_input(scale, "scale", req_sizes=(2,))
            for s in scale:
                if s <= 0:
                    raise ValueError("scale values should be positive")
        self.scale = scale
        self.shear = _setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None else shear
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees: list[float], translate: list[float] | None, scale_ranges: list[float] | None,
                   shears: list[float] | None, img_size: list[int]) -> tuple:  # fmt: skip
        angle = float(_uniform(float(degrees[0]), float(degrees[1])))
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(_uniform(-max_dx, max_dx)))
            ty = int(round(_uniform(-max_dy, max_dy)))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        if scale_ranges is not None:
            scale = float(_uniform(scale_ranges[0], scale_ranges[1]))
        else:
            scale = 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(_uniform(shears[0], shears[1]))
            if len(shears) == 4:
                shear_y = float(_uniform(shears[2], shears[3]))
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img: Any) -> Any:
        fill = _tensor_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        s += f", interpolation={self.interpolation.value}" if self.interpolation != InterpolationMode.NEAREST else ""
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class Grayscale(Module):
    def __init__(self, num_output_channels: int = 1) -> None:
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img: Any) -> Any:
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(Module):
    def __init__(self, p: float = 0.1) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        num_output_channels, _, _ = F.get_dimensions(img)
        r, p = _rand_one_vs(self.p)
        if r < p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomErasing(Module):
    def __init__(self, p: float = 0.5, scale: tuple[float, float] = (0.02, 0.33),
                 ratio: tuple[float, float] = (0.3, 3.3), value: Any = 0, inplace: bool = False) -> None:  # fmt: skip
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img: Tensor, scale: Sequence[float], ratio: Sequence[float],
                   value: list[float] | None = None) -> tuple:  # fmt: skip
        t = _torch()
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_lo, log_hi = _log_ratio(t, ratio)
        for _ in range(10):
            erase_area = area * _uniform(scale[0], scale[1])
            aspect_ratio = _exp(_uniform(log_lo, log_hi))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = t.empty([img_c, h, w], dtype=t.float32).normal_()
            else:
                v = t.tensor(value)[:, None, None]
            i = _randint(0, img_h - h + 1)
            j = _randint(0, img_w - w + 1)
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img

    def forward(self, img: Any) -> Any:
        r, p = _rand_one_vs(self.p)
        if r < p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, (list, tuple)):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError(
                    "If value is a sequence, it should have either a single value or "
                    f"{img.shape[-3]} (number of input channels)"
                )
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, ratio={self.ratio}, "
            f"value={self.value}, inplace={self.inplace})"
        )


class GaussianBlur(Module):
    def __init__(self, kernel_size: Any, sigma: Any = (0.1, 2.0)) -> None:
        super().__init__()
        self.kernel_size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
        for ks in self.kernel_size:
            if ks <= 0 or ks % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        return _uniform(sigma_min, sigma_max)

    def forward(self, img: Any) -> Any:
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


class _RandomP(Module):
    """Applies ``_apply`` with probability ``p`` (one ``torch.rand(1)`` draw)."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def _apply_to(self, img: Any) -> Any:
        raise NotImplementedError

    def forward(self, img: Any) -> Any:
        if _uniform(0.0, 1.0) < self.p:
            return self._apply_to(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomInvert(_RandomP):
    def _apply_to(self, img: Any) -> Any:
        return F.invert(img)


class RandomPosterize(_RandomP):
    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p)
        self.bits = bits

    def _apply_to(self, img: Any) -> Any:
        return F.posterize(img, self.bits)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(bits={self.bits},p={self.p})"


class RandomSolarize(_RandomP):
    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.threshold = threshold

    def _apply_to(self, img: Any) -> Any:
        return F.solarize(img, self.threshold)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(threshold={self.threshold},p={self.p})"


class RandomAdjustSharpness(_RandomP):
    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply_to(self, img: Any) -> Any:
        return F.adjust_sharpness(img, self.sharpness_factor)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(sharpness_factor={self.sharpness_factor},p={self.p})"


class RandomAutocontrast(_RandomP):
    def _apply_to(self, img: Any) -> Any:
        return F.autocontrast(img)


class RandomEqualize(_RandomP):
    def _apply_to(self, img: Any) -> Any:
        return F.equalize(img)
