"""torchvision.io image functions, decoded and encoded with Pillow (torchvision uses libpng/libjpeg: PNG pixels
are identical, a colour PNG read as GRAY takes libpng's arithmetic; JPEG pixels come from Pillow's libjpeg and can differ from torchvision's by a level; encoded
bytes are Pillow's)."""

from __future__ import annotations

import io
import os
from enum import Enum
from typing import Any

import numpy as np

from .._core.tensor import Tensor


class ImageReadMode(Enum):
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODE = {ImageReadMode.GRAY: "L", ImageReadMode.GRAY_ALPHA: "LA", ImageReadMode.RGB: "RGB",
             ImageReadMode.RGB_ALPHA: "RGBA"}  # fmt: skip


def _torch() -> Any:
    import torchlike

    return torchlike


def read_file(path: str) -> Tensor:
    """The bytes of a file as a 1-D uint8 tensor."""
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    return _torch().from_numpy(np.frombuffer(bytearray(data), dtype=np.uint8))


def write_file(filename: str, data: Tensor) -> None:
    with open(os.fspath(filename), "wb") as f:
        f.write(data.numpy().tobytes())


def decode_image(input: Tensor | str, mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
                 apply_exif_orientation: bool = False) -> Tensor:  # fmt: skip
    """A PNG/JPEG/... (bytes tensor or path) as a (C, H, W) uint8 tensor, channels per ``mode``."""
    from PIL import Image, ImageOps

    if not isinstance(input, Tensor):
        input = read_file(str(input))
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if input.dtype != _torch().uint8 or input.ndim != 1:
        raise RuntimeError("Expected a 1-D uint8 tensor of encoded image bytes")
    img = Image.open(io.BytesIO(input.numpy().tobytes()))
    is_png = img.format == "PNG"
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    if mode == ImageReadMode.UNCHANGED:
        if img.mode == "P":
            img = img.convert("RGBA" if "transparency" in img.info else "RGB")
        elif img.mode not in ("L", "LA", "RGB", "RGBA"):
            img = img.convert("RGB")
    elif mode in (ImageReadMode.GRAY, ImageReadMode.GRAY_ALPHA) and is_png and img.mode in _COLOUR:
        return _torch().from_numpy(_png_gray(img, keep_alpha=mode == ImageReadMode.GRAY_ALPHA))
    else:
        img = img.convert(_PIL_MODE[mode])
    arr = np.asarray(img)
    arr = arr[:, :, None] if arr.ndim == 2 else arr
    return _torch().from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


_COLOUR = ("RGB", "RGBA", "P")
# torchvision's decode_png calls png_set_rgb_to_gray(png, 1, 0.2989, 0.587): libpng stores the weights in 1/32768
# (blue takes the rest) and, with no gamma to correct, truncates the weighted sum (Pillow's "L" rounds)
_PNG_GRAY_WEIGHTS = (29890 * 32768 // 100000, 58700 * 32768 // 100000)


def _png_gray(img: Any, keep_alpha: bool) -> np.ndarray:
    """A colour PNG as libpng's rgb_to_gray gives it to torchvision, (1 or 2, H, W) uint8."""
    rgba = np.asarray(img.convert("RGBA")).astype(np.uint32)
    red, green = _PNG_GRAY_WEIGHTS
    weights = np.array([red, green, 32768 - red - green], dtype=np.uint32)
    gray = ((rgba[:, :, :3] @ weights) >> 15).astype(np.uint8)
    planes = [gray, rgba[:, :, 3].astype(np.uint8)] if keep_alpha else [gray]
    return np.ascontiguousarray(np.stack(planes))


def read_image(path: str, mode: ImageReadMode | str = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Tensor:  # fmt: skip
    return decode_image(read_file(path), mode, apply_exif_orientation=apply_exif_orientation)


def _encode(input: Tensor, fmt: str, **options: Any) -> Tensor:
    from PIL import Image

    if input.dtype != _torch().uint8:
        raise RuntimeError(f"Input tensor dtype should be uint8, got {input.dtype}")
    if input.ndim != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {input.shape[0]}")
    arr = input.permute(1, 2, 0).contiguous().numpy()
    img = Image.fromarray(arr[:, :, 0] if arr.shape[2] == 1 else arr)
    buf = io.BytesIO()
    img.save(buf, format=fmt, **options)
    return _torch().from_numpy(np.frombuffer(bytearray(buf.getvalue()), dtype=np.uint8))


def encode_png(input: Tensor, compression_level: int = 6) -> Tensor:
    if compression_level < 0 or compression_level > 9:
        raise ValueError("Compression level should be between 0 and 9")
    return _encode(input, "PNG", compress_level=compression_level)


def write_png(input: Tensor, filename: str, compression_level: int = 6) -> None:
    write_file(filename, encode_png(input, compression_level))


def encode_jpeg(input: Tensor, quality: int = 75) -> Tensor:
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    return _encode(input, "JPEG", quality=quality)


def write_jpeg(input: Tensor, filename: str, quality: int = 75) -> None:
    write_file(filename, encode_jpeg(input, quality))


def decode_png(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> Tensor:  # fmt: skip
    return decode_image(input, mode, apply_exif_orientation)


def decode_jpeg(input: Tensor, mode: ImageReadMode = ImageReadMode.UNCHANGED,
                apply_exif_orientation: bool = False) -> Tensor:  # fmt: skip
    return decode_image(input, mode, apply_exif_orientation)
