"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, arange, linspace, eye, *_like."""

from __future__ import annotations

import builtins
import copy as _copy
import math
import warnings
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from .._core import cold_kernels, lazy
from .._core import device as _device
from .._core import dtype as D
from .._core import tensor as T
from .._core.kernel_cache import LRU
from .._core.size import Size
from .._core.storage import TypedStorage, UntypedStorage, tensor_on
from .._core.tensor import Tensor
from . import registry
from .registry import expose


def _dev(device: Any) -> _device.device:
    return _device.canonical(device)


def _place(arr: Any, dev: _device.device) -> Any:
    """Put a fresh array on ``dev`` (CPU arrays stay where JAX made them: the default device is CPU)."""
    if dev.type == "cpu":
        return arr
    return lazy.put(arr, _device.jax_device(dev))


def from_array(arr: Any, dev: _device.device, requires_grad: bool = False, dtype: D.dtype | None = None) -> Tensor:
    t = T.make(_place(arr, dev), dev, dtype)
    if requires_grad:
        t._new_requires_grad()
    return t


class _Required:
    """The default of a size argument torch requires but Python can't mark as required (``*size`` with ``size=``)."""

    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Required()


def size_args(fname: str, args: tuple, size: Any) -> tuple:
    """torch's size arguments: ints or one sequence as ``*args``, or the keyword ``size=``; one of them."""
    if size is REQUIRED:
        if not args:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        return args
    if args:
        raise TypeError(f"{fname}() got multiple values for argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    return (size,)


def parse_size(size: Sequence[Any], fname: str) -> tuple:
    """torch's ``*size`` parsing: varargs, one tuple/list/Size, or empty."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = size[0]
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.__index__()
        elif not isinstance(s, int) or isinstance(s, builtins.bool):
            if hasattr(s, "__index__") and not isinstance(s, (float, builtins.bool)):
                s = s.__index__()
            else:
                raise TypeError(
                    f"{fname}(): argument 'size' (position 1) must be tuple of ints, not {type(s).__name__}"
                )
        out.append(s)
    for s in out:
        if s < 0:
            if fname == "zeros":  # torch: zeros checks its size itself, the other factories in empty
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


# --- from data -------------------------------------------------------------------------------------


def _first_leaf(data: Any) -> Any:
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _numpy_of(data: Any, dtype: D.dtype | None) -> tuple[np.ndarray, D.dtype]:
    """Convert Python data to a numpy array and torch's inferred dtype, without per-element loops."""
    if isinstance(data, Tensor):
        arr = np.asarray(data.detach()._data())
        return arr, dtype or data._dtype
    if isinstance(data, np.ndarray):
        return data, dtype or D.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), dtype or D.from_numpy_dtype(data.dtype)
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if isinstance(data, (builtins.bool, int, float, builtins.complex)):
        return np.asarray(data), dtype or D.scalar_dtype(data)
    if isinstance(data, (list, tuple)):
        leaf = _first_leaf(data)
        if isinstance(leaf, Tensor):
            data = _tensors_to_lists(data)
        try:
            arr = np.asarray(data)
        except ValueError:
            _raise_ragged(data)
        if arr.dtype == object:
            _raise_ragged(data)
        if dtype is not None:
            return arr, dtype
        if isinstance(leaf, (np.generic, np.ndarray)):
            return arr, D.from_numpy_dtype(arr.dtype)
        if isinstance(leaf, Tensor):
            return arr, leaf._dtype if arr.dtype.kind == np.dtype(leaf._dtype.np).kind else _py_kind(arr)
        return arr, _py_kind(arr)
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        arr = np.asarray(data)
        return arr, dtype or D.from_numpy_dtype(arr.dtype)
    raise RuntimeError(f"Could not infer dtype of {type(data).__name__}")


def _tensors_to_lists(data: Any) -> Any:
    if isinstance(data, Tensor):
        if data.numel() != 1 and data.dim() != 0:
            return data.tolist()
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_lists(d) for d in data]
    return data


def _py_kind(arr: np.ndarray) -> D.dtype:
    k = arr.dtype.kind
    if k == "b":
        return D.bool
    if k in "iu":
        return D.int64
    if k == "f":
        return D.get_default_dtype()
    if k == "c":
        return D.default_complex()
    raise TypeError(f"Could not infer dtype of {arr.dtype}")


