"""torch.utils.checkpoint: activation checkpointing.

``use_reentrant=True`` (torch's default when the argument is left out, with torch's warning) is
real checkpointing, as in torch: the function runs under ``no_grad`` (no activations are kept),
the output's grad_fn is ONE ``CheckpointFunctionBackward`` node, and its backward re-runs the
function on the saved inputs with the forward's RNG state and autocast state, then backpropagates
through the recomputation.

Differs from torch: ``use_reentrant=False`` runs the function directly under the forward context
of ``context_fn``: the same outputs, grad_fns and gradients as torch, but activations are kept (NO
memory is saved; torch's version recomputes through saved-tensor hooks, which torchlike's tape
lacks), so the recompute context, ``determinism_check``, ``debug``, ``early_stop`` and the
``set_checkpoint_*`` settings have nothing to act on (they are validated as torch does).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, ContextManager, Iterable, Iterator

from .. import autograd
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
    """Sets the default ``early_stop`` of non-reentrant checkpoints (which do not recompute here)."""
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Overrides ``debug`` of non-reentrant checkpoints (validated as torch does; no recompute here)."""
    global _debug_enabled
    prev, _debug_enabled = _debug_enabled, enabled
    try:
        yield
    finally:
        _debug_enabled = prev


_early_stop = True
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
    forward_context, _ = context_fn()
    with forward_context:
        return function(*args, **kwargs)


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
