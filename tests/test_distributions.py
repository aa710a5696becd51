"""torchlike.distributions on its own: closed forms against NumPy, sampling statistics, shapes, gradients,
validation, KL dispatch. Seeded sample literals come from torch 2.13."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torchlike
import torchlike.distributions  # noqa: F401

D = torchlike.distributions


def test_seeded_samples_are_torchs() -> None:
    torchlike.manual_seed(0)
    assert D.Normal(0.0, 1.0).sample((3,)).tolist() == [
        1.5409960746765137,
        -0.293428897857666,
        -2.1787893772125244,
    ]
    torchlike.manual_seed(0)
    assert D.Categorical(torchlike.tensor([0.2, 0.3, 0.5])).sample((6,)).tolist() == [2, 2, 1, 2, 2, 2]
    torchlike.manual_seed(0)
    assert D.Bernoulli(torchlike.tensor([0.2, 0.7])).sample((3,)).tolist() == [
        [0.0, 0.0],
        [1.0, 1.0],
        [0.0, 1.0],
    ]
    torchlike.manual_seed(0)
    assert D.Uniform(0.0, 2.0).sample((3,)).tolist() == [
        0.9925131797790527,
        1.5364435911178589,
        0.17695486545562744,
    ]
    torchlike.manual_seed(0)
    assert D.Exponential(2.0).sample((3,)).tolist() == [
        1.754163146018982,
        0.6151923537254333,
        0.3075220584869385,
    ]


def test_normal_closed_forms() -> None:
    loc, scale, x = np.array([0.5, -1.0]), np.array([1.0, 2.0]), np.array([0.25, 0.3])
    d = D.Normal(torchlike.tensor(loc), torchlike.tensor(scale))
    expect = -((x - loc) ** 2) / (2 * scale**2) - np.log(scale) - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(d.log_prob(torchlike.tensor(x)).numpy(), expect, rtol=1e-12)
    np.testing.assert_allclose(
        d.entropy().numpy(), 0.5 + 0.5 * math.log(2 * math.pi) + np.log(scale), rtol=1e-12
    )
    cdf = d.cdf(torchlike.tensor(x))
    np.testing.assert_allclose(d.icdf(cdf).numpy(), x, rtol=1e-9)
    assert d.log_prob(torchlike.tensor(x)).dtype == torchlike.float64
    assert D.Normal(0.0, 1.0).mean.dtype == torchlike.float32  # numbers take the default dtype


def test_sample_statistics() -> None:
    torchlike.manual_seed(1)
    n = 20000
    cases = [
        (D.Normal(torchlike.tensor([1.0, -2.0]), torchlike.tensor([0.5, 2.0])), 0.05),
        (D.Uniform(torchlike.tensor([0.0, 1.0]), torchlike.tensor([2.0, 5.0])), 0.05),
        (D.Exponential(torchlike.tensor([0.5, 2.0])), 0.05),
        (D.Laplace(torchlike.tensor([0.0, 3.0]), torchlike.tensor([1.0, 0.5])), 0.05),
        (D.Bernoulli(torchlike.tensor([0.2, 0.9])), 0.02),
    ]
    for d, tol in cases:
        s = d.sample((n,))
        np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), atol=tol * 3, err_msg=repr(d))
        np.testing.assert_allclose(s.var(0).numpy(), d.variance.numpy(), rtol=0.1, atol=0.01, err_msg=repr(d))
    probs = torchlike.tensor([0.1, 0.6, 0.3])
    counts = np.bincount(D.Categorical(probs).sample((n,)).numpy(), minlength=3) / n
    np.testing.assert_allclose(counts, probs.numpy(), atol=0.02)


@pytest.mark.slow
def test_more_sample_statistics() -> None:
    torchlike.manual_seed(2)
    n = 20000
    cases = [
        D.Gumbel(torchlike.tensor([0.0, 1.0]), torchlike.tensor([1.0, 0.5])),
        D.HalfNormal(torchlike.tensor([1.0, 2.0])),
        D.Kumaraswamy(torchlike.tensor([2.0, 0.7]), torchlike.tensor([3.0, 1.5])),
        D.Weibull(torchlike.tensor([1.0, 2.0]), torchlike.tensor([1.5, 3.0])),
        D.ContinuousBernoulli(torchlike.tensor([0.2, 0.9])),
        D.Geometric(torchlike.tensor([0.3, 0.8])),
        D.LowRankMultivariateNormal(torchlike.zeros(2), torchlike.tensor([[1.0], [0.5]]), torchlike.ones(2)),
        D.MixtureSameFamily(
            D.Categorical(torchlike.tensor([0.3, 0.7])), D.Normal(torchlike.tensor([-2.0, 1.0]), 0.5)
        ),
    ]
    for d in cases:
        s = d.sample((n,))
        np.testing.assert_allclose(s.mean(0).numpy(), d.mean.numpy(), atol=0.05, rtol=0.03, err_msg=repr(d))
        np.testing.assert_allclose(s.var(0).numpy(), d.variance.numpy(), rtol=0.1, atol=0.01, err_msg=repr(d))
    vm = D.VonMises(torchlike.tensor([0.5, -2.0]), torchlike.tensor([4.0, 10.0]))
    angles = vm.sample((n,)).numpy()
    resultant = np.abs(np.exp(1j * angles).mean(0))  # torch's VonMises.variance is the circular variance
    np.testing.assert_allclose(np.angle(np.exp(1j * angles).mean(0)), vm.mean.numpy(), atol=0.02)
    np.testing.assert_allclose(1 - resultant, vm.variance.numpy(), atol=0.01)
    counts = D.Multinomial(10, torchlike.tensor([0.2, 0.3, 0.5])).sample((n,))
    assert counts.sum(-1).eq(10).all().item()
    np.testing.assert_allclose(counts.mean(0).numpy(), [2.0, 3.0, 5.0], atol=0.05)


def test_mvn_matches_numpy() -> None:
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    loc, x = np.array([0.5, -1.0]), np.array([0.1, 0.2])
    d = D.MultivariateNormal(torchlike.tensor(loc), torchlike.tensor(cov))
    diff = x - loc
    expect = -0.5 * (
        2 * math.log(2 * math.pi) + np.log(np.linalg.det(cov)) + diff @ np.linalg.solve(cov, diff)
    )
    np.testing.assert_allclose(d.log_prob(torchlike.tensor(x)).item(), expect, rtol=1e-12)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-12)
    p = D.MultivariateNormal(torchlike.tensor(loc), precision_matrix=torchlike.tensor(np.linalg.inv(cov)))
    np.testing.assert_allclose(p.covariance_matrix.numpy(), cov, rtol=1e-10)
    np.testing.assert_allclose(p.log_prob(torchlike.tensor(x)).item(), expect, rtol=1e-10)
    batched = d.expand((4, 3))
    assert tuple(batched.batch_shape) == (4, 3) and tuple(batched.event_shape) == (2,)
    assert tuple(batched.log_prob(torchlike.zeros(5, 1, 1, 2)).shape) == (5, 4, 3)


@pytest.mark.slow
def test_categorical_and_onehot() -> None:
    logits = torchlike.tensor([[0.1, -0.4, 1.2], [2.0, 0.0, -1.0]])
    c = D.Categorical(logits=logits)
    np.testing.assert_allclose(c.probs.sum(-1).numpy(), [1.0, 1.0], rtol=1e-6)
    support = c.enumerate_support()
    assert support.tolist() == [[0, 0], [1, 1], [2, 2]]
    np.testing.assert_allclose(c.log_prob(support).exp().sum(0).numpy(), [1.0, 1.0], rtol=1e-6)
    o = D.OneHotCategorical(logits=logits)
    assert tuple(o.enumerate_support().shape) == (3, 2, 3)
    np.testing.assert_allclose(o.log_prob(o.enumerate_support()).numpy(), c.log_prob(support).numpy())
    s = o.sample((4,))
    assert tuple(s.shape) == (4, 2, 3) and s.sum(-1).tolist() == [[1.0, 1.0]] * 4


def test_rsample_and_log_prob_gradients() -> None:
    loc = torchlike.tensor([0.5, -1.0], requires_grad=True)
    scale = torchlike.tensor([1.0, 2.0], requires_grad=True)
    torchlike.manual_seed(3)
    d = D.Normal(loc, scale)
    z = d.rsample((5,))
    z.sum().backward()
    assert loc.grad.tolist() == [5.0, 5.0]  # d(loc + eps * scale)/d loc
    torchlike.manual_seed(3)
    eps = torchlike.empty(5, 2).normal_()
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)
    assert not D.Normal(loc, scale).sample().requires_grad
    loc.grad = None
    D.Normal(loc, 1.0).log_prob(torchlike.tensor([0.0, 0.0])).sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [-0.5, 1.0])


def test_kl_values_and_dispatch() -> None:
    p = D.Normal(torchlike.tensor([0.0, 1.0]), torchlike.tensor([1.0, 2.0]))
    assert D.kl_divergence(p, p).tolist() == [0.0, 0.0]
    q = D.Normal(1.0, 3.0)
    expect = np.log(3.0 / np.array([1.0, 2.0])) + (np.array([1.0, 4.0]) + np.array([1.0, 0.0])) / 18 - 0.5
    np.testing.assert_allclose(D.kl_divergence(p, q).numpy(), expect, rtol=1e-6)
    u = D.Uniform(0.0, 1.0)
    assert D.kl_divergence(u, D.Uniform(0.5, 2.0)).item() == math.inf
    assert D.kl_divergence(p, u).tolist() == [math.inf, math.inf]
    ind = D.Independent(p, 1)
    np.testing.assert_allclose(
        D.kl_divergence(ind, D.Independent(q.expand((2,)), 1)).item(), expect.sum(), rtol=1e-6
    )
    with pytest.raises(NotImplementedError, match="No KL"):
        D.kl_divergence(D.Categorical(torchlike.ones(2)), p)

    class Sub(D.Normal):
        pass

    assert D.kl_divergence(Sub(0.0, 1.0), Sub(0.0, 1.0)).item() == 0.0  # falls back to (Normal, Normal)


def test_validation() -> None:
    with pytest.raises(
        ValueError, match=r"Expected parameter scale \(Tensor of shape \(\)\) of distribution Normal"
    ):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match="within the support"):
        D.Bernoulli(0.3).log_prob(torchlike.tensor(0.5))
    with pytest.raises(ValueError, match="must be a Tensor"):
        D.Normal(0.0, 1.0).log_prob(0.5)
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(torchlike.tensor(0.0)).item())
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")  # type: ignore[arg-type]


def test_binomial_log_prob_and_sample_support() -> None:
    b = D.Binomial(4, torchlike.tensor([0.25, 0.5]))
    np.testing.assert_allclose(
        b.log_prob(torchlike.tensor([1.0, 2.0])).exp().numpy(), [0.421875, 0.375], rtol=1e-6
    )
    s = b.sample((50,))  # draws match torch.binomial's: compat_tests/test_distributions_counts.py
    assert s.shape == (50, 2) and s.dtype == torchlike.float32
    assert ((s >= 0) & (s <= 4) & (s == s.round())).all().item()


@pytest.mark.slow
def test_registry_round_trips() -> None:
    x = torchlike.tensor([0.3, -1.2, 0.5])
    y = D.biject_to(D.constraints.simplex)(x)
    np.testing.assert_allclose(y.sum().item(), 1.0, rtol=1e-6)
    np.testing.assert_allclose(D.biject_to(D.constraints.simplex).inv(y).numpy(), x.numpy(), rtol=1e-5)
    L = D.biject_to(D.constraints.corr_cholesky)(x)
    assert tuple(L.shape) == (3, 3)
    np.testing.assert_allclose((L @ L.mT).diagonal().numpy(), np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(
        D.transform_to(D.constraints.corr_cholesky).inv(L).numpy(), x.numpy(), rtol=1e-5
    )


def test_reprs_and_constraints() -> None:
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Normal(torchlike.zeros(2), 1.0)) == "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(D.Independent(D.Bernoulli(torchlike.tensor([0.5])), 1)) == (
        "Independent(Bernoulli(probs: tensor([0.5000])), 1)"
    )
    C = D.constraints
    assert repr(C.interval(0, 1)) == "Interval(lower_bound=0, upper_bound=1)"
    assert repr(C.real_vector) == "IndependentConstraint(Real(), 1)"
    assert C.is_dependent(D.Uniform.support) and not C.is_dependent(C.real)
    assert C.simplex.check(torchlike.tensor([[0.2, 0.8], [0.5, 0.6]])).tolist() == [True, False]


def test_utils_lazy_property_and_tril() -> None:
    d = D.Bernoulli(logits=torchlike.tensor([0.0]))
    assert "probs" not in d.__dict__
    assert d.probs.tolist() == [0.5] and "probs" in d.__dict__
    m = torchlike.tensor([[1.0, 0.0, 0.0], [2.0, 3.0, 0.0], [4.0, 5.0, 6.0]])
    vec = D.utils.tril_matrix_to_vec(m)
    assert vec.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert D.utils.vec_to_tril_matrix(vec).tolist() == m.tolist()
    a, b = D.utils.broadcast_all(torchlike.zeros(2, dtype=torchlike.float64), 1)
    assert b.dtype == torchlike.float64 and b.tolist() == [1.0, 1.0]
