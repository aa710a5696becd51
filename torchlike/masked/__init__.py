"""torch.masked: reductions and normalisations under a boolean ``mask`` (``torchlike.masked._ops``)."""

from ._ops import (
    amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logaddexp, logsumexp, mean, median, norm, normalize,
    prod, softmax, softmin, std, sum, var,
)  # fmt: skip

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
    "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var",
]  # fmt: skip


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
