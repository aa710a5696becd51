"""torchlike's numpy-level CPU generator against real torch: same bits, same state bytes."""

import struct
import warnings

import ml_dtypes
import numpy as np
import pytest
import torch

from torchlike._core import dtype as D
from torchlike._core import generator as G

SEEDS = (0, 1, 42, 2**31 - 1, 2**40)
SIZES = (1, 15, 16, 17, 1000)
FLOATS = (D.float32, D.float64, D.float16, D.bfloat16)
INTS = (D.int8, D.int32, D.int64, D.uint8, D.bool)
TORCH = {d: getattr(torch, d.name) for d in FLOATS + INTS + (D.int16, D.uint16, D.uint32, D.uint64, D.complex64)}


def to_np(t: torch.Tensor) -> np.ndarray:
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def assert_bits(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (what, ours.dtype, theirs.dtype)
    assert ours.tobytes() == theirs.tobytes(), (what, ours.ravel()[:6], theirs.ravel()[:6])


def run_both(seed, torch_fn, our_fn, what=""):
    """Seed both, run, compare values (bit for bit) and the generator state bytes afterwards."""
    torch.manual_seed(seed)
    gen = G.Generator().manual_seed(seed)
    theirs, ours = to_np(torch_fn()), our_fn(gen)
    assert_bits(ours, theirs, what)
    assert_bits(gen.get_state(), torch.get_rng_state().numpy(), what + " state")
    return gen


def raises_like(torch_fn, our_fn):
    with pytest.raises(Exception) as theirs:
        torch_fn()
    with pytest.raises(type(theirs.value)) as ours:
        our_fn(G.Generator())
    assert str(ours.value) == str(theirs.value)


def sweep(torch_fn, our_fn, dt, sizes=SIZES):
    for seed in SEEDS:
        for n in sizes:
            run_both(seed, lambda: torch_fn(n, TORCH[dt]), lambda g: our_fn(g, n, dt), f"seed={seed} n={n}")


# --- one test per (function, dtype), each over all seeds and sizes -------------------------------

FLOAT_CASES = {
    "rand": (lambda n, t: torch.rand(n, dtype=t), lambda g, n, d: G.uniform(g, n, d)),
    "uniform_": (
        lambda n, t: torch.empty(n, dtype=t).uniform_(-3.7, 2.9),
        lambda g, n, d: G.uniform(g, n, d, -3.7, 2.9),
    ),
    "randn": (lambda n, t: torch.randn(n, dtype=t), lambda g, n, d: G.normal(g, n, d)),
    "normal_": (lambda n, t: torch.empty(n, dtype=t).normal_(0.3, 2.7), lambda g, n, d: G.normal(g, n, d, 0.3, 2.7)),
    "normal_strided": (
        lambda n, t: torch.empty(2 * n, dtype=t)[::2].normal_(-1.5, 0.3),
        lambda g, n, d: G.normal(g, n, d, -1.5, 0.3, contiguous=False),
    ),
    "exponential_": (
        lambda n, t: torch.empty(n, dtype=t).exponential_(1.7),
        lambda g, n, d: G.exponential(g, n, d, 1.7),
    ),
    "cauchy_": (lambda n, t: torch.empty(n, dtype=t).cauchy_(0.7, 2.3), lambda g, n, d: G.cauchy(g, n, d, 0.7, 2.3)),
    "log_normal_": (
        lambda n, t: torch.empty(n, dtype=t).log_normal_(0.7, 2.3),
        lambda g, n, d: G.log_normal(g, n, d, 0.7, 2.3),
    ),
    "geometric_": (lambda n, t: torch.empty(n, dtype=t).geometric_(0.3), lambda g, n, d: G.geometric(g, n, d, 0.3)),
    "bernoulli_": (lambda n, t: torch.empty(n, dtype=t).bernoulli_(0.37), lambda g, n, d: G.bernoulli(g, 0.37, n, d)),
    "random_": (lambda n, t: torch.empty(n, dtype=t).random_(), lambda g, n, d: G.random_(g, n, d)),
    "randint": (lambda n, t: torch.randint(-5, 100, (n,), dtype=t), lambda g, n, d: G.randint(g, -5, 100, n, d)),
}
INT_CASES = {
    "random_": FLOAT_CASES["random_"],
    "randint": (lambda n, t: torch.randint(0, 2, (n,), dtype=t), lambda g, n, d: G.randint(g, 0, 2, n, d)),
    "bernoulli_": FLOAT_CASES["bernoulli_"],
    "geometric_": FLOAT_CASES["geometric_"],
}


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("name", FLOAT_CASES)
def test_float_functions(name, dt):
    sweep(*FLOAT_CASES[name], dt)


@pytest.mark.parametrize("dt", INTS, ids=str)
@pytest.mark.parametrize("name", INT_CASES)
def test_integer_functions(name, dt):
    if name == "geometric_" and dt is D.bool:
        raises_like(lambda: torch.empty(3, dtype=torch.bool).geometric_(0.3), lambda g: G.geometric(g, 3, dt, 0.3))
        return
    sweep(*INT_CASES[name], dt)


def test_large_normal_float32():
    # many 16-blocks through the emulated AVX2 Box-Muller, with a ragged tail
    for seed in SEEDS[:3]:
        run_both(seed, lambda: torch.randn(200_007), lambda g: G.normal(g, 200_007, D.float32))


def test_complex_normal_and_uniform():
    for n in (3, 9):
        run_both(0, lambda: torch.randn(n, dtype=torch.complex64), lambda g: G.normal(g, n, D.complex64))
        run_both(1, lambda: torch.rand(n, dtype=torch.complex128), lambda g: G.uniform(g, n, D.complex128))


@pytest.mark.parametrize(
    "lo,hi",
    [(0, 2**40), (-(2**40), 2**33), (2**60, 2**61), (-(2**63), 2**63 - 1), (0, 2**32), (70000, 70500)]
    + [(-7, 2**28 - 8), (-7, 2**28 - 7), (0, 2**31)],  # the 32/64-bit switch at a range of 2**28
)
@pytest.mark.parametrize("dt", (D.int64, D.float64, D.float32, D.bfloat16, D.float16, D.int32, D.uint64), ids=str)
def test_randint_wide_ranges(lo, hi, dt):
    def theirs():
        return torch.empty(7, dtype=TORCH[dt]).random_(lo, hi)

    def ours(g):
        return G.random_from_to(g, 7, dt, lo, hi)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs()
        except Exception:
            raises_like(theirs, ours)
            return
        run_both(3, theirs, ours)


@pytest.mark.parametrize("frm", [-(2**63), -5, 0, 3, 2**63 - 2])
@pytest.mark.parametrize(
    "dt", (D.int64, D.int32, D.float64, D.float32, D.bfloat16, D.float16, D.int8, D.bool, D.uint16), ids=str
)
def test_random_from_only(frm, dt):
    def theirs():
        return torch.empty(9, dtype=TORCH[dt]).random_(frm, None)

    def ours(g):
        return G.random_from_to(g, 9, dt, frm, None)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            theirs()
        except Exception:
            raises_like(theirs, ours)
            return
        run_both(4, theirs, ours)


def test_random_warning_text():
    with pytest.warns(UserWarning) as theirs:
        torch.empty(3).random_(0, 2**25)
    with pytest.warns(UserWarning) as ours:
        G.random_from_to(G.Generator(), 3, D.float32, 0, 2**25)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 1000, 60000])
