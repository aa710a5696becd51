"""torchlike.compile and the module wrapper it returns for nn.Modules."""

from __future__ import annotations

from typing import Any

from ._runtime import CompiledFunction, Unsupported, config, hyper, stats

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "Unsupported", "config", "hyper", "stats", "reset"]


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: bool | None = None, backend: Any = "inductor",
            mode: str | None = None, options: dict | None = None, disable: bool = False) -> Any:
    """torch.compile: a function or module whose calls run as one XLA program (see _runtime).

    ``backend`` is accepted and ignored (XLA is the backend); ``mode`` may be ``"check"`` to run the
    first calls both compiled and eagerly and raise if they differ.
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)  # fmt: skip
    if mode not in (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs", "check"):
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: default, reduce-overhead, max-autotune, "
                           "max-autotune-no-cudagraphs")  # fmt: skip
    try:
        from ..nn import Module
    except ImportError:  # nn not importable yet: plain functions only
        Module = ()
    if Module and isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model.__call__, fullgraph, dynamic, mode, options, disable))
    if not callable(model):
        raise RuntimeError("compile(): model must be a callable")
    return CompiledFunction(model, fullgraph, dynamic, mode, options, disable)


def _module_compile(self: Any, *args: Any, **kwargs: Any) -> None:
    """nn.Module.compile: this module's calls run compiled from now on."""
    self._compiled_call_impl = compile(self._call_impl, *args, **kwargs)


def _module_base() -> type:
    from ..nn import Module

    return Module


class OptimizedModule:
    """What ``compile(module)`` returns: calls run compiled; everything else is the original module's.

    As in torch, its state_dict keys carry the ``_orig_mod.`` prefix.
    """

    def __new__(cls, mod: Any, compiled: CompiledFunction) -> Any:
        Base = _module_base()
        impl = type("OptimizedModule", (_OptimizedModuleImpl, Base), {})
        obj = Base.__new__(impl)
        Base.__init__(obj)
        obj._orig_mod = mod
        object.__setattr__(obj, "_compiled_call", compiled)
        return obj


class _OptimizedModuleImpl:
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled_call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {repr(self._orig_mod).replace(chr(10), chr(10) + '  ')}\n)"


def reset() -> None:
    """torch._dynamo.reset(): forget compiled programs (they are per CompiledFunction here)."""
    stats.clear()


_module_compile.__qualname__ = "Module.compile"
_module_base().compile = _module_compile  # attached from here: nn sits below compile
