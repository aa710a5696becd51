"""torch.Tensor over immutable JAX arrays.

A tensor points at a ``Buffer`` (torch's storage: a mutable box holding the current array) and,
if it is a view, at a ``View`` saying how to read itself out of the buffer. In-place changes
go through one door, ``Tensor._assign``, which writes through the view into the buffer, so
every alias sees them. CPU buffers can also be backed by a numpy array that the user holds
(``from_numpy``/``.numpy()``), which keeps torch's memory sharing with numpy.
"""

from __future__ import annotations

import sys
import threading
import warnings
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from . import cold_kernels as _cold
from . import device as _device
from . import dtype as _dtype
from . import lazy as _lazy
from . import views as _views
from .kernel_cache import LRU
from .size import Size

_getrefcount = sys.getrefcount
LazyArray = _lazy.LazyArray

# Set while torchlike.compile traces a function: sees every buffer created, read or written, so
# that state living in pre-existing buffers becomes explicit inputs and outputs of the program.
hook: Any = None
_DTYPE_OF = {d.np: d for d in _dtype.ALL}
_ROW_MAJOR: dict = {}  # shape -> its row-major strides (``Tensor._geometry``)


class _ThreadState(threading.local):
    """Grad and inference mode of the calling thread (torch keeps both per thread). Class attributes
    are the defaults a new thread starts with; the op table reads ``enabled`` per call, and ``make``
    reads ``inference`` to tag the storage it allocates. ``autograd.grad_mode`` sets them."""

    enabled = True
    inference = False


grad_state = _ThreadState()
_INFERENCE_UPDATE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal "
    "tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details."
)


class Buffer:
    """torch's storage: the current array of a tensor and all its views.

    ``np`` is set while a numpy array shares the memory (``from_numpy``/``.numpy()``). Then the
    numpy array is the truth: reads copy it while anyone else holds a reference (they may write
    to it behind our back) and writes copy into it.

    A *host-backed* buffer (``array is np``, made by ``make_host``) holds values computed on the host
    (random draws, transformed images): reading them back (``item()``, ``numpy()``, collation) costs no
    JAX call. Once nobody else holds that array, ``peek`` turns it into the read-only form below.

    ``array`` may also be a read-only NumPy array (``np`` None): the result of a small op run on the host
    (see ``cold_kernels.ColdKernel.host``). Kernels take it as it is; ``get`` hands out a JAX array.
    """

    __slots__ = ("array", "np", "np_strides", "device", "__weakref__")
    inference = False  # allocated under inference_mode (Tensor.is_inference): _InferenceBuffer says True

    def __init__(self, array: Any, device: _device.device) -> None:
        self.array = array
        self.np = None
        self.np_strides = None
        self.device = device
        if hook is not None:
            hook.created(self)

    def get(self) -> Any:
        """The current array, concrete (a pending lazy value is computed first)."""
        if hook is not None:
            hook.read(self)
        if self.np is None:
            a = self.array
            if type(a) is LazyArray:
                a = self.array = a.materialize()
            elif type(a) is np.ndarray:
                a = self.array = host_to_jax(a, False)
            return a
        if _getrefcount(self.np) > 2 + (self.array is self.np):  # shared with the user: they may write to it
            self.array = host_to_jax(self.np, True)
        else:  # nobody else can see it any more: back to a plain array
            self.array = host_to_jax(self.np, self.array is not self.np)
            self.np = self.np_strides = None
        return self.array

    def peek(self) -> Any:
        """The current array for a kernel: possibly a pending ``LazyArray`` (never for host reads)."""
        if self.np is None and hook is None:
            a = self.array
            if type(a) is LazyArray and a.graph is None:  # computed by an earlier flush: drop the wrapper
                a = self.array = a.value
            return a  # (a host array as it is: kernels take NumPy arrays)
        # host-backed, nobody else holds the array, and kernels run on the host (not in lazy mode: the graph
        # takes JAX arrays): the read-only host form, no JAX call. (No local name for self.np before get(): it
        # counts the array's references to tell whether the user holds it.)
        if self.np is self.array and hook is None and _getrefcount(self.np) <= 3 and self.np_strides is None \
                and not _lazy._on and _cold.host_enabled():  # fmt: skip
            a = self.array
            a.setflags(write=False)
            self.np = None
            return a
        return self.get()

    def host(self) -> np.ndarray:
        """The current value as a read-only NumPy array, without a trip through JAX where it is one."""
        a = self.array
        if hook is None and type(a) is np.ndarray:
            if self.np is None:
                return a
            if a is self.np:  # host-backed: a read-only window on it
                a = a.view()
                a.setflags(write=False)
                return a
        return np.asarray(self.get())

    def set(self, array: Any) -> None:
        if hook is not None:
            hook.write(self)
        if self.np is not None:
            if self.host_owned():  # nothing to write through: the new value replaces the host array
                self.np = self.np_strides = None
            else:  # the user's numpy array sees writes at once
                np.copyto(self.np, np.asarray(array), casting="unsafe")
        self.array = array

    def host_owned(self) -> bool:
        """Whether this buffer is host-backed and nobody else holds its array (no ``numpy()`` shares it): the array
        is then only the buffer's, and a write may replace it (even with a new size) instead of copying into it."""
        n = self.np
        return n is self.array and n is not None and _getrefcount(n) <= 4  # (self.np, self.array, n, the argument)

    def to_numpy(self) -> np.ndarray:
        if self.np is None:
            self.np = np.array(self.host())
        return self.np

    def set_view(self, new_base: Any, view: _views.View, value: Any) -> None:
        """A write of ``value`` through ``view``; ``new_base`` is the whole buffer after it."""
        self.set(new_base)


