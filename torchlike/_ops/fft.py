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
from .registry import OptTensor, TensorArg, defop, expose
from .shape import roll


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
    return out._new_requires_grad() if requires_grad else out


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


# --- stft / istft ------------------------------------------------------------------------------------------
# The wrappers make torch's checks (with its messages, which print the call) and the centre padding; one table
# op each does the framing, windowing, transform and (for istft) overlap-add, so the backward is its vjp.


def _type_name(t: Tensor, style: str) -> str:
    cuda = t.device.type == "cuda"
    if style == "tensor":  # torch.FloatTensor, torch.cuda.FloatTensor
        return f"torch.{'cuda.' if cuda else ''}{D.cpp_name(t._dtype)}Tensor"
    return f"{'CUDA' if cuda else 'CPU'}{D.cpp_name(t._dtype)}Type"  # CPUComplexFloatType


def _flag(value: Any) -> str:
    return "None" if value is None else str(int(value))


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{_type_name(window, 'tensor')}{{{list(window.shape)}}}"


def _frame_args(name: str, input: Tensor, n_fft: int, hop_length: int | None, win_length: int | None,
                window: Tensor | None, advice: str, flags: str) -> tuple:
    """The argument handling stft and istft share: torch's warning for a missing window (``advice`` is its
    middle sentence), the defaults ``hop_length = n_fft // 4`` and ``win_length = n_fft``, and the call as
    torch's errors print it (``flags``: the arguments after ``window``, as printed). Returns
    ``(hop, win, call)``."""
    import warnings

    if window is None:
        warnings.warn(
            f"A window was not provided. A rectangular window will be applied{advice}To suppress this warning and "
            "use a rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
            UserWarning,
            stacklevel=3,
        )
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    style = "tensor" if name == "stft" else "type"  # torch.FloatTensor in stft's errors, CPUComplexFloatType in istft's
    call = (
        f"{name}({_type_name(input, style)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
        f"window={_window_repr(window)}, {flags})"
    )
    return hop, win, call


def _padded_window(window: Any, n_fft: int, win_length: int, dtype: Any) -> Any:
    """The window (ones when absent) zero-padded on both sides to ``n_fft`` points, as torch centres it."""
    w = jnp.ones((win_length,), dtype) if window is None else window
    left = (n_fft - win_length) // 2
    return jnp.pad(w, (left, n_fft - win_length - left)) if win_length < n_fft else w


def _stft_grad_name(static: tuple, dyn: tuple) -> str:
    return "SqueezeBackward4" if dyn[0].dim() == 1 else "TransposeBackward1"


@defop(promote="default", method=False, grad_name=_stft_grad_name)
def _stft(
    input: TensorArg, window: OptTensor, n_fft: int, hop_length: int, win_length: int, normalized: bool,
    onesided: bool, align_to_window: bool,
) -> Any:  # fmt: skip
    x = input
    dt = D.to_dtype(x.dtype)
    if dt.to_real() not in (D.float32, D.float64):  # checked after autocast's cast to float32, as torch does
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {D.cpp_name(dt)}")
    w = _padded_window(window, n_fft, win_length, x.dtype)
    if align_to_window:  # frames start where the window does, not where its zero padding does
        left = (n_fft - win_length) // 2
        frames = 1 + (x.shape[-1] - win_length) // hop_length
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(left, n_fft - win_length - left)])
    else:
        frames = 1 + (x.shape[-1] - n_fft) // hop_length
    index = hop_length * jnp.arange(frames)[:, None] + jnp.arange(n_fft)[None, :]
    segments = x[..., index] * w  # (..., frames, n_fft)
    norm = "ortho" if normalized else "backward"
    spectrum = jnp.fft.rfft(segments, axis=-1, norm=norm) if onesided else jnp.fft.fft(segments, axis=-1, norm=norm)
    return jnp.swapaxes(_complex(spectrum), -1, -2)


