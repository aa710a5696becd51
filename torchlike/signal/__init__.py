"""torch.signal: window functions (``torchlike.signal.windows``)."""

from . import windows

__all__ = ["windows"]
