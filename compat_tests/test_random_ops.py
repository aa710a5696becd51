"""torch.manual_seed + the public random functions: torchlike's values equal torch's bit for bit."""

import numpy as np
import pytest
import torch

import torchlike

SEEDS = [0, 1, 42, 2**31 - 1, 2**40]
SIZES = [1, 15, 16, 17, 1000]


def _bits(t):
    t = t.detach()
    if str(t.dtype).endswith("bfloat16"):
        t = t.view(getattr(type(t).__module__ == "torch" and torch or torchlike, "int16"))
    a = t.cpu().numpy() if isinstance(t, torch.Tensor) else t.numpy()
    a = np.ascontiguousarray(a)
    return a.view(np.uint8) if a.dtype.kind in "fc" else a


def _same(fn):
    outs = []
    for lib in (torch, torchlike):
        lib.manual_seed(fn.seed)
        outs.append(fn(lib))
    for a, b in zip(*outs):
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        assert np.array_equal(_bits(a), _bits(b)), (a, b)


CALLS = {
    "rand": lambda t, n: [t.rand(n), t.rand(n, dtype=t.float64), t.rand(n, dtype=t.float16)],
    "randn": lambda t, n: [t.randn(n), t.randn(n, dtype=t.float64), t.randn(n, dtype=t.bfloat16)],
    "randint": lambda t, n: [t.randint(0, 10, (n,)), t.randint(-5, 2**40, (n,)), t.randint(3, (n,), dtype=t.int8)],
    "randperm": lambda t, n: [t.randperm(n), t.randperm(n, dtype=t.int32)],
    "like": lambda t, n: [t.rand_like(t.ones(n)), t.randn_like(t.ones(n, dtype=t.float64)),
                          t.randint_like(t.ones(n, dtype=t.int32), 7)],
    "normal": lambda t, n: [t.normal(2.0, 3.0, (n,)), t.normal(t.arange(float(n)), 1.0),
                            t.normal(1.0, t.ones(n) * 2), t.normal(t.zeros(n), t.ones(n))],
    "inplace": lambda t, n: [t.empty(n).uniform_(-2, 3), t.empty(n).normal_(1, 0.5), t.empty(n).exponential_(2.0),
                             t.empty(n).geometric_(0.3), t.empty(n).log_normal_(), t.empty(n).cauchy_(),
                             t.empty(n, dtype=t.int64).random_(), t.empty(n).random_(0, 7),
                             t.empty(n, dtype=t.int32).random_(100)],
    "bernoulli": lambda t, n: [t.bernoulli(t.full((n,), 0.3)), t.empty(n).bernoulli_(0.7),
                               t.empty(n).bernoulli_(t.linspace(0, 1, n))],
    "multinomial": lambda t, n: [t.multinomial(t.arange(1.0, 6.0), 3), t.multinomial(t.ones(4, 5), n, True)],
    "complex": lambda t, n: [t.empty(n, dtype=t.complex64).uniform_(-1, 2), t.empty(n, dtype=t.complex128).normal_(1, 3),
                             t.empty(2, n, dtype=t.complex64).t().normal_()],
    "interleaved": lambda t, n: [t.rand(3), t.randn(n), t.randint(0, 5, (2,)), t.randn(2, n).t().contiguous(),
                                 t.ones(4, n).t().uniform_()],
}  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", list(CALLS))
def test_same_stream(seed, name):
    for n in SIZES if name not in ("multinomial",) else [1, 16]:
        fn = lambda lib, n=n: CALLS[name](lib, n)  # noqa: E731
        fn.seed = seed
        _same(fn)


def test_generator_objects_and_state():
    for lib in (torch, torchlike):
        lib.manual_seed(3)
    g1, g2 = torch.Generator().manual_seed(7), torchlike.Generator().manual_seed(7)
    assert np.array_equal(torch.rand(5, generator=g1).numpy(), torchlike.rand(5, generator=g2).numpy())
    s1, s2 = torch.get_rng_state(), torchlike.get_rng_state()
    assert np.array_equal(s1.numpy(), s2.numpy())
    a1, a2 = torch.rand(4), torchlike.rand(4)
    torch.set_rng_state(s1)
    torchlike.set_rng_state(s2)
    assert np.array_equal(torch.rand(4).numpy(), a1.numpy())
    assert np.array_equal(torchlike.rand(4).numpy(), a2.numpy())
    with torchlike.random.fork_rng():
        torchlike.rand(10)
    assert np.array_equal(torchlike.rand(3).numpy(), torch.rand(3).numpy())
    assert torchlike.initial_seed() == torch.initial_seed()


