"""torch's global names for torchlike objects, and what torch's names mean when loading."""

from __future__ import annotations

import contextlib
import importlib
import pickle
import sys
from typing import Any, Callable

from .. import _weights_only_unpickler as _wo
from .._core import device as _device
from .._core import dtype as D
from .._core import layout as _layout
from .._core import tensor as T
from .._core.size import Size
from .._core.storage import TypedStorage, UntypedStorage, tensor_on
from .._core.tensor import Tensor

_STORAGE_NAMES = {
    D.float64: "DoubleStorage", D.float32: "FloatStorage", D.float16: "HalfStorage", D.bfloat16: "BFloat16Storage",
    D.int64: "LongStorage", D.int32: "IntStorage", D.int16: "ShortStorage", D.int8: "CharStorage",
    D.uint8: "ByteStorage", D.bool: "BoolStorage", D.complex64: "ComplexFloatStorage",
    D.complex128: "ComplexDoubleStorage",
}  # fmt: skip
_DTYPE_OF_STORAGE = {name: dt for dt, name in _STORAGE_NAMES.items()}
_V3_DTYPES = (D.uint16, D.uint32, D.uint64)  # torch saves these with _rebuild_tensor_v3 on untyped storages


# --- torch's globals, by name ---------------------------------------------------------------


class _Global:
    """A torch global (module, name) to write into a pickle without importing torch."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:  # pickle wants reduce functions to be callable
        raise TypeError(f"{self.module}.{self.name} is torch's, for pickles only")


_GLOBALS: dict[tuple, _Global] = {}


def _g(module: str, name: str) -> _Global:
    key = (module, name)
    g = _GLOBALS.get(key)
    if g is None:
        g = _GLOBALS[key] = _Global(module, name)
    return g


class StorageType:
    """What a legacy storage class name (``torch.FloatStorage``) means on load: a dtype."""

    def __init__(self, name: str) -> None:
        if name not in _DTYPE_OF_STORAGE:
            raise KeyError(name)
        self.dtype = _DTYPE_OF_STORAGE[name]

    def __repr__(self) -> str:
        return f"StorageType(dtype={self.dtype})"


_STORAGE_TYPES = {name: StorageType(name) for name in _DTYPE_OF_STORAGE}


def _parameter_class() -> type:
    from ..nn.parameter import Parameter

    return Parameter


def _torch_name_of(obj: Any) -> tuple[str, str] | None:
    """The (module, name) torch pickles ``obj`` under, for torchlike objects; None for others."""
    if isinstance(obj, _Global):
        return obj.module, obj.name
    if isinstance(obj, (D.dtype, _layout.memory_format)):
        return "torch", obj.name
    special = _SPECIAL_CLASSES.get(obj) if isinstance(obj, type) else None
    if special is not None:
        return special
    module = getattr(obj, "__module__", None)
    if not isinstance(module, str) or not (module == "torchlike" or module.startswith("torchlike.")):
        return None
    qualname = getattr(obj, "__qualname__", None) or obj.__name__
    if isinstance(obj, type) and obj.__name__ == "Parameter" and module == "torchlike.nn.parameter":
        return "torch.nn.parameter", "Parameter"
    parts = module.split(".")
    if any(p.startswith("_") for p in parts):
        # torchlike's private implementation file: name the public module that exports it, looking
        # in the public twins of private packages too (nn._modules -> nn.modules; _ops.nn -> nn.functional)
        twins = [["torchlike", "nn", "functional"]] if module.startswith("torchlike._ops.nn.") else []
        for public in [[p.lstrip("_") for p in parts[:n]] for n in range(len(parts), 0, -1)] + twins:
            mod = sys.modules.get(".".join(public))
            if mod is not None and getattr(mod, qualname, None) is obj:
                parts = public
                break
    return ".".join(["torch"] + parts[1:]), qualname


_SPECIAL_CLASSES: dict = {
    Tensor: ("torch", "Tensor"), Size: ("torch", "Size"), _device.device: ("torch", "device"),
    D.dtype: ("torch", "dtype"), UntypedStorage: ("torch.storage", "UntypedStorage"),
    TypedStorage: ("torch.storage", "TypedStorage"),
}  # fmt: skip


# --- rebuilding (what torch's globals mean here) ---------------------------------------------


def _rebuild_tensor(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple) -> Tensor:
    return tensor_on(storage._untyped_storage, storage.dtype, storage_offset, size, stride)


def _apply_metadata(t: Tensor, metadata: Any) -> Tensor:
    """torch's lazy conj/neg bits: torchlike has none, so the values are resolved (no longer shared)."""
    if not metadata or not (metadata.get("conj") or metadata.get("neg")):
        return t
    import jax.numpy as jnp

    arr = t._data()
    if metadata.get("conj"):
        arr = jnp.conj(arr)
    if metadata.get("neg"):
        arr = -arr
    return T.make(arr, t.device, t._dtype)