def _raise_ragged(data: Any) -> None:
    def walk(d: Any, dim: int) -> None:
        if not isinstance(d, (list, tuple)) or not d:
            return
        lens = None
        for item in d:
            n = len(item) if isinstance(item, (list, tuple)) else None
            if lens is None:
                lens = n
            elif n != lens:
                raise ValueError(f"expected sequence of length {lens} at dim {dim + 1} (got {n})")
        for item in d:
            walk(item, dim + 1)

    walk(data, 0)
    raise RuntimeError(f"Could not infer dtype of {type(_odd_leaf(data)).__name__}")


def _odd_leaf(data: Any) -> Any:
    """The first element of nested lists that is not a number (what torch names in its error)."""
    if isinstance(data, (list, tuple)):
        for d in data:
            leaf = _odd_leaf(d)
            if leaf is not None:
                return leaf
        return None
    return None if isinstance(data, (builtins.bool, int, float, builtins.complex, np.generic)) else data


def _jnp_from_numpy(arr: np.ndarray, dt: D.dtype) -> Any:
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    return cold_kernels.to_array(arr)  # a copy: the buffer may be the caller's


def _fresh(arr: np.ndarray) -> Any:
    """A JAX array of a NumPy array made here (handed over, not copied). On the CPU this compiles nothing;
    ``jnp.array`` compiles a copy per shape (``torch.arange(t)`` in a loop whose t grows)."""
    return cold_kernels.to_array(np.asarray(arr), copy=False)


@expose("torch")
def tensor(data: Any, *, dtype: D.dtype | None = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """torch.tensor: always copies ``data``."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        if device is None:
            device = data.device
    dt = D.to_dtype(dtype) if dtype is not None else None
    arr, dt = _numpy_of(data, dt)
    if isinstance(data, (builtins.complex, list, tuple)) and arr.dtype.kind == "c" and not dt.is_complex:
        raise TypeError(
            "'complex' object cannot be interpreted as an integer" if dt._kind in "iub" else "must be real number, not complex"
        )
    if dt._kind in "iu" and isinstance(data, (int, float, list, tuple)):
        _check_python_ints(arr, dt)
    return from_array(_jnp_from_numpy(arr, dt), _dev(device), requires_grad, dt)


def _check_python_ints(arr: np.ndarray, dt: D.dtype) -> None:
    """torch.tensor's range check of Python numbers stored in an integer dtype (numpy data is cast)."""
    if arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise D.overflow_error(dt, c_names=False)
    for v in (arr.min().item(), arr.max().item()):
        if D.overflows(v, dt):
            if dt is D.int64 and isinstance(v, int):
                raise ValueError("Overflow when unpacking long long")
            raise D.overflow_error(dt, c_names=False)


@expose("torch")
def as_tensor(data: Any, dtype: D.dtype | None = None, device: Any = None) -> Tensor:
    """torch.as_tensor: shares memory with a tensor or a CPU numpy array when dtype and device allow."""
    dt = D.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        if (dt is None or dt is data._dtype) and (device is None or _dev(device) == data.device):
            return data
        return data.to(device=device, dtype=dt)
    if isinstance(data, np.ndarray) and (device is None or _dev(device).type == "cpu"):
        if dt is None or dt.np == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dt, device=device)


