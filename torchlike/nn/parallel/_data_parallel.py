"""nn.DataParallel as one computation over a device mesh (GSPMD), not per-device replicas.

The parameters and buffers are replicated over a 1-d mesh of the local devices
(``NamedSharding(mesh, P())``) and every tensor argument is split along ``dim``
(``P(..., 'data', ...)``). torchlike's ops are jitted kernels, so XLA's sharding propagation
runs each op on all devices at once: activations stay split by batch, and the gradient of a
replicated parameter comes out replicated (XLA inserts the all-reduce). The optimizer's fused
update then sees replicated parameters and gradients and keeps them replicated. Tensors keep
reporting the primary device (``cuda:0``, or ``cpu``).

Because this is one computation over the whole batch, results equal a single-device run on the
same batch. Where torch's per-replica execution gives something else (batch-norm statistics per
replica, a vector of per-replica scalars), this raises instead. On CPU, torch's DataParallel is a
plain wrapper; here it spreads over JAX's CPU devices when there are several (only with
``--xla_force_host_platform_device_count``), which computes the same values.
"""

from __future__ import annotations

from typing import Any, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from ..._core import device as _device
from ..._core import tensor as T
from ..._core.tensor import Tensor
from ..._ops import registry
from ...autograd import grad_mode
from ..modules._module import Module
from ..modules._normalization import _BatchNorm

__all__ = ["DataParallel", "data_parallel"]

_AXIS = "data"


def _device_index(d: Any) -> int:
    """torch's _get_device_index(d, optional=True) for CUDA devices and ints."""
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = _device.device(d)
    if dev.type == "cpu":
        return -1
    return 0 if dev.index is None else dev.index


class _Placement:
    """A mesh over some local devices and the shardings used on it."""

    def __init__(self, jax_devices: Sequence[Any]) -> None:
        self.mesh = Mesh(np.array(list(jax_devices)), (_AXIS,))
        self.n = len(jax_devices)
        self.replicated = NamedSharding(self.mesh, P())
        self._split: dict = {}

    def split(self, ndim: int, dim: int) -> NamedSharding:
        key = (ndim, dim)
        s = self._split.get(key)
        if s is None:
            spec = [None] * ndim
            spec[dim] = _AXIS
            s = self._split[key] = NamedSharding(self.mesh, P(*spec))
        return s


_putters: dict = {}


def _putter(sharding: Any) -> Any:
    f = _putters.get(sharding)
    if f is None:
        f = _putters[sharding] = lambda x: jax.device_put(x, sharding)
    return f


def _place(t: Tensor, sharding: Any, device: _device.device) -> Tensor:
    """``t`` laid out as ``sharding`` on the mesh of ``device`` (differentiable when ``t`` requires grad).

    torch: inputs on another device (the CPU) are scattered to the GPUs too.
    """
    arr = t._data()
    if isinstance(arr, jax.core.Tracer):  # inside torchlike.compile: a layout hint for XLA
        return registry.apply_pure("ScatterBackward", _constrainer(sharding), [t], device=device)
    if arr.sharding == sharding and t._buf.device == device:
        return t
    if t._rg and grad_mode.is_grad_enabled():
        return registry.apply_pure("ScatterBackward", _putter(sharding), [t], device=device)
    return T.make(jax.device_put(arr, sharding), device, t._dtype)


_constrainers: dict = {}


def _constrainer(sharding: Any) -> Any:
    f = _constrainers.get(sharding)
    if f is None:
        f = _constrainers[sharding] = lambda x: jax.lax.with_sharding_constraint(x, sharding)
    return f


