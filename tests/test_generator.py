"""The numpy-level CPU generator on its own (no torch): engine, state bytes, shapes, ranges, errors,
and values pinned from torch 2.13."""

import hashlib
import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from torchlike._core import dtype as D
from torchlike._core import generator as G


def gen(seed=0):
    return G.Generator().manual_seed(seed)


# --- the engine: a plain mt19937 (init_genrand), checked against the textbook algorithm ---------


def reference_mt19937(seed, n):
    mt = [seed & 0xFFFFFFFF]
    for i in range(1, 624):
        mt.append((1812433253 * (mt[-1] ^ (mt[-1] >> 30)) + i) & 0xFFFFFFFF)
    out, idx = [], 624
    for _ in range(n):
        if idx == 624:
            for i in range(624):
                y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
                mt[i] = mt[(i + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            idx = 0
        y = mt[idx]
        idx += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        out.append(y ^ (y >> 18))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2**32 + 5, 2**64 - 1])
def test_words_are_mt19937(seed):
    assert gen(seed)._words(1300).tolist() == reference_mt19937(seed, 1300)


def test_random64_is_high_then_low_word():
    w = reference_mt19937(3, 4)
    assert gen(3)._words64(2).tolist() == [(w[0] << 32) | w[1], (w[2] << 32) | w[3]]


# --- seeds and state bytes ---------------------------------------------------------------------


def test_seeding():
    g = G.Generator()
    assert g.initial_seed() == 67280421310721 and g.device == "cpu"
    assert g.manual_seed(-1) is g and g.initial_seed() == 2**64 - 1
    assert gen(2**40).get_state()[24:].tobytes() == gen(0).get_state()[24:].tobytes()  # 32 bits seed the engine
    s = g.seed()
    assert 0 <= s < 2**64 and g.initial_seed() == s
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        g.manual_seed(1.5)
    with pytest.raises(RuntimeError, match="but got bool"):
        g.manual_seed(True)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        g.manual_seed(2**64)
    with pytest.raises(RuntimeError, match="device 'cpu'"):
        G.Generator("cuda")
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        g.get_offset()


def test_state_layout_after_seed_and_draws():
    g = gen(7)
    st = g.get_state()
    assert st.dtype == np.uint8 and st.shape == (5056,)
    assert struct.unpack_from("<QiiQ", st, 0) == (7, 1, 1, 0)
    assert struct.unpack_from("<Q", st, 24)[0] == 7  # state[0] = seed, widened to 64 bits
    G.normal(g, 5, D.float32)  # 3 Box-Muller pairs of doubles: 12 words, one sample cached
    st = g.get_state()
    assert struct.unpack_from("<QiiQ", st, 0) == (7, 613, 1, 12)
    normal_y, valid = struct.unpack_from("<d", st, 5024)[0], struct.unpack_from("<i", st, 5040)[0]
    assert valid == 1 and normal_y != 0
    assert not st[5044:5048].any() and not st[5053:].any()  # padding stays zero


def test_state_round_trip_continues_identically():
    g = gen(11)
    G.normal(g, 3, D.float64)
    saved = g.get_state()
    a = [G.normal(g, 5, D.float32), G.randint(g, 0, 9, 20), G.uniform(g, 700, D.float64)]
    h = G.Generator().set_state(saved)
    b = [G.normal(h, 5, D.float32), G.randint(h, 0, 9, 20), G.uniform(h, 700, D.float64)]
    for x, y in zip(a, b):
        assert x.tobytes() == y.tobytes()
    assert h.get_state().tobytes() == g.get_state().tobytes()
    c = g.clone_state()
    assert G.uniform(c, 3, D.float32).tobytes() == G.uniform(g, 3, D.float32).tobytes()


def test_set_state_errors():
    g = G.Generator()
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(np.zeros(5056, np.float32))
    with pytest.raises(
        RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG state size to be 10"
    ):
        g.set_state(np.zeros(10, np.uint8))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(np.zeros(5056, np.uint8))
    bad = gen(1).get_state()
    struct.pack_into("<iiQ", bad, 8, 600, 1, 100)  # would read past the 624 words in torch
    with pytest.raises(NotImplementedError, match="undefined behaviour"):
        g.set_state(bad)


