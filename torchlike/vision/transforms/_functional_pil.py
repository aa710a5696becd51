"""The PIL side of torchvision.transforms.functional: each function is the Pillow call torchvision makes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is the `vision` extra
        raise ImportError("torchlike.vision needs Pillow for PIL images: pip install 'torchlike[vision]'") from e
    return Image


def is_pil_image(img: Any) -> bool:
    import sys

    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(img, pil.Image)


def _check(img: Any) -> None:
    if not is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img: Any) -> list[int]:
    _check(img)
    channels = len(img.getbands()) if hasattr(img, "getbands") else img.channels
    width, height = img.size
    return [channels, height, width]


def get_image_size(img: Any) -> list[int]:
    _check(img)
    return list(img.size)


def get_image_num_channels(img: Any) -> int:
    _check(img)
    return len(img.getbands())


def hflip(img: Any) -> Any:
    _check(img)
    return img.transpose(_pil().Transpose.FLIP_LEFT_RIGHT)


def vflip(img: Any) -> Any:
    _check(img)
    return img.transpose(_pil().Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    from PIL import ImageEnhance

    _check(img)
    return ImageEnhance.Brightness(img).enhance(brightness_factor)


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    from PIL import ImageEnhance

    _check(img)
    return ImageEnhance.Contrast(img).enhance(contrast_factor)


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    from PIL import ImageEnhance

    _check(img)
    return ImageEnhance.Color(img).enhance(saturation_factor)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    _check(img)
    input_mode = img.mode
    if input_mode in {"L", "1", "I", "F"}:
        return img
    Image = _pil()
    h, s, v = img.convert("HSV").split()
    shift = np.uint8(int(hue_factor * 255) % 256)  # torch: numpy's uint8 wrap-around of the hue shift
    np_h = np.array(h, dtype=np.uint8) + shift
    h = Image.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(input_mode)


def adjust_gamma(img: Any, gamma: float, gain: float = 1.0) -> Any:
    _check(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    input_mode = img.mode
    img = img.convert("RGB")
    gamma_map = [int((255 + 1 - 1e-3) * gain * pow(ele / 255.0, gamma)) for ele in range(256)] * 3
    img = img.point(gamma_map)
    return img.convert(input_mode)


def _parse_fill(fill: Any, img: Any, name: str = "fillcolor") -> dict[str, Any]:
    num_channels = get_image_num_channels(img)
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            msg = "The number of elements in 'fill' does not match the number of channels of the image ({} != {})"
            raise ValueError(msg.format(len(fill), num_channels))
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def _ltrb(padding: Any) -> list[int]:
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return list(padding)


def pad(img: Any, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Any:
    from PIL import ImageOps

    _check(img)
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (int, float, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, list):
        padding = tuple(padding)
    if isinstance(padding, tuple) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _ltrb(padding)
    cropping = [max(-x, 0) for x in p]
    if any(cropping):
        cl, ct, cr, cb = cropping
        img = img.crop((cl, ct, img.width - cr, img.height - cb))
    left, top, right, bottom = (max(x, 0) for x in p)
    Image = _pil()
    if padding_mode == "constant":
        opts = _parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=(left, top, right, bottom), **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=(left, top, right, bottom), **opts)
    palette = img.getpalette() if img.mode == "P" else None
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    out = Image.fromarray(np.pad(arr, widths, padding_mode))
    if palette is not None:
        out.putpalette(palette)
    return out


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    _check(img)
    return img.crop((left, top, left + width, top + height))


def resize(img: Any, size: Sequence[int], interpolation: int) -> Any:
    _check(img)
    if not (isinstance(size, list) and len(size) == 2):
        raise TypeError(f"Got inappropriate size arg: {size}")
    return img.resize(tuple(size[::-1]), interpolation)


def affine(img: Any, matrix: Sequence[float], interpolation: int = 0, fill: Any = None) -> Any:
    _check(img)
    opts = _parse_fill(fill, img)
    return img.transform(img.size, _pil().Transform.AFFINE, matrix, interpolation, **opts)


def rotate(img: Any, angle: float, interpolation: int = 0, expand: bool = False, center: Any = None,
           fill: Any = None) -> Any:  # fmt: skip
    _check(img)
    opts = _parse_fill(fill, img)
    return img.rotate(angle, interpolation, expand, center, **opts)


def perspective(img: Any, perspective_coeffs: Sequence[float], interpolation: int = 2, fill: Any = None) -> Any:
    _check(img)
    opts = _parse_fill(fill, img)
    return img.transform(img.size, _pil().Transform.PERSPECTIVE, perspective_coeffs, interpolation, **opts)


def to_grayscale(img: Any, num_output_channels: int) -> Any:
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        gray = np.array(img.convert("L"), dtype=np.uint8)
        return _pil().fromarray(np.dstack([gray, gray, gray]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def invert(img: Any) -> Any:
    from PIL import ImageOps

    _check(img)
    return ImageOps.invert(img)


def posterize(img: Any, bits: int) -> Any:
    from PIL import ImageOps

    _check(img)
    return ImageOps.posterize(img, bits)


def solarize(img: Any, threshold: int) -> Any:
    from PIL import ImageOps

    _check(img)
    return ImageOps.solarize(img, threshold)


def adjust_sharpness(img: Any, sharpness_factor: float) -> Any:
    from PIL import ImageEnhance

    _check(img)
    return ImageEnhance.Sharpness(img).enhance(sharpness_factor)


def autocontrast(img: Any) -> Any:
    from PIL import ImageOps

    _check(img)
    return ImageOps.autocontrast(img)


def equalize(img: Any) -> Any:
    from PIL import ImageOps

    _check(img)
    return ImageOps.equalize(img)
