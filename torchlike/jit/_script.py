"""torch.jit.script and the scripted objects.

TorchScript runs a valid program with eager semantics, so a scripted function or module here is
the eager object behind a wrapper of torch's type: calls run the Python code (with
``torch.jit.is_scripting()`` True inside, as compiled code sees it), modules share their
parameters and buffers with the original, as in torch. What needs the compiled program itself
(``.code``, ``.graph``, ``.save``, ``torch.jit.save``/``load``, ``freeze``) raises
NotImplementedError. Differs from torch: nothing is compiled, so code TorchScript would reject
is not rejected, and ``@torch.jit.ignore`` functions called from scripted code also see
``is_scripting()`` True.
"""

from __future__ import annotations

import copy
import functools
import sys
import warnings
from typing import Any, Callable, NamedTuple

from ..nn.modules._module import Module

_scripting = 0  # > 0 while scripted code runs


def _deprecated(name: str, instead: str = "`torch.compile` or `torch.export`") -> None:
    if sys.version_info >= (3, 14):
        warnings.warn(
            f"`torch.jit.{name}` is not supported in Python 3.14+ and may break. Please switch to {instead}.",
            DeprecationWarning,
        )
    else:
        warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to {instead}.", DeprecationWarning)


def is_scripting() -> bool:
    """torch.jit.is_scripting: True only inside scripted code."""
    return _scripting > 0


