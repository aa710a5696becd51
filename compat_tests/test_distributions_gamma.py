"""The Gamma family (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor) under torch and torchlike: seeded
draws bit for bit (torch._standard_gamma / _sample_dirichlet on the CPU stream), densities, moments, entropies,
reparameterised gradients, expand and repr."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import assert_same

import torchlike

A = np.array([0.3, 1.0, 2.5, 9.0], np.float32)
B = np.array([2.0, 0.5, 1.5, 4.0], np.float32)
CONC = np.array([[0.5, 1.0, 2.0], [3.0, 7.0, 8.0]], np.float32)


def _both(fn):  # noqa: ANN001, ANN202
    out = []
    for t in (torch, torchlike):
        t.manual_seed(7)
        out.append(fn(t, t.distributions))
    return out


SAMPLES = {
    "gamma": lambda t, D: D.Gamma(t.tensor(A), t.tensor(B)).sample((3,)),
    "gamma_float64": lambda t, D: D.Gamma(t.tensor(A, dtype=t.float64), 2.0).rsample((2,)),
    "gamma_numbers": lambda t, D: D.Gamma(0.7, 1.3).sample((5,)),
    "chi2": lambda t, D: D.Chi2(t.tensor(B)).sample((3,)),
    "beta": lambda t, D: D.Beta(t.tensor(A), t.tensor(B)).sample((3,)),
    "beta_numbers": lambda t, D: D.Beta(0.5, 0.5).sample((4,)),
    "dirichlet": lambda t, D: D.Dirichlet(t.tensor(CONC)).sample((2,)),
    "dirichlet_float64": lambda t, D: D.Dirichlet(t.tensor(CONC, dtype=t.float64)).rsample(),
    "studentt": lambda t, D: D.StudentT(t.tensor(B), t.tensor(A), 2.0).sample((3,)),
    "fisher": lambda t, D: D.FisherSnedecor(t.tensor(B), t.tensor(A) + 1).sample((3,)),
    "expanded": lambda t, D: D.Gamma(t.tensor(1.5), 2.0).expand((2, 3)).sample(),
    "standard_gamma": lambda t, D: (t._standard_gamma(t.tensor(A)), t.rand(3)),  # the stream after the draws
}


@pytest.mark.parametrize("name", SAMPLES)
def test_samples_bit_for_bit(name: str) -> None:
    ref, got = _both(SAMPLES[name])
    ref, got = (ref, got) if isinstance(ref, tuple) else ((ref,), (got,))
    for r, g in zip(ref, got, strict=True):
        assert str(g.dtype) == str(r.dtype) and tuple(g.shape) == tuple(r.shape)
        if name == "studentt":  # the same draws through rsqrt, which XLA rounds apart from torch in the last ulp
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-6)
            continue
        assert np.array_equal(g.numpy(), r.numpy()), f"\ntorchlike: {g}\ntorch:     {r}"


def _stats(d, value):  # noqa: ANN001, ANN202
    return [d.log_prob(value), d.entropy(), d.mean, d.variance, tuple(d.batch_shape), tuple(d.event_shape)]


VALUES = {
    "gamma": lambda t, D, a, b: _stats(D.Gamma(a, b), a * 0.5 + 0.1) + [D.Gamma(a, b).mode, D.Gamma(a, b).cdf(b)],
    "chi2": lambda t, D, a, b: _stats(D.Chi2(b), a + 0.2) + [D.Chi2(b).df],
    "beta": lambda t, D, a, b: _stats(D.Beta(a, b), a / (a + b)) + [D.Beta(a, b).concentration1],
    "dirichlet": lambda t, D, a, b: _stats(D.Dirichlet(t.stack([a, b], -1)), t.stack([a, b], -1).softmax(-1)),
    "studentt": lambda t, D, a, b: _stats(D.StudentT(b, a, 2.0), a - 1),
    "fisher": lambda t, D, a, b: [(d := D.FisherSnedecor(b, a + 4.5)).log_prob(a + 0.3), d.mean, d.variance, d.mode],
}


@pytest.mark.parametrize("name", VALUES)
def test_densities_moments_and_their_gradients(name: str) -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        a = t.tensor(A, requires_grad=True)
        b = t.tensor(B, requires_grad=True)
        out = VALUES[name](t, D, a, b)
        out[0].sum().backward()
        return out + [a.grad, b.grad]

    ref, got = _both(run)
    assert_same(ref, got, rtol=2e-5, atol=2e-6)


RSAMPLES = {
    "gamma": lambda t, D, a, b: D.Gamma(a, b).rsample((3,)),
    "chi2": lambda t, D, a, b: D.Chi2(b).rsample((2,)),
    "studentt": lambda t, D, a, b: D.StudentT(b, a, 1.5).rsample((2,)),
    "fisher": lambda t, D, a, b: D.FisherSnedecor(b, a + 1).rsample((2,)),
}


@pytest.mark.parametrize("name", RSAMPLES)
def test_rsample_gradients(name: str) -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        a = t.tensor(A, dtype=t.float64, requires_grad=True)
        b = t.tensor(B, dtype=t.float64, requires_grad=True)
        x = RSAMPLES[name](t, D, a, b)
        (x * t.arange(float(x.numel()), dtype=t.float64).reshape(x.shape)).sum().backward()
        return [x, type(x.grad_fn).__name__, a.grad, b.grad]

    ref, got = _both(run)
    assert_same(ref, got, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dist", ["dirichlet", "beta"])
def test_dirichlet_beta_rsample_gradients_close(dist: str) -> None:
    # torch's _dirichlet_grad evaluates approximations of -dCDF/dalpha / pdf; torchlike differentiates the
    # Beta CDF numerically: the same draws, gradients equal to the approximations' accuracy
    # (differences.py: 'dirichlet_grad')
    def run(t, D):  # noqa: ANN001, ANN202
        c = t.tensor(CONC, dtype=t.float64, requires_grad=True)
        x = D.Dirichlet(c).rsample((3,)) if dist == "dirichlet" else D.Beta(c[0], c[1]).rsample((3,))
        (x * t.arange(float(x.numel()), dtype=t.float64).reshape(x.shape)).sum().backward()
        return x, c.grad

    (rx, rg), (gx, gg) = _both(run)
    assert np.array_equal(rx.detach().numpy(), gx.detach().numpy())
    np.testing.assert_allclose(gg.numpy(), rg.numpy(), rtol=3e-3, atol=1e-6)


def test_standard_gamma_grad_and_dtypes() -> None:
    ref, got = _both(lambda t, D: t._standard_gamma_grad(t.tensor(A, dtype=t.float64), t.tensor(B, dtype=t.float64)))
    assert_same(ref, got, rtol=1e-10, atol=1e-14)
    for t in (torch, torchlike):
        with pytest.raises(RuntimeError if t is torch else NotImplementedError, match="not implemented for 'Long'"):
            t._standard_gamma(t.tensor([1, 2]))


def test_reprs_constraints_and_expand() -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        ds = [D.Gamma(t.tensor(A), 2.0), D.Chi2(3.0), D.Beta(0.5, t.tensor(B)), D.Dirichlet(t.tensor(CONC)),
              D.StudentT(3.0), D.FisherSnedecor(t.tensor(B), 2.0)]  # fmt: skip
        out = []
        for d in ds:
            e = d.expand((5,) + tuple(d.batch_shape))
            out.append((repr(d), str(d.support), sorted(d.arg_constraints), d.has_rsample, tuple(e.batch_shape),
                        type(e).__name__))  # fmt: skip
        return out

    ref, got = _both(run)
    assert got == ref


def test_validation() -> None:
    for t in (torch, torchlike):
        with pytest.raises(ValueError, match="concentration"):
            t.distributions.Gamma(t.tensor([-1.0]), 1.0, validate_args=True)
        with pytest.raises(ValueError, match="must be at least one-dimensional"):
            t.distributions.Dirichlet(t.tensor(1.0))


def test_kl_pairs() -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        a = t.tensor(A, dtype=t.float64, requires_grad=True)
        b = t.tensor(B, dtype=t.float64)
        kls = [
            D.kl_divergence(D.Gamma(a, b), D.Gamma(b, a + 1)),
            D.kl_divergence(D.Chi2(a), D.Chi2(b)),
            D.kl_divergence(D.Beta(a, b), D.Beta(b, a)),
            D.kl_divergence(D.Dirichlet(t.stack([a, b], -1)), D.Dirichlet(t.stack([b, a + 1], -1))),
        ]
        sum(k.sum() for k in kls).backward()
        return kls + [a.grad]

    ref, got = _both(run)
    assert_same(ref, got, rtol=1e-10, atol=1e-12)
