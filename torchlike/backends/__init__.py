"""torch.backends: flags torch scripts set. cudnn flags are accepted; matmul precision is real."""

from __future__ import annotations

from types import SimpleNamespace

from . import cuda, cudnn  # noqa: F401

mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
mkldnn = SimpleNamespace(is_available=lambda: False, enabled=False)
openmp = SimpleNamespace(is_available=lambda: True)
