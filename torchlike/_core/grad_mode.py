"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode."""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from .._core.tensor import grad_state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled"]


_state = grad_state  # the calling thread's grad and inference mode (kept in _core: allocation reads it)


def is_grad_enabled() -> bool:
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set(enabled: bool) -> None:
    _state.enabled = bool(enabled)


class _DecoratorContextManager:
    """A context manager that is also usable as a decorator (on functions and generators)."""

    def __call__(self, func: Callable) -> Callable:
        if inspect.isclass(func):
            raise RuntimeError("Cannot decorate a class with a grad mode context manager")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value

            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper

    def clone(self) -> Any:
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator (``@no_grad`` without parentheses), as torch allows."""

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disable gradient recording inside the block."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set(False)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enable gradient recording inside the block."""

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set(True)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: takes effect immediately, and as a context manager restores it on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}")
        self.prev = _state.enabled
        self.mode = bool(mode)
        _set(mode)

    def __call__(self, func: Callable) -> Callable:
        _set(self.prev)
        return super().__call__(func)

    def __enter__(self) -> None:
        _set(self.mode)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """torch.inference_mode: no_grad, and tensors allocated inside are inference tensors
    (``Tensor.is_inference()``). ``inference_mode(False)`` turns both off, enabling grad as torch does."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self) -> None:
        self.prev = (_state.enabled, _state.inference)
        _set(not self.mode)
        _state.inference = bool(self.mode)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev[0])
        _state.inference = self.prev[1]

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


# torch's path of this module (torch.autograd.grad_mode), which autograd/__init__ makes importable: what reprs
# and pickle show for the classes defined here
for _obj in list(globals().values()):
    if getattr(_obj, "__module__", None) == __name__ and not getattr(_obj, "__name__", "_").startswith("_"):
        _obj.__module__ = "torchlike.autograd.grad_mode"
