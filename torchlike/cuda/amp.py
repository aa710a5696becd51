"""torch.cuda.amp: deprecated aliases of torch.amp for 'cuda'."""

from __future__ import annotations

import warnings
from typing import Any

from ..amp import GradScaler as _GradScaler
from ..amp import autocast as _autocast
from ..amp.autocast_mode import custom_bwd, custom_fwd  # noqa: F401


class autocast(_autocast):
    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` "
            "instead.",
            FutureWarning,
            stacklevel=2,
        )
        from .._core import dtype as D

        super().__init__("cuda", enabled=enabled, dtype=D.float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)  # fmt: skip


class GradScaler(_GradScaler):
    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        warnings.warn(
            "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` "
            "instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
