"""torch's tensor printing (``torch/_tensor_str.py``), computed from numpy arrays.

The tensor layer hands over the data as a numpy array plus its torch dtype; everything here is
pure text layout. Floating values are formatted from their exact float64 upcast, as torch does
through ``Tensor.item()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from torchlike._core import dtype as D

__all__ = [
    "PRINT_OPTS",
    "get_printoptions",
    "printoptions",
    "set_printoptions",
    "tensor_format",
    "tensor_repr",
    "tensor_str",
]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """torch.set_printoptions. Like torch, an unknown profile is ignored and ``sci_mode`` is
    reset to None unless given."""
    if profile is not None and profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """torch._tensor_str.printoptions: set options for the duration of a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


# --- element formatting -----------------------------------------------------------------


class _Formatter:
    """torch's _Formatter: one shared width and notation for all elements of a tensor (or of
    the real or imaginary parts of a complex one)."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        # `values`: a flat array of the elements that will be shown, already upcast (float64
        # for floating data, the tensor's own dtype otherwise).
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        precision = PRINT_OPTS.precision
        if not floating:
            for v in np.unique(values).tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nonzero_finite = values[np.isfinite(values) & (values != 0)]
        if nonzero_finite.size == 0:
            return  # torch: nothing to measure; keeps int_mode and no sci_mode
        absval = np.abs(nonzero_finite)
        vmin, vmax = absval.min(), absval.max()
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if PRINT_OPTS.sci_mode is None:
            with np.errstate(over="ignore"):
                self.sci_mode = bool(vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        unique = np.unique(nonzero_finite).tolist()
        if self.sci_mode:
            spec, extra = f".{precision}e", 0
        elif self.int_mode:
            spec, extra = ".0f", 1  # room for the trailing "." that marks a float
        else:
            spec, extra = f".{precision}f", 0
        for v in unique:
            self.max_width = max(self.max_width, len(format(v, spec)) + extra)

    def width(self) -> int:
        return self.max_width

    def format(self, value: Any) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = format(value, f"{self.max_width}.{PRINT_OPTS.precision}e")
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = format(value, f".{PRINT_OPTS.precision}f")
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(val: complex, f_real: _Formatter, f_imag: _Formatter) -> str:
    real_str = f_real.format(val.real)
    imag_str = (f_imag.format(val.imag) + "j").lstrip()
    # the imaginary text carries its own sign, -0.0 included; nan and inf positives have none
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


class _Printer:
    """Walks the array as torch's _tensor_str_with_formatter walks the tensor."""

    def __init__(self, values: np.ndarray, dtype: D.dtype, summarize: bool) -> None:
        self.dtype = dtype
        self.summarize = summarize
        shown = _summarized_data(values) if summarize else values.reshape(-1)
        shown = _upcast(shown, dtype)
        if dtype.is_complex:
            self.f1 = _Formatter(shown.real, True)
            self.f2: _Formatter | None = _Formatter(shown.imag, True)
        else:
            self.f1 = _Formatter(shown, dtype.is_floating_point)
            self.f2 = None

    def element(self, val: Any) -> str:
        if self.f2 is not None:
            return _complex_str(val, self.f1, self.f2)
        return self.f1.format(val)

    def py_values(self, a: np.ndarray) -> list:
        return _upcast(a, self.dtype).tolist()

    def vector(self, a: np.ndarray, indent: int) -> str:
        element_length = self.f1.width() + 2
        if self.f2 is not None:
            element_length += self.f2.width() + 1  # the imaginary part and its "j"
        per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
        edge = PRINT_OPTS.edgeitems
        if self.summarize and not edge:
            data = ["..."]
        elif self.summarize and a.shape[0] > 2 * edge:
            data = [self.element(v) for v in self.py_values(a[:edge])]
            data.append(" ...")
            data += [self.element(v) for v in self.py_values(a[-edge:])]
        else:
            data = [self.element(v) for v in self.py_values(a)]
        lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"

    def tensor(self, a: np.ndarray, indent: int) -> str:
        if a.ndim == 0:
            return self.element(self.py_values(a))
        if a.ndim == 1:
            return self.vector(a, indent)
        edge = PRINT_OPTS.edgeitems
        n = a.shape[0]
        if self.summarize and n > 2 * edge:
            slices = [self.tensor(a[i], indent + 1) for i in range(edge)]
            slices.append("...")
            slices += [self.tensor(a[i], indent + 1) for i in range(n - edge, n)]
        else:
            slices = [self.tensor(a[i], indent + 1) for i in range(n)]
        return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _upcast(a: np.ndarray, dtype: D.dtype) -> np.ndarray:
    """The stored values in ``dtype``, widened so that ``tolist`` gives exact Python numbers."""
    a = a.astype(dtype.np, copy=False)  # e.g. float32 data for a bfloat16 tensor: round to it
    if dtype.is_floating_point:
        return a.astype(np.float64)
    if dtype.is_complex:
        return a.astype(np.complex128)
    return a


