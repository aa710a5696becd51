"""nn.parallel.DistributedDataParallel: one process per device, gradients averaged after backward.

At construction rank 0's parameters and buffers are broadcast (one program). A post-accumulate
hook on each parameter queues ONE callback per backward (``autograd.engine.queue_callback``),
which averages every gradient across the process group in one program: the gradients travel
as one flat buffer per dtype, like torch's buckets, so there is one all-reduce per step, not
one per parameter. It runs after backward instead of overlapping with it.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any, Iterator, Sequence

import jax
import numpy as np

from ..._core import device as _device
from ..._core import lazy as _lazy
from ..._core import tensor as T
from ..._core.tensor import Tensor
from ...autograd import engine, grad_mode
from ...distributed import _collectives as C
from ...distributed import _process_group as pg
from ..modules._module import Module
from ..parameter import UninitializedParameter

__all__ = ["DistributedDataParallel"]


def _device_index(d: Any) -> int:
    if isinstance(d, int) and not isinstance(d, bool):
        return d
    dev = _device.device(d)
    return 0 if dev.index is None else dev.index


class _GradHook:
    """Post-accumulate-grad hook that does not keep the DDP wrapper alive."""

    def __init__(self, ddp: DistributedDataParallel) -> None:
        self.ddp = weakref.ref(ddp)

    def __call__(self, param: Tensor) -> None:
        ddp = self.ddp()
        if ddp is not None:
            ddp._grad_ready()


def _move(x: Any, dev: _device.device) -> Any:
    if isinstance(x, Tensor):
        return x.to(dev)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_move(v, dev) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_move(v, dev) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _move(v, dev)) for k, v in x.items())
    return x


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on torchlike.distributed's process group."""

    def __init__(
        self,
        module: Module,
        device_ids: Sequence[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool | None = None,
        init_sync: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params: Any = None,
        param_to_hook_all_reduce: Any = None,
        mixed_precision: Any = None,
        device_mesh: Any = None,
        skip_all_reduce_unused_params: bool = False,
        bucket_cap_mb_list: list[int] | None = None,
        batched_grad_copy: bool = False,
        forward_sync_buffers: bool | None = None,
    ) -> None:
        super().__init__()
        if device_mesh is not None:
            raise NotImplementedError(
                "DistributedDataParallel: device_mesh= is not supported; pass process_group"
            )
        if mixed_precision is not None:
            raise NotImplementedError(
                "DistributedDataParallel: mixed_precision= is not supported; use torch.autocast"
            )
        if delay_all_reduce_named_params is not None:
            raise NotImplementedError(
                "DistributedDataParallel: delay_all_reduce_named_params= is not supported"
            )
        self.process_group = pg._world() if process_group is None else process_group
        ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self.parameters_to_ignore = ignore
        self._module_parameters = [p for n, p in module.named_parameters() if n not in ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
                "gradient."
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        devices = {p.device for p in self._module_parameters}
        types = {d.type for d in devices}
        if len(types) != 1:
            raise ValueError(
                "DistributedDataParallel's input module must be on the same type of devices, but input module "
                f"parameters locate in {types}."
            )
        self.device_type = next(iter(types))
        self.is_multi_device_module = len(devices) > 1
        if not device_ids or self.device_type == "cpu" or self.is_multi_device_module:
            if device_ids or output_device:
                raise ValueError(
                    "DistributedDataParallel device_ids and output_device arguments only work with "
                    "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                    f"{device_ids}, output_device {output_device}, and module parameters {devices}."
                )
            self.device_ids = None
            self.output_device = None
        else:
            self.device_ids = [_device_index(d) for d in device_ids]
            self.output_device = _device_index(output_device if output_device is not None else device_ids[0])
        self.static_graph = static_graph
        self.dim = dim
        self.module = module
        self.device = next(iter(self._module_parameters)).device
        if broadcast_buffers is not None:
            warnings.warn(
                "Both `broadcast_buffers` and `forward_sync_buffers` were specified. `broadcast_buffers` is "
                "deprecated and its value is ignored when `forward_sync_buffers` is provided."
                if forward_sync_buffers is not None
                else "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. IMPORTANT: unlike "
                "`broadcast_buffers=False`, `forward_sync_buffers=False` still syncs buffers at init. If you rely "
                "on buffers NOT being synced at init (e.g. rank-local buffers), keep using "
                "`broadcast_buffers=False` until `init_sync_buffers` is available.",
                FutureWarning,
                stacklevel=2,
            )
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = broadcast_buffers if broadcast_buffers is not None else True
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.mixed_precision = None
        if check_reduction:
            warnings.warn(
                "The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please avoid "
                "using it.",
                FutureWarning,
                stacklevel=2,
            )
        for p in self._module_parameters:
            if isinstance(p, UninitializedParameter):
                raise RuntimeError(
                    "Modules with uninitialized parameters can't be used with `DistributedDataParallel`. Run a "
                    "dummy forward pass to correctly initialize the modules"
                )
        self.modules_buffers = [b for n, b in module.named_buffers() if n not in ignore]
        self._sync_expected = False
        self._sync_queued = False
        if init_sync:
            self._verify_shapes()
            self._broadcast_state(
                self._module_parameters + (self.modules_buffers if init_sync_buffers else [])
            )
        hook = _GradHook(self)
        self._hook_handles = [p.register_post_accumulate_grad_hook(hook) for p in self._module_parameters
                              if p.requires_grad]  # fmt: skip

    # --- collectives on the module's state ------------------------------------------------------

    def _group(self) -> pg.ProcessGroup:
        g = pg.resolve(self.process_group)
        if g is None:
            raise RuntimeError("DistributedDataParallel: this rank is not a member of process_group")
        return g

    def _verify_shapes(self) -> None:
        g = self._group()
        if g.size() == 1:
            return
        sig = [tuple(p.shape) for p in self._module_parameters]
        if len(set(map(repr, C._gather_objects(sig, g)))) != 1:
            raise RuntimeError(
                "DDP expects same model across all ranks, but the parameter shapes differ between ranks"
            )

    def _broadcast_state(self, tensors: list[Tensor]) -> None:
        g = self._group()
        if g.size() == 1 or not tensors:
            return
        if _lazy.enabled():  # recorded: joins the step's program instead of running before it
            platform = "cpu" if tensors[0].device.type == "cpu" else "gpu"
            outs = _lazy.call(C.pending_broadcast(g, platform, 0), [t._peek() for t in tensors])
        else:
            outs = C.broadcast_arrays([t._data() for t in tensors], 0, g)
        for t, a in zip(tensors, outs):
            t._assign(a)

    # --- gradient averaging -----------------------------------------------------------------------

    def _grad_ready(self) -> None:
        if self._sync_expected and not self._sync_queued:
            self._sync_queued = True
            engine.queue_callback(self._sync_grads)

    def _sync_grads(self) -> None:
        """Average every gradient over the group (one program). A parameter that got no gradient on
        this rank contributes zeros; one that got none on any rank keeps ``grad=None``, as in torch."""
        self._sync_queued = False
        self._sync_expected = False
        g = self._group()
        params = [p for p in self._module_parameters if p.requires_grad]
        if g.size() == 1:
            return
        pending = _lazy.enabled()
        arrays, used = [], []
        for p in params:
            grad = p._grad
            if grad is None:
                dev = next(iter((p._peek() if pending else p._data()).devices()))
                arrays.append(jax.device_put(np.zeros(tuple(p.shape), p._dtype.np), dev))
                used.append(0.0)
                continue
            arr = grad._peek() if pending else grad._data()
            if isinstance(arr, jax.core.Tracer):
                raise NotImplementedError(
                    "DistributedDataParallel inside torchlike.compile: the gradient all-reduce runs across "
                    "processes after backward and cannot be part of one process's compiled program. Compile "
                    "the module (DDP(compile(model))) rather than the training step."
                )
            arrays.append(arr)
            used.append(1.0)
        dev = next(iter(arrays[0].devices()))  # (a pending array's too, without running it)
        mask = jax.device_put(np.asarray(used, np.float32), dev)
        if pending:  # recorded: the all-reduce joins the backward and the optimizer step in one program
            outs = _lazy.call(C.pending_all_reduce(g, dev.platform), [*arrays, mask])
        else:
            outs = C.all_reduce_arrays(arrays + [mask], pg.RedOpType.AVG, g)
        # every rank sends the used-mask (the programs must match); reading it back waits for the
        # all-reduce, so only a rank that lacks some gradient does
        seen = np.asarray(outs[-1]) > 0 if 0.0 in used else None
        for i, (p, avg) in enumerate(zip(params, outs)):
            if p._grad is not None:
                p._grad._assign(avg)
            elif seen[i]:
                p._grad = T.make(avg, p._buf.device)

    # --- forward ------------------------------------------------------------------------------------

    def will_sync_module_buffers(self) -> bool:
        return self.require_forward_param_sync and self.forward_sync_buffers and len(self.modules_buffers) > 0

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if grad_mode.is_grad_enabled() and self.require_backward_grad_sync:
            self._sync_expected = True
        if self.will_sync_module_buffers():
            self.modules_buffers = [
                b for n, b in self.module.named_buffers() if n not in self.parameters_to_ignore
            ]
            with grad_mode.no_grad():
                self._broadcast_state(self.modules_buffers)
        if self.device_ids:
            dev = _device.device(self.device_type, self.device_ids[0])
            inputs, kwargs = _move(inputs, dev), _move(kwargs, dev)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients of backward passes whose forward runs inside accumulate locally, unsynchronized;
        the first synchronized backward after it averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: Any, hook: Any) -> None:
        raise NotImplementedError(
            "DistributedDataParallel.register_comm_hook: communication hooks are not supported; gradients are "
            "averaged by one all-reduce program after backward"
        )

    def join(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "DistributedDataParallel.join: uneven inputs are not supported; every rank must run the same steps"
        )

    def _set_static_graph(self) -> None:
        self.static_graph = True