@expose("torch")
def asarray(obj: Any, *, dtype: D.dtype | None = None, device: Any = None, copy: bool | None = None,
            requires_grad: bool = False) -> Tensor:
    if copy:
        t = tensor(obj.detach() if isinstance(obj, Tensor) else obj, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t._new_requires_grad()
    return t


@expose("torch")
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """torch.from_numpy: a CPU tensor sharing memory with ``ndarray``."""
    return T.from_numpy_shared(ndarray)


@expose("torch")
def from_jax(array: Any) -> Tensor:
    """A tensor over a JAX array (zero-copy: JAX arrays are immutable, so nothing is shared for writing)."""
    return T.make(array, _device.from_jax(next(iter(array.devices()))))


@expose("torch")
def from_dlpack(ext_tensor: Any) -> Tensor:
    from ..utils.dlpack import from_dlpack as _from

    return _from(ext_tensor)


@expose("torch")
def frombuffer(buffer: Any, *, dtype: D.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    arr = np.frombuffer(buffer, dtype=D.to_dtype(dtype).np, count=count, offset=offset)
    t = from_numpy(arr)
    if requires_grad:
        t._new_requires_grad()
    return t


# --- filled ----------------------------------------------------------------------------------------

_fill_kernels: LRU = LRU()
_HOST_FILL = 1 << 16  # elements of a fill made on the host and sent to an accelerator


def _filled(shape: tuple, dt: D.dtype, value: Any, jdev: Any = None) -> Any:
    """A filled array made on ``jdev`` (committed there, so later ops run there too)."""
    if jdev is None and type(value) in (int, float, bool) and cold_kernels._cpu_only():
        # a new shape compiles nothing: NumPy's fill is the same bits, and the array lands on the CPU device
        return cold_kernels.to_array(np.full(shape, value, dt.np), copy=False)
    if jdev is not None and type(value) in (int, float, bool) and math.prod(shape) <= _HOST_FILL:
        # a small fill on an accelerator: a transfer, not a compile per new shape (0.02-0.06 s on an H200)
        return jax.device_put(np.full(shape, value, dt.np), jdev)
    key = (shape, dt, jdev)
    k = _fill_kernels.get(key)
    if k is None:
        np_dt = dt.np
        out = None if jdev is None else jax.sharding.SingleDeviceSharding(jdev)
        k = _fill_kernels[key] = cold_kernels.cold(lambda v: jnp.full(shape, v, np_dt), "full", out_shardings=out)
    return k(value)


def _factory(name: str, size: tuple, value: Any, dtype: Any, device: Any, requires_grad: bool,
             out: Tensor | None = None) -> Tensor:
    if isinstance(dtype, str):
        raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not str")
    shape = parse_size(size, name)
    dt = D.to_dtype(dtype) if dtype is not None else (out._dtype if out is not None else None)
    if dt is None:
        dt = D.scalar_dtype(value) if name == "full" else D.get_default_dtype()
    dev = _dev(device if device is not None else (out.device if out is not None else None))
    if name == "full" and isinstance(value, (int, float, builtins.complex)) and D.overflows(value, dt):
        raise D.overflow_error(dt)
    if dev.type == "cpu" and out is None and type(value) in (int, float, bool) and T.hook is None:
        t = T.make_host(np.full(shape, value, dt.np), dt)  # NumPy's fill is the same bits; JAX sees it when read
    else:
        t = T.make(_filled(shape, dt, value, None if dev.type == "cpu" else _device.jax_device(dev)), dev, dt)
    if requires_grad:
        t._new_requires_grad()
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    return t


@expose("torch")
def zeros(*args: Any, size: Any = REQUIRED, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    return _factory("zeros", size_args("zeros", args, size), 0, dtype, device, requires_grad, out)


@expose("torch")
def ones(*args: Any, size: Any = REQUIRED, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
         device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    return _factory("ones", size_args("ones", args, size), 1, dtype, device, requires_grad, out)


@expose("torch")
def empty(*args: Any, size: Any = REQUIRED, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
          device: Any = None, requires_grad: bool = False, pin_memory: bool = False, memory_format: Any = None) -> Tensor:
    """torch.empty. NOTE: the memory is zero-filled; JAX has no uninitialised arrays."""
    return _factory("empty", size_args("empty", args, size), 0, dtype, device, requires_grad, out)


@expose("torch")
def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    if len(tuple(size)) != len(tuple(stride)):
        raise RuntimeError(
            f"dimensionality of sizes ({len(tuple(size))}) must match dimensionality of strides ({len(tuple(stride))})"
        )
    return _factory("empty_strided", (tuple(size),), 0, dtype, device, requires_grad)


@expose("torch")
def full(size: Sequence[int] = REQUIRED, fill_value: Any = REQUIRED, *, out: Tensor | None = None, dtype: Any = None,
         layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    if size is REQUIRED:  # torch names both, whatever was given
        raise TypeError('full() missing 2 required positional argument: "size", "fill_value"')
    if fill_value is REQUIRED:
        raise TypeError('full() missing 1 required positional arguments: "fill_value"')
    if size is None:
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, not NoneType")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _factory("full", (tuple(size) if not isinstance(size, int) else (size,),), fill_value, dtype, device,
                    requires_grad, out)  # fmt: skip


@expose("torch")
def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    return _factory("full", ((),), s, dtype if dtype is not None else D.get_default_dtype(), device, requires_grad)


def _like(name: str, input: Tensor, value: Any, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return _factory(
        "full", (tuple(input._shape),), value, dtype if dtype is not None else input._dtype,
        device if device is not None else input.device, requires_grad,
    )  # fmt: skip


@expose("torch")
def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("zeros_like", input, 0, dtype, device, requires_grad)


@expose("torch")
def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("ones_like", input, 1, dtype, device, requires_grad)


@expose("torch")
def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    return _like("empty_like", input, 0, dtype, device, requires_grad)


@expose("torch")
def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    if dtype is None and input._dtype is D.bool and not isinstance(fill_value, builtins.bool):
        pass
    return _like("full_like", input, fill_value, dtype, device, requires_grad)


# --- ranges ----------------------------------------------------------------------------------------


def _num(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


@expose("torch")
def arange(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None, dtype: Any = None,
           layout: Any = None, device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is not None:
        dt = D.to_dtype(dtype)
    elif any(isinstance(v, float) for v in (start, end, step)):
        dt = D.get_default_dtype()
    else:
        dt = D.int64
    if dt == D.bool:
        raise NotImplementedError('"arange_cpu" not implemented for \'Bool\'')
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end)):
        raise RuntimeError(f"unsupported range: {_c_num(start)} -> {_c_num(end)}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.ceil((end - start) / step)
    # torch computes start + i * step in double for floating outputs, in int64 for integral ones.
    if dt.is_floating_point:
        vals = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    else:
        vals = (int(start) + np.arange(n, dtype=np.int64) * int(step)).astype(dt.np)
    t = from_array(_fresh(vals), _dev(device), requires_grad, dt)
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    return t


@expose("torch")
def range(start: Any = 0, end: Any = None, step: Any = 1, *, out: Tensor | None = None, dtype: Any = None,
          layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """torch.range (deprecated in torch): includes ``end``."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
        "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
        UserWarning,
        stacklevel=2,
    )
    if end is None:
        start, end = 0, start
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    vals = (start + np.arange(n, dtype=np.float64) * step).astype(dt.np)
    return from_array(_fresh(vals), _dev(device), requires_grad, dt)


def _linspace_np(start: Any, end: Any, steps: int, dt: D.dtype) -> np.ndarray:
    """torch's CPU linspace: the first half counts up from start, the second down from end."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    work = np.float64 if dt is D.float64 or not dt.is_floating_point else np.float32
    if dt.is_complex:
        work = dt.np
    if steps == 0:
        return np.zeros(0, dt.np)
    if steps == 1:
        return np.asarray([start], dtype=dt.np)
    s, e = work(start), work(end)
    step = (e - s) / work(steps - 1)
    i = np.arange(steps)
    half = steps // 2
    out = np.where(i < half, s + step * i.astype(work), e - step * (steps - i - 1).astype(work))
    if not (dt.is_floating_point or dt.is_complex):
        # integral linspace: torch steps in double then truncates
        step = (float(end) - float(start)) / (steps - 1)
        out = np.where(i < half, start + step * i, end - step * (steps - i - 1))
        return np.trunc(out).astype(dt.np)
    return out.astype(dt.np)


def _c_num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _check_steps(steps: Any) -> None:
    if isinstance(steps, int) and steps < 0:
        raise RuntimeError("number of steps must be non-negative")


@expose("torch")
def linspace(start: Any, end: Any, steps: int, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    start, end = _num(start), _num(end)
    dt = D.to_dtype(dtype) if dtype is not None else (
        D.default_complex() if isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
        else D.get_default_dtype()
    )  # fmt: skip
    t = from_array(_fresh(_linspace_np(start, end, steps, dt)), _dev(device), requires_grad, dt)
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    return t


@expose("torch")
def logspace(start: Any, end: Any, steps: int, base: float = 10.0, *, out: Tensor | None = None, dtype: Any = None,
             layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    start, end = _num(start), _num(end)
    _check_steps(steps)
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    work = np.float64 if dt is D.float64 or not dt.is_floating_point else np.float32
    if steps == 1:
        vals = np.asarray([np.power(work(base), work(start))])
    else:
        s, e = work(start), work(end)
        step = (e - s) / work(max(steps - 1, 1))
        i = np.arange(steps)
        half = steps // 2
        expo = np.where(i < half, s + step * i.astype(work), e - step * (steps - i - 1).astype(work))
        vals = np.power(work(base), expo.astype(work))
    t = from_array(_fresh(vals.astype(dt.np)), _dev(device), requires_grad, dt)
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    return t


@expose("torch")
def eye(n: int, m: int | None = None, *, out: Tensor | None = None, dtype: Any = None, layout: Any = None,
        device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is None:
        m = n
    elif m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    t = from_array(jnp.eye(n, m, dtype=dt.np), _dev(device), requires_grad, dt)
    if out is not None:
        registry.copy_to_out(t, out)
        return out
    return t


@expose("torch")
def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    if row < 0 or col < 0:
        raise RuntimeError(f"{'row' if row < 0 else 'col'} must be non-negative, got{row if row < 0 else col}")
    r, c = np.tril_indices(row, offset, col)
    dt = D.to_dtype(dtype) if dtype is not None else D.int64
    return from_array(_fresh(np.stack([r, c]).astype(dt.np)), _dev(device), False, dt)


@expose("torch")
def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    r, c = np.triu_indices(row, offset, col)
    dt = D.to_dtype(dtype) if dtype is not None else D.int64
    return from_array(_fresh(np.stack([r, c]).astype(dt.np)), _dev(device), False, dt)


# --- complex construction (table ops) ----------------------------------------------------------------


@registry.defop(promote="default", method=False, out=True, dtypes="real_float")
def complex(real: registry.TensorArg, imag: registry.TensorArg) -> Any:
    return jax.lax.complex(*jnp.broadcast_arrays(real, imag))


@registry.defop(promote="default", method=False, out=True, dtypes="real_float")
def polar(abs: registry.TensorArg, angle: registry.TensorArg) -> Any:
    return jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle))


# --- Tensor constructors: legacy Tensor(...), new_*, deepcopy ------------------------------------------


def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    """``torch.Tensor(2, 3)`` (uninitialised float), ``torch.Tensor([1, 2])`` (float data)."""
    t = legacy_new(D.get_default_dtype(), "cpu", args, kwargs, typed=False)
    if cls is not Tensor:
        t2 = object.__new__(cls)
        for slot in Tensor.__slots__:
            if slot not in ("__dict__", "__weakref__"):
                object.__setattr__(t2, slot, getattr(t, slot))
        return t2
    return t


def _arg_type(v: Any) -> str:
    """How torch's argument parser names a value's type in its messages."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, Size):
        return "torch.Size"
    if isinstance(v, (D.dtype, _device.device)):
        return f"torch.{type(v).__name__}"
    module = type(v).__module__
    return type(v).__qualname__ if module == "builtins" else f"{module}.{type(v).__qualname__}"


def _invalid_combination(args: tuple, kwargs: dict) -> TypeError:
    # torch's parser lists the keywords last given first, and names a lone wrong one
    got = ", ".join([_arg_type(a) for a in args] + [f"{k}={_arg_type(v)}" for k, v in reversed(kwargs.items())])
    lone = f"      didn't match because some of the keywords were incorrect: {next(iter(kwargs))}\n" if len(kwargs) == 1 else ""
    return TypeError(
        f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
        f" * (*, torch.device device = None)\n{lone} * (torch.Storage storage)\n * (Tensor other)\n"
        " * (tuple of ints size, *, torch.device device = None)\n * (object data, *, torch.device device = None)\n"
    )


def _is_int(v: Any) -> bool:
    if isinstance(v, np.ndarray):  # torch: a 0-d integer array is an index, so a size
        return v.ndim == 0 and v.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, (builtins.bool, np.bool_))


def legacy_new(dtype: D.dtype, device_type: str, args: tuple, kwargs: dict, typed: bool = True,
               default_device: Any = None) -> Tensor:  # fmt: skip
    """torch's legacy constructor (``torch.Tensor(...)``, ``torch.FloatTensor(...)``, ``x.new(...)``): nothing
    (an empty tensor), a storage, a tensor of the same type (an alias), sizes (uninitialised: torchlike fills
    zeros), or data. ``typed``: a tensor argument must already have ``dtype``."""
    device = kwargs.get("device", default_device)
    if set(kwargs) - {"device"}:
        raise _invalid_combination(args, kwargs)
    if device is not None and _device.device(device).type != device_type:
        raise RuntimeError(
            f"legacy constructor expects device type: {device_type} but device type: {_device.device(device).type} "
            "was passed"
        )
    dev = _device.canonical(device_type if device is None else device)
    if not args:
        return empty(0, dtype=dtype, device=dev)
    first = args[0]
    if len(args) == 1 and not _is_int(first) and not isinstance(first, Size):
        if isinstance(first, Tensor):
            if typed and (first._dtype is not dtype or first.device.type != device_type):
                raise TypeError(f"expected {_options(dtype, dev)} (got {_options(first._dtype, first.device)})")
            return registry.make_view_of(
                first, ("reshape", (tuple(first._shape),), (), *first._geometry()), "AliasBackward0"
            )
        if isinstance(first, (UntypedStorage, TypedStorage)):
            storage = first.untyped() if isinstance(first, TypedStorage) else first
            return tensor_on(storage, dtype, 0, (storage.nbytes() // dtype.itemsize,), (1,))
        if isinstance(first, str):
            raise TypeError(f"new(): invalid data type '{type(first).__name__}'")
        if not isinstance(first, (list, tuple, builtins.range, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {_arg_type(first)})")
        return tensor(list(first) if isinstance(first, builtins.range) else first, dtype=dtype, device=dev)
    sizes = tuple(first) if len(args) == 1 and isinstance(first, Size) else args
    if not _is_int(first) and not isinstance(first, Size) or len(args) > 1 and isinstance(first, Size):
        raise _invalid_combination(args, kwargs)
    for i, v in enumerate(sizes):
        if not _is_int(v):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error \"type must be tuple "
                f"of ints,but got {_arg_type(v)}\""
            )
    if any(v < 0 for v in sizes):
        negative = next(v for v in sizes if v < 0)
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {negative}: [{', '.join(str(int(v)) for v in sizes)}]"
        )
    return empty(*(int(v) for v in sizes), dtype=dtype, device=dev)


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """Tensor.new: the legacy constructor of ``self``'s dtype, on ``self``'s device (old code's
    ``weight.new(n, m).zero_()``, ``x.new([1, 2])``)."""
    return legacy_new(self._dtype, self.device.type, args, kwargs, default_device=self.device)


def _options(dtype: D.dtype, dev: _device.device) -> str:
    return (
        f"TensorOptions(dtype={D.c_type(dtype)}, device={dev}, layout=Strided, requires_grad=false (default), "
        "pinned_memory=false (default), memory_format=(nullopt))"
    )


def _array_wrap(self: Tensor, array: np.ndarray, context: Any = None, return_scalar: bool = False) -> Any:
    if return_scalar:
        return array[()]
    return from_numpy(np.ascontiguousarray(array))


def deepcopy_tensor(t: Tensor, memo: dict) -> Tensor:
    if not t.is_leaf:
        raise RuntimeError(
            "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
            "moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils."
            "weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001"
        )
    if id(t) in memo:
        return memo[id(t)]
    new = T.make(t._data(), t.device, t._dtype, cls=type(t))
    new._rg = t._rg
    if t._grad is not None:
        new._grad = deepcopy_tensor(t._grad, memo)
    for k, v in t.__dict__.items():
        if k != "_acc":
            new.__dict__[k] = _copy.deepcopy(v, memo)
    memo[id(t)] = new
    return new


def _new_method(fill: Any, name: str):
    def method(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               layout: Any = None, pin_memory: bool = False) -> Tensor:
        return _factory(name, size, fill, dtype if dtype is not None else self._dtype,
                        device if device is not None else self.device, requires_grad)  # fmt: skip

    method.__name__ = name
    return method


def new_full(self: Tensor, size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    return _factory("full", (tuple(size),), fill_value, dtype if dtype is not None else self._dtype,
                    device if device is not None else self.device, requires_grad)  # fmt: skip


def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False,
               layout: Any = None, pin_memory: bool = False) -> Tensor:
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        data = data.detach()
    return tensor(data, dtype=dtype if dtype is not None else self._dtype,
                  device=device if device is not None else self.device, requires_grad=requires_grad)  # fmt: skip


# The Tensor class lives in _core, below this room; its constructors are attached from here.
Tensor.__new__ = staticmethod(legacy_tensor_new)
Tensor.__array_wrap__ = _array_wrap
Tensor.__deepcopy__ = deepcopy_tensor