class DataParallel(Module):
    """torch.nn.DataParallel: the batch split over local devices, parameters replicated (see module doc)."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                 dim: int = 0) -> None:  # fmt: skip
        super().__init__()
        if not _device.cuda_available():
            # torch: without an accelerator DataParallel only wraps the module
            self.module = module
            self.device_ids = []
            cpus = jax.local_devices(backend="cpu")
            self._dp = _Placement(cpus) if len(cpus) > 1 else None
            self._dp_dim = dim
            self._dp_cuda = False
            self._replicate()
            return
        if device_ids is None:
            device_ids = list(range(len(_device._gpus())))
        if not device_ids:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _device.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)
        jdevs = [_device.jax_device(_device.device("cuda", i)) for i in self.device_ids]
        self._dp = _Placement(jdevs) if len(jdevs) > 1 else None
        self._dp_dim = dim
        self._dp_cuda = True
        if self._dp is not None and all(p.device == self.src_device_obj for p in self._state()):
            self._replicate()

    def _state(self) -> list[Tensor]:
        return [*self.module.parameters(), *self.module.buffers()]

    def _replicate(self) -> None:
        """Lay parameters and buffers out replicated on the mesh (again after ``.to()`` or loading)."""
        placement = self._dp
        if placement is None:
            return
        rep = placement.replicated
        for t in self._state():
            arr = t._data()
            if isinstance(arr, jax.core.Tracer) or arr.sharding == rep:
                continue
            t._assign(jax.device_put(arr, rep))

    def _scatter(self, x: Any) -> Any:
        if isinstance(x, Tensor):
            placement, dim = self._dp, self._dp_dim
            dev = self.src_device_obj if self._dp_cuda else x._buf.device
            nd = x.dim()
            d = dim + nd if dim < 0 else dim
            if 0 <= d < nd and x.shape[d] % placement.n == 0:
                return _place(x, placement.split(nd, d), dev)
            return _place(x, placement.replicated, dev)  # 0-dim or uneven: same values, no speed-up
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*[self._scatter(v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(self._scatter(v) for v in x)
        if isinstance(x, dict):
            return type(x)((k, self._scatter(v)) for k, v in x.items())
        return x

    def _check_replica_semantics(self) -> None:
        if not self._dp_cuda:
            return
        for m in self.module.modules():
            if isinstance(m, _BatchNorm) and m.training:
                raise NotImplementedError(
                    f"DataParallel over {self._dp.n} GPUs with {type(m).__name__} in training mode: torch "
                    "normalizes each replica's chunk of the batch by its own statistics, while torchlike runs "
                    "one computation over the whole batch (SyncBatchNorm's statistics). Use "
                    "DistributedDataParallel (per-process statistics, as in torch) or call .eval() on the "
                    "batch-norm layers."
                )

    def _check_output(self, out: Any) -> Any:
        if isinstance(out, Tensor):
            if out.dim() == 0:
                raise NotImplementedError(
                    f"DataParallel over {self._dp.n} GPUs: the module returned a 0-dim tensor. torch gathers "
                    "one such value per replica into a vector; torchlike runs the module once over the whole "
                    "batch, so per-replica values do not exist. Return per-sample values (e.g. "
                    "reduction='none') and reduce them outside the module."
                )
            if self.output_device != self.device_ids[0]:
                out = out.to(
                    "cpu" if self.output_device == -1 else _device.device("cuda", self.output_device)
                )
            return out
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            return type(out)(*[self._check_output(v) for v in out])
        if isinstance(out, (list, tuple)):
            return type(out)(self._check_output(v) for v in out)
        if isinstance(out, dict):
            return type(out)((k, self._check_output(v)) for k, v in out.items())
        return out

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._dp is None:
            return self.module(*inputs, **kwargs)
        if self._dp_cuda:
            for t in self._state():
                if t.device != self.src_device_obj:
                    raise RuntimeError(
                        "module must have its parameters and buffers "
                        f"on device {self.src_device_obj} (device_ids[0]) but found one of "
                        f"them on device: {t.device}"
                    )
        self._check_replica_semantics()
        self._replicate()
        out = self.module(*self._scatter(inputs), **self._scatter(kwargs))
        return self._check_output(out) if self._dp_cuda else out


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any = None) -> Any:  # fmt: skip
    """torch.nn.parallel.data_parallel: one DataParallel call."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    dp = DataParallel(module, device_ids, output_device, dim)
    return dp(*inputs, **(module_kwargs or {}))
