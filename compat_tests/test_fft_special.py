"""torch.fft and torch.special against torch: values, dtypes, gradients, grad_fn names and errors."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check, check_raises

import torchlike.fft
import torchlike.special  # noqa: F401  (the namespaces load as attributes of torchlike)

rng = np.random.RandomState(0)
X = rng.randn(3, 4).astype(np.float32)
Y = rng.randn(3, 4).astype(np.float32)
X64 = rng.randn(3, 4)


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _c(t, x, y):
    return t.complex(x, y)


def _with_abs(y):
    """The complex result (values, dtype) and its modulus (the harness backpropagates float outputs)."""
    y = (
        y.resolve_conj() if hasattr(y, "resolve_conj") else y
    )  # torch's ifft/ihfft of real input are lazy conj views
    return (y, y.abs()) if y.dtype.is_complex else (y, y * 1)


# --- torch.fft -------------------------------------------------------------------------------------------

C2C = [
    ("fft", {}), ("fft", {"n": 6, "norm": "ortho"}), ("fft", {"n": 2, "dim": 0, "norm": "forward"}),
    ("ifft", {}), ("ifft", {"n": 3, "norm": "backward"}),
    ("fft2", {}), ("fft2", {"s": (2, 5), "norm": "ortho"}), ("ifft2", {"dim": (0, 1), "norm": "forward"}),
    ("fftn", {}), ("fftn", {"s": (4,), "dim": (0,)}), ("ifftn", {"s": (-1, 3)}),
    ("hfft", {}), ("hfft", {"n": 5, "norm": "ortho"}), ("hfft2", {}), ("hfftn", {"s": (2, 5), "norm": "forward"}),
    ("irfft", {}), ("irfft", {"n": 7, "norm": "forward"}), ("irfft", {"dim": 0}),
    ("irfft2", {}), ("irfftn", {"s": (3, 5), "norm": "ortho"}), ("irfftn", {"dim": (1,)}),
]  # fmt: skip


@pytest.mark.parametrize("name,kw", C2C, ids=[f"{n}-{k}" for n, k in C2C])
def test_complex_input(name, kw):
    check(lambda t, x, y: _with_abs(getattr(t.fft, name)(_c(t, x, y), **kw)), [X, Y])


REAL = [
    ("fft", {}), ("fft", {"n": 5, "norm": "ortho"}), ("ifft", {"dim": 0}), ("rfft", {}),
    ("rfft", {"n": 6, "norm": "forward"}), ("rfft", {"n": 3, "dim": 0}), ("ihfft", {}), ("ihfft", {"n": 5, "norm": "ortho"}),
    ("fft2", {}), ("rfft2", {}), ("rfftn", {"s": (2, 6)}), ("rfftn", {"dim": 0, "norm": "ortho"}),
    ("ihfft2", {}), ("ihfftn", {"norm": "forward"}), ("irfft", {}), ("hfft", {"n": 6}), ("ifftn", {}),
]  # fmt: skip


@pytest.mark.parametrize("name,kw", REAL, ids=[f"{n}-{k}" for n, k in REAL])
def test_real_input(name, kw):
    check(lambda t, x: _with_abs(getattr(t.fft, name)(x, **kw)), [X])


def test_float64_and_integer_inputs():
    check(lambda t, x: _with_abs(t.fft.rfft(x)), [X64])
    check(lambda t, x: t.fft.irfft(t.fft.rfft(x), n=4), [X64])
    check(
        lambda t, x: (t.fft.fft(x), t.fft.rfft2(x), t.fft.irfft(x)), [np.arange(12).reshape(3, 4)], grad=False
    )
    check(lambda t, x: t.fft.fft(x), [np.array([True, False, True])], grad=False)


def test_grad_fn_names():
    def names(t, x, y):
        z = _c(t, x, y)
        fns = [t.fft.fft(x), t.fft.fft(z), t.fft.ifft(x), t.fft.ifft(z), t.fft.rfft(x), t.fft.irfft(z),
               t.fft.hfft(z), t.fft.ihfft(x), t.fft.fft2(x), t.fft.rfftn(x), t.fft.irfft2(x), t.fft.ihfft2(x),
               t.fft.fftshift(x), t.fft.ifftshift(z)]  # fmt: skip
        return [_name(f) for f in fns]

    check(names, [X, Y], grad=False)


def test_out():
    def f(t, x):
        o = t.empty(3, 3, dtype=t.complex64)
        r = t.fft.rfft(x, n=4, out=o)
        return r is o, o, t.fft.fftfreq(4, out=t.empty(4))

    check(f, [X], grad=False)


def test_freq_and_shift():
    check(lambda t: (t.fft.fftfreq(5), t.fft.fftfreq(6, 0.1), t.fft.rfftfreq(7, 2.0), t.fft.rfftfreq(4, dtype=t.float64)), [],
          grad=False)  # fmt: skip
    check(lambda t, x: (t.fft.fftshift(x), t.fft.ifftshift(x), t.fft.fftshift(x, dim=1), t.fft.ifftshift(x, dim=(0,))),
          [np.arange(15).reshape(3, 5)], grad=False)  # fmt: skip
    check(lambda t, x: (t.fft.fftshift(x), t.fft.ifftshift(x, dim=-1)), [X])


FFT_ERRORS = [
    lambda t, x: t.fft.fft(x, norm="bad"),
    lambda t, x: t.fft.fft(x, n=0),
    lambda t, x: t.fft.rfft(x, n=-1),
    lambda t, x: t.fft.fft(x, dim=2),
    lambda t, x: t.fft.fft(x[0, 0]),
    lambda t, x: t.fft.fftn(x, s=(2,), dim=(0, 1)),
    lambda t, x: t.fft.fftn(x, s=(2, 2, 2)),
    lambda t, x: t.fft.fftn(x, dim=(0, -2)),
    lambda t, x: t.fft.fft(x.half()),
    lambda t, x: t.fft.rfft(t.complex(x, x)),
    lambda t, x: t.fft.ihfft(t.complex(x, x)),
    lambda t, x: t.fft.ihfft2(t.complex(x, x)),
    lambda t, x: t.fft.irfft(x[:, :1]),
    lambda t, x: t.fft.fftfreq(4, dtype=t.int64),
    lambda t, x: t.fft.fftfreq(4, dtype=t.complex64),
]


@pytest.mark.parametrize("i", range(len(FFT_ERRORS)))
def test_fft_errors(i):
    check_raises(FFT_ERRORS[i], [X])
