"""torch.signal.windows, written with torchlike's own ops (linspace, exp, cos, i0) on torch's sample grids, so
the values match torch's to rounding."""

from __future__ import annotations

import math
from typing import Any, Iterable

from ... import _ops
from ..._core import dtype as D
from ..._core import layout as L
from ..._core.tensor import Tensor


def _checks(name: str, M: int, dtype: Any, layout: Any) -> None:
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not L.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(M: int, dtype: Any, device: Any, requires_grad: bool) -> Tensor | None:
    C = _ops.creation
    if M == 0:
        return C.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return C.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _grid(start: float, step: float, M: int, dtype: Any, device: Any, requires_grad: bool) -> Tensor:
    return _ops.creation.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device,
                                  requires_grad=requires_grad)  # fmt: skip


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True, dtype: Any = None,
                layout: Any = L.strided, device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _ops.creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _grid(-center / tau, 1 / tau, M, dtype, device, requires_grad)
    return (-k.abs()).exp()


def cosine(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
           requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return _ops.creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    return _grid(0.5 * constant, constant, M, dtype, device, requires_grad).sin()


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype: Any = None, layout: Any = L.strided,
             device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _ops.creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _grid(start * constant, constant, M, dtype, device, requires_grad)
    return (-(k**2)).exp()


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype: Any = None, layout: Any = L.strided,
           device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    b = _ops.creation.tensor(beta, dtype=dtype, device=device)
    constant = 2.0 * b / (M if not sym else M - 1)
    end = _ops.pointwise.minimum(b, -b + (M - 1) * constant)
    k = _ops.creation.linspace(-beta, end.item(), M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _ops.pointwise.i0((b * b - k**2).sqrt()) / _ops.pointwise.i0(b)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype: Any = None, layout: Any = L.strided,
                   device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _grid(0.0, 2 * math.pi / (M if not sym else M - 1), M, dtype, device, requires_grad)
    out = None
    for i, w in enumerate(a):
        term = (-1) ** i * w * (k * i).cos()
        out = term if out is None else out + term
    return out


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype: Any = None, layout: Any = L.strided,
                    device: Any = None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)  # fmt: skip


def hamming(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
            requires_grad: bool = False) -> Tensor:  # fmt: skip
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
         requires_grad: bool = False) -> Tensor:  # fmt: skip
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)  # fmt: skip


def blackman(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)  # fmt: skip


def bartlett(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
             requires_grad: bool = False) -> Tensor:  # fmt: skip
    dtype = dtype or D.get_default_dtype()
    _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    k = _grid(-1.0, 2 / (M if not sym else M - 1), M, dtype, device, requires_grad)
    return 1 - k.abs()


def nuttall(M: int, *, sym: bool = True, dtype: Any = None, layout: Any = L.strided, device: Any = None,
            requires_grad: bool = False) -> Tensor:  # fmt: skip
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad)  # fmt: skip
