"""torch.nn._reduction: re-exported from ``torchlike._ops.nn.reduction``, where the loss functions use it."""

from .._ops.nn.reduction import get_enum, legacy_get_enum, legacy_get_string, resolve  # noqa: F401