class SharedBuffer(Buffer):
    """A buffer in memory shared with other processes (``Tensor.share_memory_``): a write through a
    view stores only the view's elements, so concurrent writers of other elements are not undone."""

    __slots__ = ()

    def set_view(self, new_base: Any, view: _views.View, value: Any) -> None:
        if hook is not None or any(step[0] == "bitcast" for step in view.steps):
            self.set(new_base)
            return
        flat = self.np.reshape(-1)
        region = np.lib.stride_tricks.as_strided(
            flat[view.offset :], shape=tuple(view.shape), strides=tuple(s * flat.itemsize for s in view.stride)
        )
        np.copyto(region, np.broadcast_to(np.asarray(value), region.shape), casting="unsafe")
        self.array = new_base


class _InferenceBuffer(Buffer):
    """A buffer allocated under inference_mode: its tensors and their views are inference tensors."""

    __slots__ = ()
    inference = True


_HOST_OK = frozenset((Buffer, _InferenceBuffer))  # buffers that may become host-backed (not shared memory)


class _ArrayInterface:
    """Exposes raw memory to numpy while keeping its owner alive."""

    def __init__(self, iface: dict, owner: np.ndarray) -> None:
        self.__array_interface__ = iface
        self.owner = owner


class VersionCounter:
    __slots__ = ("v",)

    def __init__(self) -> None:
        self.v = 0


_new = object.__new__
_size_new = tuple.__new__


_CHANNELS_LAST = {"channels_last": 4, "channels_last_3d": 5}  # memory format -> the rank it applies to