def test_randperm(n):
    for seed in SEEDS:
        run_both(seed, lambda: torch.randperm(n), lambda g: G.randperm(g, n))
    for dt in (D.int32, D.float32, D.float16, D.bfloat16, D.uint8, D.float64):
        m = min(n, 200)
        run_both(7, lambda: torch.randperm(m, dtype=TORCH[dt]), lambda g: G.randperm(g, m, dt))


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("p_dt", FLOATS, ids=str)
def test_bernoulli_tensor_p(dt, p_dt):
    rng = np.random.default_rng(0)
    for shape, p_shape in (((1000,), (1000,)), ((4, 5), (5,)), ((17,), ())):
        p = torch.tensor(rng.random(p_shape), dtype=TORCH[p_dt])
        run_both(
            5,
            lambda: torch.empty(shape, dtype=TORCH[dt]).bernoulli_(p),
            lambda g: G.bernoulli(g, to_np(p), shape, dt),
        )
    run_both(6, lambda: torch.bernoulli(p), lambda g: G.bernoulli(g, to_np(p)))


def test_bernoulli_bad_p_consumes_like_torch():
    p = torch.tensor([0.5, 0.2, 1.5, 0.1])
    for seed in SEEDS[:2]:
        torch.manual_seed(seed)
        g = G.Generator().manual_seed(seed)
        raises_like(lambda: torch.empty(4).bernoulli_(p), lambda _: G.bernoulli(g, to_np(p)))
        assert_bits(g.get_state(), torch.get_rng_state().numpy(), "state after error")


