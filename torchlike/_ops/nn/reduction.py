"""torch.nn._reduction (re-exported there): reduction names and the deprecated size_average/reduce arguments."""

from __future__ import annotations

import warnings

_NAMES = {0: "none", 1: "mean", 2: "sum"}


def get_enum(reduction: str) -> int:
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.", stacklevel=2
        )
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> str:
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(
            f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
            stacklevel=3,
        )
    return ret


def legacy_get_enum(size_average: bool | None, reduce: bool | None, emit_warning: bool = True) -> int:
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))


def resolve(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """The reduction a loss function uses: the legacy pair when given (with torch's warning), else ``reduction``
    (validated, 'elementwise_mean' mapped to 'mean')."""
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return _NAMES[get_enum(reduction)]
