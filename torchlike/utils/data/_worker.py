"""DataLoader worker processes: the loop each worker runs, its seeding, and how results travel.

A worker fetches batches for the indices it is sent and puts them, pickled, on the shared result
queue; tensors travel as numpy arrays and become tensors again when the main process unpickles
them (``_host.rebuild``). Seeding follows torch: worker seed = base_seed + worker_id for
``random`` and torchlike's generator (so ``torch.initial_seed()`` returns it), and numpy gets
torch's ``_generate_state`` (numpy's SeedSequence of [worker_id, base_seed's two words, 0]).

Workers started with fork (Linux's default, as in torch) inherit JAX's runtime without its
threads: a JAX compile or computation there would hang. ``enter_fork_mode`` therefore switches the
worker to host mode: tensors made there (``torch.tensor``, ``from_numpy``, ``zeros``, ``rand``, ...)
hold numpy arrays, reading and indexing tensors works through numpy, and op kernels are traced and
evaluated with NumPy (``_numpy_eval``); an op whose kernel needs a primitive outside that table
raises a clear error instead of hanging. Workers started with spawn/forkserver run a fresh torchlike
on the CPU.
"""

from __future__ import annotations

import gc
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

from ..._core.kernel_cache import LRU
from ..._core.tensor import Tensor
from . import _host

MP_STATUS_CHECK_INTERVAL = 5.0  # torch: how long the main process waits before checking on workers
_POLL_INTERVAL = 0.2  # how often an idle worker checks for shutdown and for a dead main process

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
        f"torchlike: {what} cannot run in a DataLoader worker process started with fork: JAX's runtime does not "
        "survive fork, so ops there run through NumPy, which does not cover this. Pass "
        "multiprocessing_context='spawn' to the DataLoader (workers then start fresh and run torchlike on the CPU)."
    )


def _numpy_kernel(fn: Any, what: str) -> Any:
    from . import _numpy_eval

    return _numpy_eval.compiled(fn, lambda primitive: fork_error(f"{what} (it needs {primitive})"))


def _host_build_kernel(op: Any, static: tuple, cdt: Any, baked: tuple, key: tuple, precast: Any = None) -> Any:
    from ..._ops import registry

    kernel = _numpy_kernel(registry.kernel_function(op, static, cdt, baked, precast), f"torch.{op.name}")
    op.kernels[key] = kernel
    return kernel


def _host_flattened(kernel: Any, treedef: Any) -> Any:
    import jax

    name = getattr(kernel, "__name__", "an op")
    return _numpy_kernel(lambda *xs: kernel(*jax.tree_util.tree_unflatten(treedef, xs)), name)


def _refuse_compile(*args: Any, **kwargs: Any) -> Any:
    raise fork_error("a JAX computation")


def _host_jit_call(*args: Any, jaxpr: Any, name: str = "a jitted function", **params: Any) -> tuple:
    """Stands in for JAX's jit dispatch (``pjit._pjit_call_impl_python``) in a forked worker.

    Every JAX computation outside the op table (a ``jax.jit`` function, an eager ``jnp``/``lax`` call)
    reaches this once JAX's C++ caches are cleared: the jaxpr is evaluated with NumPy, and no
    executable is compiled, loaded from the persistent cache or run.
    """
    from . import _numpy_eval

    try:
        outs = _numpy_eval.eval_closed(jaxpr, list(args))
    except _numpy_eval.Unsupported as e:
        raise fork_error(f"{name} (it needs {e})") from None
    return outs, None, None, []  # outputs, no executable (so nothing enters the C++ fast path), no profiler


def _host_data(self: Tensor) -> Any:
    return _host.host_array(self)


def _host_device_put(x: Any, device: Any = None, *args: Any, **kwargs: Any) -> Any:
    # jax.device_put returns at once in a forked child, but the copy never completes: reading it hangs
    if device is None or getattr(device, "platform", None) == "cpu":
        return np.asarray(x)
    raise fork_error("moving data to an accelerator")


def _host_or_traced(name: str) -> Any:
    host = getattr(np, name)

    def run(*args: Any, **kwargs: Any) -> Any:
        import jax

        if any(isinstance(a, jax.core.Tracer) for a in (*args, *kwargs.values())):  # inside a kernel being traced
            return getattr(jax.numpy, name)(*args, **kwargs)
        return host(*args, **kwargs)

    return run