@pytest.mark.parametrize("dt", FLOATS, ids=str)
@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial(dt, replacement):
    rng = np.random.default_rng(1)
    for shape, k in (((7,), 1), ((7,), 5), ((3, 10), 4), ((2, 2000), 30), ((5, 3), 3)):
        probs = torch.tensor(rng.random(shape), dtype=TORCH[dt])
        if shape == (3, 10):
            probs[0, 2] = 0
        for seed in SEEDS[:3]:
            run_both(
                seed,
                lambda: torch.multinomial(probs, k, replacement),
                lambda g: G.multinomial(g, to_np(probs), k, replacement),
            )


def test_multinomial_ties_follow_libstdcxx():
    # zero weights tie at key 0 once drawn; torch's topk leaves them in libstdc++'s order
    rng = np.random.default_rng(4)
    for n, k in ((7, 6), (40, 39), (200, 3), (200, 150), (3000, 40)):
        w = np.where(rng.random(n) < 0.6, 0.0, rng.random(n)).astype(np.float32)
        w[0] = 1.0
        probs = torch.tensor(w)
        for seed in SEEDS[:2]:
            run_both(seed, lambda: torch.multinomial(probs, k), lambda g: G.multinomial(g, w, k))


def test_topk_replay_matches_torch():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.choice([2, 5, 17, 33, 65, 129, 1000]))
        k = int(rng.integers(1, n + 1))
        vals = rng.integers(0, int(rng.integers(1, 6)), n).astype(np.float64)
        vals[rng.random(n) < 0.05] = np.nan
        assert_bits(G._stl_topk(vals, k), torch.topk(torch.tensor(vals), k).indices.numpy(), f"n={n} k={k}")


@pytest.mark.parametrize("mean_kind,std_kind", [("t", "t"), ("t", "s"), ("s", "t"), ("t0", "t")], ids=lambda k: str(k))
@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_normal_tensor_mean_std(mean_kind, std_kind, dt):
    rng = np.random.default_rng(2)
    for n in (5, 40):
        mean = {
            "t": torch.tensor(rng.normal(size=n), dtype=TORCH[dt]),
            "s": 0.25,
            "t0": torch.tensor(0.5, dtype=TORCH[dt]),
        }[mean_kind]
        std = {"t": torch.tensor(rng.random(n) * 3, dtype=TORCH[dt]), "s": 1.75}[std_kind]

        def ours(g):
            m = to_np(mean) if isinstance(mean, torch.Tensor) else mean
            s = to_np(std) if isinstance(std, torch.Tensor) else std
            return G.normal_tensor(g, m, s)

        run_both(9, lambda: torch.normal(mean, std), ours)