@pytest.mark.parametrize("dtype", ["int64", "complex64", "bool"])
@pytest.mark.parametrize("fill", ["exponential_()", "cauchy_()", "log_normal_()", "normal_()", "uniform_()",
                                  "geometric_(0.5)", "bernoulli_(0.5)", "bernoulli_(t.tensor([0.5, 0.5]))"])  # fmt: skip
def test_fill_dtype_errors(dtype, fill):
    from _harness import check_raises

    def run(t):
        x = t.empty(2, dtype=getattr(t, dtype))
        eval(f"x.{fill}")  # noqa: S307 - the test's own call table
        return x.dtype  # no error: the same dtype out

    try:
        run(torch)
    except Exception:  # noqa: BLE001 - torch decides which comparison runs
        check_raises(lambda t: run(t))
        return
    assert str(run(torchlike)) == str(run(torch))


# --- the op table's random entries (torchlike._ops.registry.RANDOM) ------------------------------------
# Each entry called in every namespace it declares, at its default parameters: only the required arguments.
DEFAULT_ARGS = {
    **{n: lambda t: (t.empty(4, 3),) for n in ("uniform_", "normal_", "random_", "exponential_", "log_normal_",
                                                "cauchy_", "bernoulli_", "rand_like", "randn_like")},
    "geometric_": lambda t: (t.empty(4, 3), 0.3),
    "rand": lambda t: (4, 3),
    "randn": lambda t: (4, 3),
    "randint": lambda t: (7, (4, 3)),
    "randint_like": lambda t: (t.empty(4, 3, dtype=t.int64), 7),
    "randperm": lambda t: (10,),
    "normal": lambda t: (t.zeros(4, 3),),
    "bernoulli": lambda t: (t.full((4, 3), 0.3),),
    "multinomial": lambda t: (t.ones(5), 3),
    "_standard_gamma": lambda t: (t.full((4, 3), 1.7),),
    "_sample_dirichlet": lambda t: (t.full((4, 3), 0.8),),
    "poisson": lambda t: (t.tensor([[0.5, 4.0, 12.0], [30.0, 0.0, 2.5]]),),
    "binomial": lambda t: (t.tensor([[3.0, 40.0, 100.0], [7.0, 0.0, 25.0]]), t.tensor([[0.5, 0.3, 0.8], [0.1, 0.5, 1.0]])),
}  # fmt: skip
# entries whose draws torchlike does not reproduce (each must raise NotImplementedError); none at present
NOT_COMPARED: dict[str, str] = {}


def _random_entries():
    from torchlike._ops.registry import RANDOM

    return RANDOM


def test_every_random_entry_has_a_default_sample():
    missing = [n for n in _random_entries() if n not in DEFAULT_ARGS and n not in NOT_COMPARED]
    assert not missing, f"add DEFAULT_ARGS samples to compat_tests/test_random_ops.py for: {missing}"


@pytest.mark.parametrize("name", sorted(_random_entries()))
def test_random_entry_namespaces_are_torchs(name):
    exposed = _random_entries()[name].exposed
    assert set(exposed) <= {"torch", "Tensor"}
    for space, lib, ours in (("torch", torch, torchlike), ("Tensor", torch.Tensor, torchlike.Tensor)):
        publics = exposed.get(space, ())
        assert all(hasattr(lib, n) and hasattr(ours, n) for n in publics), (space, publics)
        assert hasattr(lib, name) == (name in publics) == hasattr(ours, name), space


@pytest.mark.parametrize("name", sorted(set(DEFAULT_ARGS)))
def test_random_entry_default_draws_equal_torchs(name):
    for space, publics in _random_entries()[name].exposed.items():
        for public in publics:
            outs = []
            for lib in (torch, torchlike):
                args = DEFAULT_ARGS[name](lib)
                lib.manual_seed(5)
                outs.append(getattr(args[0], public)(*args[1:]) if space == "Tensor" else getattr(lib, public)(*args))
            a, b = outs
            assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape), (space, a, b)
            assert np.array_equal(_bits(a), _bits(b)), (space, a, b)


def test_not_compared_entries_raise():
    for name in NOT_COMPARED:
        with pytest.raises(NotImplementedError):
            getattr(torchlike, name)(torchlike.ones(3))