class _HostNumpy:
    """Stands in for ``jax.numpy`` in the creation paths of a forked worker: arrays stay numpy arrays
    (a kernel traced there still gets ``jax.numpy``)."""

    array = staticmethod(_host_or_traced("array"))
    asarray = staticmethod(_host_or_traced("asarray"))
    zeros = staticmethod(_host_or_traced("zeros"))
    ones = staticmethod(_host_or_traced("ones"))
    full = staticmethod(_host_or_traced("full"))
    empty = staticmethod(_host_or_traced("empty"))
    eye = staticmethod(_host_or_traced("eye"))

    def __getattr__(self, name: str) -> Any:
        value = getattr(np, name, None)
        if isinstance(value, type) and issubclass(value, np.generic):  # dtypes such as jnp.float32
            return value
        import jax.numpy as jnp

        return getattr(jnp, name)  # run eagerly, through _host_jit_call


def enter_fork_mode() -> None:
    """Host mode for a forked worker (process-local patches; the worker never runs JAX again).

    Creation (tensor, as_tensor, from_numpy, zeros, ones, full, arange, ...), random draws from the
    torch-compatible generator (rand, randn, randint, randperm, ...), indexing and reading work and
    give numpy-backed tensors; ops run their kernels through NumPy; any other JAX use raises
    ``fork_error``.
    """
    from ..._core import tensor as T
    from ..._ops import creation, registry
    from ..._ops import random as random_ops

    _host.IN_FORK_WORKER = True
    import jax
    from jax._src import compiler, pjit

    shim = _HostNumpy()
    for owner, name, value in _fork_patches(shim, T, creation, registry, random_ops, compiler, jax, pjit):
        if hasattr(owner, name):
            setattr(owner, name, value)
    for op in set(registry.OPS.values()):  # the parent's compiled kernels would run on its runtime
        op.kernels = LRU()
    # NOTE: a jit function's C++ fast path would run the parent's executables (the warm-cache hang);
    # with its caches empty every call takes the Python path, which _host_jit_call answers
    jax.clear_caches()


def _fork_patches(
    shim: Any, T: Any, creation: Any, registry: Any, random_ops: Any, compiler: Any, jax: Any, pjit: Any
) -> list:
    """(owner, attribute, replacement) for host mode; tests check that every attribute still exists."""
    return [
        (registry, "autocast", None),  # autocast regions of the parent do not reach workers
        (registry, "_build_kernel", _host_build_kernel),
        (registry, "_flattened", _host_flattened),
        (registry, "_flat_kernels", {}),
        (registry, "_scalar_cache", {}),  # the parent's cached 0-d device arrays
        (T.Tensor, "_data", _host_data),
        (T, "host_to_jax", lambda a, copy: np.array(a) if copy else a),  # host-backed buffers stay numpy
        (T, "jnp", shim),
        (creation, "jnp", shim),
        (random_ops, "jnp", shim),
        (creation, "_filled", lambda shape, dt, value, jdev=None: np.full(shape, value, dt.np)),
        (jax, "device_put", _host_device_put),
        (pjit, "_pjit_call_impl_python", _host_jit_call),
        # a new compilation is the first thing that would hang: the catch-all
        (compiler, "backend_compile_and_load", _refuse_compile),
        (compiler, "backend_compile", _refuse_compile),
    ]


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
    from ..._ops.random import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(
        np.random.SeedSequence([worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32, 0]).generate_state(4)
    )
    return seed


def worker_loop(fork: bool, payload: Any, index_queue: Any, data_queue: Any, done_event: Any, base_seed: int,
                worker_id: int, num_workers: int) -> None:  # fmt: skip
    """Run in each worker process: fetch what ``index_queue`` asks for, put results on ``data_queue``."""
    global _worker_info
    try:
        from ..._core import lazy

        lazy.set_enabled(False)  # a worker prepares data op by op; its tensors go straight to the main process
        if fork:
            enter_fork_mode()
        else:
            payload = pickle.loads(payload)
        dataset_kind, dataset, auto_collation, collate_fn, drop_last, init_fn = payload
        # NOTE: the collector would walk every object the worker inherited or imported (JAX's and torchlike's
        # tables: a full pass costs milliseconds) many times per batch; they live as long as the worker anyway
        gc.freeze()
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
                r = index_queue.get(timeout=_POLL_INTERVAL)
            except queue.Empty:
                # torch waits for a None that may never come (the main process's queue feeder is gone
                # when its iterator dies in a garbage cycle): stop as soon as shutdown is signalled
                if done_event.is_set():
                    break
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
