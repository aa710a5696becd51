"""torch.poisson, torch.binomial and the Poisson / Binomial / NegativeBinomial distributions under torch and torchlike: seeded draws
bit for bit on the CPU stream (small and large rates, counts, probabilities including 0 and 1, float32 and
float64), the stream after the draws, densities, moments, entropies, KL pairs, and errors for bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _harness import assert_same

import torchlike

# Knuth's product method below 10, PTRS from 10 up, and 0
RATES = np.array([0.0, 0.01, 0.5, 1.0, 3.7, 9.99, 10.0, 12.5, 37.0, 250.0, 1e4, 3e6], np.float32)
# zero counts and probabilities, prob 1 and above, inversion (n*p < 10), BTRS (n*p >= 10), prob > 1/2
COUNTS = np.array([0, 5, 5, 5, 7, 20, 40, 40, 100, 1000, 1000, 1e5, 3, 60], np.float32)
PROBS = np.array([0.5, 0.0, 1.0, 1.5, 0.3, 0.45, 0.25, 0.75, 0.05, 0.5, 0.993, 0.3, 0.9, 0.6], np.float32)


def _both(fn, seed: int = 7):  # noqa: ANN001, ANN202
    out = []
    for t in (torch, torchlike):
        t.manual_seed(seed)
        out.append(fn(t, t.distributions))
    return out


SAMPLES = {
    "poisson": lambda t, D: t.poisson(t.tensor(np.tile(RATES, 4))),
    "poisson_float64": lambda t, D: t.poisson(t.tensor(np.tile(RATES, 4), dtype=t.float64)),
    "poisson_2d_transposed": lambda t, D: t.poisson(t.tensor(RATES[:10].reshape(2, 5)).t() * 3),
    "poisson_float16": lambda t, D: t.poisson(t.tensor([0.5, 4.0, 20.0], dtype=t.float16)),
    "binomial": lambda t, D: t.binomial(t.tensor(np.tile(COUNTS, 4)), t.tensor(np.tile(PROBS, 4))),
    "binomial_float64": lambda t, D: t.binomial(
        t.tensor(np.tile(COUNTS, 4), dtype=t.float64), t.tensor(np.tile(PROBS, 4), dtype=t.float64)
    ),
    "binomial_broadcast": lambda t, D: t.binomial(t.tensor([[30.0], [4.0]]).expand(2, 3), t.tensor([[0.2, 0.5, 0.9]])),
    "Poisson": lambda t, D: D.Poisson(t.tensor(RATES)).sample((3,)),
    "Poisson_number": lambda t, D: D.Poisson(4.5).sample((6,)),
    "Binomial": lambda t, D: D.Binomial(t.tensor(COUNTS), t.tensor(PROBS).clamp(max=1)).sample((3,)),
    "Binomial_logits": lambda t, D: D.Binomial(50, logits=t.tensor([-2.0, 0.0, 3.0])).sample((4,)),
    "NegativeBinomial": lambda t, D: D.NegativeBinomial(t.tensor([1.0, 4.0, 30.0]), t.tensor([0.2, 0.5, 0.7])).sample((3,)),
    "NegativeBinomial_logits": lambda t, D: D.NegativeBinomial(2.5, logits=t.tensor([-1.0, 2.0])).expand((3, 2)).sample(),
    "Binomial_expanded": lambda t, D: D.Binomial(t.tensor(80.0), t.tensor(0.4)).expand((2, 3)).sample(),
}


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("seed", [0, 7])
def test_samples_bit_for_bit_and_the_stream_after(name: str, seed: int) -> None:
    ref, got = _both(lambda t, D: (SAMPLES[name](t, D), t.rand(5), t.randn(3, dtype=t.float64)), seed)
    for r, g in zip(ref, got, strict=True):
        assert str(g.dtype) == str(r.dtype) and tuple(g.shape) == tuple(r.shape)
        assert np.array_equal(g.numpy(), r.numpy()), f"\ntorchlike: {g}\ntorch:     {r}"


def test_explicit_generator_and_state() -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        g = t.Generator().manual_seed(123)
        a = t.poisson(t.tensor(RATES), generator=g)
        b = t.binomial(t.tensor(COUNTS), t.tensor(PROBS), generator=g)
        return a, b, g.get_state()

    ref, got = _both(run)
    for r, g in zip(ref, got, strict=True):
        assert np.array_equal(g.numpy(), r.numpy())


def test_large_draws_moments() -> None:
    # many accept/reject rounds: the same numbers, and the right mean and variance
    def run(t, D):  # noqa: ANN001, ANN202
        return t.poisson(t.full((4000,), 23.5)), t.binomial(t.full((4000,), 200.0), t.full((4000,), 0.3))

    (rp, rb), (gp, gb) = _both(run)
    assert np.array_equal(gp.numpy(), rp.numpy()) and np.array_equal(gb.numpy(), rb.numpy())
    p, b = gp.numpy().astype(np.float64), gb.numpy().astype(np.float64)
    assert abs(p.mean() - 23.5) < 0.4 and abs(p.var() - 23.5) < 2.5
    assert abs(b.mean() - 60.0) < 0.5 and abs(b.var() - 42.0) < 4.5


def test_poisson_gradient_and_no_grad_sample() -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        r = t.tensor([1.0, 20.0], requires_grad=True)
        x = t.poisson(r)
        (x * r).sum().backward()
        s = D.Poisson(r).sample()
        return [x.detach(), type(x.grad_fn).__name__, r.grad, s.requires_grad]

    ref, got = _both(run)
    assert_same(ref, got)


VALUES = {
    "poisson": lambda t, D, a, b: [
        (d := D.Poisson(a)).log_prob(t.tensor([0.0, 1.0, 3.0, 12.0], dtype=a.dtype)), d.mean, d.variance, d.mode,
    ],
    "binomial": lambda t, D, a, b: [
        (d := D.Binomial(10, b)).log_prob(t.tensor([0.0, 3.0, 10.0, 6.0], dtype=a.dtype)), d.mean, d.variance,
        d.mode, d.entropy(), d.enumerate_support(expand=False).squeeze(-1),
    ],
    "negative_binomial": lambda t, D, a, b: [
        (d := D.NegativeBinomial(a, b)).log_prob(t.tensor([0.0, 3.0, 10.0, 6.0], dtype=a.dtype)), d.mean, d.variance,
        d.mode, d.logits, tuple(d.expand((2, 4)).batch_shape),
    ],
    "negative_binomial_zero": lambda t, D, a, b: [
        D.NegativeBinomial(t.zeros(4, dtype=a.dtype), logits=a).log_prob(t.zeros(4, dtype=a.dtype)) + a, a * b,
    ],
    "binomial_logits": lambda t, D, a, b: [
        (d := D.Binomial(t.tensor([4.0, 9.0, 2.0, 7.0], dtype=a.dtype), logits=a - 3)).log_prob(
            t.tensor([1.0, 9.0, 0.0, 5.0], dtype=a.dtype)
        ), d.mean, d.variance, d.probs,
    ],
}


@pytest.mark.parametrize("name", VALUES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_densities_moments_and_their_gradients(name: str, dtype: str) -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        dt = getattr(t, dtype)
        a = t.tensor([0.3, 1.0, 4.5, 11.0], dtype=dt, requires_grad=True)
        b = t.tensor([0.1, 0.5, 0.8, 0.35], dtype=dt, requires_grad=True)
        out = VALUES[name](t, D, a, b)
        out[0].sum().backward()
        return out + [a.grad, b.grad]

    ref, got = _both(run)
    tol = (2e-5, 2e-6) if dtype == "float32" else (1e-10, 1e-12)
    assert_same(ref, got, rtol=tol[0], atol=tol[1])


def test_kl_pairs_and_repr() -> None:
    def run(t, D):  # noqa: ANN001, ANN202
        a = t.tensor([0.5, 2.0, 7.0], dtype=t.float64, requires_grad=True)
        b = t.tensor([0.2, 0.6, 0.9], dtype=t.float64)
        kls = [
            D.kl_divergence(D.Poisson(a), D.Poisson(a * 2 + 1)),
            D.kl_divergence(D.Bernoulli(b), D.Poisson(a)),
            D.kl_divergence(D.Poisson(a), D.Bernoulli(b)),
            D.kl_divergence(D.Poisson(a), D.Binomial(5, b)),
        ]
        kls[0].sum().backward()
        p = D.Poisson(a)
        return kls + [a.grad, repr(p), str(p.support), repr(D.Binomial(3, b)), repr(D.NegativeBinomial(2.0, b)),
                      str(D.NegativeBinomial(2.0, b).support), tuple(p.expand((2, 3)).batch_shape)]

    ref, got = _both(run)
    assert_same(ref, got, rtol=1e-10, atol=1e-12)


def _raises(fn):  # noqa: ANN001, ANN202
    out = []
    for t in (torch, torchlike):
        try:
            fn(t)
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e).split("\n")[0]))
        else:
            out.append(None)
    return out


ERRORS = {
    "poisson_negative": lambda t: t.poisson(t.tensor([1.0, -1.0])),
    "poisson_nan": lambda t: t.poisson(t.tensor([float("nan")])),
    "poisson_long": lambda t: t.poisson(t.tensor([1, 2])),
    "binomial_long_count": lambda t: t.binomial(t.tensor([1, 2]), t.tensor([0.5, 0.5])),
    "binomial_dtype_mismatch": lambda t: t.binomial(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.5], dtype=t.float64)),
    "binomial_shapes": lambda t: t.binomial(t.tensor([1.0, 2.0]), t.tensor([0.5, 0.5, 0.5])),
    "binomial_half": lambda t: t.binomial(t.tensor([1.0], dtype=t.float16), t.tensor([0.5], dtype=t.float16)),
    "Poisson_validate": lambda t: t.distributions.Poisson(t.tensor([-1.0]), validate_args=True),
    "Poisson_support": lambda t: t.distributions.Poisson(1.0, validate_args=True).log_prob(t.tensor(0.5)),
    "Poisson_entropy": lambda t: t.distributions.Poisson(t.tensor([2.0])).entropy(),
    "NegativeBinomial_both": lambda t: t.distributions.NegativeBinomial(3.0, probs=t.tensor([0.5]), logits=t.tensor([0.0])),
    "NegativeBinomial_validate": lambda t: t.distributions.NegativeBinomial(3.0, t.tensor([1.0]), validate_args=True),
    "Binomial_validate": lambda t: t.distributions.Binomial(3, t.tensor([1.5]), validate_args=True),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors(name: str) -> None:
    ref, got = _raises(ERRORS[name])
    assert ref is not None and got == ref


def test_the_stream_after_a_bad_rate() -> None:
    # torch has drawn for the elements before the bad rate when it raises
    def run(t, D):  # noqa: ANN001, ANN202
        with pytest.raises(RuntimeError):
            t.poisson(t.tensor([3.0, 40.0, -1.0, 2.0]))
        return t.rand(4)

    ref, got = _both(run)
    assert np.array_equal(got.numpy(), ref.numpy())