def test_lagging_next_replays_the_words_torch_would_read():
    ref = reference_mt19937(9, 624 + 700)
    st = gen(9).get_state()
    g = G.Generator().set_state(st)
    g._words(624)  # the key now holds the first block's raw state
    st = g.get_state()
    struct.pack_into("<iiQ", st, 8, 101, 1, 20)  # next 100 words are key[20:120], then a new block
    h = G.Generator().set_state(st)
    assert h._words(60).tolist() == ref[20:80]
    assert struct.unpack_from("<iiQ", h.get_state(), 8) == (41, 1, 80)
    assert h._words(45).tolist() == ref[80:120] + ref[624:629]
    assert struct.unpack_from("<iiQ", h.get_state(), 8) == (620, 1, 5)


# --- pinned values (torch 2.13, x86-64, glibc) ------------------------------------------------------


def test_pinned_values():
    assert G.uniform(gen(0), 4, D.float32).view(np.uint32).tolist() == [1056839000, 1061464623, 1035285416, 1040659200]
    assert G.normal(gen(0), 4, D.float32).view(np.uint32).tolist() == [1069891420, 3197516880, 3221975369, 1058112694]
    assert G.normal(gen(0), 17, D.float32).view(np.uint32).tolist() == [
        3213892485, 3218674758, 1058082820, 1061888861, 1058622859, 3217493339, 3199125194, 1072508750,
        1055894101, 3205882667, 3190918891, 1044111780, 1068619456, 1070271744, 1064452252, 3210214195,
        1064209456,
    ]  # fmt: skip
    assert G.normal(gen(0), 3, D.float64).view(np.uint64).tolist() == [
        4609618848671514170,
        13822329602015260650,
        13835460653179408101,
    ]
    assert hashlib.sha256(G.normal(gen(0), 1000, D.float32).tobytes()).hexdigest()[:16] == "43678415636bbad8"
    assert hashlib.sha256(G.normal(gen(42), 16000, D.float32).tobytes()).hexdigest()[:16] == "e830bd9f1857d6c9"
    assert G.randint(gen(0), 0, 10, 8).tolist() == [4, 9, 3, 0, 3, 9, 7, 3]
    assert G.randperm(gen(0), 10).tolist() == [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]


# --- shapes, dtypes, ranges -----------------------------------------------------------------------

FLOATS = (D.float32, D.float64, D.float16, D.bfloat16)


@pytest.mark.parametrize("dt", FLOATS, ids=str)
def test_float_samplers_shapes_and_ranges(dt):
    g = gen(3)
    for fn in (
        lambda s: G.uniform(g, s, dt, -2.0, 3.0),
        lambda s: G.normal(g, s, dt, 1.0, 2.0),
        lambda s: G.exponential(g, s, dt, 2.0),
        lambda s: G.cauchy(g, s, dt),
        lambda s: G.log_normal(g, s, dt),
        lambda s: G.geometric(g, s, dt, 0.25),
        lambda s: G.bernoulli(g, 0.3, s, dt),
        lambda s: G.random_(g, s, dt),
    ):
        for shape in ((2, 3, 5), (0, 4), 17, ()):
            out = fn(shape)
            assert out.dtype == dt.np and out.shape == ((shape,) if isinstance(shape, int) else shape)
    u = G.uniform(g, 5000, dt, -2.0, 3.0).astype(np.float64)
    assert u.min() >= -2.0 and u.max() < 3.0
    assert G.exponential(g, 5000, dt).astype(np.float64).min() >= 0
    assert set(np.unique(G.bernoulli(g, 0.3, 500, dt).astype(np.float64))) <= {0.0, 1.0}
    geo = G.geometric(g, 500, dt, 0.25).astype(np.float64)
    assert geo.min() >= 1 and np.all(geo == np.round(geo))
    assert G.random_(g, 500, dt).astype(np.float64).max() <= 2.0 ** G._digits(dt)
    assert ml_dtypes.bfloat16 == D.bfloat16.np


def test_normal_statistics():
    for dt, n in ((D.float32, 200_003), (D.float64, 50_000), (D.float32, 15)):
        x = G.normal(gen(5), n, dt, 2.0, 3.0).astype(np.float64)
        assert abs(x.mean() - 2.0) < 8 * 3.0 / math.sqrt(n) and abs(x.std() / 3.0 - 1) < 0.05 + 3 / math.sqrt(n)


