"""torch's window factories (``hann_window``, ``hamming_window``, ``blackman_window``, ``bartlett_window``,
``kaiser_window``), the windows ``stft``/``istft`` take. Each is written with ops in the window's dtype, in
the order torch's factories apply them, so values round as torch's do. A periodic window is the symmetric
window one point longer without its last point.
"""

from __future__ import annotations

import math
from typing import Any

from .._core import dtype as D
from .._core import layout as L
from .._core.device import device as Device
from .._core.tensor import Tensor
from . import creation, shape
from .registry import expose


def _options(dtype: Any, layout: Any, device: Any) -> str:
    """torch's printout of the factory's TensorOptions, as its window errors show them."""
    dt = D.c_type(D.get_default_dtype() if dtype is None else D.to_dtype(dtype))
    dev = Device("cpu" if device is None else device)
    where = str(dev) if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
    lay = "Strided (default)" if layout is None else ("Strided" if layout is L.strided else "Sparse")
    return (
        f"TensorOptions(dtype={dt}{' (default)' if dtype is None else ''}, device={where}, layout={lay}, "
        "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
    )


def _start(name: str, length: int, dtype: Any, layout: Any, device: Any, requires_grad: bool) -> Any:
    """torch's checks; a window of 0 or 1 points (which every window factory returns as is), or the dtype."""
    if not isinstance(length, int) or isinstance(length, bool):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not {type(length).__name__}")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")
    if layout is not None and layout is not L.strided:
        # torch: only hann_window checks before its dtype default is filled in
        shown = dtype if dtype is not None or name == "hann_window" else D.get_default_dtype()
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {_options(shown, layout, device)}")
    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if dt.is_complex:  # torch: the arange it starts from has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{D.cpp_name(dt)}'")
    if not dt.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_options(dtype, layout, device)}")
    if length <= 1:
        return creation.ones((length,), dtype=dt, device=device, requires_grad=requires_grad)
    return dt


def _finish(window: Tensor, periodic: bool, requires_grad: bool) -> Tensor:
    if periodic:
        window = window.narrow(0, 0, window.shape[0] - 1)
    return window._new_requires_grad() if requires_grad else window


@expose("torch")
def hamming_window(
    window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *, dtype: Any = None,
    layout: Any = None, device: Any = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.hamming_window: ``alpha - beta * cos(2 pi n / (N - 1))``."""
    dt = _start("hamming_window", window_length, dtype, layout, device, requires_grad)
    if isinstance(dt, Tensor):
        return dt
    n = window_length + 1 if periodic else window_length
    window = creation.arange(n, dtype=dt, device=device).mul(2 * math.pi / (n - 1)).cos().mul(-beta).add(alpha)
    return _finish(window, periodic, requires_grad)


@expose("torch")
def hann_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.hann_window: the Hamming window with alpha = beta = 0.5."""
    _start("hann_window", window_length, dtype, layout, device, requires_grad)
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype=dtype, device=device, requires_grad=requires_grad)


@expose("torch")
def blackman_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.blackman_window: ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    dt = _start("blackman_window", window_length, dtype, layout, device, requires_grad)
    if isinstance(dt, Tensor):
        return dt
    n = window_length + 1 if periodic else window_length
    phase = creation.arange(n, dtype=dt, device=device).mul(math.pi / (n - 1))
    window = phase.mul(4).cos().mul(0.08).sub(phase.mul(2).cos().mul(0.5)).add(0.42)
    return _finish(window, periodic, requires_grad)


@expose("torch")
def bartlett_window(
    window_length: int, periodic: bool = True, *, dtype: Any = None, layout: Any = None, device: Any = None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.bartlett_window: the triangle rising from 0 to 1 and back."""
    dt = _start("bartlett_window", window_length, dtype, layout, device, requires_grad)
    if isinstance(dt, Tensor):
        return dt
    n = window_length + 1 if periodic else window_length
    ramp = creation.arange(n, dtype=dt, device=device).mul(2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    window = shape.cat([ramp.narrow(0, 0, half), ramp.narrow(0, half, n - half).mul(-1).add(2)])
    return _finish(window, periodic, requires_grad)


@expose("torch")
def kaiser_window(
    window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype: Any = None, layout: Any = None,
    device: Any = None, requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """torch.kaiser_window: ``I0(beta * sqrt(1 - ((n - a) / a) ** 2)) / I0(beta)`` with ``a = (N - 1) / 2``."""
    dt = _start("kaiser_window", window_length, dtype, layout, device, requires_grad)
    if isinstance(dt, Tensor):
        return dt
    n = window_length + 1 if periodic else window_length
    a = (n - 1) / 2.0
    # torch: one kernel computes each point in float32 for float16/bfloat16 windows, rounding once
    op = dt if dt in (D.float32, D.float64) else D.float32
    ratio = creation.arange(n, dtype=op, device=device).sub(a).div(a)
    window = (1 - ratio.pow(2)).abs().sqrt().mul(beta).i0().div(creation.tensor(beta, dtype=op).i0()).to(dt)
    return _finish(window, periodic, requires_grad)
