"""Tensors as numpy arrays on the host: how collation and worker processes read and make tensors.

DataLoader workers must not run JAX (a forked child inherits JAX's runtime without its threads, so
any compile or execution hangs), so workers read tensors through their buffers with numpy, stack
with numpy, and send numpy arrays; the main process wraps them as host-backed tensors (``T.make_host``:
the first kernel that reads one moves it into JAX).
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from ..._core import device as _device
from ..._core import dtype as D
from ..._core import tensor as T
from ..._core.tensor import Tensor

# True inside a worker process started with fork (set by _worker): tensors made there keep numpy arrays.
IN_FORK_WORKER = False


def host_array(t: Tensor) -> np.ndarray:
    """The values of a CPU tensor as a numpy array (a view where possible), without running JAX.

    Reads the buffer the way ``Tensor.numpy()`` does, but leaves the buffer untouched.
    """
    buf = t._buf
    if buf.np is not None:  # the tensor's own memory: a read-only window on it
        base = buf.np.view()
        base.flags.writeable = False
    else:
        base = np.asarray(buf.array)
    view = t._view
    if view is None:
        return base
    flat = base.reshape(-1)
    return np.lib.stride_tricks.as_strided(
        flat[view.offset :], shape=tuple(view.shape), strides=tuple(s * flat.itemsize for s in view.stride),
        writeable=False,
    )  # fmt: skip


def is_host_readable(t: Tensor) -> bool:
    """Whether ``t`` can go through numpy without changing the result: on the CPU, no autograd history."""
    return t._buf.device.type == "cpu" and not t._rg


def wrap(array: np.ndarray, dtype: D.dtype | None = None) -> Tensor:
    """A new CPU tensor over ``array``, which the caller hands over (nobody else may write to it)."""
    if IN_FORK_WORKER:
        return T.make(array, _device.CPU, dtype)
    return T.make_host(array, dtype)


def rebuild(array: np.ndarray, dtype: D.dtype, requires_grad: bool) -> Tensor:
    """Unpickling a tensor sent by a worker (see ``_worker.dumps``)."""
    t = wrap(array, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def reduce_tensor(t: Tensor) -> tuple:
    """How a tensor crosses a process boundary: its values as a numpy array."""
    if t._rg and t._node is not None:
        # torch: autograd graphs do not cross processes
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    arr = host_array(t)
    return rebuild, (arr if arr.flags.c_contiguous else arr.copy(), t._dtype, t._rg)


def wait_for_pending(obj: Any, depth: int = 3) -> None:
    """Wait for JAX computations still producing tensors reachable from ``obj`` (a dataset).

    A forked worker that reads a buffer whose computation has not finished would wait forever.
    """
    if depth < 0:
        return
    if isinstance(obj, Tensor):
        arr = obj._buf.array
        if isinstance(arr, jax.Array):
            arr.block_until_ready()
        return
    if isinstance(obj, (list, tuple)):
        items: Any = obj
    elif isinstance(obj, dict):
        items = obj.values()
    else:
        items = getattr(obj, "__dict__", {}).values()
    for item in list(items)[:1000]:
        wait_for_pending(item, depth - 1)
