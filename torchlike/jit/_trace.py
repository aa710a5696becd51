"""torch.jit.trace: the traced object runs the eager code on every call.

A trace records the ops one example run executes; replaying it equals running the Python code
whenever the code's control flow does not depend on the input (the case torch's trace is valid
for), so here each call runs the code, with ``torch.jit.is_tracing()`` True inside as during
torch's trace. Differs from torch: the function is not run at trace time (side effects and random
draws of that run do not happen), and no TracerWarnings are given.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable

from ..nn.modules._module import Module
from . import _script
from ._script import ScriptFunction, ScriptModule

_tracing = 0  # > 0 while traced code runs


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


def _top_level(mod: Module, method: str = "forward") -> TopLevelTracedModule:
    out = TopLevelTracedModule._wrap(mod)
    out.__dict__["_modules"] = {k: (None if m is None else TracedModule._wrap(m)) for k, m in mod._modules.items()}
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
        return trace_module(func, {"forward": example_inputs}, None, check_trace)
    if inspect.ismethod(func) and isinstance(func.__self__, Module):
        return trace_module(func.__self__, {func.__name__: example_inputs}, None, check_trace)
    if check_trace:
        _script._deprecated("trace")  # torch: the check traces the function again
    return _TracedFunction(func)


def trace_module(mod: Module, inputs: dict, optimize: Any = None, check_trace: bool = True,
                 check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
                 example_inputs_is_kwarg: bool = False, _store_inputs: bool = True) -> TopLevelTracedModule:  # fmt: skip
    """torch.jit.trace_module: a module whose ``forward`` (or the one method traced) runs traced."""
    _script._deprecated("trace_method")
    _optimize_warning(optimize)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    if check_trace:
        _script._deprecated("trace_method")  # torch: the check traces the module again
    names = list(inputs)
    return _top_level(mod, names[0] if len(names) == 1 else "forward")