def _run_scripted(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    global _scripting
    _scripting += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _scripting -= 1


def _no_compiled_program(what: str) -> NotImplementedError:
    return NotImplementedError(
        f"{what} is not supported by torchlike: scripted and traced objects run the eager Python code and have "
        "no TorchScript program"
    )


class _CompiledOnly:
    """Attributes of torch's scripted objects that exist only with a compiled program."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        raise _no_compiled_program(f"{self.kind}.{self.name}")


class ScriptFunction:
    """A scripted (or traced) function: calls run the original function."""

    def __init__(self, fn: Callable, name: str | None = None) -> None:
        self._fn = fn
        self.name = name or getattr(fn, "__name__", "fn").replace("<lambda>", "_lambda")
        self.qualified_name = self.name
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _run_scripted(self._fn, *args, **kwargs)

    code = _CompiledOnly("ScriptFunction")
    graph = _CompiledOnly("ScriptFunction")
    inlined_graph = _CompiledOnly("ScriptFunction")
    schema = _CompiledOnly("ScriptFunction")
    save = _CompiledOnly("ScriptFunction")
    save_to_buffer = _CompiledOnly("ScriptFunction")
    graph_for = _CompiledOnly("ScriptFunction")


ScriptFunction.__module__ = "torchlike.jit"


class ScriptModule(Module):
    """Base of scripted and traced modules. Wraps an eager module: shares its parameters, buffers
    and attributes. NOTE: the wrapper's class derives from the original's (torch's does not)."""

    _wrapper_name = "ScriptModule"
    _child_wrapper: type | None = None  # what wraps the submodules (default: this class)

    def __init__(self) -> None:
        super().__init__()

    @classmethod
    def _wrap(cls, module: Module) -> ScriptModule:
        if isinstance(module, ScriptModule):
            return module  # torch: an already scripted (or traced) submodule stays as it is
        self = object.__new__(_wrapper_class(cls, type(module)))
        # hooks registered so far are kept, later ones stay with the object they are registered on
        d = {k: (copy.copy(v) if "hooks" in k and isinstance(v, dict) else v) for k, v in module.__dict__.items()}
        child = cls._child_wrapper or cls
        d["_modules"] = {k: (None if m is None else child._wrap(m)) for k, m in module._modules.items()}
        d["_orig_cls"] = type(module)
        d["original_name"] = type(module).__name__
        object.__setattr__(self, "__dict__", d)
        return self

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return _run_scripted(self._orig_cls.forward, self, *args, **kwargs)

    @property
    def original_name(self) -> str:
        return self.__dict__.get("original_name", type(self).__name__)

    def extra_repr(self) -> str:  # a user's ScriptModule subclass prints as a plain Module
        return f"original_name={self.original_name}" if "_orig_cls" in self.__dict__ else ""

    def _get_name(self) -> str:
        return self._wrapper_name if "_orig_cls" in self.__dict__ else type(self).__name__

    def __copy__(self) -> ScriptModule:
        new = object.__new__(type(self))
        object.__setattr__(new, "__dict__", dict(self.__dict__))
        return new

    def __deepcopy__(self, memo: dict) -> ScriptModule:
        new = object.__new__(type(self))
        memo[id(self)] = new
        object.__setattr__(new, "__dict__", copy.deepcopy(self.__dict__, memo))
        return new

    def __reduce_ex__(self, protocol: Any) -> Any:
        cls = self.__dict__.get("_orig_cls", type(self))
        path = ".".join(p.lstrip("_") for p in cls.__module__.split(".")).replace("torchlike", "torch", 1)
        raise RuntimeError(
            f"Tried to serialize object __torch__.{path}.{cls.__qualname__} which does not have a __getstate__ method "
            "defined!"
        )

    code = _CompiledOnly("ScriptModule")
    code_with_constants = _CompiledOnly("ScriptModule")
    graph = _CompiledOnly("ScriptModule")
    inlined_graph = _CompiledOnly("ScriptModule")
    save = _CompiledOnly("ScriptModule")
    save_to_buffer = _CompiledOnly("ScriptModule")
    _c = _CompiledOnly("ScriptModule")


_wrapper_classes: dict = {}


def _wrapper_class(cls: type, orig: type) -> type:
    """``cls`` over the original class, so the original's methods, class attributes, special methods
    and ``super()`` calls work with the wrapper as ``self`` (the wrapper's forward and repr win)."""
    sub = _wrapper_classes.get((cls, orig))
    if sub is None:
        ns = {"__qualname__": cls.__qualname__, "__module__": cls.__module__}
        sub = _wrapper_classes[(cls, orig)] = type(cls.__name__, (cls, orig), ns)
    return sub


class RecursiveScriptModule(ScriptModule):
    """What ``torch.jit.script(module)`` returns."""

    _wrapper_name = "RecursiveScriptModule"


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:  # fmt: skip
    """torch.jit.script: see the module docstring (runs the eager code, with torch's warning)."""
    _deprecated("script")
    if optimize is not None:
        warnings.warn(
            "`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` instead",
            FutureWarning,
            stacklevel=2,
        )
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return RecursiveScriptModule._wrap(obj)
    if isinstance(obj, type):
        return obj  # a TorchScript class: instances behave as the eager class's
    if callable(obj):
        return ScriptFunction(obj)
    if type(obj).__module__ == "builtins":
        raise TypeError(f"{type(obj)} is a built-in class")
    raise NotImplementedError(f"torch.jit.script of a {type(obj).__name__} object is not supported by torchlike")


def script_method(fn: Callable) -> Callable:
    _deprecated("script_method")
    return fn


# --- decorators and annotations ---------------------------------------------------------------


class FunctionModifiers:
    UNUSED = "unused (ignored and replaced with raising of an exception)"
    IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
    EXPORT = "export (compile this function even if nothing calls it)"
    DEFAULT = "default (compile if called from an exported function / forward)"
    COPY_TO_SCRIPT_WRAPPER = "if this method is not scripted, copy the python method onto the scripted model"
    _DROP = "_drop (function is fully ignored, declaration can be unscriptable)"


def export(fn: Callable) -> Callable:
    """torch.jit.export: marks a method; it stays callable on the scripted module."""
    fn._torchscript_modifier = FunctionModifiers.EXPORT
    return fn


def unused(fn: Any) -> Any:
    """torch.jit.unused: eager code still calls the function."""
    if isinstance(fn, property):
        fn.fget._torchscript_modifier = FunctionModifiers.UNUSED
        if fn.fset:
            fn.fset._torchscript_modifier = FunctionModifiers.UNUSED
        return fn
    fn._torchscript_modifier = FunctionModifiers.UNUSED
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """torch.jit.ignore: ``@ignore`` or ``@ignore(drop=...)``; the function stays Python."""
    if callable(drop):
        drop._torchscript_modifier = FunctionModifiers.IGNORE
        return drop
    if not isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export or drop:
        what = "drop_on_export=True" if drop_on_export else "True"
        warnings.warn(
            f"ignore({what}) has been deprecated. TorchScript will now drop the function call on compilation. Use "
            "torch.jit.unused now. {}",
            stacklevel=2,
            category=FutureWarning,
        )
        drop = drop or drop_on_export

    def decorator(fn: Callable) -> Callable:
        fn._torchscript_modifier = FunctionModifiers.UNUSED if drop else FunctionModifiers.IGNORE
        return fn

    return decorator


class Attribute(NamedTuple):
    """torch.jit.Attribute(value, type): outside TorchScript, just the pair."""

    value: Any
    type: Any


def annotate(the_type: Any, the_value: Any) -> Any:
    """torch.jit.annotate: returns ``the_value``."""
    return the_value


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    raise _no_compiled_program("torch.jit.save")


def load(f: Any, map_location: Any = None, _extra_files: Any = None, _restore_shapes: bool = False) -> Any:
    raise _no_compiled_program("torch.jit.load")


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> Any:
    raise _no_compiled_program("torch.jit.freeze")


def optimize_for_inference(mod: Any, other_methods: Any = None) -> Any:
    raise _no_compiled_program("torch.jit.optimize_for_inference")


class ScriptWarning(Warning):
    pass


class CompilationUnit:
    """torch.jit.CompilationUnit compiles TorchScript source text: not available in torchlike."""

    def __init__(self, lang: Any = None, _frames_up: int = 0) -> None:
        raise _no_compiled_program("torch.jit.CompilationUnit")


def export_opnames(m: Any) -> list:
    raise _no_compiled_program("torch.jit.export_opnames")


def _overload(func: Callable) -> Callable:
    """Declares an overload signature; the eager code calls the final, undecorated definition."""
    return func


_overload_method = _overload
