"""torch.cpu: the CPU device module (amp aliases)."""

from . import amp  # noqa: F401


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def synchronize(device=None) -> None:
    pass
