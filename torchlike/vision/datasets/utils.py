"""torchvision.datasets.utils."""

from ._vision import (
    calculate_md5,
    check_integrity,
    check_md5,
    iterable_to_str,
    verify_str_arg,
)

__all__ = ["calculate_md5", "check_md5", "check_integrity", "iterable_to_str", "verify_str_arg"]  # fmt: skip
