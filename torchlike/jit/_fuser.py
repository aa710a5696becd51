"""TorchScript's executor and fuser settings. They tune how compiled graphs run, never what they
compute, so here they are remembered and validated but change nothing."""

from __future__ import annotations

import contextlib
import inspect
import warnings
from typing import Any, Callable, Iterator

from . import _script

_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")
_state: dict = {"optimize": True, "fuser": "fuser0", "strategy": [("STATIC", 2), ("DYNAMIC", 10)], "onednn": False}


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """torch.jit.optimized_execution."""
    prev, _state["optimize"] = _state["optimize"], should_optimize
    try:
        yield
    finally:
        _state["optimize"] = prev


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """torch.jit.fuser: ``fuser0``..``fuser3`` or ``none``."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")
    prev, _state["fuser"] = _state["fuser"], name
    try:
        yield
    finally:
        _state["fuser"] = prev


def set_fusion_strategy(strategy: list) -> list:
    """torch.jit.set_fusion_strategy: returns the previous strategy."""
    warnings.warn(
        "`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` instead.", DeprecationWarning
    )
    prev, _state["strategy"] = _state["strategy"], [tuple(s) for s in strategy]
    return prev


def enable_onednn_fusion(enabled: bool) -> None:
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _state["onednn"]


class strict_fusion:
    """torch.jit.strict_fusion: only meaningful in scripted code (warns elsewhere, as torch)."""

    def __init__(self) -> None:
        if not _script.is_scripting():
            warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        pass


def script_if_tracing(fn: Callable) -> Callable:
    """torch.jit.script_if_tracing: ``fn`` runs as scripted code while tracing, as itself otherwise."""
    from ._trace import is_tracing

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return _script._run_scripted(fn, *args, **kwargs) if is_tracing() else fn(*args, **kwargs)

    wrapper.__original_fn = fn  # type: ignore[attr-defined]
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def interface(obj: Any) -> Any:
    """torch.jit.interface: validated as torch does; the class is returned unchanged."""
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.", DeprecationWarning)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    from ..nn.modules._module import Module

    if not (issubclass(obj, Module) and len(obj.mro()) == 3) and len(obj.mro()) > 2:
        raise RuntimeError(
            "TorchScript interface does not support inheritance yet. Please directly inherit from 'object' or "
            "'nn.Module'."
        )
    return obj


class Error(Exception):
    """torch.jit.Error: raised by TorchScript's ``raise`` statements."""


Error.__module__ = "torchlike.jit"
