"""DataLoader worker processes: the loop each worker runs, its seeding, and how results travel.

A worker fetches batches for the indices it is sent and puts them, pickled, on the shared result
queue; tensors travel as numpy arrays and become tensors again when the main process unpickles
them (``_host.rebuild``). Seeding follows torch: worker seed = base_seed + worker_id for
``random`` and torchlike's generator (so ``torch.initial_seed()`` returns it), and numpy gets
torch's ``_generate_state`` (numpy's SeedSequence of [worker_id, base_seed's two words, 0]).

Workers started with fork (Linux's default, as in torch) inherit JAX's runtime without its
threads: a JAX compile or computation there would hang. ``enter_fork_mode`` therefore switches the
worker to host mode: tensors made there (``torch.tensor``, ``from_numpy``, ``as_tensor``) hold numpy
arrays, reading and indexing tensors works through numpy, and any torchlike op raises a clear
error instead of hanging. Workers started with spawn/forkserver run a fresh torchlike on the CPU.
"""

from __future__ import annotations

import io
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from . import _host

MP_STATUS_CHECK_INTERVAL = 5.0  # torch: how often workers and the main process check on each other

_worker_info: WorkerInfo | None = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


def get_worker_info() -> WorkerInfo | None:
    """This worker's id, the number of workers, its seed and its copy of the dataset; None in the main process."""
    return _worker_info


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class KeyErrorMessage(str):
    """A str whose repr is itself (KeyError reprs its argument, which would mangle a traceback)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception and its formatted traceback, carried from a worker and re-raised in the main process."""

    def __init__(self, exc_info: Any = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self) -> None:
        msg: str = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # an exception type that takes other arguments
            raise RuntimeError(msg) from None
        raise exception


# --- pickling across processes -------------------------------------------------------------------


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _host.reduce_tensor(obj)
        return NotImplemented


def dumps(obj: Any) -> bytes:
    """Pickle ``obj`` with tensors as numpy arrays (no JAX involved)."""
    f = io.BytesIO()
    _Pickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return f.getvalue()


# --- fork mode ------------------------------------------------------------------------------------


def fork_error(what: str) -> RuntimeError:
    return RuntimeError(
        f"torchlike: {what} cannot run in a DataLoader worker process started with fork, because JAX's runtime "
        "does not survive fork. Code that runs in workers (Dataset, collate_fn, worker_init_fn) may create, "
        "index and read tensors and use numpy; for torchlike ops there, pass multiprocessing_context='spawn' "
        "to the DataLoader (workers then start fresh and run torchlike on the CPU)."
    )


def _refuse_kernel(op: Any, static: Any, cdt: Any, kernel: Any) -> Any:
    def refuse(*args: Any) -> Any:
        raise fork_error(f"torch.{op.name}")

    return refuse


def _refuse_apply_pure(name: str, *args: Any, **kwargs: Any) -> Any:
    raise fork_error(name)


def _refuse_compile(*args: Any, **kwargs: Any) -> Any:
    raise fork_error("a JAX computation")


def _host_data(self: Tensor) -> Any:
    return _host.host_array(self)


def enter_fork_mode() -> None:
    """Host mode for a forked worker (process-local patches; the worker never runs JAX again)."""
    from ..._core import device as _device
    from ..._core import tensor as T
    from ..._ops import creation, registry

    _host.IN_FORK_WORKER = True
    registry._kernel_wrappers.append(_refuse_kernel)
    registry.apply_pure = _refuse_apply_pure
    T.Tensor._data = _host_data
    creation._jnp_from_numpy = lambda arr, dt: arr.astype(dt.np, copy=True)
    original_from_numpy = T.from_numpy_shared

    def from_numpy_host(a: Any) -> Tensor:
        if isinstance(a, np.ndarray) and a.dtype in T._DTYPE_OF and all(s >= 0 and s % a.itemsize == 0
                                                                          for s in a.strides):  # fmt: skip
            return T.make(a, _device.CPU, T._DTYPE_OF[a.dtype])  # shares a's memory, as torch does
        return original_from_numpy(a)  # raises torch's error

    T.from_numpy_shared = from_numpy_host
    from jax._src import compiler  # a new compilation is the first thing that would hang

    for name in ("backend_compile_and_load", "backend_compile"):
        if hasattr(compiler, name):
            setattr(compiler, name, _refuse_compile)


# --- the worker loop ------------------------------------------------------------------------------


class _ManagerWatchdog:
    """Notices when the main process has died (the worker is then re-parented)."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _seed_worker(base_seed: int, worker_id: int) -> int:
    import torchlike

    seed = base_seed + worker_id
    random.seed(seed)
    torchlike.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]).generate_state(4))
    return seed


def worker_loop(fork: bool, payload: Any, index_queue: Any, data_queue: Any, done_event: Any, base_seed: int,
                worker_id: int, num_workers: int) -> None:  # fmt: skip
    """Run in each worker process: fetch what ``index_queue`` asks for, put results on ``data_queue``."""
    global _worker_info
    try:
        if fork:
            enter_fork_mode()
        else:
            payload = pickle.loads(payload)
        dataset_kind, dataset, auto_collation, collate_fn, drop_last, init_fn = payload
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        from ._fetch import create_fetcher

        where = f"in DataLoader worker process {worker_id}"
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=where)

        iteration_end = False
        watchdog = _ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):  # persistent workers: a new epoch
                data_queue.put((r, None))
                iteration_end = False
                fetcher = create_fetcher(dataset_kind, dataset, auto_collation, collate_fn, drop_last)
                continue
            if r is None:  # told to exit
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or an iterable dataset already ran out: ignore remaining tasks
            idx, index = r
            data: Any
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)  # type: ignore[union-attr]
                except StopIteration:
                    if dataset_kind != 1:
                        data = ExceptionWrapper(where=where)
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=where)
            try:
                message = dumps(data)
            except Exception:  # e.g. an unpicklable sample: report it rather than lose the batch
                message = dumps(ExceptionWrapper(where=where))
            data_queue.put((idx, message))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
