"""torch.fft and torch.special against torch: values, dtypes, gradients, grad_fn names and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import check, check_raises

import torchlike
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


# --- torch.special -------------------------------------------------------------------------------------

G = np.array([-2.5, -0.7, -0.1, 0.3, 1.2, 2.9, 4.5], dtype=np.float32)  # general
P = np.array([0.05, 0.3, 0.9, 1.0, 1.7, 3.2, 6.0], dtype=np.float32)  # positive
U = np.array([0.01, 0.1, 0.3, 0.5, 0.62, 0.9, 0.99], dtype=np.float32)  # in (0, 1)
EDGE = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-30], dtype=np.float32)

UNARY = {
    "G": ["expit", "erf", "erfc", "erfcx", "ndtr", "log_ndtr", "i0", "i0e", "i1", "i1e", "sinc", "log1p", "expm1",
          "exp2", "round", "digamma", "psi", "gammaln"],
    "P": ["entr", "gammaln", "digamma", "psi", "log1p"],
    "U": ["logit", "erfinv", "ndtri", "entr"],
}  # fmt: skip
UNARY_CASES = [(k, n) for k, names in UNARY.items() for n in names]
DATA = {"G": G, "P": P, "U": U}


@pytest.mark.parametrize("data,name", UNARY_CASES, ids=[f"{n}-{k}" for k, n in UNARY_CASES])
def test_special_unary(data, name):
    check(lambda t, x: getattr(t.special, name)(x), [DATA[data]])


SPECIAL_EDGE = [
    "erfcx",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "i0e",
    "i1",
    "i1e",
    "entr",
    "expit",
    "erfinv",
    "gammaln",
    "psi",
]


@pytest.mark.parametrize("name", SPECIAL_EDGE)
def test_special_edge_values(name):
    check(lambda t, x: getattr(t.special, name)(x), [EDGE], grad=False)


def test_special_float64_and_integer_inputs():
    check(
        lambda t, x: (t.special.erfcx(x), t.special.i1e(x), t.special.log_ndtr(x), t.special.ndtr(x)),
        [G.astype(np.float64)],
    )
    check(lambda t, x: (t.special.erfcx(x), t.special.i1(x), t.special.entr(x), t.special.ndtri(x)),
          [np.arange(-2, 3)], grad=False)  # fmt: skip


def test_special_binary():
    check(lambda t, x, y: (t.special.xlogy(x, y), t.special.xlog1py(x, y)), [G, P])
    check(lambda t, x: (t.special.xlog1py(x, 2.0), t.special.xlog1py(2, x)), [P])
    check(
        lambda t, x: t.special.xlog1py(x, x),
        [np.array([0.0, 0.0, 1.0, np.nan, 2.0], dtype=np.float32)],
        grad=False,
    )
    check(lambda t, y: t.special.zeta(2.0, y), [P])
    check(lambda t, x, q: t.special.zeta(x.detach() + 1.5, q), [P, P])
    check(lambda t, x, q: t.special.zeta(x, q), [np.array([1.0, 0.5, 2.0, 3.0, 2.5]), np.array([1.0, 1.0, -2.0, -1.5, 0.0])],
          grad=False)  # fmt: skip
    check(
        lambda t, a, x: (t.special.gammainc(a.detach(), x), t.special.gammaincc(a.detach(), x)),
        [P, P[::-1].copy()],
    )
    check(lambda t, a, x: (t.igamma(a, x), t.igammac(a, x), a.igamma(x)), [P, G], grad=False)
    edge_a = np.array([0, 0, 1, 2, -1, 1, np.inf, 2, 0.5, np.nan, 1], dtype=np.float32)
    edge_x = np.array([0, 1, 0, np.inf, 1, -1, 1, 3, 0, 1, np.nan], dtype=np.float32)
    check(lambda t, a, x: (t.special.gammainc(a, x), t.special.gammaincc(a, x)), [edge_a, edge_x], grad=False)


def test_special_gamma_family():
    check(lambda t, x: (t.special.polygamma(0, x), t.special.polygamma(1, x), t.special.polygamma(3, x)), [P],
          rtol=1e-4)  # fmt: skip
    check(lambda t, x: (t.polygamma(2, x), x.polygamma(1)), [G], rtol=1e-4)
    poles = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1e-3, -3.5, 50.0], dtype=np.float32)
    check(lambda t, x: [t.polygamma(n, x) for n in range(5)], [poles], grad=False)
    check(lambda t, x: (t.special.multigammaln(x + 2, 3), t.mvlgamma(x + 1, 1), x.mvlgamma(p=2)), [P])
    check(
        lambda t, x: t.special.multigammaln(x, 3), [P], grad=False
    )  # torch no longer checks x > (p - 1) / 2


def test_special_reductions_are_the_torch_ops():
    check(
        lambda t, x: (t.special.logsumexp(x, 0), t.special.softmax(x, 0), t.special.log_softmax(x, dim=0)),
        [G],
    )
    check(lambda t, x: (t.special.softmax(x, 0, dtype=t.float64), t.special.logit(x, eps=0.1)), [U])


def test_special_grad_fn_names():
    def names(t, x, y):
        s = t.special
        outs = [s.expit(x), s.erfcx(x), s.ndtr(x), s.ndtri(x), s.log_ndtr(x), s.gammaln(x), s.psi(x), s.i0(x), s.i0e(x),
                s.i1(x), s.i1e(x), s.entr(x), s.xlog1py(x, y), s.xlog1py(x, 2.0), s.xlog1py(2.0, y), s.zeta(x, y),
                s.zeta(2.0, y), s.zeta(x, 2.0), s.gammainc(x, y), s.gammaincc(x, y), s.polygamma(2, x),
                s.multigammaln(x + 2, 2), s.round(x), s.sinc(x), s.logit(x)]  # fmt: skip
        return [_name(o) for o in outs]

    check(names, [U, P], grad=False)


SPECIAL_ERRORS = [
    lambda t, x: t.special.zeta(x, 2.0).sum().backward(),
    lambda t, x: t.special.zeta(x, x).sum().backward(),
    lambda t, x: t.special.gammainc(x, x.detach()).sum().backward(),
    lambda t, x: t.special.gammaincc(x, x).sum().backward(),
    lambda t, x: t.special.erfcx(t.complex(x, x)),
    lambda t, x: t.special.ndtri(x.half()),
    lambda t, x: t.special.gammainc(t.arange(3), t.arange(3)),
    lambda t, x: t.special.polygamma(-1, x),
    lambda t, x: t.special.multigammaln(x, 0),
    lambda t, x: t.special.i1(t.complex(x, x)),
    lambda t, x: t.special.entr(t.complex(x, x)),
]


@pytest.mark.parametrize("i", range(len(SPECIAL_ERRORS)))
def test_special_errors(i):
    _raises_with_grad(SPECIAL_ERRORS[i])


def _raises_with_grad(fn):
    """``check_raises`` on an input that requires grad (errors raised by backward)."""
    caught = []
    for lib in (torch, torchlike):
        x = lib.tensor(P, requires_grad=True)
        try:
            fn(lib, x)
        except Exception as e:  # noqa: BLE001 - compared below
            caught.append(e)
        else:
            caught.append(None)
    ref, got = caught
    assert ref is not None and got is not None, (ref, got)
    assert type(got).__name__ == type(ref).__name__, (ref, got)
    assert str(got).split("\n")[0] == str(ref).split("\n")[0], (str(ref), str(got))


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]  # fmt: skip
PX = np.array([-1.0, -0.7, -0.2, 0.0, 0.3, 0.9, 1.0, 1.7], dtype=np.float32)
PN = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 12.0, -1.0, 3.7], dtype=np.float32)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_special_polynomials(name):
    # n is truncated to an integer; the result carries no gradient (torch defines none)
    check(lambda t, x, n: (getattr(t.special, name)(x, n), getattr(t.special, name)(x, 4), _name(getattr(t.special, name)(x, 2))),
          [PX, PN])  # fmt: skip


BESSEL = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
          "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
          "spherical_bessel_j0", "airy_ai"]  # fmt: skip
BX = np.array([-30.0, -9.3, -7.5, -2.2, -0.3, 0.0, 1e-12, 0.4, 1.9, 2.4, 6.1, 11.9, 12.3, 40.0, 300.0, 1e4, np.inf,
               -np.inf, np.nan], dtype=np.float32)  # fmt: skip


@pytest.mark.parametrize("name", BESSEL)
def test_special_bessel(name):
    check(lambda t, x: (getattr(t.special, name)(x), _name(getattr(t.special, name)(x))), [BX])
    # torch's float64 kernels carry float-precision coefficients (errors up to ~1e-6); ours are float64-accurate
    check(lambda t, x: getattr(t.special, name)(x), [BX.astype(np.float64)], rtol=3e-6, atol=3e-6)


def test_special_bessel_and_polynomial_errors():
    check_raises(lambda t, x: t.special.bessel_j0(x.half()), [PX])
    check_raises(lambda t, x: t.special.airy_ai(t.complex(x, x)), [PX])
    check_raises(lambda t, x: t.special.hermite_polynomial_h(x.half(), 2), [PX])


def test_special_half_inplace_out_and_methods():
    check(lambda t, x: (t.special.ndtr(x), t.special.i0e(x), t.special.i1(x), t.special.entr(x.abs()),
                        t.special.xlog1py(x, x.abs()), t.special.gammainc(x.abs(), x.abs()), t.special.polygamma(1, x.abs()),
                        t.special.multigammaln(x.abs() + 2, 2), t.special.erfcx(x.float())),
          [G], dtype="float16", grad=False)  # fmt: skip

    def f(t, x):
        y = x.clone()
        y.polygamma_(2)
        z = x.clone()
        z.mvlgamma_(2)
        w = x.clone()
        w.igamma_(x * 0.5)
        o = t.empty(7)
        t.special.erfcx(x, out=o)
        return y, z, w, o, t.special.zeta(x, 2.0, out=t.empty(7))

    check(f, [P + 1], grad=False)


def test_fft_dim_lists_and_batches():
    check(lambda t, x: _with_abs(t.fft.fftn(x, dim=[0, 2])), [rng.randn(2, 3, 4).astype(np.float32)])
    check(
        lambda t, x: _with_abs(t.fft.irfftn(x, s=[4, 4], dim=[1, 2])), [rng.randn(2, 3, 4).astype(np.float32)]
    )
    check(lambda t, x: t.fft.fftshift(x, dim=[0, 1]), [rng.randn(2, 3, 4).astype(np.float32)])


def test_fft_under_cpu_autocast_runs_in_float32():
    def f(t, x):
        with t.autocast("cpu", dtype=t.bfloat16):
            return t.fft.fft(x), t.fft.irfft(t.fft.rfft(x)), t.fft.fft2(x.double())

    check(f, [X], dtype="bfloat16", grad=False)
