"""torchvision.datasets.folder."""

from ._folder import (
    IMG_EXTENSIONS,
    DatasetFolder,
    ImageFolder,
    default_loader,
    find_classes,
    has_file_allowed_extension,
    is_image_file,
    make_dataset,
    pil_loader,
)

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "default_loader", "pil_loader", "find_classes", "make_dataset", "has_file_allowed_extension", "is_image_file"]  # fmt: skip