@expose("torch")
def stft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """torch.stft: the short-time Fourier transform of a 1-d signal or a 2-d batch, shape ``(B?, N, T)``."""
    import warnings

    from .complex import view_as_real
    from .nn.vision import pad

    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        ndim, p = input.dim(), n_fft // 2
        input = pad(input.view([1] * (3 - ndim) + list(input.shape)), [p, p], pad_mode)
        input = input.view(input.shape[-ndim:])
    complex_window = window is not None and window._dtype.is_complex
    if return_complex is None:
        if not (input._dtype.is_complex or complex_window):
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will further require "
                "that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if not return_complex:
        warnings.warn(
            "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex "
            "tensors for all inputs, and return_complex=False will raise an error.\nNote: you can still call "
            "torch.view_as_real on the complex output to recover the old return format.",
            UserWarning,
            stacklevel=2,
        )
    hop, win, call = _frame_args(
        "stft", input, n_fft, hop_length, win_length, window,
        ",which is known to cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window "
        "are recommended to reduce spectral leakage.",
        f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
        f"align_to_window={_flag(align_to_window)}",
    )  # fmt: skip
    dt = input._dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(call + " : expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(call + " : expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(call + f" : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(call + f" : expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(call + f" : expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            call + f" : expected a 1D window tensor of size equal to win_length={win}, but got window with size "
            f"{list(window.shape)}"
        )
    full = input._dtype.is_complex or complex_window
    if onesided and full:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    out = _stft(input, window, n_fft, hop, win, bool(normalized), not full if onesided is None else bool(onesided),
                bool(align_to_window))  # fmt: skip
    return out if return_complex else view_as_real(out)


def _overlap_add(frames: Any, hop_length: int) -> Any:
    """Sum ``(..., T, n_fft)`` frames placed ``hop_length`` apart into ``(..., n_fft + hop_length * (T - 1))``."""
    count, n_fft = frames.shape[-2:]
    index = hop_length * jnp.arange(count)[:, None] + jnp.arange(n_fft)[None, :]
    out = jnp.zeros(frames.shape[:-2] + (n_fft + hop_length * (count - 1),), frames.dtype)
    return out.at[..., index].add(frames)


def _istft_grad_name(static: tuple, dyn: tuple) -> str:
    if static[0]:  # zeros appended up to ``length``
        return "ConstantPadNdBackward0"
    return "SqueezeBackward1" if dyn[0].dim() == 2 else "DivBackward0"


@defop(promote="default", method=False, grad_name=_istft_grad_name)
def _istft(
    input: TensorArg, window: OptTensor, tail: int, n_fft: int, hop_length: int, win_length: int, start: int,
    end: int | None, normalized: bool, onesided: bool, return_complex: bool,
) -> Any:  # fmt: skip
    x = jnp.swapaxes(input if input.ndim == 3 else input[None], -1, -2)  # (B, T, F)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = jnp.fft.ifft(x, n=n_fft, axis=-1, norm=norm)
        w = _padded_window(window, n_fft, win_length, frames.dtype)
    else:
        frames = jnp.fft.irfft(x if onesided else x[..., : n_fft // 2 + 1], n=n_fft, axis=-1, norm=norm)
        w = _padded_window(None if window is None else window.real, n_fft, win_length, frames.dtype)
    y = _overlap_add(frames * w, hop_length)[..., start:end]
    envelope = _overlap_add(jnp.broadcast_to(w * w, frames.shape[-2:]), hop_length)[start:end]
    y = y / envelope
    if input.ndim == 2:
        y = y[0]
    return jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, tail)]) if tail else y


@defop(promote=None, method=False, differentiable=False)
def _istft_overlap_vanishes(
    window: OptTensor, n_fft: int, hop_length: int, win_length: int, frames: int, start: int, end: int | None
) -> Any:
    """torch's NOLA check: whether the summed squared windows vanish (< 1e-11) somewhere in the output."""
    w = _padded_window(window, n_fft, win_length, jnp.float32)
    envelope = _overlap_add(jnp.broadcast_to(w * w, (frames, n_fft)), hop_length)[start:end]
    return jnp.abs(envelope).min() < 1e-11


@expose("torch")
def istft(
    input: Tensor,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
) -> Tensor:
    """torch.istft: the least-squares inverse of ``stft`` (overlap-add divided by the summed squared window)."""
    import warnings

    hop, win, call = _frame_args(
        "istft", input, n_fft, hop_length, win_length, window,
        ".Please provide the same window used by stft to make the inversion lossless.",
        f"center={_flag(center)}, normalized={_flag(normalized)}, onesided={_flag(onesided)}, length={length}, "
        f"return_complex={_flag(return_complex)}",
    )  # fmt: skip
    if not input._dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with return_complex=True."
        )
    if input.numel() == 0:
        raise RuntimeError(call + " : input tensor cannot be empty.")
    if input.dim() not in (2, 3):  # torch counts the real view's trailing (re, im) dimension
        raise RuntimeError(call + f" : expected a tensor with 3 or 4 dimensions, but got {input.dim() + 1}")
    bins, frames = input.shape[-2:]
    one = bins != n_fft if onesided is None else bool(onesided)
    if one and n_fft // 2 + 1 != bins:
        raise RuntimeError(
            call + " : expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
            f"when onesided=True, but got {bins}"
        )
    if not one and n_fft != bins:
        raise RuntimeError(
            call + " : expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
            f"onesided=False, but got {bins}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(call + " : expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(call + " : expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(call + " : Invalid window shape. window has to be 1D and length of `win_length`")
    if return_complex and one:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if not return_complex and window is not None and window._dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    total = n_fft + hop * (frames - 1)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else total
    if _istft_overlap_vanishes(window, n_fft, hop, win, frames, start, end).item():
        raise RuntimeError(call + " window overlap add min: 1\n[ CPUBoolType{} ]")
    tail = max(end - total, 0)
    if tail:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded with zeros in the "
            "tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
    return _istft(input, window, tail, n_fft, hop, win, start, None if end >= total else end, bool(normalized), one,
                  bool(return_complex))  # fmt: skip


