"""torch.utils.tensorboard: SummaryWriter writing TensorBoard event files.

Like torch, this needs the optional ``tensorboard`` package (``pip install tensorboard``); importing
this module without it raises ``ModuleNotFoundError`` (an ``ImportError``), as torch's does.
"""

from __future__ import annotations

from ._writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
