"""torch.utils.checkpoint: activation checkpointing.

``use_reentrant=True`` (torch's default when the argument is left out, with torch's warning): the
function runs under ``no_grad`` (no activations are kept), the output's grad_fn is ONE
``CheckpointFunctionBackward`` node, and its backward re-runs the function on the saved inputs with
the forward's RNG state and autocast state, then backpropagates through the recomputation.

``use_reentrant=False``: the function runs with grad, so the region's nodes are ordinary ones (torch's
grad_fns), but a ``_Frame`` drops the arrays they hold once the forward is done and keeps only the
inputs. The first backward that reaches one of them re-runs the function (the forward's RNG, autocast
and ``context_fn`` recompute context, stopping early once the last node that saves something is
recorded) and hands the recomputed arrays to the original nodes, checking torch's determinism rule
on the saved tensors' metadata. Where torch counts saved tensors through saved-tensor hooks, torchlike
counts its nodes' ``saved`` records (and custom Functions' ``save_for_backward`` tensors, which are
dropped and recomputed too). ``debug=True`` is validated but adds no operator log to the errors.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any, Callable, ContextManager, Iterable, Iterator

import jax
import numpy as np

from .. import autograd
from .._core import graph as _graph
from .._core import lazy as _lazy
from .._core.size import Size
from .._core.tensor import Tensor
from .._ops import random as _random
from ..amp import autocast_mode as _autocast
from ..autograd import engine as _engine
from ..autograd import grad_mode

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointFunction", "CheckpointError", "detach_variable",
           "check_backward_validity", "noop_context_fn", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled"]  # fmt: skip

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    pass


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Overrides ``early_stop`` of non-reentrant checkpoints while active."""
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Overrides ``debug`` of non-reentrant checkpoints (validated as torch does; see ``checkpoint``)."""
    global _debug_enabled
    prev, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = prev


_early_stop: bool | None = None
_debug_enabled: bool | None = None


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the tensors in ``inputs`` that keep their ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def noop_context_fn() -> tuple:
    return contextlib.nullcontext(), contextlib.nullcontext()


def _rng_states() -> tuple:
    return _random.get_rng_state(), {i: g.get_state() for i, g in _random._cuda_generators.items()}


def _set_rng_states(states: tuple) -> None:
    _random.set_rng_state(states[0])
    for i, s in states[1].items():
        _random._cuda_generators[i].set_state(s)


def _autocast_states() -> list:
    return [(dt, _autocast.is_autocast_enabled(dt), _autocast.get_autocast_dtype(dt)) for dt in ("cpu", "cuda")]


class CheckpointFunction(autograd.Function):
    """The reentrant checkpoint: forward without history, backward by recomputation."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable, preserve_rng_state: bool, *args: Any) -> Any:
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.autocast_states = _autocast_states()
        if preserve_rng_state:
            ctx.fwd_rng_states = _rng_states()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(args[i] for i in ctx.tensor_indices))
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple:
        if _engine.running_with_inputs():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument."
            )
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                _set_rng_states(ctx.fwd_rng_states)
            detached = detach_variable(tuple(inputs))
            with contextlib.ExitStack() as stack:
                stack.enter_context(grad_mode.enable_grad())
                for dt, enabled, dtype in ctx.autocast_states:  # as in forward, whatever backward runs under
                    stack.enter_context(_autocast.autocast(dt, dtype=dtype, enabled=enabled))
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None for inp in detached)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager, ContextManager]] = noop_context_fn,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:  # fmt: skip
    """torch.utils.checkpoint.checkpoint (see the module docstring for what differs)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
            "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if (_debug_enabled if _debug_enabled is not None else debug) and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got {determinism_check}")
    forward_context, recompute_context = context_fn()
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, preserve, recompute_context,
                   _early_stop if _early_stop is not None else early_stop, determinism_check == "default")  # fmt: skip
    suppressed = True
    with _collecting(frame.nodes.append), forward_context:
        out = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an exception raised "
            "during the checkpointed forward. This is not supported because checkpoint cannot return a value for "
            "a failed forward."
        )
    frame.forward_done()
    return out


_collectors: list = []  # the checkpoint regions being recorded, innermost last: only it gets new nodes


def _to_innermost(node: Any) -> None:
    _collectors[-1](node)


@contextlib.contextmanager
def _collecting(collect: Callable) -> Iterator[None]:
    _collectors.append(collect)
    if len(_collectors) == 1:
        _graph.region.append(_to_innermost)
    try:
        yield
    finally:
        _collectors.pop()
        if not _collectors:
            _graph.region.remove(_to_innermost)


class _Dropped:
    """An array a checkpointed node gave up: its shape and dtype, until the recomputation brings it back."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple, dtype: Any) -> None:
        self.shape, self.dtype = shape, dtype


