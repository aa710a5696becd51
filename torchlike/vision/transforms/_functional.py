"""torchvision.transforms.functional: each function takes a PIL image or a (..., C, H, W) tensor and
dispatches to the PIL or tensor implementation, with torchvision's argument checks and errors.

to_tensor and normalize of CPU tensors without autograd history are computed with numpy (the same
IEEE float operations torch runs), so they cost no JAX call per sample and work inside DataLoader
worker processes.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ...utils.data import _host
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t


class InterpolationMode(Enum):
    """Interpolation modes (torchvision's names and values)."""

    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interpolation_modes_from_int(i: int) -> InterpolationMode:
    inverse = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR, 3: InterpolationMode.BICUBIC,
               4: InterpolationMode.BOX, 5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}  # fmt: skip
    return inverse[i]


pil_modes_mapping = {
    InterpolationMode.NEAREST: 0,
    InterpolationMode.BILINEAR: 2,
    InterpolationMode.BICUBIC: 3,
    InterpolationMode.NEAREST_EXACT: 0,
    InterpolationMode.BOX: 4,
    InterpolationMode.HAMMING: 5,
    InterpolationMode.LANCZOS: 1,
}


def _torch() -> Any:
    import torchlike

    return torchlike


def _is_pil_image(img: Any) -> bool:
    return F_pil.is_pil_image(img)