class Tensor:
    """torch.Tensor."""

    __slots__ = (
        "_buf",
        "_vc",
        "_view",
        "_base_t",
        "_shape",
        "_dtype",
        "_cache",
        "_cache_src",
        "_rg",
        "_node",
        "_out_nr",
        "_node_v",
        "_grad",
        "_hooks",
        "_retains_grad",
        "__dict__",
        "__weakref__",
    )

    # torch's Tensor(*sizes) / Tensor(data) legacy constructor: __new__ is attached by _ops.creation.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    # --- reading the array -------------------------------------------------------------------

    def _data(self) -> Any:
        """The current JAX array of this tensor (concrete: pending lazy work is run first)."""
        view = self._view
        if view is None:
            return self._buf.get()
        arr = self._peek()
        if type(arr) is LazyArray:
            arr = self._cache = arr.materialize()
        return arr

    def _peek(self) -> Any:
        """The current array for a kernel: in lazy mode possibly a pending ``LazyArray``."""
        view = self._view
        if view is None:
            return self._buf.peek()
        src = self._buf.peek()
        if self._cache_src is src:
            return self._cache
        kernel = _views.read_kernel(view.steps)
        args = (src, *view.dyn)
        arr = None
        if not _lazy._on and hook is None and _cold.host_enabled():  # a small read on the host, as small ops run
            arr = kernel.host(args)  # (a compiled read costs ~20 us; its cold route goes there once its rent is paid)
            if arr is not None:
                arr = _cold._owned(arr, args)  # (C order, not a view of the base: as the cold route gives)
                arr.setflags(write=False)
        if arr is None:
            arr = _lazy.call(kernel, args)
        self._cache = arr
        self._cache_src = src
        return arr

    # --- the mutation door ---------------------------------------------------------------------

    def _assign(self, value: Any) -> None:
        """Rebind this tensor's contents to ``value`` (same shape), writing through any view.

        Bumps the version counter. Autograd bookkeeping is the caller's (see graph.py).
        """
        view = self._view
        buf = self._buf
        if buf.inference and not grad_state.inference:
            raise RuntimeError(_INFERENCE_UPDATE)
        if value.dtype != self._dtype.np:
            value = value.astype(self._dtype.np)
        if view is None:
            if type(value) is np.ndarray and _host_takes(buf, value):  # host values stay there (see Buffer)
                buf.np = buf.array = value
                buf.np_strides = None
            else:
                buf.set(value)
        else:
            if _views.has_internal_overlap(view.shape, view.stride):
                raise RuntimeError(
                    "unsupported operation: more than one element of the written-to tensor refers to a single "
                    "memory location. Please clone() the tensor before performing the operation."
                )
            new_base = _lazy.call(_views.write_kernel(view.steps), (buf.peek(), value, *view.dyn))
            buf.set_view(new_base, view, value)
            self._cache = value
            self._cache_src = new_base
        self._vc.v += 1

    def _assign_broadcast(self, value: Any) -> None:
        """``_assign`` for a value that broadcasts to this tensor's shape (array or Python scalar)."""
        view = self._view
        if self._buf.inference and not grad_state.inference:
            raise RuntimeError(_INFERENCE_UPDATE)
        if view is None:
            self._assign(_broadcast_cast(value, tuple(self._shape), self._dtype.np))
            return
        if _views.has_internal_overlap(view.shape, view.stride):
            self._assign(value)  # raises torch's overlap error
        kernel = _views.write_kernel(view.steps)
        args = (self._buf.peek(), value, *view.dyn)
        new_base = None
        # a small write on the host, as small ops run (an array value: a number is cast in the compiled write)
        if value.__class__ is not int and not _lazy._on and hook is None and _cold.host_enabled():
            new_base = kernel.host(args)
        if new_base is None:
            new_base = _lazy.call(kernel, args)
        self._buf.set_view(new_base, view, value)
        self._cache_src = None
        self._vc.v += 1

    def _resize_to(self, value: Any) -> None:
        """Replace contents *and shape* (``out=`` resizing, ``resize_``): only for non-views."""
        if self._buf.inference and not grad_state.inference:
            raise RuntimeError(_INFERENCE_UPDATE)
        if self._view is not None:
            raise RuntimeError("torchlike: cannot resize a view of another tensor")
        buf = self._buf
        if buf.np is not None and buf.np.shape != value.shape and not buf.host_owned():
            raise RuntimeError("Trying to resize storage that is not resizable")
        buf.set(value)
        self._shape = Size(value.shape)
        self._vc.v += 1

    # --- metadata ----------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return self._shape

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._shape
        return self._shape[_wrap_dim(dim, len(self._shape))]

    def dim(self) -> int:
        return len(self._shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._shape)

    def numel(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    nelement = numel

    @property
    def dtype(self) -> _dtype.dtype:
        return self._dtype

    @property
    def device(self) -> _device.device:
        return self._buf.device

    @property
    def is_cuda(self) -> bool:
        return self._buf.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._buf.device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return False

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def layout(self) -> Any:
        from . import layout

        return layout.strided

    def get_device(self) -> int:
        d = self._buf.device
        return -1 if d.type == "cpu" else d.index

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._dtype.itemsize

    def is_floating_point(self) -> bool:
        return self._dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._dtype.is_complex

    def is_signed(self) -> bool:
        return self._dtype.is_signed

    def _geometry(self) -> tuple:
        view = self._view
        if view is not None:
            return view.shape, view.stride, view.offset
        strides = self._buf.np_strides
        if strides:
            return self._shape, strides, 0
        shape = self._shape
        strides = _ROW_MAJOR.get(shape)
        if strides is None:
            strides = row_major(shape)
        return shape, strides, 0

    def stride(self, dim: int | None = None) -> Any:
        st = self._geometry()[1]
        if dim is None:
            return st
        return st[_wrap_dim(dim, len(st))]

    def storage_offset(self) -> int:
        return self._view.offset if self._view is not None else 0

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None and self._view is None and not self._buf.np_strides:  # a whole row-major buffer
            return True
        shape, stride, _ = self._geometry()
        if memory_format is not None and memory_format.name in _CHANNELS_LAST:  # (a tensor of another rank: False)
            return len(shape) == _CHANNELS_LAST[memory_format.name] and _views.is_channels_last(shape, stride)
        return _views.is_contiguous(shape, stride)

    def data_ptr(self) -> int:
        """A stable identity for the memory: the buffer's id plus the byte offset."""
        return id(self._buf) + self.storage_offset() * self._dtype.itemsize

    @property
    def _version(self) -> int:
        return self._vc.v

    @property
    def _base(self) -> Tensor | None:
        return self._base_t

    def _is_view(self) -> bool:
        return self._base_t is not None

    # --- Python protocol ---------------------------------------------------------------------

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self) -> Any:
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self) -> int:
        return id(self)

    def _scalar(self, what: str = "Scalar") -> Any:
        n = self.numel()
        if n != 1:
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to {what}")
        buf = self._buf
        if buf.np is not None and self._view is None and hook is None:  # host values: no JAX call
            return buf.np.reshape(()).item()
        # Inside a compiled trace this raises JAX's concretization error: a graph break.
        return self._values().reshape(()).item()

    def _values(self) -> np.ndarray:
        """The values as a NumPy array for reading (a host array as it is; JAX's CPU arrays without a copy)."""
        if self._view is None:
            return self._buf.host()
        return np.asarray(self._data())

    def item(self) -> Any:
        v = self._scalar()
        if self._dtype is _dtype.bfloat16 or self._dtype is _dtype.float16:
            return float(v)
        return v

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._scalar())

    def __float__(self) -> float:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return float(self._scalar())

    def __int__(self) -> int:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return int(self._scalar())

    def __complex__(self) -> complex:
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return complex(self._scalar())

    def __index__(self) -> int:
        if self._dtype.is_floating_point or self._dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._scalar())

    def tolist(self) -> Any:
        return self._host().tolist()

    def _host(self) -> np.ndarray:
        """A numpy copy-or-view of the values for reading (never shared for writing)."""
        arr = self._values()
        if self._dtype is _dtype.bfloat16:
            return arr.astype(np.float32)
        return arr

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if force:
            return np.array(self.detach()._host())
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._buf.device.type != "cpu":
            raise TypeError(
                f"can't convert {self._buf.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                "tensor to host memory first."
            )
        if self._dtype is _dtype.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        base = self._buf.to_numpy()
        view = self._view
        if view is None:
            return base
        if any(kind == "conj" for kind, _ in view.steps) and sum(kind == "conj" for kind, _ in view.steps) % 2:
            raise RuntimeError(
                "Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj().numpy() instead."
            )
        np_dt = np.dtype(self._dtype.np)
        # A numpy view into the shared buffer at the view's torch geometry, counted in the view's own
        # elements (a float view of complex memory, .real, counts float components).
        iface = {
            "data": (base.ctypes.data + view.offset * np_dt.itemsize, False),
            "shape": tuple(view.shape),
            "strides": tuple(st * np_dt.itemsize for st in view.stride),
            "typestr": np_dt.str,
            "version": 3,
        }
        return np.asarray(_ArrayInterface(iface, base))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy() if not self.requires_grad else self.detach().numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._data().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        return self._data().__dlpack_device__()

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return self._repr("tensor(")

    def _repr(self, prefix: str) -> str:
        from . import printing

        node = self.grad_fn
        return printing.tensor_repr(
            self._printable(),
            self._dtype,
            device=str(self._buf.device),
            requires_grad=self._rg,
            grad_fn_name=None if node is None else type(node).__name__,
            prefix=prefix,
        )

    def _printable(self) -> np.ndarray:
        arr = self._data()
        if isinstance(arr, jax.core.Tracer):
            raise RuntimeError("torchlike: cannot print a tensor inside a compiled function (it has no value yet)")
        return np.asarray(arr)

    def __format__(self, spec: str) -> str:
        from . import printing

        return printing.tensor_format(
            self._printable(), self._dtype, spec, device=str(self._buf.device), requires_grad=self._rg,
            grad_fn_name=None if self._node is None else type(self.grad_fn).__name__,
        )  # fmt: skip

    # Attached by the rooms that implement them: __array_wrap__ and __deepcopy__ (_ops.creation),
    # __reduce_ex__ (serialization), grad_fn, retain_grad, hooks and backward (autograd._tensor).

    # --- autograd attributes (the engine lives in torchlike.autograd) ---------------------------

    @property
    def requires_grad(self) -> bool:
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and self._node is None and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")  # torch's
        self.requires_grad_(value)

    def _new_requires_grad(self) -> Tensor:
        """``requires_grad=True`` given to a factory (or Parameter): torch's message differs from requires_grad_'s."""
        if not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        return self.requires_grad_(True)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._node is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
                )
            return self
        if requires_grad and not (self._dtype.is_floating_point or self._dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._rg = bool(requires_grad)
        return self

    def is_inference(self) -> bool:
        """True for a tensor whose storage was allocated under ``inference_mode`` (views share it)."""
        return self._buf.inference

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad(self) -> Tensor | None:
        if self._node is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
                "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
                "for more information.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            if value._dtype is not self._dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._buf.device != self._buf.device:
                raise RuntimeError("assigned grad has data located on a different device")
            if value._shape != self._shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's memory, outside autograd and with its own version counter."""
        t = _alias(self)
        t._vc = VersionCounter()
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if value._dtype is not self._dtype or value._buf.device != self._buf.device:
            # torch allows this only when the types are compatible; dtype changes need a new leaf
            if value._dtype is not self._dtype:
                pass
        self._buf = value._buf
        self._view = value._view
        self._shape = value._shape
        self._dtype = value._dtype
        self._cache = self._cache_src = None

    def detach(self) -> Tensor:
        """A tensor sharing memory and version counter, cut from the graph."""
        return _alias(self)

    def detach_(self) -> Tensor:
        if self._base_t is not None and self._base_t.requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) "
                "for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and "
                "hence detach_() cannot be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._node = None
        self._rg = False
        return self