def test_interleaved_sequence_and_cached_normal():
    steps = [
        (lambda: torch.rand(3), lambda g: G.uniform(g, 3, D.float32)),
        (lambda: torch.randn(20), lambda g: G.normal(g, 20, D.float32)),
        (lambda: torch.randint(0, 10, (5,)), lambda g: G.randint(g, 0, 10, 5)),
        (lambda: torch.randn(5), lambda g: G.normal(g, 5, D.float32)),  # leaves a cached sample
        (lambda: torch.randn(3, dtype=torch.float64), lambda g: G.normal(g, 3, D.float64)),  # uses it
        (lambda: torch.randn(7, dtype=torch.float16), lambda g: G.normal(g, 7, D.float16)),
        (lambda: torch.empty(3).log_normal_(), lambda g: G.log_normal(g, 3, D.float32)),
        (lambda: torch.randperm(10), lambda g: G.randperm(g, 10)),
        (lambda: torch.empty(6).bernoulli_(0.5), lambda g: G.bernoulli(g, 0.5, 6, D.float32)),
        (lambda: torch.randn(1), lambda g: G.normal(g, 1, D.float32)),
    ]
    for seed in SEEDS:
        torch.manual_seed(seed)
        gen = G.Generator().manual_seed(seed)
        for i, (theirs, ours) in enumerate(steps):
            assert_bits(ours(gen), to_np(theirs()), f"step {i}")
            assert_bits(gen.get_state(), torch.get_rng_state().numpy(), f"state after step {i}")


def test_state_round_trips_with_torch():
    for seed in SEEDS:
        tg = torch.Generator().manual_seed(seed)
        assert_bits(G.Generator().manual_seed(seed).get_state(), tg.get_state().numpy(), "fresh")
        torch.randn(5, generator=tg)  # mid-stream, with a cached normal
        ours = G.Generator().set_state(tg.get_state().numpy())
        assert ours.initial_seed() == tg.initial_seed()
        assert_bits(ours.get_state(), tg.get_state().numpy(), "loaded")
        assert_bits(
            G.normal(ours, 3, D.float64), torch.randn(3, dtype=torch.float64, generator=tg).numpy(), "after load"
        )
        # and back: our state loaded into torch
        G.uniform(ours, 700, D.float64)
        tg.set_state(torch.from_numpy(ours.get_state()))
        assert_bits(G.normal(ours, 33, D.float32), torch.randn(33, generator=tg).numpy(), "torch after load")
        assert_bits(ours.get_state(), tg.get_state().numpy(), "final")


def test_unusual_but_valid_torch_states():
    # left/next that do not add up to 625 are legal in torch; the next left-1 words come from
    # state[next:], then the array is regenerated
    tg = torch.Generator().manual_seed(5)
    torch.rand(10, generator=tg)
    for left, nxt in ((100, 10), (1, 300), (624, 0), (2, 623)):
        raw = tg.get_state().numpy().copy()
        struct.pack_into("<i", raw, 8, left)
        struct.pack_into("<Q", raw, 16, nxt)
        t2 = torch.Generator().set_state(torch.from_numpy(raw))
        ours = G.Generator().set_state(raw)
        for n in (3, 200, 700):
            assert_bits(
                G.random_(ours, n, D.int32), torch.empty(n, dtype=torch.int32).random_(generator=t2).numpy(), "w"
            )
            assert_bits(ours.get_state(), t2.get_state().numpy(), f"state left={left} next={nxt}")


def test_seed_handling():
    for seed in (-1, -(2**63), 2**64 - 1, 2**32 + 7):
        tg = torch.Generator().manual_seed(seed)
        ours = G.Generator().manual_seed(seed)
        assert ours.initial_seed() == tg.initial_seed()
        assert_bits(ours.get_state(), tg.get_state().numpy(), str(seed))
    assert G.Generator().initial_seed() == torch.Generator().initial_seed()
    for bad in (2**64, -(2**63) - 1, 1.5, True):
        raises_like(lambda: torch.Generator().manual_seed(bad), lambda g: g.manual_seed(bad))