def test_normal_caches_the_second_sample():
    g = gen(4)
    a = G.normal(g, 1, D.float64)
    left = struct.unpack_from("<i", g.get_state(), 8)[0]
    b = G.normal(g, 1, D.float64)  # served from the cache: no words drawn
    assert struct.unpack_from("<i", g.get_state(), 8)[0] == left
    assert G.normal(gen(4), 2, D.float64).tolist() == [a[0], b[0]]
    z = G.normal(gen(4), (0,), D.float32)
    assert z.shape == (0,)


def test_complex_normal_halves_the_variance():
    x = G.normal(gen(1), 20000, D.complex64)
    assert x.dtype == np.complex64 and abs(np.var(x.real) - 0.5) < 0.05


@pytest.mark.parametrize("dt", (D.int8, D.uint8, D.int16, D.int32, D.int64, D.bool, D.float32, D.bfloat16), ids=str)
def test_integer_samplers(dt):
    g = gen(8)
    r = G.randint(g, 0, 2, (4, 50), dt)
    assert r.dtype == dt.np and r.shape == (4, 50) and set(np.unique(r.astype(np.int64))) <= {0, 1}
    lo, hi = (-3, 100) if dt is not D.bool and dt is not D.uint8 else (0, 2)
    r = G.randint(g, lo, hi, 2000, dt).astype(np.int64)
    assert r.min() >= lo and r.max() < hi
    full = G.random_(g, 3000, dt).astype(np.float64)
    assert full.min() >= 0
    if not dt.is_floating_point and dt is not D.bool:
        assert full.max() <= np.iinfo(dt.np).max


def test_randint_wide_and_full_ranges():
    g = gen(2)
    big = G.randint(g, -(2**62), 2**62, 1000)
    assert big.min() >= -(2**62) and big.max() < 2**62 and big.dtype == np.int64
    full = G.random_from_to(g, 1000, D.int64, -(2**63), None)
    assert full.min() < -(2**60) and full.max() > 2**60
    assert G.random_from_to(g, 100, D.int8, 120, None).min() >= 120


def test_randint_draw_width_switches_at_two_to_the_28():
    for rng, words in ((2**28 - 1, 10), (2**28, 20)):
        g = gen(1)
        G.randint(g, 0, rng, 10)
        assert struct.unpack_from("<Q", g.get_state(), 16)[0] == words


def test_float_random_bounds_move_inside_the_dtype():
    # ATen's update_from/update_to: to - 1 = 2**32 - 1 rounds up in float32, so `to` moves down
    assert G._update_to(2**32, D.float32) == 2**32 - 256
    assert G._update_from(2**25 + 1, D.float32) == 2**25 + 4  # 2**25 + 2 rounds down to 2**25
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        G.random_from_to(gen(), 3, D.float32, 0, 2**25)


# --- randperm ---------------------------------------------------------------------------------------


def loop_fisher_yates(g, n):
    a = list(range(n))
    z = g._words(max(n - 1, 0)).tolist()
    for i in range(n - 1):
        j = i + z[i] % (n - i)
        a[i], a[j] = a[j], a[i]
    return a


def loop_inside_out(g, n):
    a = [0] * n
    z = g._words64(n).tolist()
    for i in range(n):
        j = z[i] % (i + 1)
        a[i] = a[j]
        a[j] = i
    return a


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 257, 5000])
def test_randperm_matches_the_swap_loops(n):
    for seed in range(6):
        assert G.randperm(gen(seed), n).tolist() == loop_fisher_yates(gen(seed), n)
        assert G._inside_out(gen(seed), n).tolist() == loop_inside_out(gen(seed), n)


def test_randperm_dtypes_and_errors():
    p = G.randperm(gen(), 300, D.float32)
    assert p.dtype == np.float32 and sorted(p.tolist()) == list(range(300))
    with pytest.raises(RuntimeError, match="n cannot be greater than 2049 for Half type."):
        G.randperm(gen(), 2050, D.float16)
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without overflow"):
        G.randperm(gen(), 300, D.int8)
    with pytest.raises(RuntimeError, match="n must be non-negative, got-1"):
        G.randperm(gen(), -1)