def _summarized_data(a: np.ndarray) -> np.ndarray:
    """The elements torch's get_summarized_data keeps (flat; only their set matters)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim <= 1:
        # torch: with edgeitems=0, cat(t[:0], t[-0:]) keeps the whole vector
        if a.ndim == 1 and edge and a.shape[0] > 2 * edge:
            return np.concatenate([a[:edge], a[-edge:]])
        return a.reshape(-1)
    # with edgeitems=0 every axis keeps nothing, as in torch
    index = [np.r_[0:edge, n - edge : n] if n > 2 * edge else np.arange(n) for n in a.shape]
    return a[np.ix_(*index)].reshape(-1)


def tensor_str(values: np.ndarray, dtype: D.dtype, indent: int = len("tensor(")) -> str:
    """The data part of a tensor's repr (torch's ``_tensor_str``): ``values`` holds the tensor's
    elements (any dtype that casts to ``dtype``), ``indent`` is the column the data starts at."""
    values = np.asarray(values)
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    return _Printer(values, dtype, summarize).tensor(values, indent)


# --- the whole repr -----------------------------------------------------------------------


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # torch: this count is two more than the real length of the last line
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _shape_str(shape: tuple[int, ...]) -> str:
    return str(tuple(int(s) for s in shape))


def tensor_repr(
    values: np.ndarray,
    dtype: D.dtype,
    *,
    device: str = "cpu",
    requires_grad: bool = False,
    grad_fn_name: str | None = None,
    prefix: str = "tensor(",
    shape: tuple[int, ...] | None = None,
) -> str:
    """repr(tensor) (and str(tensor), which is the same) for a dense strided tensor.

    ``device`` is ``str(tensor.device)`` (e.g. ``'cuda:0'``); ``grad_fn_name`` the class name of
    its grad_fn (``'MulBackward0'``); ``shape``, if given, reshapes ``values`` to it.
    """
    values = np.asarray(values)
    if shape is not None:
        values = values.reshape(tuple(shape))
    indent = len(prefix)
    suffixes = []
    if device != "cpu":
        suffixes.append(f"device='{device}'")
    default_float = D.get_default_dtype()
    if values.size == 0:
        # torch: numpy's convention, (0,) needs no size; nothing shows the dtype but the suffix
        if values.ndim != 1:
            suffixes.append("size=" + _shape_str(values.shape))
        if dtype != default_float:
            suffixes.append("dtype=" + repr(dtype))
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + _shape_str(values.shape))
        if dtype not in (default_float, D.default_complex(), D.int64, D.bool):
            suffixes.append("dtype=" + repr(dtype))
        body = tensor_str(values, dtype, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)


def tensor_format(values: np.ndarray, dtype: D.dtype, format_spec: str, **repr_kwargs: Any) -> str:
    """Tensor.__format__: a 0-dim tensor formats as its Python number; any other tensor only
    takes the empty spec (giving its repr), as with ``object.__format__``."""
    values = np.asarray(values)
    if values.ndim == 0:
        return format(_upcast(values, dtype).item(), format_spec)
    if format_spec:
        raise TypeError("unsupported format string passed to Tensor.__format__")
    return tensor_repr(values, dtype, **repr_kwargs)
