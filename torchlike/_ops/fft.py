"""torch.fft: one table op per transform (``_fft_fft`` ... named like aten's ``fft_fft`` so autocast's
lists find them), plus the frequency helpers and shifts. Bodies resize the input as torch does (zero
pad or slice to ``n``/``s``), then run ``jnp.fft``; the backward is JAX's vjp, whose c2r/r2c rules
agree with torch's (the doubled middle bins of ``irfft``'s gradient included).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax.numpy as jnp

from .._core import dtype as D
from .._core import tensor as T
from .._core.tensor import Tensor
from .registry import TensorArg, defop, expose
from .shape import roll

__all__: list = []

_FLIP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check_norm(norm: Any) -> None:
    if norm is not None and norm not in ("backward", "forward", "ortho"):
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _wrap(dim: int, ndim: int) -> int:
    if ndim == 0:
        # torch: FFT dims do not wrap scalars
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return T.wrap_dim(dim, ndim)


def _points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Any, dims: tuple, sizes: tuple) -> Any:
    """Zero-pad or slice ``x`` from the start so that ``x.shape[dims[i]] == sizes[i]``."""
    pad = [(0, 0)] * x.ndim
    index = [slice(None)] * x.ndim
    for d, s in zip(dims, sizes):
        if x.shape[d] < s:
            pad[d] = (0, s - x.shape[d])
        elif x.shape[d] > s:
            index[d] = slice(0, s)
    x = x[tuple(index)]
    return jnp.pad(x, pad) if any(p != (0, 0) for p in pad) else x


def _shape_and_dims(x: Any, s: Any, dim: Any) -> tuple:
    """torch's canonical (sizes, dims) of an n-dimensional transform."""
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_wrap(d, x.ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(s)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions."
            )
        if dim is None:
            dims = tuple(range(x.ndim - len(s), x.ndim))
        sizes = tuple(n if n != -1 else x.shape[d] for n, d in zip(s, dims))
    elif dim is None:
        dims, sizes = tuple(range(x.ndim)), tuple(x.shape)
    else:
        sizes = tuple(x.shape[d] for d in dims)
    for n in sizes:
        _points(n)
    return sizes, dims


def _complex(x: Any) -> Any:
    if jnp.iscomplexobj(x):
        return x
    return x.astype(jnp.complex128 if x.dtype == jnp.float64 else jnp.complex64)


# --- kernels (sizes and dims already canonical) -----------------------------------------------------


def _c2c(x: Any, sizes: tuple, dims: tuple, norm: Any, forward: bool) -> Any:
    x = _complex(_resize(x, dims, sizes))
    f = jnp.fft.fftn if forward else jnp.fft.ifftn
    return f(x, axes=dims, norm=norm)


def _r2c(x: Any, sizes: tuple, dims: tuple, norm: Any, forward: bool) -> Any:
    """rfftn (forward) or ihfftn (conj of rfftn with the inverse's normalisation)."""
    x = _resize(x, dims, sizes)
    if forward:
        return jnp.fft.rfftn(x, axes=dims, norm=norm)
    return jnp.conj(jnp.fft.rfftn(x, axes=dims, norm=_FLIP[norm]))


