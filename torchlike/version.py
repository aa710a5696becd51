"""torch.version: what this build is."""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "2.13.0+torchlike0.1"  # torch's API version that torchlike follows, and its own
debug = False
git_version = "Unknown"  # torch's build commit: torchlike is not a torch build
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
cuda: str | None = None


def _cuda_version() -> str | None:
    """The CUDA version of JAX's GPU backend ('12.8'), None without one (as a CPU build of torch)."""
    from ._core import device as _device

    if not _device.cuda_available():
        return None
    gpu = _device._gpus()[0]
    text = str(getattr(gpu.client, "platform_version", ""))  # e.g. 'cuda 12080'
    digits = text.split()[-1] if text.split() else ""
    if not digits.isdigit():
        return None
    n = int(digits)
    return f"{n // 1000}.{n % 1000 // 10}"


cuda = _cuda_version()
