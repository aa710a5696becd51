"""torch dtypes as objects, their numpy/JAX counterparts, and torch's type promotion."""

from __future__ import annotations

import builtins
import math
from typing import Any

import ml_dtypes
import numpy as np

__all__ = [
    "dtype",
    "finfo",
    "iinfo",
    "promote_types",
    "can_cast",
    "get_default_dtype",
    "set_default_dtype",
]


class dtype:
    """A torch dtype. Instances are singletons; compare them with ``is`` or ``==``."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed", "_kind", "_rank")

    def __init__(self, name: str, np_dtype: Any, kind: str, rank: int) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self._kind = kind  # 'b' bool, 'u' unsigned, 'i' signed int, 'f' float, 'c' complex
        self._rank = rank  # position inside the kind, by width
        self.is_floating_point = kind == "f"
        self.is_complex = kind == "c"
        self.is_signed = kind in "ifc"

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> tuple:
        return (_dtype_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        if self is float16:
            raise NotImplementedError("torchlike: complex32 (torch.chalf) is not supported; JAX has no complex32")
        return {bfloat16: complex64, float32: complex64, float64: complex128}.get(self, self)


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


bool = dtype("bool", np.bool_, "b", 0)
uint8 = dtype("uint8", np.uint8, "u", 0)
uint16 = dtype("uint16", np.uint16, "u", 1)
uint32 = dtype("uint32", np.uint32, "u", 2)
uint64 = dtype("uint64", np.uint64, "u", 3)
int8 = dtype("int8", np.int8, "i", 0)
int16 = dtype("int16", np.int16, "i", 1)
int32 = dtype("int32", np.int32, "i", 2)
int64 = dtype("int64", np.int64, "i", 3)
float16 = dtype("float16", np.float16, "f", 0)
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, "f", 0)
float32 = dtype("float32", np.float32, "f", 1)
float64 = dtype("float64", np.float64, "f", 2)
complex64 = dtype("complex64", np.complex64, "c", 1)
complex128 = dtype("complex128", np.complex128, "c", 2)

ALL = (bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64,
       float16, bfloat16, float32, float64, complex64, complex128)  # fmt: skip
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}

# torch's aliases (torch.float, torch.long, ...), exported by the package namespace.
ALIASES = {
    "float": float32,
    "double": float64,
    "half": float16,
    "cfloat": complex64,
    "cdouble": complex128,
    "long": int64,
    "int": int32,
    "short": int16,
}

_default_float = float32


def get_default_dtype() -> dtype:
    return _default_float


def set_default_dtype(d: dtype) -> None:
    global _default_float
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d
    _RESULT_CACHE.clear()


def default_complex() -> dtype:
    return complex128 if _default_float is float64 else complex64


def from_numpy_dtype(np_dtype: Any) -> dtype:
    """The torch dtype of a numpy/JAX dtype; TypeError for ones torch lacks."""
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type {np.dtype(np_dtype)}. The only supported types are: "
            "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, "
            "uint32, uint16, uint8, and bool."
        ) from None


def to_dtype(obj: Any) -> dtype:
    """Accept a torchlike dtype, a numpy dtype or a Python type (float/int/bool/complex)."""
    if isinstance(obj, dtype):
        return obj
    if obj is builtins.float:
        return float64
    if obj is builtins.int:
        return int64
    if obj is builtins.bool:
        return bool
    if obj is builtins.complex:
        return complex128
    if isinstance(obj, str):
        name = obj.removeprefix("torch.")
        if name in _BY_NAME:
            return _BY_NAME[name]
        if name in ALIASES:
            return ALIASES[name]
    return from_numpy_dtype(obj)


# --- promotion -------------------------------------------------------------------

# An operand's rank in promotion, the second item of the ``(dtype, rank)`` pairs the op table collects:
# within a category, dimensioned tensors beat 0-dim tensors, which beat wrapped Python numbers.
RANK_SCALAR, RANK_DIM0, RANK_DIMMED = 0, 1, 2

_KIND_ORDER = "buifc"
_INT_BY_RANK = (int8, int16, int32, int64)
_COMPLEX_BY_RANK = (None, complex64, complex128)


def _promote(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a._kind == "u" and a is not uint8 or b._kind == "u" and b is not uint8:
        # torch: the barebones unsigned types only promote with floating types.
        if a.is_floating_point:
            return a
        if b.is_floating_point:
            return b
        raise RuntimeError(
            "Promotion for uint16, uint32, uint64 types is not supported, "
            f"attempted to promote {_CPP_NAME[a]} and {_CPP_NAME[b]}"
        )
    if _KIND_ORDER.index(a._kind) < _KIND_ORDER.index(b._kind):
        a, b = b, a
    # now kind(a) >= kind(b)
    if a._kind == "b":
        return a
    if b._kind == "b":
        return a
    if a._kind == "i":
        if b._kind == "u":  # uint8 with a signed int: int16 at least
            return _INT_BY_RANK[builtins.max(a._rank, 1)]
        return a if a._rank >= b._rank else b
    if a._kind == "u":  # both uint8, handled by identity above
        return a
    if a._kind == "f":
        if b._kind != "f":
            return a
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank >= b._rank else b
    # a is complex
    if b._kind == "c":
        return a if a._rank >= b._rank else b
    if b._kind == "f":
        return _COMPLEX_BY_RANK[builtins.max(a._rank, b._rank, 1)]
    return a


_CPP_NAME = {
    bool: "Bool", uint8: "Byte", uint16: "UInt16", uint32: "UInt32", uint64: "UInt64", int8: "Char",
    int16: "Short", int32: "Int", int64: "Long", float16: "Half", bfloat16: "BFloat16",
    float32: "Float", float64: "Double", complex64: "ComplexFloat", complex128: "ComplexDouble",
}  # fmt: skip

_PROMOTE_TABLE: dict[tuple[dtype, dtype], dtype] = {}


def promote_types(type1: dtype, type2: dtype) -> dtype:
    key = (type1, type2)
    r = _PROMOTE_TABLE.get(key)
    if r is None:
        r = _PROMOTE_TABLE[key] = _promote(type1, type2)
    return r


def cpp_name(d: dtype) -> str:
    """The name torch's C++ messages use (``Float``, ``Long``, ...)."""
    return _CPP_NAME[d]


