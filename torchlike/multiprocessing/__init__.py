"""torch.multiprocessing: the standard library's multiprocessing API, with tensors that cross
process boundaries through shared memory, ``spawn``/``start_processes``, and ``spawn`` as the
default start method (a forked child cannot run JAX; see ``_context``)."""

from __future__ import annotations

import multiprocessing as _mp

from . import _context
from ._context import Process
from ._reductions import init_reductions
from ._sharing import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from ._spawn import (
    ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn, start_processes,
)  # fmt: skip

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", *_mp.__all__]

globals().update(_context.api())  # the rest of multiprocessing's API, over the default context above
init_reductions()