def _is_array(x: Any) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, _lazy.LazyArray))


def _drop(args: list) -> list:
    def one(x: Any) -> Any:
        return _Dropped(tuple(x.shape), x.dtype) if _is_array(x) else x

    return [[one(x) for x in a] if isinstance(a, list) else one(a) for a in args]


def _reads_values(n: Any) -> bool:
    """Whether backward reads array values ``n`` holds: tensors torch saves, or non-differentiable arrays
    (dropout's mask). The others only need their inputs' shapes, as after a backward (``_spend``)."""
    if n.kernel is None:  # a custom Function: what it passed to save_for_backward
        return any(isinstance(t, Tensor) for t in getattr(n, "to_save", ()))
    if n.saved:
        return True
    diff = {pos for pos, _ in n.diff}
    for pos, a in enumerate(n.args):
        if pos not in diff and any(_is_array(x) and x.ndim for x in (a if isinstance(a, list) else (a,))):
            return True  # 0-d ones are Python numbers passed as arrays
    return type(n).__name__ in _engine._READS_INPUTS


def _saved_meta(n: Any) -> list:
    """(dtype, shape) of each tensor torch saves for ``n``: what its determinism check compares."""
    if n.kernel is None:
        return [(t._dtype, tuple(t._shape)) for t in n.to_save if isinstance(t, Tensor)]
    return [d[:2] for _, _, d in n.saved]


def _meta(d: tuple, device: Any) -> dict:
    return {"shape": Size(d[1]), "dtype": d[0], "device": device}