def _interp(interpolation: Any) -> InterpolationMode:
    if isinstance(interpolation, int):
        return _interpolation_modes_from_int(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError(
            "Argument interpolation should be a InterpolationMode or a corresponding Pillow integer constant"
        )
    return interpolation


def get_dimensions(img: Any) -> list[int]:
    """[channels, height, width] of an image."""
    if isinstance(img, Tensor):
        return F_t.get_dimensions(img)
    return F_pil.get_dimensions(img)


def get_image_size(img: Any) -> list[int]:
    """[width, height] of an image."""
    if isinstance(img, Tensor):
        return F_t.get_image_size(img)
    return F_pil.get_image_size(img)


def get_image_num_channels(img: Any) -> int:
    if isinstance(img, Tensor):
        return F_t.get_image_num_channels(img)
    return F_pil.get_image_num_channels(img)


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
    chw = np.ascontiguousarray(arr.reshape(pic.size[1], pic.size[0], len(pic.getbands())).transpose((2, 0, 1)))
    if chw.dtype == np.uint8:
        return _host.wrap(chw.astype(float_dt.np) / float_dt.np.type(255), float_dt)
    return t.from_numpy(chw)


def pil_to_tensor(pic: Any) -> Tensor:
    """A PIL image as a CHW tensor of its own dtype (uint8 for 8-bit modes), values unscaled."""
    if not _is_pil_image(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    t = _torch()
    arr = np.array(pic, copy=True)
    img = t.as_tensor(arr).view(pic.size[1], pic.size[0], F_pil.get_image_num_channels(pic))
    img = img.permute((2, 0, 1))
    if pic.mode == "1":
        img = 255 * img
    return img


def convert_image_dtype(image: Tensor, dtype: Any = None) -> Tensor:
    """A tensor image in ``dtype``, values rescaled between the dtypes' ranges."""
    if dtype is None:
        dtype = _torch().float
    if not isinstance(image, Tensor):
        raise TypeError("Input img should be Tensor Image")
    return F_t.convert_image_dtype(image, dtype)


def to_pil_image(pic: Any, mode: str | None = None) -> Any:
    """A CHW tensor or HWC ndarray as a PIL image (float data is scaled by 255 unless ``mode='F'``)."""
    from PIL import Image

    if isinstance(pic, Tensor):
        if pic.ndim == 3:
            pic = pic.permute((1, 2, 0))
        pic = pic.detach().cpu().numpy()
    elif not isinstance(pic, np.ndarray):
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if pic.ndim == 2:
        pic = np.expand_dims(pic, 2)
    if pic.ndim != 3:
        raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
    if pic.shape[-1] > 4:
        raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-1]} channels.")
    npimg = pic
    if np.issubdtype(npimg.dtype, np.floating) and mode != "F":
        npimg = (npimg * 255).astype(np.uint8)
    if npimg.shape[2] == 1:
        expected_mode = None
        npimg = npimg[:, :, 0]
        if npimg.dtype == np.uint8:
            expected_mode = "L"
        elif npimg.dtype == np.int16:
            expected_mode = "I;16" if sys.byteorder == "little" else "I;16B"
        elif npimg.dtype == np.int32:
            expected_mode = "I"
        elif npimg.dtype == np.float32:
            expected_mode = "F"
        if mode is not None and mode != expected_mode:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. Should be {expected_mode}")
        mode = expected_mode
    elif npimg.shape[2] == 2:
        permitted = ["LA"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 2D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "LA"
    elif npimg.shape[2] == 4:
        permitted = ["RGBA", "CMYK", "RGBX"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 4D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGBA"
    else:
        permitted = ["RGB", "YCbCr", "HSV"]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for 3D inputs")
        if mode is None and npimg.dtype == np.uint8:
            mode = "RGB"
    if mode is None:
        raise TypeError(f"Input type {npimg.dtype} is not supported")
    buf = np.ascontiguousarray(npimg).tobytes()
    return Image.frombuffer(mode, (npimg.shape[1], npimg.shape[0]), buf, "raw", mode, 0, 1)


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


_NORMALIZE: dict = {}


def _normalize_arrays(mean: Any, std: Any, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """``mean`` and ``std`` as (C, 1, 1) arrays of ``dtype`` (kept per value: a pipeline passes the same ones for
    every image), with torch's error for a std that is zero in that dtype."""
    key = None
    if type(mean) in (tuple, list) and type(std) in (tuple, list):
        key = (tuple(mean), tuple(std), dtype)
        if not all(type(v) is float or type(v) is int for v in key[0] + key[1]):
            key = None
    got = None if key is None else _NORMALIZE.get(key)
    if got is not None:
        return got
    m = np.asarray(mean).astype(dtype.np)
    s = np.asarray(std).astype(dtype.np)
    if (s == 0).any():
        raise ValueError(f"std evaluated to zero after conversion to {dtype}, leading to division by zero.")
    m = m.reshape(-1, 1, 1) if m.ndim == 1 else m
    s = s.reshape(-1, 1, 1) if s.ndim == 1 else s
    if key is not None:
        if len(_NORMALIZE) > 64:
            _NORMALIZE.clear()
        m.setflags(write=False)
        s.setflags(write=False)
        _NORMALIZE[key] = (m, s)
    return m, s


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
        m, s = _normalize_arrays(mean, std, dtype)
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


def _compute_resized_output_size(image_size: tuple[int, int], size: list[int] | None,
                                 max_size: int | None = None) -> list[int]:  # fmt: skip
    h, w = image_size
    if size is None or len(size) == 1:
        short, long = (w, h) if w <= h else (h, w)
        if size is None:
            if max_size is None:
                raise ValueError("If size is None, then max_size must be an integer")
            new_long = max_size
            new_short = int(max_size * short / long)
        else:
            requested_new_short = size[0]
            new_short, new_long = requested_new_short, int(requested_new_short * long / short)
            if max_size is not None:
                if max_size <= requested_new_short:
                    raise ValueError(
                        f"max_size = {max_size} must be strictly greater than the requested "
                        f"size for the smaller edge size = {size}"
                    )
                if new_long > max_size:
                    new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    else:
        new_w, new_h = size[1], size[0]
    return [new_h, new_w]


def resize(img: Any, size: Any, interpolation: Any = InterpolationMode.BILINEAR, max_size: int | None = None,
           antialias: bool | None = True) -> Any:  # fmt: skip
    """Resize to ``size`` ((h, w), or the smaller edge when an int / 1-sequence); tensors antialias as torch."""
    interpolation = _interp(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError(
                f"Size must be an int or a 1 or 2 element tuple/list, not a {len(size)} element tuple/list"
            )
        if max_size is not None and len(size) != 1:
            raise ValueError(
                "max_size should only be passed if size specifies the length of the smaller edge, "
                "i.e. size should be an int or a sequence of length 1 in torchscript mode."
            )
    _, image_height, image_width = get_dimensions(img)
    if isinstance(size, int):
        size = [size]
    output_size = _compute_resized_output_size((image_height, image_width), size, max_size)
    if [image_height, image_width] == output_size:
        return img
    if not isinstance(img, Tensor):
        if antialias is False:
            warnings.warn("Anti-alias option is always applied for PIL Image input. Argument antialias is ignored.")
        return F_pil.resize(img, size=output_size, interpolation=pil_modes_mapping[interpolation])
    return F_t.resize(img, size=output_size, interpolation=interpolation.value, antialias=antialias)


def pad(img: Any, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Any:
    """Pad each border (int, (lr, tb) or (l, t, r, b)); modes constant, edge, reflect, symmetric."""
    if not isinstance(img, Tensor):
        return F_pil.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)
    return F_t.pad(img, padding=padding, fill=fill, padding_mode=padding_mode)


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The box at (top, left) of size (height, width); tensors are zero-padded where it leaves the image."""
    if not isinstance(img, Tensor):
        return F_pil.crop(img, top, left, height, width)
    return F_t.crop(img, top, left, height, width)


def center_crop(img: Any, output_size: Any) -> Any:
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img: Any, top: int, left: int, height: int, width: int, size: list[int],
                 interpolation: Any = InterpolationMode.BILINEAR, antialias: bool | None = True) -> Any:  # fmt: skip
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def hflip(img: Any) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.hflip(img)
    return F_t.hflip(img)


def vflip(img: Any) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.vflip(img)
    return F_t.vflip(img)


def five_crop(img: Any, size: Any) -> tuple:
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        msg = "Requested crop size {} is bigger than input size {}"
        raise ValueError(msg.format(size, (image_height, image_width)))
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height, crop_width)
    center = center_crop(img, [crop_height, crop_width])
    return tl, tr, bl, br, center


def ten_crop(img: Any, size: Any, vertical_flip: bool = False) -> tuple:
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    first_five = five_crop(img, size)
    img = vflip(img) if vertical_flip else hflip(img)
    return first_five + five_crop(img, size)


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_brightness(img, brightness_factor)
    return F_t.adjust_brightness(img, brightness_factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_contrast(img, contrast_factor)
    return F_t.adjust_contrast(img, contrast_factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_saturation(img, saturation_factor)
    return F_t.adjust_saturation(img, saturation_factor)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_hue(img, hue_factor)
    return F_t.adjust_hue(img, hue_factor)


def adjust_gamma(img: Any, gamma: float, gain: float = 1) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_gamma(img, gamma, gain)
    return F_t.adjust_gamma(img, gamma, gain)


def _get_inverse_affine_matrix(center: list[float], angle: float, translate: list[float], scale: float,
                               shear: list[float], inverted: bool = True) -> list[float]:  # fmt: skip
    rot = math.radians(angle)
    sx = math.radians(shear[0])
    sy = math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    if inverted:
        matrix = [d, -b, 0.0, -c, a, 0.0]
        matrix = [x / scale for x in matrix]
        matrix[2] += matrix[0] * (-cx - tx) + matrix[1] * (-cy - ty)
        matrix[5] += matrix[3] * (-cx - tx) + matrix[4] * (-cy - ty)
        matrix[2] += cx
        matrix[5] += cy
    else:
        matrix = [a, b, 0.0, c, d, 0.0]
        matrix = [x * scale for x in matrix]
        matrix[2] += matrix[0] * (-cx) + matrix[1] * (-cy)
        matrix[5] += matrix[3] * (-cx) + matrix[4] * (-cy)
        matrix[2] += cx + tx
        matrix[5] += cy + ty
    return matrix


def rotate(img: Any, angle: float, interpolation: Any = InterpolationMode.NEAREST, expand: bool = False,
           center: list[int] | None = None, fill: Any = None) -> Any:  # fmt: skip
    """Rotate counter-clockwise by ``angle`` degrees about ``center`` (the image centre by default)."""
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not isinstance(img, Tensor):
        return F_pil.rotate(img, angle=angle, interpolation=pil_modes_mapping[interpolation], expand=expand,
                            center=center, fill=fill)  # fmt: skip
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    # torch: rotate and affine turn opposite ways, so rotate passes -angle
    matrix = _get_inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.rotate(img, matrix=matrix, interpolation=interpolation.value, expand=expand, fill=fill)


def affine(img: Any, angle: float, translate: list[int], scale: float, shear: Any,
           interpolation: Any = InterpolationMode.NEAREST, fill: Any = None,
           center: list[int] | None = None) -> Any:  # fmt: skip
    """Rotation, translation, scale and shear about the image centre (or ``center``)."""
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)):
        raise TypeError("Argument translate should be a sequence")
    if len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if not isinstance(shear, (numbers.Number, list, tuple)):
        raise TypeError("Shear should be either a single value or a sequence of two values")
    if isinstance(angle, int):
        angle = float(angle)
    if isinstance(translate, tuple):
        translate = list(translate)
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    if isinstance(shear, tuple):
        shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError(f"Shear should be a sequence containing two values. Got {shear}")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    _, height, width = get_dimensions(img)
    if not isinstance(img, Tensor):
        if center is None:
            center = [width * 0.5, height * 0.5]
        matrix = _get_inverse_affine_matrix(center, angle, translate, scale, shear)
        return F_pil.affine(img, matrix=matrix, interpolation=pil_modes_mapping[interpolation], fill=fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    translate_f = [1.0 * t for t in translate]
    matrix = _get_inverse_affine_matrix(center_f, angle, translate_f, scale, shear)
    return F_t.affine(img, matrix=matrix, interpolation=interpolation.value, fill=fill)


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    if _is_pil_image(img):
        return F_pil.to_grayscale(img, num_output_channels)
    raise TypeError("Input should be PIL Image")


def rgb_to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.to_grayscale(img, num_output_channels)
    return F_t.rgb_to_grayscale(img, num_output_channels)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    """Set the (i, j, h, w) box of a tensor image to ``v``."""
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace=inplace)


def gaussian_blur(img: Any, kernel_size: Any, sigma: Any = None) -> Any:
    """Blur with a (kx, ky) gaussian kernel; PIL images are blurred as uint8 tensors, as torchvision does."""
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError(f"kernel_size should be int or a sequence of integers. Got {type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError(f"If kernel_size is a sequence its length should be 2. Got {len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got {kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if sigma is not None and not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    t_img = img
    if not isinstance(img, Tensor):
        if not _is_pil_image(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        t_img = pil_to_tensor(img)
    output = F_t.gaussian_blur(t_img, kernel_size, sigma)
    if not isinstance(img, Tensor):
        output = to_pil_image(output, mode=img.mode)
    return output


def invert(img: Any) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.invert(img)
    return F_t.invert(img)


def posterize(img: Any, bits: int) -> Any:
    if not (0 <= bits <= 8):
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    if not isinstance(img, Tensor):
        return F_pil.posterize(img, bits)
    return F_t.posterize(img, bits)


def solarize(img: Any, threshold: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.solarize(img, threshold)
    return F_t.solarize(img, threshold)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.adjust_sharpness(img, sharpness_factor)
    return F_t.adjust_sharpness(img, sharpness_factor)


def autocontrast(img: Any) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.autocontrast(img)
    return F_t.autocontrast(img)


def equalize(img: Any) -> Any:
    if not isinstance(img, Tensor):
        return F_pil.equalize(img)
    return F_t.equalize(img)
