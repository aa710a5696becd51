"""torch.mps: torchlike has no MPS backend; the queries scripts make before choosing a device answer so."""

from __future__ import annotations

__all__ = ["is_available", "device_count", "manual_seed"]


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def manual_seed(seed: int) -> None:
    """Does nothing without an MPS device, as in torch."""


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