def _c2r(x: Any, sizes: tuple, dims: tuple, norm: Any, forward: bool) -> Any:
    """irfftn, or hfftn (irfftn of the conjugate with the forward normalisation)."""
    x = _complex(_resize(x, dims, sizes[:-1] + (sizes[-1] // 2 + 1,)))
    if forward:
        return jnp.fft.irfftn(jnp.conj(x), s=sizes, axes=dims, norm=_FLIP[norm])
    return jnp.fft.irfftn(x, s=sizes, axes=dims, norm=norm)


def _c2r_sizes(x: Any, s: Any, dim: Any) -> tuple:
    """c2r transforms: the last size defaults to 2 * (m - 1) output points."""
    sizes, dims = _shape_and_dims(x, s, dim)
    if s is None or (s if isinstance(s, int) else tuple(s))[-1] == -1:
        last = 2 * (x.shape[dims[-1]] - 1)
        _points(last)
        sizes = sizes[:-1] + (last,)
    return sizes, dims


# --- checks and names ---------------------------------------------------------------------------------


def _norm_check(cdt: D.dtype, dyn: tuple, static: tuple) -> None:
    _check_norm(static[-1])


def _dtype_checked(body: Callable, real_only: str | None) -> Callable:
    """``body`` behind torch's dtype checks, made on the array the body gets (after autocast's cast to
    float32, which torch applies to the fft ops before checking)."""

    @functools.wraps(body)
    def checked(**kw: Any) -> Any:
        dt = D.to_dtype(kw["input"].dtype)
        if real_only is not None and dt.is_complex:
            raise RuntimeError(real_only.format(D.cpp_name(dt)))
        if dt.to_real() not in (D.float32, D.float64):
            raise RuntimeError(f"Unsupported dtype {D.cpp_name(dt)}")
        return body(**kw)

    return checked


def _r2c_or_c2c(real: str, cplx: str = "FftC2CBackward0") -> Callable:
    return lambda static, dyn: cplx if dyn[0]._dtype.is_complex else real


def _op(name: str, body: Callable, grad_name: Any, real_only: str | None = None) -> Callable:
    op = defop(name, promote="float", namespaces=(f"fft:{name.removeprefix('_fft_')}",), out=True, grad_name=grad_name,
               check=_norm_check)  # fmt: skip
    return op(_dtype_checked(body, real_only))


# --- one-dimensional transforms -----------------------------------------------------------------------


def _1d(kind: str, forward: bool) -> Callable:
    """The body of a 1-d transform: ``n`` points along ``dim`` (for c2r the default is 2 * (size - 1))."""

    def body(input: TensorArg, n: int | None = None, dim: int = -1, norm: str | None = None) -> Any:
        d = _wrap(dim, input.ndim)
        size = n if n is not None else 2 * (input.shape[d] - 1) if kind == "c2r" else input.shape[d]
        _points(size)
        return {"c2c": _c2c, "r2c": _r2c, "c2r": _c2r}[kind](input, (size,), (d,), norm, forward)

    return body


# --- n-dimensional transforms (the 2-d ones are the same bodies with dim=(-2, -1)) ----------------------


def _nd(kind: str, forward: bool, default_dim: Any) -> Callable:
    def body(input: TensorArg, s: Any = None, dim: Any = default_dim, norm: str | None = None) -> Any:
        if kind == "c2r":
            sizes, dims = _c2r_sizes(input, s, dim)
            return _c2r(input, sizes, dims, norm, forward)
        sizes, dims = _shape_and_dims(input, s, dim)
        return (_c2c if kind == "c2c" else _r2c)(input, sizes, dims, norm, forward)

    return body


_C2C = "FftC2CBackward0"
_C2R = "FftC2RBackward0"
_R2C = "FftR2CBackward0"

for _name, _kind, _fwd, _grad, _real in (
    ("fft", "c2c", True, _r2c_or_c2c(_R2C), None),
    ("ifft", "c2c", False, _r2c_or_c2c("ConjBackward0"), None),
    ("rfft", "r2c", True, _R2C, "rfft expects a real input tensor, but got {}"),
    ("irfft", "c2r", False, _C2R, None),
    ("hfft", "c2r", True, _C2R, None),
    ("ihfft", "r2c", False, "ConjBackward0", "ihfft expects a real input tensor, but got {}"),
):
    _body = _1d(_kind, _fwd)
    _body.__name__, _body.__doc__ = _name, f"torch.fft.{_name}."
    globals()[f"_fft_{_name}"] = _op(f"_fft_{_name}", _body, _grad, _real)

_REAL_ND = "Only supports floating-point dtypes, but found: {}"
for _name, _kind, _fwd, _grad, _real in (
    ("fft", "c2c", True, _C2C, None),
    ("ifft", "c2c", False, _C2C, None),
    ("rfft", "r2c", True, _R2C, "rfftn expects a real-valued input tensor, but got {}"),
    ("irfft", "c2r", False, _C2R, None),
    ("hfft", "c2r", True, _C2R, None),
    ("ihfft", "r2c", False, _C2C, _REAL_ND),
):
    for _suffix, _default in (("2", (-2, -1)), ("n", None)):
        _body = _nd(_kind, _fwd, _default)
        _body.__name__ = f"{_name}{_suffix}"
        _body.__doc__ = f"torch.fft.{_name}{_suffix}."
        globals()[f"_fft_{_name}{_suffix}"] = _op(f"_fft_{_name}{_suffix}", _body, _grad, _real)


# --- helpers ---------------------------------------------------------------------------------------------


def _freq(
    name: str, n: int, d: float, dtype: Any, layout: Any, device: Any, requires_grad: bool, onesided: bool
) -> Tensor:
    from . import creation

    dt = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dt.is_complex:  # torch: the arange it starts from has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{D.cpp_name(dt)}'")
    count = n // 2 + 1 if onesided else n
    k = creation.arange(count, dtype=D.int64, layout=layout, device=device)
    if not onesided:
        k = k - (k >= (n + 1) // 2).to(D.int64) * n
    out = (k.to(dt) * (1.0 / (n * d))).to(dt)
    return out.requires_grad_(True) if requires_grad else out


@expose("fft")
def fftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """torch.fft.fftfreq: sample frequencies [0, 1, ..., -1] / (d * n)."""
    result = _freq("fftfreq", n, d, dtype, layout, device, requires_grad, False)
    return _to_out(result, out)


@expose("fft")
def rfftfreq(
    n: int,
    d: float = 1.0,
    *,
    out: Tensor | None = None,
    dtype: Any = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """torch.fft.rfftfreq: the non-negative half of ``fftfreq`` (n // 2 + 1 values)."""
    result = _freq("rfftfreq", n, d, dtype, layout, device, requires_grad, True)
    return _to_out(result, out)


def _to_out(result: Tensor, out: Tensor | None) -> Tensor:
    if out is None:
        return result
    from .registry import copy_to_out

    copy_to_out(result, out)
    return out


def _shift(input: Tensor, dim: Any, inverse: bool) -> Tensor:
    ndim = input.dim()
    dims = tuple(range(ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    sizes = [input.shape[T.wrap_dim(d, ndim)] for d in dims]
    shifts = [(n + 1) // 2 if inverse else n // 2 for n in sizes]
    return roll(input, shifts, dims)


@expose("fft")
def fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """torch.fft.fftshift: roll the zero frequency to the centre of ``dim`` (all dims by default)."""
    return _shift(input, dim, False)


@expose("fft")
def ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """torch.fft.ifftshift: the inverse of ``fftshift``."""
    return _shift(input, dim, True)
