"""torch.utils: submodules load on first use (``torchlike.utils.data``, ...), so adding one costs nothing here."""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        from ..compat._names import missing_attribute_error

        raise missing_attribute_error(__name__, name) from None