_bcast_kernels: LRU = LRU()


def _broadcast_cast(value: Any, shape: tuple, np_dtype: Any) -> Any:
    key = (shape, np_dtype)
    k = _bcast_kernels.get(key)
    if k is None:
        k = _bcast_kernels[key] = jax.jit(lambda v: jnp.broadcast_to(jnp.asarray(v).astype(np_dtype), shape))
    return _lazy.call(k, (value,))


Tensor.__module__ = "torchlike"  # the public path (the compat alias makes it 'torch')


def _wrap_dim(dim: int, ndim: int) -> int:
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


wrap_dim = _wrap_dim


def _tensor(cls: type, buf: Buffer, vc: VersionCounter, view: Any, base: Any, shape: Size,
            dtype: _dtype.dtype) -> Tensor:
    """A tensor object with every slot set: no grad, no history, no cached view read."""
    t = _new(cls)
    t._buf = buf
    t._vc = vc
    t._view = view
    t._base_t = base
    t._shape = shape
    t._dtype = dtype
    t._cache = None
    t._cache_src = None
    t._rg = False
    t._node = None
    t._out_nr = 0
    t._node_v = 0
    t._grad = None
    t._hooks = None
    t._retains_grad = False
    return t


def _alias(t: Tensor) -> Tensor:
    """A new tensor over the same buffer and view, outside the graph."""
    r = _tensor(Tensor, t._buf, t._vc, t._view, None if t._view is None else t._base_t, t._shape, t._dtype)
    r._cache = t._cache
    r._cache_src = t._cache_src
    return r


