"""The torchlike side of `python -m torchlike compare --trace`: log the ops the user's code calls.

``install`` puts wrappers around the public namespaces' functions (torch.*, nn.functional, linalg,
special, fft), the Tensor methods and operators, ``nn.Module.__call__`` and the optimizer step hooks;
each call made from the user's code (not from torchlike's own, nor inside another logged call) is
written to the log with its outputs (`_tracelog.py`). `_trace_torch.py` does the same under torch.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import os
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from torchlike.compat import _tracelog

ENV_LOG = "TORCHLIKE_TRACE"
ENV_MAX_OPS = "TORCHLIKE_TRACE_MAX_OPS"
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# Tensor dunders that are torch ops (torch's TorchFunctionMode sees these under the same names).
_TENSOR_DUNDERS = {
    "__getitem__", "__setitem__", "__neg__", "__pos__", "__abs__", "__invert__", "__matmul__", "__rmatmul__",
    *(f"__{p}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "floordiv", "mod", "pow", "and", "or", "xor",
                                "lshift", "rshift") for p in ("", "r", "i")),
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
}  # fmt: skip
# The public namespaces whose functions are logged, with the prefix their records carry.
_SPACES = (("torchlike", "torch"), ("torchlike.nn.functional", "F"), ("torchlike.linalg", "linalg"),
           ("torchlike.special", "special"), ("torchlike.fft", "fft"))  # fmt: skip


class _State(threading.local):
    depth = 0  # > 0 inside a logged namespace's function: calls made there are the op's own


def install(log_path: str, max_ops: int = _tracelog.DEFAULT_MAX_OPS) -> None:
    """Log, from here on, the ops this process's user code calls (the main thread of this process only)."""
    import torchlike
    from torchlike.nn.modules.module import Module
    from torchlike.optim import optimizer

    writer = _tracelog.LogWriter(log_path, max_ops)
    atexit.register(writer.close)
    Tensor = torchlike.Tensor

    def values(t: Any) -> tuple[str, np.ndarray]:
        arr = np.asarray(t._data())
        return str(t.dtype), arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)

    tracer = _tracelog.Tracer(writer, lambda x: isinstance(x, Tensor), values)
    state = _State()
    main_thread, pid = threading.get_ident(), os.getpid()

    def quiet() -> bool:
        return tracer.busy or writer.full or threading.get_ident() != main_thread or os.getpid() != pid

    def wrap(label: str, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def traced(*args: Any, **kwargs: Any) -> Any:
            if state.depth or quiet():
                return fn(*args, **kwargs)
            frame = sys._getframe(1)
            state.depth += 1
            try:
                if frame.f_code.co_filename.startswith(_PACKAGE_DIR):  # torchlike's own call
                    return fn(*args, **kwargs)
                ins = tracer.digest_inputs(args, kwargs)
                out = fn(*args, **kwargs)
            finally:
                state.depth -= 1
            at = _where(frame)
            if label == "Tensor.item" and args and isinstance(args[0], Tensor):
                tracer.log_scalar(label, at, str(args[0].dtype), out, ins)
            else:
                tensors = tracer.tensors(out) or _tracelog.in_place_target(label, args, tracer.is_tensor)
                tracer.log(label, at, tensors, ins)
            return out

        return traced

    for name, attr in list(vars(Tensor).items()):
        if isinstance(attr, types.FunctionType) and (not name.startswith("_") or name in _TENSOR_DUNDERS):
            setattr(Tensor, name, wrap(f"Tensor.{name}", attr))
    # torch's Tensor.__iter__ skips the mode on purpose and calls self.unbind(0), which the mode sees
    tensor_iter = Tensor.__iter__

    def traced_iter(self: Any) -> Any:
        frame = sys._getframe(1)
        if state.depth or quiet() or frame.f_code.co_filename.startswith(_PACKAGE_DIR):
            return tensor_iter(self)
        ins = tracer.digest_inputs([self])
        state.depth += 1
        try:
            items = list(tensor_iter(self))
        finally:
            state.depth -= 1
        tracer.log("Tensor.unbind", _where(frame), tracer.tensors(items), ins)
        return iter(items)

    Tensor.__iter__ = traced_iter
    for module_name, prefix in _SPACES:
        space = importlib.import_module(module_name)
        for name, attr in list(vars(space).items()):
            if not name.startswith("_") and isinstance(attr, (types.FunctionType, types.BuiltinFunctionType)):
                setattr(space, name, wrap(f"{prefix}.{name}", attr))

    module_call = Module.__call__

    def traced_module_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        frame = sys._getframe(1)
        filename = frame.f_code.co_filename
        if state.depth or quiet() or (filename.startswith(_PACKAGE_DIR) and not _tracelog.is_container_file(filename)):
            return module_call(self, *args, **kwargs)
        ins = tracer.digest_inputs([*args, *self.parameters(), *self.buffers()], kwargs)
        out = module_call(self, *args, **kwargs)
        tracer.log(_tracelog.module_name(self), _where(_tracelog.user_frame(frame, _PACKAGE_DIR)),
                   tracer.tensors(out), ins)  # fmt: skip
        return out

    Module.__call__ = traced_module_call

    def step_frame() -> types.FrameType | None:
        return _tracelog.user_frame(sys._getframe(2), _PACKAGE_DIR)

    pending: dict[int, tuple[str, str | None]] = {}

    def pre_step(opt: Any, args: Any, kwargs: Any) -> None:
        frame = step_frame()
        if state.depth or quiet() or frame is None:
            return
        params = [p for g in opt.param_groups for p in g["params"]]
        grads = [p.grad for p in params if p.grad is not None]
        ins = tracer.digest_inputs(params + grads)
        at = _where(frame)
        pending[id(opt)] = (at, ins)
        tracer.log(f"{type(opt).__name__}.step:grads", at, grads[: _tracelog.STEP_OUTPUTS], ins)

    def post_step(opt: Any, args: Any, kwargs: Any) -> None:
        if id(opt) not in pending or quiet():
            return
        at, ins = pending.pop(id(opt))
        params = [p for g in opt.param_groups for p in g["params"]]
        tracer.log(f"{type(opt).__name__}.step", at, params[: _tracelog.STEP_OUTPUTS], ins)

    optimizer.register_optimizer_step_pre_hook(pre_step)
    optimizer.register_optimizer_step_post_hook(post_step)


def _where(frame: types.FrameType | None) -> str:
    return _tracelog.where(frame.f_code.co_filename, frame.f_lineno) if frame is not None else "?"


def install_from_env() -> None:
    """``install`` when the runner's environment asks for a trace; the variables are taken out, so the
    script's own child processes are not traced."""
    path = os.environ.pop(ENV_LOG, None)
    max_ops = os.environ.pop(ENV_MAX_OPS, None)
    if path:
        install(path, int(max_ops) if max_ops else _tracelog.DEFAULT_MAX_OPS)
