"""torch.backends.cudnn: accepted for compatibility (XLA picks its own convolution algorithms)."""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    from .. import cuda

    return cuda.is_available()


def version() -> int | None:
    return None
