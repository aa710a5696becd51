"""torch.cpu.amp: deprecated alias of torch.amp.autocast('cpu')."""

from __future__ import annotations

import warnings
from typing import Any

from ..amp import autocast as _autocast


class autocast(_autocast):
    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn(
            "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.",
            FutureWarning,
            stacklevel=2,
        )
        from .._core import dtype as D

        super().__init__("cpu", enabled=enabled, dtype=D.bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)  # fmt: skip