def make(array: Any, device: _device.device, dtype: _dtype.dtype | None = None, cls: type = Tensor) -> Tensor:
    """Wrap a fresh JAX array (no aliases) as a new base tensor."""
    # NOTE: _tensor() written out: this runs once per op, and the extra call is measurable
    t = _new(cls)
    t._buf = _InferenceBuffer(array, device) if grad_state.inference else Buffer(array, device)
    t._vc = VersionCounter()
    t._view = None
    t._base_t = None
    t._shape = _size_new(Size, array.shape)
    t._dtype = dtype if dtype is not None else _DTYPE_OF[array.dtype]
    t._cache = None
    t._cache_src = None
    t._rg = False
    t._node = None
    t._out_nr = 0
    t._node_v = 0
    t._grad = None
    t._hooks = None
    t._retains_grad = False
    return t


def host_to_jax(a: np.ndarray, copy: bool) -> Any:
    """A host array as a CPU JAX array (``copy=False``: ``a`` is handed over). DataLoader fork workers
    replace it: they never run JAX."""
    return _cold.to_jax(np.array(a) if copy else a, copy=False)


def _adoptable(a: np.ndarray) -> bool:
    """A host array a buffer can hold as it is: numpy() hands it out, C-ordered and writable."""
    flags = a.flags
    return flags.c_contiguous and flags.writeable


