"""torch.jit.trace: the traced object runs the eager code on every call.

A trace records the ops one example run executes; replaying it equals running the Python code
whenever the code's control flow does not depend on the input (the case torch's trace is valid
for), so here each call runs the code, with ``torch.jit.is_tracing()`` True inside as during
torch's trace. At trace time the function runs on the example inputs as often as torch runs it
(once, three times with ``check_trace``), and its outputs are checked as torch checks them.
Differs from torch: no TracerWarnings, and ``check_trace`` compares nothing (there is no
separate traced program that could disagree with the Python code).
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

from .._core.tensor import Tensor
from ..nn.modules._module import Module
from . import _script
from ._script import ScriptFunction, ScriptModule

_tracing = 0  # > 0 while traced code runs


class TracerWarning(Warning):
    """torch.jit.TracerWarning (torchlike never issues it; warning filters may name it)."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")


class TracingCheckError(Exception):
    """torch.jit.TracingCheckError (never raised here: ``check_trace`` has nothing to compare)."""


def is_tracing() -> bool:
    """torch.jit.is_tracing: True inside traced code (False inside scripted code)."""
    return _tracing > 0 and not _script.is_scripting()


def _run_traced(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    global _tracing
    _tracing += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _tracing -= 1


class TracedModule(ScriptModule):
    """A traced module (its children in a trace); prints under its original class name."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        method = getattr(self._orig_cls, self.__dict__.get("_traced_forward", "forward"))
        return _run_traced(method, self, *args, **kwargs)

    def _get_name(self) -> str:
        return self.original_name


class TopLevelTracedModule(TracedModule):
    """What ``torch.jit.trace(module, ...)`` returns."""

    _child_wrapper = TracedModule


class _TracedFunction(ScriptFunction):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _run_traced(self._fn, *args, **kwargs)


def _optimize_warning(optimize: Any) -> None:
    if optimize is not None:
        warnings.warn(
            "`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` instead",
            FutureWarning,
            stacklevel=3,
        )


_DICT_OUTPUT = (
    "Encountering a dict at the output of the tracer might cause the trace to be incorrect, this is only valid if "
    "the container structure does not change based on the module's inputs. Consider using a constant container "
    "instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you absolutely "
    "need this and know the side effects, pass strict=False to trace() to allow this behavior."
)


def _check_output(out: Any, strict: bool) -> None:
    if isinstance(out, Tensor):
        return
    if isinstance(out, (tuple, list)):
        for o in out:
            _check_output(o, strict)
        return
    if isinstance(out, dict):
        if strict:
            raise RuntimeError(_DICT_OUTPUT)
        for o in out.values():
            _check_output(o, strict)
        return
    raise RuntimeError(
        "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced functions"
    )


def _as_call(example_inputs: Any, example_kwarg_inputs: Any) -> tuple:
    if example_kwarg_inputs is not None:
        return (), dict(example_kwarg_inputs)
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,), {}
    return tuple(example_inputs), {}


def _example_run(fn: Callable, example_inputs: Any, example_kwarg_inputs: Any, check_trace: bool, strict: bool,
                 check_inputs: Any = None) -> None:  # fmt: skip
    """Run ``fn`` as torch's trace does (its side effects and RNG draws happen): on the example inputs,
    then, with ``check_trace``, twice per check input (torch re-traces, then runs the Python code)."""
    calls = [_as_call(example_inputs, example_kwarg_inputs)]
    if check_trace:
        checks = [_as_call(c, None) for c in check_inputs] if check_inputs is not None else calls[:1]
        calls += [c for c in checks for _ in range(2)]
    for args, kwargs in calls:
        _check_output(_run_traced(fn, *args, **kwargs), strict)


def _top_level(mod: Module, method: str = "forward") -> TopLevelTracedModule:
    out = TopLevelTracedModule._wrap(mod)
    out.__dict__["_traced_forward"] = method
    return out


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Any = None, _store_inputs: bool = True) -> Any:  # fmt: skip
    """torch.jit.trace: see the module docstring (runs the eager code, with torch's warnings)."""
    _script._deprecated("trace")
    _optimize_warning(optimize)
    if isinstance(func, ScriptModule):
        warnings.warn(
            "The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object as is.",
            stacklevel=2,
        )
        return func
    if isinstance(func, Module):
        _example_run(func, example_inputs, example_kwarg_inputs, check_trace, strict, check_inputs)
        return trace_module(func, {"forward": example_inputs}, None, check_trace, _run=False)
    if inspect.ismethod(func) and isinstance(func.__self__, Module):
        _example_run(func, example_inputs, example_kwarg_inputs, check_trace, strict, check_inputs)
        return trace_module(func.__self__, {func.__name__: example_inputs}, None, check_trace, _run=False)
    _example_run(func, example_inputs, example_kwarg_inputs, check_trace, strict, check_inputs)
    if check_trace:
        _script._deprecated("trace")  # torch: the check traces the function again
    return _TracedFunction(func)


def trace_module(mod: Module, inputs: dict, optimize: Any = None, check_trace: bool = True,
                 check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
                 example_inputs_is_kwarg: bool = False, _store_inputs: bool = True,
                 _run: bool = True) -> TopLevelTracedModule:  # fmt: skip
    """torch.jit.trace_module: a module whose ``forward`` (or the one method traced) runs traced."""
    _script._deprecated("trace_method")
    _optimize_warning(optimize)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    if _run:
        for name, example in inputs.items():
            fn = mod if name == "forward" else getattr(mod, name)
            kw = example if example_inputs_is_kwarg else None
            _example_run(fn, None if example_inputs_is_kwarg else example, kw, check_trace, strict)
    if check_trace:
        _script._deprecated("trace_method")  # torch: the check traces the module again
    names = list(inputs)
    return _top_level(mod, names[0] if len(names) == 1 else "forward")
