"""torch.nn.Parameter and torch.nn.Buffer."""

from __future__ import annotations

from typing import Any

from .._core import tensor as T
from .._core.tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


def _share(cls: type, data: Tensor) -> Tensor:
    """A new leaf of class ``cls`` over ``data``'s buffer, view and version counter (torch's _make_subclass)."""
    base = T._alias(data)
    t = object.__new__(cls)
    for slot in Tensor.__slots__:
        if slot not in ("__dict__", "__weakref__"):
            setattr(t, slot, getattr(base, slot))
    return t


class _ParameterMeta(type):
    def __instancecheck__(self, instance: Any) -> bool:
        if self is Parameter and isinstance(instance, Tensor) and getattr(instance, "_is_param", False):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """torch.nn.Parameter: a leaf tensor (sharing ``data``'s memory) that Modules register as a parameter."""

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from .._ops import creation

            data = creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}")
        t = _share(cls, data)
        t.requires_grad_(requires_grad)
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto: int) -> Any:
        return (_rebuild_parameter, (self.data, self.requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class _BufferMeta(type):
    def __instancecheck__(self, instance: Any) -> bool:
        if self is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """torch.nn.Buffer: marks a tensor to be registered as a module buffer when assigned to an attribute."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Any:  # type: ignore[misc]
        if data is None:
            from .._ops import creation

            data = creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedParameter(Parameter):
    """Lazy modules are not supported; constructing one raises."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("torchlike: lazy modules (UninitializedParameter) are not supported")


class UninitializedBuffer(Tensor):
    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("torchlike: lazy modules (UninitializedBuffer) are not supported")


def is_lazy(param: Any) -> bool:
    return False