_C_TYPE = {
    bool: "bool", uint8: "unsigned char", int8: "signed char", int16: "short int", int32: "int",
    int64: "long int", float16: "c10::Half", bfloat16: "c10::BFloat16", float32: "float",
    float64: "double", complex64: "c10::complex<float>", complex128: "c10::complex<double>",
    uint16: "unsigned short", uint32: "unsigned int", uint64: "unsigned long",
}  # fmt: skip


def c_type(d: dtype) -> str:
    """The C++ type name other torch messages print (``float``, ``long int``, ``c10::Half``)."""
    return _C_TYPE[d]


_SCALAR_C_TYPE = {
    uint8: "uint8_t", uint16: "uint16_t", uint32: "uint32_t", uint64: "uint64_t", int8: "int8_t",
    int16: "int16_t", int32: "int", int64: "int64_t", float16: "c10::Half", bfloat16: "c10::BFloat16",
    float32: "float", float64: "double",
}  # fmt: skip


def overflows(value: Any, d: dtype, floats: builtins.bool = True) -> builtins.bool:
    """torch's checked_convert: whether the Python number ``value`` doesn't fit ``d`` (unsigned types
    take negative integers down to -max, which wrap, but no negative float; floats overflow only from
    finite values, and only when ``floats``). Bool and complex targets take anything."""
    if d is bool or d._kind == "c" or isinstance(value, builtins.bool):
        return False
    if isinstance(value, builtins.complex):
        if value.imag != 0:
            return True
        value = value.real
    if d._kind == "f":
        if not floats or not math.isfinite(value):
            return False
        return abs(value) > float(ml_dtypes.finfo(d.np).max)
    info = np.iinfo(d.np)
    if isinstance(value, float):
        return not math.isfinite(value) or not int(info.min) <= value <= int(info.max)
    lo = -int(info.max) if d._kind == "u" else int(info.min)
    return not lo <= value <= int(info.max)


def overflow_error(d: dtype, c_names: builtins.bool = True) -> RuntimeError:
    name = _SCALAR_C_TYPE.get(d, d.np.name) if c_names else np.dtype(d.np).name
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


def _category(d: dtype) -> int:
    return {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}[d._kind]


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """torch.can_cast: casting may not lower the category (complex > float > int > bool)."""
    return _category(from_) <= _category(to)


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # torch's c10 combine_categories, with None as Undefined.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value: Any) -> dtype:
    """The dtype torch gives a wrapped Python scalar."""
    t = type(value)
    if t is builtins.bool:
        return bool
    if t is builtins.int:
        return int64
    if t is builtins.float:
        return _default_float
    if t is builtins.complex:
        return default_complex()
    if isinstance(value, (np.bool_,)):
        return bool
    if isinstance(value, np.integer):
        return int64
    if isinstance(value, np.floating):
        return float64
    if isinstance(value, np.complexfloating):
        return complex128
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # a traced Python number
    if kind is not None:
        return {"b": bool, "i": int64, "u": int64, "f": _default_float, "c": default_complex()}[kind]
    raise TypeError(f"unsupported scalar type {t.__name__}")


_RESULT_CACHE: dict[tuple, dtype] = {}


def result_type_from(dims: tuple, zeros: tuple, scalars: tuple) -> dtype:
    """torch's result type given the dtypes of dimensioned tensors, 0-dim tensors and wrapped
    Python scalars (each already mapped by ``scalar_dtype``)."""
    key = (dims, zeros, scalars)
    r = _RESULT_CACHE.get(key)
    if r is not None:
        return r
    state = []
    for group in (dims, zeros, scalars):
        acc = None
        for d in group:
            acc = d if acc is None else promote_types(acc, d)
        state.append(acc)
    r = _combine_categories(state[0], _combine_categories(state[1], state[2]))
    _RESULT_CACHE[key] = r
    return r


# --- finfo / iinfo -----------------------------------------------------------------


def _fmt(x: builtins.float) -> str:
    return f"{x:g}"


class finfo:
    """torch.finfo: machine limits of a floating dtype."""

    def __init__(self, type: dtype | None = None) -> None:
        d = _default_float if type is None else type
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        self.dtype = d.to_real().name
        info = ml_dtypes.finfo(d.to_real().np)
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, max={_fmt(self.max)}, "
            f"eps={_fmt(self.eps)}, smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
            f"dtype={self.dtype})"
        )


class iinfo:
    """torch.iinfo: machine limits of an integer dtype."""

    def __init__(self, type: dtype) -> None:
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        self.dtype = type.name
        info = np.iinfo(type.np)
        self.bits = info.bits
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __repr__(self) -> str:
        return f"iinfo(min={_fmt(self.min)}, max={_fmt(self.max)}, dtype={self.dtype})"
