"""torch.sparse's legacy tensor types (``torch.sparse.FloatTensor(indices, values, size)``, as older graph
code builds its adjacency matrices): classes of ``tensortype`` whose call makes a sparse COO tensor."""

from __future__ import annotations

import warnings
from typing import Any

from .._core import dtype as D
from .._core import layout as _layout
from .._core.size import Size
from .._core.tensor import Tensor
from .._ops import creation
from .._ops._common import _TYPE_NAMES
from .._ops.legacy_types import tensortype
from ._coo import SparseCooTensor, sparse_coo_tensor

_warned: set = set()


def _deprecated(form: str, instead: str) -> None:
    message = (f"torch.sparse.SparseTensor({form}) is deprecated.  Please use torch.sparse_coo_tensor({instead}).")
    if message not in _warned:  # torch: TORCH_WARN_ONCE, per form
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=3)


class sparse_tensortype(tensortype):
    """The metaclass of ``torch.sparse.FloatTensor`` and its kin (torch calls it ``tensortype`` too)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, SparseCooTensor) and obj.dtype is cls.dtype and obj.is_cuda == cls.is_cuda

    def __call__(cls, *args: Any, device: Any = None) -> SparseCooTensor:
        if len(args) in (2, 3) and isinstance(args[0], Tensor) and isinstance(args[1], Tensor):
            if len(args) == 2:
                _deprecated("indices, values, *, device=", "indices, values, dtype=, device=")
            else:
                _deprecated("indices, values, shape, *, device=", "indices, values, shape, dtype=, device=")
            # as torch's: the values keep their own dtype, whatever the type's name says
            return sparse_coo_tensor(*args, device=device)
        if not args:
            _deprecated("", "(0,), dtype=")
            sizes: tuple = (0,)
        elif len(args) == 1 and isinstance(args[0], (Size, tuple)):
            _deprecated("shape, *, device=", "shape, dtype=, device=")
            sizes = tuple(args[0])
        elif all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            _deprecated("shape, *, device=", "shape, dtype=, device=")
            sizes = args
        else:
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(
                f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                " * (*, torch.device device = None)\n * (Tensor indices, Tensor values, *, torch.device device = None)\n"
                " * (Tensor indices, Tensor values, tuple of ints size, *, torch.device device = None)\n"
                " * (tuple of ints size, *, torch.device device = None)\n"
            )
        indices = creation.zeros(len(sizes), 0, dtype=D.int64, device=device)
        values = creation.zeros(0, dtype=cls.dtype, device=device)
        return sparse_coo_tensor(indices, values, sizes, is_coalesced=True)


sparse_tensortype.__name__ = "tensortype"
sparse_tensortype.__module__ = "torchlike"

# torch.sparse has these nine (no bool type)
_DTYPES = (D.float32, D.float64, D.float16, D.bfloat16, D.uint8, D.int8, D.int16, D.int32, D.int64)


def _make(dtype: D.dtype) -> type:
    ns = {"dtype": dtype, "layout": _layout.sparse_coo, "is_cuda": False, "is_sparse": True, "is_sparse_csr": False,
          "is_xpu": False, "__module__": "torchlike.sparse", "__doc__": None}  # fmt: skip
    return sparse_tensortype(_TYPE_NAMES[dtype], (), ns)


TYPES = {_TYPE_NAMES[d]: _make(d) for d in _DTYPES}  # CPU only: torch.cuda.sparse's twins are not provided
