"""The torch side of `python -m torchlike compare --trace`: run a script under real torch, logging each op.

Executed, never imported: ``python .../_trace_torch.py script.py args...`` with ``TORCHLIKE_TRACE`` naming
the log file (``TORCHLIKE_TRACE_MAX_OPS`` bounds it). torchlike's runtime never imports torch, so torch
is loaded here through importlib, and the shared log code (`_tracelog.py`) is loaded by file path.

Logged, in call order: each torch.* / Tensor.* / F.* (linalg, special, fft) call made from the user's code,
seen through torch's public ``TorchFunctionMode`` (calls made inside another op, or by torch's own
Python code such as an optimizer's update, are not); each ``nn.Module`` call made from the user's code or
from a container (Sequential, ModuleList); and each optimizer step (its gradients before, its
parameters after), through torch's global optimizer step hooks.
"""

import atexit
import builtins
import importlib
import importlib.machinery
import importlib.util
import io
import os
import sys
import threading
import types

_HERE = os.path.dirname(os.path.abspath(__file__))


def _load_tracelog() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("_torchlike_tracelog", os.path.join(_HERE, "_tracelog.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _op_name(func: object) -> str | None:
    """``torch.add``, ``Tensor.add``, ``F.relu``, ``linalg.norm``...; None for what is not logged
    (property reads, nn.init, autograd functions and other namespaces)."""
    name = getattr(func, "__name__", None)
    if not name or name in ("__get__", "__set__", "__delete__"):
        return None
    qual = getattr(func, "__qualname__", "") or ""
    module = getattr(func, "__module__", "") or ""
    if qual.startswith(("TensorBase.", "Tensor.")):
        return f"Tensor.{name}"
    if module in ("torch._C._nn", "torch.nn.functional"):
        return f"F.{name}"
    for space in ("linalg", "special", "fft"):
        if module == f"torch._C._{space}":
            return f"{space}.{name.removeprefix(space + '_')}"
    if module in ("torch", "torch.functional", "torch._C._VariableFunctions"):
        return f"torch.{name}"
    return None


# Files a call passes through between the user's line and the mode: torch's dispatch to the mode
# and the Python bodies of public functions and Tensor methods. A call whose first frame outside
# them is another file of torch was made by torch itself (an nn layer, an optimizer).
_ENTRY_FILES = ("overrides.py", "nn/functional.py", "_jit_internal.py", "functional.py", "_tensor.py",
                "utils/_contextlib.py", "_compile.py", "utils/_device.py")  # fmt: skip


def main() -> int:
    log_path = os.environ.pop("TORCHLIKE_TRACE")
    max_ops = int(os.environ.pop("TORCHLIKE_TRACE_MAX_OPS", "0") or 0)
    if len(sys.argv) < 2:
        print("usage: _trace_torch.py script.py [args...]", file=sys.stderr)
        return 2
    script, args = sys.argv[1], sys.argv[2:]
    tracelog = _load_tracelog()
    torch = importlib.import_module("torch")
    overrides = importlib.import_module("torch.overrides")
    torch_dir = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
    entry = tuple(os.path.join(torch_dir, f.replace("/", os.sep)) for f in _ENTRY_FILES)
    own = os.path.abspath(__file__)

    writer = tracelog.LogWriter(log_path, max_ops or tracelog.DEFAULT_MAX_OPS)
    atexit.register(writer.close)

    def values(t: object) -> tuple:
        t = t.detach()
        if t.is_conj():
            t = t.resolve_conj()
        if t.is_neg():
            t = t.resolve_neg()
        wide = torch.complex128 if t.is_complex() else torch.float64
        return str(t.dtype), t.to("cpu", wide).numpy()

    tracer = tracelog.Tracer(writer, lambda x: isinstance(x, torch.Tensor), values)
    main_thread, pid = threading.get_ident(), os.getpid()

    def quiet() -> bool:
        return tracer.busy or writer.full or threading.get_ident() != main_thread or os.getpid() != pid

    def user_frame(frame: types.FrameType | None) -> types.FrameType | None:
        """The frame that made the call (skipping torch's dispatch frames), or None when it is torch's own."""
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename == own or filename.startswith(entry):
                frame = frame.f_back
                continue
            return None if filename.startswith(torch_dir) else frame
        return None

    class TraceMode(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = None if quiet() else _op_name(func)
            frame = user_frame(sys._getframe(1)) if name else None
            if frame is None:
                return func(*args, **kwargs)
            ins = tracer.digest_inputs(args, kwargs)
            out = func(*args, **kwargs)
            at = where(frame)
            if name == "Tensor.item" and args and isinstance(args[0], torch.Tensor):
                tracer.log_scalar(name, at, str(args[0].dtype), out, ins)
            else:
                tensors = tracer.tensors(out) or tracelog.in_place_target(name, args, tracer.is_tensor)
                tracer.log(name, at, tensors, ins)
            return out

    module_call = torch.nn.Module.__call__

    def traced_module_call(self, *args, **kwargs):
        frame = sys._getframe(1)
        filename = frame.f_code.co_filename
        logged = (
            not quiet()
            and torch._C._len_torch_function_stack() > 0  # not inside another op (its mode is off there)
            and (not filename.startswith(torch_dir) or tracelog.is_container_file(filename))
        )
        if not logged:
            return module_call(self, *args, **kwargs)
        ins = tracer.digest_inputs([*args, *self.parameters(), *self.buffers()], kwargs)
        out = module_call(self, *args, **kwargs)
        tracer.log(
            tracelog.module_name(self), where(tracelog.user_frame(frame, (torch_dir, own))), tracer.tensors(out), ins
        )
        return out

    torch.nn.Module.__call__ = traced_module_call

    def step_frame() -> types.FrameType | None:
        return tracelog.user_frame(sys._getframe(2), (torch_dir, own))

    def where(frame: types.FrameType | None) -> str:
        return tracelog.where(frame.f_code.co_filename, frame.f_lineno) if frame is not None else "?"

    pending = {}

    def pre_step(opt, args, kwargs):
        if quiet():
            return
        frame = step_frame()
        if frame is None:
            return
        params = [p for g in opt.param_groups for p in g["params"]]
        grads = [p.grad for p in params if p.grad is not None]
        ins = tracer.digest_inputs(params + [p.grad for p in params if p.grad is not None])
        at = where(frame)
        pending[id(opt)] = (at, ins)
        tracer.log(f"{type(opt).__name__}.step:grads", at, grads[: tracelog.STEP_OUTPUTS], ins)

    def post_step(opt, args, kwargs):
        if id(opt) not in pending or quiet():
            return
        at, ins = pending.pop(id(opt))
        params = [p for g in opt.param_groups for p in g["params"]]
        tracer.log(f"{type(opt).__name__}.step", at, params[: tracelog.STEP_OUTPUTS], ins)

    optimizer = importlib.import_module("torch.optim.optimizer")
    optimizer.register_optimizer_step_pre_hook(pre_step)
    optimizer.register_optimizer_step_post_hook(post_step)

    # Run the script as `python script.py args` would.
    if not os.path.exists(script):
        print(f"{sys.executable}: can't open file {os.path.abspath(script)!r}: [Errno 2] No such file or directory",
              file=sys.stderr)  # fmt: skip
        return 2
    sys.argv = [script, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    filename = os.path.join(os.getcwd(), script)
    with io.open_code(script) as f:
        code = compile(f.read(), filename, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", filename)
    module.__dict__.update(__annotations__={}, __builtins__=builtins, __file__=filename, __cached__=None)
    sys.modules["__main__"] = module
    with TraceMode():
        exec(code, module.__dict__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