# --- bernoulli, multinomial, normal with tensors ---------------------------------------------------


def test_bernoulli_tensor_p():
    g = gen(3)
    p = np.linspace(0, 1, 11, dtype=np.float32)
    out = G.bernoulli(g, p)
    assert out.dtype == np.float32 and out[0] == 0 and out[-1] == 1
    out = G.bernoulli(g, p, (4, 11), D.bool)
    assert out.dtype == np.bool_ and out.shape == (4, 11)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        G.bernoulli(g, np.ones(4, np.float32), (3,))
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true"):
        G.bernoulli(g, np.array([0.5, 2.0], np.float64))
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\], but got p=1.5"):
        G.bernoulli(g, 1.5, 3)


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial(replacement):
    g = gen(5)
    probs = np.array([[0.1, 0.0, 0.5, 0.4], [1.0, 1.0, 1.0, 1.0]], np.float32)
    out = G.multinomial(g, probs, 3, replacement)
    assert out.dtype == np.int64 and out.shape == (2, 3)
    assert not np.any(out[0] == 1)
    if not replacement:
        assert all(len(set(row)) == 3 for row in out.tolist())
    assert G.multinomial(g, probs[1], 2, replacement).shape == (2,)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution \\(sum of probabilities <= 0\\)"):
        G.multinomial(g, np.zeros(3, np.float32), 1, replacement)
    with pytest.raises(RuntimeError, match="multinomial only supports floating-point dtypes for input, got: Long"):
        G.multinomial(g, np.ones(3, np.int64), 1, replacement)


def test_stl_topk_is_a_sorted_top_k():
    rng = np.random.default_rng(0)
    for n, k in ((10, 3), (100, 1), (100, 90), (1000, 15)):
        v = rng.integers(0, 4, n).astype(np.float64)
        idx = G._stl_topk(v, k)
        assert len(set(idx.tolist())) == k
        assert np.all(np.diff(v[idx]) <= 0) and v[idx].min() >= np.sort(v)[::-1][k - 1]


def test_normal_tensor_shapes_and_dtypes():
    g = gen(6)
    mean = np.zeros((3, 1), np.float16)
    std = np.ones(4, np.float16)
    out = G.normal_tensor(g, mean, std)
    assert out.shape == (3, 4) and out.dtype == np.float16
    assert G.normal_tensor(g, 0.5, np.ones(5, np.float64)).dtype == np.float64
    assert G.normal_tensor(g, np.zeros(2, np.float32), 2.0).shape == (2,)
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        G.normal_tensor(g, 0.0, np.array([1.0, -1.0]))


# --- errors with torch's text -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,exc,msg",
    [
        (
            lambda g: G.uniform(g, 3, D.float32, 2, 1),
            RuntimeError,
            "uniform_ expects to return a [from, to) range, but found from=2 > to=1",
        ),
        (
            lambda g: G.uniform(g, 3, D.int64),
            NotImplementedError,
            "\"check_uniform_bounds\" not implemented for 'Long'",
        ),
        (lambda g: G.uniform(g, 3, D.float16, 0, 70000), RuntimeError, "to is out of bounds for c10::Half"),
        (lambda g: G.normal(g, 3, D.float32, 0, -1.5), RuntimeError, "normal expects std >= 0.0, but found std -1.5"),
        (lambda g: G.normal(g, 3, D.int32), NotImplementedError, "\"normal_kernel_cpu\" not implemented for 'Int'"),
        (
            lambda g: G.exponential(g, 3, D.float32, 0),
            RuntimeError,
            "exponential_ expects lambda > 0.0, but found lambda=0",
        ),
        (lambda g: G.geometric(g, 3, D.float32, 1), RuntimeError, "geometric_ expects p to be in (0, 1), but got p=1"),
        (lambda g: G.log_normal(g, 3, D.float32, 1, 0), RuntimeError, "log_normal_ expects std > 0.0, but found std=0"),
        (
            lambda g: G.cauchy(g, 3, D.int64),
            RuntimeError,
            "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you specified long int",
        ),
        (
            lambda g: G.randint(g, 5, 5, 3),
            RuntimeError,
            "random_ expects 'from' to be less than 'to', but got from=5 >= to=5",
        ),
        (lambda g: G.randint(g, 0, 300, 3, D.int8), RuntimeError, "to - 1 is out of bounds for signed char"),
        (
            lambda g: G.random_(g, 3, D.uint32),
            NotImplementedError,
            "\"random_kernel_cpu\" not implemented for 'UInt32'",
        ),
        (
            lambda g: G.random_from_to(g, 3, D.int16, -(2**63), None),
            RuntimeError,
            "random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16",
        ),
    ],
)
def test_error_messages(call, exc, msg):
    with pytest.raises(exc) as err:
        call(gen())
    assert str(err.value) == msg


