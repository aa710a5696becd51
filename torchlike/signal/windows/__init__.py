"""torch.signal.windows: re-exports; the implementations live in ``_windows``."""

from ._windows import (
    bartlett, blackman, cosine, exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser,
    nuttall,
)  # fmt: skip

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]  # fmt: skip