def _rebuild_tensor_v2(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple,
                       requires_grad: bool, backward_hooks: Any, metadata: Any = None) -> Tensor:  # fmt: skip
    t = _apply_metadata(_rebuild_tensor(storage, storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _rebuild_tensor_v3(storage: TypedStorage, storage_offset: int, size: tuple, stride: tuple, requires_grad: bool,
                       backward_hooks: Any, dtype: D.dtype, metadata: Any = None) -> Tensor:  # fmt: skip
    untyped = storage._untyped_storage if isinstance(storage, TypedStorage) else storage
    t = _apply_metadata(tensor_on(untyped, dtype, storage_offset, size, stride), metadata)
    t.requires_grad = requires_grad
    return t


def _set_obj_state(obj: Any, state: Any) -> Any:
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for k, v in (dict_state or {}).items():
        setattr(obj, k, v)
    for k, v in (slots_state or {}).items():
        setattr(obj, k, v)
    return obj


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any) -> Tensor:
    return _parameter_class()(data, requires_grad)


def _rebuild_parameter_with_state(
    data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any
) -> Tensor:
    return _set_obj_state(_parameter_class()(data, requires_grad), state)


def _rebuild_from_type_v2(func: Callable, new_type: type, args: tuple, state: Any) -> Any:
    """A tensor (subclass) with Python attributes: ``func(*args)`` as ``new_type``, then its state."""
    if not (isinstance(new_type, type) and issubclass(new_type, Tensor)):
        raise RuntimeError(f"torchlike: cannot rebuild a tensor as {new_type}")
    ret = func(*args)
    if not isinstance(ret, Tensor):  # never set attributes on anything but a freshly rebuilt tensor
        raise RuntimeError(f"torchlike: _rebuild_from_type_v2 expected a tensor, got {type(ret).__name__}")
    if type(ret) is not new_type:
        sub = object.__new__(new_type)
        for slot in Tensor.__slots__:
            if slot not in ("__dict__", "__weakref__"):
                setattr(sub, slot, getattr(ret, slot))
        ret = sub
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None and setstate is not getattr(Tensor, "__setstate__", None):
        ret.__setstate__(state)
    else:
        ret = _set_obj_state(ret, state)
    return ret


def _rebuild_device_tensor_from_cpu_tensor(
    data: Tensor, dtype: D.dtype, device: str, requires_grad: bool
) -> Tensor:
    t = data.to(dtype=dtype, device=device)
    t.requires_grad = requires_grad
    return t


def _unsupported(what: str) -> Callable:
    def rebuild(*args: Any) -> Any:
        raise NotImplementedError(
            f"torchlike cannot load {what} (saved by torch); only strided dense tensors"
        )

    rebuild.__name__ = "_rebuild_" + what.replace(" ", "_")
    return rebuild


def _get_layout(name: str) -> Any:
    value = getattr(_layout, name.removeprefix("torch."), None)
    if not isinstance(value, _layout.layout):
        raise RuntimeError(f"torchlike has no layout {name}")
    return value


_REBUILDERS = {
    "_rebuild_tensor": _rebuild_tensor, "_rebuild_tensor_v2": _rebuild_tensor_v2,
    "_rebuild_tensor_v3": _rebuild_tensor_v3, "_rebuild_parameter": _rebuild_parameter,
    "_rebuild_parameter_with_state": _rebuild_parameter_with_state,
    "_rebuild_device_tensor_from_cpu_tensor": _rebuild_device_tensor_from_cpu_tensor,
    "_rebuild_qtensor": _unsupported("quantized tensors"), "_rebuild_sparse_tensor": _unsupported("sparse tensors"),
    "_rebuild_nested_tensor": _unsupported("nested tensors"),
    "_rebuild_meta_tensor_no_storage": _unsupported("meta tensors"),
    "_rebuild_wrapper_subclass": _unsupported("wrapper tensor subclasses"),
    "_rebuild_device_tensor_from_numpy": _unsupported("tensors pickled through numpy"),
}  # fmt: skip


_TORCH_GLOBALS: dict[str, Any] = {}


def _torch_globals() -> dict[str, Any]:
    """torch's names for the globals torch's weights-only loader allows, mapped to torchlike's."""
    if _TORCH_GLOBALS:
        return _TORCH_GLOBALS
    rc = _TORCH_GLOBALS
    rc.update(_wo.BASE_GLOBALS)
    rc.update({
        "torch.nn.parameter.Parameter": _parameter_class(), "torch.serialization._get_layout": _get_layout,
        "torch.Size": Size, "torch.Tensor": Tensor, "torch.device": _device.device,
        "torch.storage.UntypedStorage": UntypedStorage, "torch.storage.TypedStorage": TypedStorage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    })  # fmt: skip
    for dt in D.ALL:
        rc[f"torch.{dt.name}"] = dt
    for name, st in _STORAGE_TYPES.items():
        rc[f"torch.{name}"] = st
        rc[f"torch.cuda.{name}"] = st
    for name, fn in _REBUILDERS.items():
        rc[f"torch._utils.{name}"] = fn
    return rc


def _resolve_torch_global(module: str, name: str) -> Any:
    """The torchlike object for a torch global in a checkpoint (weights_only=False)."""
    if module == "torch.tensor":  # torch's own rename (pytorch#51633)
        module = "torch._tensor"
    full = f"{module}.{name}"
    known = _torch_globals().get(full)
    if known is not None:
        return known
    if name == "Tensor" and module == "torch._tensor":
        return Tensor
    target = "torchlike" + module[len("torch") :]
    try:
        obj: Any = importlib.import_module(target)
        for part in name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        raise pickle.UnpicklingError(f"torchlike has no equivalent of torch's {full} ({e})") from None
    return obj


# --- safe globals (torch.serialization.add_safe_globals) ---------------------------------------

_safe_globals: set = set()


def add_safe_globals(safe_globals: list) -> None:
    """Allow these globals (objects, or ``(object, "module.name")`` pairs) in ``load(weights_only=True)``."""
    _safe_globals.update(safe_globals)


def clear_safe_globals() -> None:
    _safe_globals.clear()


def get_safe_globals() -> list:
    return list(_safe_globals)


@contextlib.contextmanager
def safe_globals(safe_globals: list) -> Any:
    """Context manager form of :func:`add_safe_globals`."""
    added = set(safe_globals) - _safe_globals
    _safe_globals.update(added)
    try:
        yield
    finally:
        _safe_globals.difference_update(added)


def _user_globals() -> dict[str, Any]:
    rc = {}
    for f in _safe_globals:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(
                    f"Expected tuple of length 2 (global, str of callable full path), but got tuple of length: {len(f)}"
                )
            if type(f[1]) is not str:
                raise TypeError(
                    f"Expected second item in tuple to be str of callable full path, but got: {type(f[1])}"
                )
            rc[f[1]] = f[0]
        else:
            tn = _torch_name_of(f)
            rc[f"{tn[0]}.{tn[1]}" if tn else f"{f.__module__}.{f.__qualname__}"] = f
    return rc
