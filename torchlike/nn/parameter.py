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
        return t._new_requires_grad() if requires_grad else t.requires_grad_(False)

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


_UNINITIALIZED_USE = (
    "Attempted to use an uninitialized parameter. This error happens when you are using a `LazyModule` or "
    "explicitly manipulating `torch.nn.parameter.{cls}` objects. When using LazyModules Call `forward` with a "
    "dummy batch to initialize the parameters before calling torch functions"
)


class _NoStorage(T.Buffer):
    """The storage of an uninitialized parameter or buffer: it has a device but no values to read."""

    __slots__ = ("owner",)

    def __init__(self, device: Any, owner: str) -> None:  # Buffer.__init__ would store an array
        self.np = self.np_strides = None
        self.device = device
        self.owner = owner

    @property
    def array(self) -> Any:
        raise ValueError(_UNINITIALIZED_USE.format(cls=self.owner))

    def get(self) -> Any:
        return self.array


def _uninitialized(cls: type, requires_grad: bool, device: Any, dtype: Any) -> Any:
    from .._ops import creation

    t = _share(cls, creation.empty(0, device=device, dtype=dtype))
    t._buf = _NoStorage(t._buf.device, cls.__name__)
    t.requires_grad_(requires_grad)
    return t


class _UninitializedMixin:
    """What torch's UninitializedTensorMixin gives: a dtype and device but no shape until ``materialize``."""

    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a ``cls_to_become`` of ``shape`` (uninitialized values, as torch.empty), on this one's
        device and dtype unless given."""
        from .._ops import creation

        data = creation.empty(shape, device=self.device if device is None else device,
                              dtype=self.dtype if dtype is None else dtype)  # fmt: skip
        Tensor.data.fset(self, data)
        self.__class__ = self.cls_to_become

    def _apply_uninitialized(self, fn: Any) -> None:
        """``Module._apply(fn)`` on this: keep it uninitialized, take the dtype and device ``fn`` gives."""
        from .._ops import creation

        probe = fn(creation.empty(0, device=self.device, dtype=self.dtype))
        self._dtype = probe._dtype
        self._buf.device = probe._buf.device

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes."
        )

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the "
            "parameters before calling `module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto: int) -> Any:
        return (self.__class__, (self.requires_grad,))


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A parameter of a lazy module before its first forward: a dtype and device, no shape or values."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> Any:
        return _uninitialized(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(_UninitializedMixin, Tensor):
    """A buffer of a lazy module before its first forward."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> Any:  # fmt: skip
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        return t

    def __deepcopy__(self, memo: dict) -> Any:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, _UninitializedMixin)