def _host_takes(buf: Buffer, value: np.ndarray) -> bool:
    """Whether ``_assign`` can keep ``value`` (NumPy, handed over) on the host as ``buf``'s contents: a CPU buffer
    of a plain kind (not shared memory), no compile trace, and no numpy array but its own (one ``numpy()`` shared
    with the user gets the values copied in)."""
    return (
        _adoptable(value)
        and hook is None
        and buf.__class__ in _HOST_OK
        and buf.device.type == "cpu"
        and (buf.np is None or buf.host_owned())
    )


def make_host(array: np.ndarray, dtype: _dtype.dtype | None = None) -> Tensor:
    """A new CPU tensor over host values that the caller hands over (see ``Buffer``): host-backed unless
    ``torchlike.compile`` is tracing (then its values enter JAX now, as ``make``'s do)."""
    if hook is not None:
        return make(host_to_jax(array, False), _device.CPU, dtype)
    if not _adoptable(array):  # numpy() must give a writable C-ordered array of the tensor's memory
        array = np.array(array, order="C")
    t = make(array, _device.CPU, dtype)
    t._buf.np = array
    return t


def make_fresh(array: Any, device: _device.device, dtype: _dtype.dtype) -> Tensor:
    """``make`` for the lazy replay's placeholders (no ``torchlike.compile`` trace running, dtype known): the
    buffer and version counter are built without their ``__init__`` calls."""
    buf = _new(Buffer)
    buf.array = array
    buf.np = None
    buf.np_strides = None
    buf.device = device
    vc = _new(VersionCounter)
    vc.v = 0
    t = _new(Tensor)
    t._buf = buf
    t._vc = vc
    t._view = None
    t._base_t = None
    t._shape = _size_new(Size, array.shape)
    t._dtype = dtype
    t._cache = None
    t._cache_src = None
    t._rg = False
    t._node = None
    t._out_nr = 0
    t._node_v = 0
    t._grad = None
    t._hooks = None
    t._retains_grad = False
    return t


def make_on(array: Any, device: _device.device, dtype: _dtype.dtype | None = None) -> Tensor:
    """``make`` for an array created outside a kernel (on JAX's default device, the CPU): it is first
    moved to ``device`` so the tensor is where it says it is."""
    if device.type != "cpu" and not isinstance(array, jax.core.Tracer):  # traced: XLA places it
        array = _lazy.put(array, _device.jax_device(device))
    return make(array, device, dtype)


def row_major(shape: tuple) -> tuple:
    """``contiguous_strides(shape)``, from a table (every view and stride() of a whole tensor asks: a few shapes
    recur)."""
    strides = _ROW_MAJOR.get(shape)
    if strides is None:
        if len(_ROW_MAJOR) >= 1024:
            _ROW_MAJOR.clear()
        strides = _ROW_MAJOR[shape] = _views.contiguous_strides(shape)
    return strides


def make_view(base: Tensor, view: _views.View) -> Tensor:
    """A view of ``base`` (any tensor, itself possibly a view) with the given composed view."""
    return _tensor(Tensor, base._buf, base._vc, view, base if base._view is None else base._base_t,
                   _size_new(Size, view.shape), base._dtype)  # fmt: skip


def from_numpy_shared(a: np.ndarray) -> Tensor:
    """torch.from_numpy: a CPU tensor sharing ``a``'s memory."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(a).__name__})")
    dt = _DTYPE_OF.get(a.dtype)
    if dt is None:
        _dtype.from_numpy_dtype(a.dtype)  # raises torch's TypeError
    if any(s < 0 for s in a.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) "
        )
    if a.strides and any(s % a.itemsize for s in a.strides):
        raise ValueError("given numpy array strides not a multiple of the element byte size. Copy the numpy array to reallocate the memory.")
    t = make(jnp.array(a, copy=True), _device.CPU, dt)
    t._buf.np = a
    if not a.flags.c_contiguous:
        t._buf.np_strides = tuple(s // a.itemsize for s in a.strides)
    return t