ERRORS = [
    (lambda: torch.empty(3).uniform_(2, 1), lambda g: G.uniform(g, 3, D.float32, 2, 1)),
    (
        lambda: torch.empty(3, dtype=torch.float16).uniform_(-60000, 60000),
        lambda g: G.uniform(g, 3, D.float16, -60000, 60000),
    ),
    (lambda: torch.empty(3, dtype=torch.float16).uniform_(0, 70000), lambda g: G.uniform(g, 3, D.float16, 0, 70000)),
    (lambda: torch.empty(3, dtype=torch.int64).uniform_(), lambda g: G.uniform(g, 3, D.int64)),
    (lambda: torch.empty(3).normal_(0, -1.5), lambda g: G.normal(g, 3, D.float32, 0, -1.5)),
    (lambda: torch.empty(3, dtype=torch.int64).normal_(), lambda g: G.normal(g, 3, D.int64)),
    (
        lambda: torch.normal(torch.zeros(3), torch.tensor([1.0, -1.0, 2.0])),
        lambda g: G.normal_tensor(g, np.zeros(3, np.float32), np.array([1.0, -1.0, 2.0], np.float32)),
    ),
    (lambda: torch.empty(3).exponential_(0), lambda g: G.exponential(g, 3, D.float32, 0)),
    (lambda: torch.empty(3, dtype=torch.int64).exponential_(), lambda g: G.exponential(g, 3, D.int64)),
    (lambda: torch.empty(3).geometric_(1), lambda g: G.geometric(g, 3, D.float32, 1)),
    (lambda: torch.empty(3, dtype=torch.uint16).geometric_(0.5), lambda g: G.geometric(g, 3, D.uint16, 0.5)),
    (lambda: torch.empty(3).log_normal_(1, 0), lambda g: G.log_normal(g, 3, D.float32, 1, 0)),
    (lambda: torch.empty(3, dtype=torch.int64).log_normal_(), lambda g: G.log_normal(g, 3, D.int64)),
    (lambda: torch.empty(3).cauchy_(0, 0), lambda g: G.cauchy(g, 3, D.float32, 0, 0)),
    (lambda: torch.empty(3, dtype=torch.int64).cauchy_(), lambda g: G.cauchy(g, 3, D.int64)),
    (lambda: torch.empty(3).bernoulli_(1.5), lambda g: G.bernoulli(g, 1.5, 3, D.float32)),
    (lambda: torch.empty(3, dtype=torch.uint16).bernoulli_(0.5), lambda g: G.bernoulli(g, 0.5, 3, D.uint16)),
    (
        lambda: torch.empty(3).bernoulli_(torch.ones(4)),
        lambda g: G.bernoulli(g, np.ones(4, np.float32), (3,), D.float32),
    ),
    (
        lambda: torch.empty(3).bernoulli_(torch.tensor([1, 0, 1])),
        lambda g: G.bernoulli(g, np.array([1, 0, 1]), (3,), D.float32),
    ),
    (lambda: torch.empty(3, dtype=torch.uint16).random_(), lambda g: G.random_(g, 3, D.uint16)),
    (lambda: torch.empty(3, dtype=torch.int8).random_(0, 300), lambda g: G.random_from_to(g, 3, D.int8, 0, 300)),
    (lambda: torch.empty(3, dtype=torch.bool).random_(-1, 2), lambda g: G.random_from_to(g, 3, D.bool, -1, 2)),
    (lambda: torch.randint(5, 3, (2,)), lambda g: G.randint(g, 5, 3, 2)),
    (
        lambda: torch.empty(3, dtype=torch.bfloat16).random_(70000, 70002),
        lambda g: G.random_from_to(g, 3, D.bfloat16, 70000, 70002),
    ),
    (
        lambda: torch.empty(3, dtype=torch.int16).random_(-(2**63), None),
        lambda g: G.random_from_to(g, 3, D.int16, -(2**63), None),
    ),
    (lambda: torch.empty(3, dtype=torch.complex64).random_(0, 5), lambda g: G.random_from_to(g, 3, D.complex64, 0, 5)),
    (lambda: torch.randperm(300, dtype=torch.int8), lambda g: G.randperm(g, 300, D.int8)),
    (lambda: torch.randperm(3000, dtype=torch.float16), lambda g: G.randperm(g, 3000, D.float16)),
    (lambda: torch.randperm(2**24 + 2, dtype=torch.float32), lambda g: G.randperm(g, 2**24 + 2, D.float32)),
    (
        lambda: torch.multinomial(torch.ones(3, dtype=torch.int64), 2),
        lambda g: G.multinomial(g, np.ones(3, np.int64), 2),
    ),
    (lambda: torch.multinomial(torch.ones(3), 0), lambda g: G.multinomial(g, np.ones(3, np.float32), 0)),
    (lambda: torch.multinomial(torch.ones(2, 2, 2), 1), lambda g: G.multinomial(g, np.ones((2, 2, 2), np.float32), 1)),
    (
        lambda: torch.multinomial(torch.tensor([1.0, -1.0]), 5),
        lambda g: G.multinomial(g, np.array([1.0, -1.0], np.float32), 5),
    ),
    (
        lambda: torch.multinomial(torch.tensor([1.0, -1.0]), 1),
        lambda g: G.multinomial(g, np.array([1.0, -1.0], np.float32), 1),
    ),
    (
        lambda: torch.multinomial(torch.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True),
        lambda g: G.multinomial(g, np.array([[1.0, 1.0], [0.0, 0.0]], np.float32), 1, True),
    ),
    (
        lambda: torch.multinomial(torch.tensor([1.0, float("nan")]), 1, True),
        lambda g: G.multinomial(g, np.array([1.0, np.nan], np.float32), 1, True),
    ),
    (
        lambda: torch.Generator().set_state(torch.zeros(10, dtype=torch.uint8)),
        lambda g: g.set_state(np.zeros(10, np.uint8)),
    ),
    (
        lambda: torch.Generator().set_state(torch.zeros(5056, dtype=torch.uint8)),
        lambda g: g.set_state(np.zeros(5056, np.uint8)),
    ),
    (lambda: torch.Generator().set_state(torch.zeros(5056)), lambda g: g.set_state(np.zeros(5056, np.float32))),
    (lambda: torch.Generator().get_offset(), lambda g: g.get_offset()),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match(case):
    raises_like(*ERRORS[case])


def test_empty_outputs_skip_checks_like_torch():
    assert torch.empty(0, dtype=torch.int64).exponential_().numel() == 0
    assert G.exponential(G.Generator(), 0, D.int64).size == 0
    assert G.random_(G.Generator(), (0, 3), D.uint16).shape == (0, 3)
    raises_like(lambda: torch.empty(0, dtype=torch.int64).cauchy_(), lambda g: G.cauchy(g, 0, D.int64))


def test_sampler_seed_chain():
    # DataLoader/RandomSampler: a 0-dim int64 random_() seeds a fresh generator that shuffles
    for seed in SEEDS:
        torch.manual_seed(seed)
        ours = G.Generator().manual_seed(seed)
        t_seed = int(torch.empty((), dtype=torch.int64).random_().item())
        o_seed = int(G.random_(ours, (), D.int64))
        assert o_seed == t_seed
        t_perm = torch.randperm(1000, generator=torch.Generator().manual_seed(t_seed)).numpy()
        assert_bits(G.randperm(G.Generator().manual_seed(o_seed), 1000), t_perm, "perm")