# --- exact fused multiply-adds ------------------------------------------------------------------------


def test_fma32_is_correctly_rounded_including_halfway_cases():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(3000).astype(np.float32)
    b = rng.standard_normal(3000).astype(np.float32)
    c = rng.standard_normal(3000).astype(np.float32)
    # craft sums that land exactly halfway between float32s in float64 but are not exact
    a[:500], b[:500] = np.float32(1 + 2.0**-12), np.float32(1 + 2.0**-12)
    c[:500] = np.float32(2.0**-54)  # a*b = 1 + 2**-11 + 2**-24 (a float32 midpoint); + c rounds back onto it
    a[500:600] = np.float32(1e-30)
    b[500:600] = np.float32(1e-10)  # subnormal float32 results
    c[500:600] = np.float32(0)
    got = G._fma32(a, b, c)
    # the reference compares exact distances (np.float32(python float) would double-round)
    for i in range(len(a)):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        r = got[i]
        lo, hi = np.nextafter(r, np.float32(-np.inf)), np.nextafter(r, np.float32(np.inf))
        err = abs(Fraction(float(r)) - exact)
        assert err <= abs(Fraction(float(lo)) - exact) and err <= abs(Fraction(float(hi)) - exact), i
        if err == abs(Fraction(float(lo)) - exact) or err == abs(Fraction(float(hi)) - exact):
            assert int(r.view(np.uint32)) % 2 == 0  # ties to even
    assert got[0] != np.float32(np.float64(a[0]) * np.float64(b[0]) + np.float64(c[0]))  # plain float64 double-rounds


def test_fma64_is_correctly_rounded():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(2000), rng.standard_normal(2000)
    c = np.where(np.arange(2000) % 2 == 0, rng.standard_normal(2000), -(a * b) * (1 + 1e-15))
    got = G._fma64(a, b, c)
    for i in range(2000):
        assert got[i] == float(Fraction(a[i]) * Fraction(b[i]) + Fraction(c[i])), i  # Fraction -> float rounds once


def test_pickle_and_deepcopy_keep_the_stream():
    import copy
    import pickle

    g = gen(5)
    G.normal(g, 3, D.float32)  # leaves a cached sample
    for h in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert h.get_state().tobytes() == g.get_state().tobytes()
        assert G.normal(h, 5, D.float64).tobytes() == G.normal(gen(5).set_state(g.get_state()), 5, D.float64).tobytes()


def test_zero_dim_draws():
    assert G.random_(gen(), (), D.int64).shape == ()
    assert G.uniform(gen(), (), D.float32).shape == ()


def test_poisson_and_binomial_pinned_values_and_stream():
    # torch 2.13: manual_seed(0); poisson(float64 rates); binomial(float32); rand(2, float64)
    g = G.Generator()
    g.manual_seed(0)
    rates = np.array([0.5, 3.0, 15.0, 200.0])
    assert G.poisson(g, rates, D.float64).tolist() == [2.0, 4.0, 16.0, 198.0]
    count = np.array([10.0, 100.0, 0.0, 5.0, 60.0], np.float32)
    prob = np.array([0.3, 0.4, 0.5, 1.0, 0.8], np.float32)
    out = G.binomial(g, count, prob, D.float32)
    assert out.dtype == np.float32 and out.tolist() == [3.0, 39.0, 0.0, 5.0, 51.0]
    assert G.uniform(g, 2, D.float64).tolist() == [0.10973526023744606, 0.5237520594022435]


def test_poisson_rejects_negative_and_nan_rates():
    g = G.Generator()
    for bad in (-1.0, math.nan):
        with pytest.raises(RuntimeError, match="invalid Poisson rate"):
            G.poisson(g, np.array([1.0, bad]), D.float32)