class _Frame:
    """One non-reentrant checkpoint call: the nodes recorded in its forward, whose arrays it drops after the
    forward and brings back by re-running the function when a backward first reaches them."""

    def __init__(self, function: Callable, args: tuple, kwargs: dict, preserve: bool, recompute_context: Any,
                 early_stop: bool, check: bool) -> None:  # fmt: skip
        self.function, self.args, self.kwargs = function, args, kwargs
        self.recompute_context = recompute_context
        self.early_stop, self.check = early_stop, check
        self.autocast_states = _autocast_states()
        self.rng = _rng_states() if preserve else None
        self.nodes: list = []  # while recording; then weak references to the nodes that save tensors
        self.spent: list = []  # weak references to the nodes that save none (the values of their inputs go unread)
        self.metas: list = []  # per saving node: its ``saved`` descriptions, for torch's determinism check
        self.packed = False
        self.device = next((a.device for a in args if isinstance(a, Tensor)), None)

    def forward_done(self) -> None:
        saving, spent = [], []
        for n in self.nodes:
            if n.checkpoint is not None or (n.kernel is None and not _reads_values(n)):
                continue  # one an inner checkpoint owns, or a custom Function's node that saved nothing
            n.checkpoint = self
            (saving if _reads_values(n) else spent).append(n)
        self.metas = [_saved_meta(n) for n in saving]
        self.nodes = [weakref.ref(n) for n in saving]
        self.spent = [weakref.ref(n) for n in spent]
        self.pack()

    def pack(self) -> None:
        """Drop the arrays (a node that saves nothing keeps only its inputs' shapes, as after a backward)."""
        for r in self.nodes:
            n = r()
            if n is None:
                continue
            if n.kernel is None:
                if not getattr(n, "_freed", False):
                    n.to_save = tuple(_Dropped(tuple(t.shape), t.dtype) if isinstance(t, Tensor) else t
                                      for t in n.to_save)  # fmt: skip
            elif n.args is not None:
                n.args = _drop(n.args)
        for r in self.spent:
            n = r()
            if n is not None and n.args is not None:
                n.args = _engine._spend(n)
        self.packed = True
        _graph.checkpoint_frames.add(self)

    def unpack(self) -> None:
        """Re-run the function and give the recomputed arrays back to the forward's nodes."""
        self.packed = False
        _graph.checkpoint_frames.discard(self)
        for r in self.spent:
            n = r()
            if n is not None and n.args is not None:
                n.args = _engine._revive(n.args)
        if self.nodes:
            try:
                self._recompute()
            except BaseException:
                self.packed = True  # a later backward tries again
                _graph.checkpoint_frames.add(self)
                raise

    def _recompute(self) -> None:
        want = len(self.nodes)
        got: list = []

        def collect(n: Any) -> None:
            if n.checkpoint is not None or not _reads_values(n):
                return
            if len(got) == want:
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation than during the "
                    "original forward pass.\n" + _DEBUG_TIP
                )
            got.append(n)
            if self.early_stop and len(got) == want:
                raise _StopRecomputation

        with _random.fork_rng(enabled=self.rng is not None):
            if self.rng is not None:
                _set_rng_states(self.rng)
            try:
                with contextlib.ExitStack() as stack:
                    stack.enter_context(_collecting(collect))
                    stack.enter_context(grad_mode.enable_grad())
                    for dt, enabled, dtype in self.autocast_states:
                        stack.enter_context(_autocast.autocast(dt, dtype=dtype, enabled=enabled))
                    stack.enter_context(self.recompute_context)
                    self.function(*self.args, **self.kwargs)
            except _StopRecomputation:
                pass
        self._check(got)
        for r, m in zip(self.nodes, got):
            n = r()
            if n is None:
                continue
            if n.kernel is None:
                if not getattr(n, "_freed", False):
                    n.to_save, n._saved_versions = m.to_save, m._saved_versions
            elif n.args is not None:
                n.args = m.args

    def _check(self, got: list) -> None:
        metas = [_saved_meta(n) for n in got]
        if self.check:
            n_fwd, n_re = sum(map(len, self.metas)), sum(map(len, metas))
            if len(got) != len(self.nodes) or n_fwd != n_re:
                raise CheckpointError(
                    "torch.utils.checkpoint: A different number of tensors was saved during the original forward "
                    f"and recomputation.\nNumber of tensors saved during forward: {n_fwd}\nNumber of tensors "
                    f"saved during recomputation: {n_re}.\n" + _DEBUG_TIP
                )
            flat = [d for ds in self.metas for d in ds]
            flat_re = [d for ds in metas for d in ds]
            diffs = ""
            for i, (a, b) in enumerate(zip(flat, flat_re)):
                if a[:2] != b[:2]:
                    diffs += (f"tensor at position {i}:\nsaved metadata: {_meta(a, self.device)}\n"
                              f"recomputed metadata: {_meta(b, self.device)}\n")  # fmt: skip
            if diffs:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\n{diffs}.\n" + _DEBUG_TIP
                )
        for r, m in zip(self.nodes, got):
            n = r()
            if n is None:
                continue
            if n.kernel is None:
                same = m.kernel is None and (getattr(n, "_freed", False) or _shapes(n.to_save) == _shapes(m.to_save))
            else:
                same = m.kernel is not None and (n.args is None or _shapes(n.args) == _shapes(m.args))
            if not same:  # torch goes on and fails in the node's formula, with an error of its own
                raise CheckpointError(
                    f"torch.utils.checkpoint: the recomputation recorded {type(m).__name__} where the original forward "
                    f"recorded {type(n).__name__} with other arguments; the checkpointed function must run the same "
                    "ops again"
                )


def _shapes(args: Any) -> list:
    def one(x: Any) -> Any:
        if _is_array(x) or isinstance(x, (_Dropped, Tensor)):
            return (tuple(x.shape), str(x.dtype))
        return type(x).__name__

    return [[one(x) for x in a] if isinstance(a, list) else one(a) for a in args]


class _StopRecomputation(Exception):
    pass


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint‑debug mode globally.

If this error occurs under torch.compile with automatic_dynamic_shapes enabled,
it may be because the recomputation selected a different compiled graph than the
forward pass (e.g., a dynamic graph instead of the original static graph).
To fix this, either:
  - Use torch._dynamo.mark_dynamic() to explicitly mark varying dimensions as
    dynamic upfront, avoiding the static-to-dynamic transition.
  - Call torch._C._dynamo.eval_frame._set_lru_cache(False) to disable LRU cache
    reordering, which can change which graph is checked first between forward
    and recompute.
See https://github.com/pytorch/pytorch/issues/166926 for more details and
workaround examples.
"""


def checkpoint_sequential(functions: Any, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:  # fmt: skip
    """torch.utils.checkpoint.checkpoint_sequential: checkpoint all but the last of ``segments`` chunks."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions: Any) -> Callable:
        def forward(input: Any) -> Any:
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(
            run_function(start, end, functions), input, use_reentrant=use_reentrant, preserve_rng_state=preserve
        )
    return run_function(end + 1, len(functions) - 1, functions)(input)
