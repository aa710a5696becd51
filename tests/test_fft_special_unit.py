"""torch.fft and torch.special on their own (no torch): values against numpy/scipy-free references,
table registration, autocast names and gradients against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import torchlike as torch
import torchlike.fft
import torchlike.special  # noqa: F401
from torchlike._ops import registry

rng = np.random.RandomState(1)
X = rng.randn(3, 4)


def _t(a: np.ndarray, grad: bool = False) -> torch.Tensor:
    return torch.tensor(a, requires_grad=grad)


# --- fft --------------------------------------------------------------------------------------------------


def test_fft_matches_numpy() -> None:
    x = _t(X)
    np.testing.assert_allclose(torch.fft.fft(x, n=6).numpy(), np.fft.fft(X, n=6), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        torch.fft.rfft2(x, norm="ortho").numpy(), np.fft.rfft2(X, norm="ortho"), atol=1e-12
    )
    np.testing.assert_allclose(torch.fft.ihfft(x).numpy(), np.fft.ihfft(X), atol=1e-12)
    np.testing.assert_allclose(torch.fft.hfft(torch.fft.ihfft(x), n=4).numpy(), X, atol=1e-12)
    np.testing.assert_allclose(torch.fft.irfftn(torch.fft.rfftn(x), s=(3, 4)).numpy(), X, atol=1e-12)
    np.testing.assert_allclose(torch.fft.fftfreq(5, 0.5).numpy(), np.fft.fftfreq(5, 0.5).astype(np.float32))
    np.testing.assert_array_equal(torch.fft.fftshift(torch.arange(5)).numpy(), np.fft.fftshift(np.arange(5)))
    np.testing.assert_array_equal(
        torch.fft.ifftshift(torch.arange(6)).numpy(), np.fft.ifftshift(np.arange(6))
    )


def test_fft_dtypes() -> None:
    assert torch.fft.fft(torch.zeros(4)).dtype is torch.complex64
    assert torch.fft.fft(torch.arange(4)).dtype is torch.complex64
    assert torch.fft.irfft(torch.zeros(3, dtype=torch.complex128)).dtype is torch.float64
    with pytest.raises(RuntimeError, match="Unsupported dtype Half"):
        torch.fft.fft(torch.zeros(4, dtype=torch.float16))
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "x"'):
        torch.fft.fft(torch.zeros(4), norm="x")


def test_fft_ops_are_table_ops_with_autocast_names() -> None:
    for name in ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfft2", "ihfftn"]:
        assert f"_fft_{name}" in registry.OPS
        assert not hasattr(torch, f"fft_{name}")
    assert torch.fft.rfft is registry.OPS["_fft_rfft"].wrapper


def test_rfft_gradient_finite_differences() -> None:
    w = rng.randn(3, 3)

    def f(a: np.ndarray) -> float:
        return float((np.abs(np.fft.rfft(a, axis=-1)) * w).sum())

    x = _t(X, grad=True)
    (torch.fft.rfft(x).abs() * _t(w)).sum().backward()
    num = np.zeros_like(X)
    for i in np.ndindex(X.shape):
        d = np.zeros_like(X)
        d[i] = 1e-6
        num[i] = (f(X + d) - f(X - d)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-6)


# --- special ----------------------------------------------------------------------------------------------


def test_special_shares_torch_ops() -> None:
    s = torch.special
    assert s.expit is torch.sigmoid and s.gammaln is torch.lgamma and s.psi is torch.digamma
    assert (
        s.erf is torch.erf and s.i0 is torch.i0 and s.xlogy is torch.xlogy and s.logsumexp is torch.logsumexp
    )
    assert s.gammainc is torch.igamma and s.gammaincc is torch.igammac and s.multigammaln is torch.mvlgamma
    assert s.polygamma is torch.polygamma
    for hidden in ["erfcx", "ndtr", "ndtri", "log_ndtr", "i0e", "i1", "i1e", "entr", "xlog1py", "zeta"]:
        assert f"_special_{hidden}" in registry.OPS and not hasattr(torch, hidden)


def test_special_values() -> None:
    x = _t(np.array([-1.5, 0.0, 0.5, 3.0, 30.0]))
    np.testing.assert_allclose(
        torch.special.erfcx(x).numpy()[-1], 1 / (30.0 * np.sqrt(np.pi)) * (1 - 1 / 1800), rtol=1e-6
    )
    np.testing.assert_allclose(torch.special.ndtr(x).numpy()[1], 0.5)
    np.testing.assert_allclose(torch.special.zeta(2.0, _t(np.array([1.0]))).numpy(), [np.pi**2 / 6])
    np.testing.assert_allclose(
        torch.special.polygamma(1, _t(np.array([1.0]))).numpy(), [np.pi**2 / 6], rtol=1e-9
    )  # torch's trigamma series
    np.testing.assert_allclose(
        torch.special.entr(_t(np.array([0.0, 1.0, -1.0]))).numpy(), [0.0, 0.0, -np.inf]
    )
    assert torch.special.zeta(2.5, _t(np.array([0.0]))).item() == np.inf


def test_special_gradient_only_where_torch_has_one() -> None:
    q = _t(np.array([1.5, 2.0]), grad=True)
    torch.special.zeta(3.0, q).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), -3 * torch.special.zeta(4.0, q.detach()).numpy())
    a = _t(np.array([1.5, 2.0]), grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
        torch.special.gammainc(a, q.detach()).sum().backward()


def test_bessel_and_airy_reference_values() -> None:
    s = torch.special
    one = _t(np.array([1.0]))
    # reference values: scipy.special (cephes / AMOS)
    np.testing.assert_allclose(s.bessel_j0(one).numpy(), [0.7651976865579666], rtol=1e-13)
    np.testing.assert_allclose(s.bessel_y1(one).numpy(), [-0.7812128213002887], rtol=1e-13)
    np.testing.assert_allclose(s.modified_bessel_k0(one).numpy(), [0.42102443824070834], rtol=1e-13)
    np.testing.assert_allclose(
        s.scaled_modified_bessel_k1(one).numpy(), [0.6019072301972346 * np.e], rtol=1e-13
    )
    np.testing.assert_allclose(s.airy_ai(_t(np.array([0.0, 1.0, -10.0]))).numpy(),
                               [0.3550280538878172, 0.1352924163128814, 0.04024123848644196], rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(s.bessel_j1(_t(np.array([20.0]))).numpy(), [0.06683312417584993], rtol=1e-11)
    assert s.bessel_y0(_t(np.array([0.0]))).item() == -np.inf and np.isnan(
        s.bessel_y0(_t(np.array([-1.0]))).item()
    )
    x = _t(np.array([1.0]), grad=True)
    assert not s.bessel_j0(x).requires_grad


def test_polynomials_match_numpy() -> None:
    from numpy.polynomial import chebyshev, hermite, hermite_e, laguerre, legendre

    x = np.linspace(-1.5, 1.5, 7)
    for fn, mod in [(torch.special.chebyshev_polynomial_t, chebyshev), (torch.special.hermite_polynomial_h, hermite),
                    (torch.special.hermite_polynomial_he, hermite_e), (torch.special.laguerre_polynomial_l, laguerre),
                    (torch.special.legendre_polynomial_p, legendre)]:  # fmt: skip
        for n in (0, 1, 4, 7):
            want = {chebyshev: chebyshev.Chebyshev, hermite: hermite.Hermite, hermite_e: hermite_e.HermiteE,
                    laguerre: laguerre.Laguerre, legendre: legendre.Legendre}[mod].basis(n)(x)  # fmt: skip
            np.testing.assert_allclose(fn(_t(x), n).numpy(), want, rtol=1e-10, atol=1e-10)
    assert torch.special.chebyshev_polynomial_u(_t(x), -1).abs().sum().item() == 0
