"""torch.multiprocessing: the standard library's multiprocessing API, with tensors that cross
process boundaries through shared memory, ``spawn``/``start_processes``, and ``spawn`` as the
default start method (a forked child cannot run JAX; see ``_context``)."""

from __future__ import annotations

import multiprocessing as _mp

from ._context import Process, default_context as _default
from ._reductions import init_reductions
from ._sharing import get_all_sharing_strategies, get_sharing_strategy, set_sharing_strategy
from ._spawn import (
    ProcessContext, ProcessExitedException, ProcessRaisedException, SpawnContext, spawn, start_processes,
)  # fmt: skip

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", *_mp.__all__]

# The rest of multiprocessing's API: the context methods bound to this module's default context, the
# module functions and exceptions as they are.
for _name in _mp.__all__:
    if _name != "Process":
        _bound = getattr(_default, _name, None)
        globals()[_name] = _bound if callable(_bound) and hasattr(_mp.context.BaseContext, _name) else getattr(_mp, _name)
get_all_start_methods = _default.get_all_start_methods

init_reductions()
