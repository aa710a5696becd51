"""torchvision.io (images)."""

from ._io import (
    ImageReadMode,
    decode_image,
    decode_jpeg,
    decode_png,
    encode_jpeg,
    encode_png,
    read_file,
    read_image,
    write_file,
    write_jpeg,
    write_png,
)

__all__ = [
    "ImageReadMode", "decode_image", "decode_jpeg", "decode_png", "encode_jpeg", "encode_png", "read_file",
    "read_image", "write_file", "write_jpeg", "write_png",
]  # fmt: skip
