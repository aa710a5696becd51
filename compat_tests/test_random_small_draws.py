"""Small random draws on the CPU stay on the host (host-backed tensors): the streams, the values read back and the
memory sharing of what they return equal torch's, with explicit generators, re-seeding and state round trips,
and when kernels, views and numpy() read them afterwards."""

import numpy as np
import pytest
import torch

import torchlike


def _plain(x):
    if hasattr(x, "detach"):
        x = x.detach().numpy()
    if isinstance(x, np.ndarray):
        return x.dtype.str, x.shape, np.ascontiguousarray(x).tobytes()
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _same(fn):
    assert _plain(fn(torch)) == _plain(fn(torchlike))


def _transform_draws(t, g=None):
    """The parameter draws of RandomCrop, RandomHorizontalFlip, RandomResizedCrop and RandomErasing."""
    kw = {} if g is None else {"generator": g}
    out = []
    for _ in range(20):
        out.append(t.randint(0, 9, size=(1,), **kw).item())
        out.append(bool(t.rand(1, **kw) < 0.5))
        out.append(t.rand(1, **kw).item())
        out.append(t.empty(1).uniform_(0.08, 1.0, **kw).item())
        out.append(t.empty(1, dtype=t.float64).uniform_(-0.3, 0.3, **kw).item())
        out.append(t.randperm(4, **kw).tolist())
        out.append(t.randint(3, 40, (2,), **kw).tolist())
    return out


@pytest.mark.parametrize("seed", [0, 7, 2**33])
def test_transform_draws_follow_torch(seed):
    def fn(t):
        t.manual_seed(seed)
        return _transform_draws(t) + [t.rand(5)]

    _same(fn)


def test_explicit_generator_and_default_stream_interleaved():
    def fn(t):
        t.manual_seed(3)
        g = t.Generator().manual_seed(11)
        a = _transform_draws(t, g)
        b = _transform_draws(t)
        return a + b + [t.rand(3, generator=g), t.rand(3)]

    _same(fn)


def test_reseed_and_state_round_trip_between_small_draws():
    def fn(t):
        t.manual_seed(0)
        first = _transform_draws(t)[:10]
        state = t.get_rng_state()
        second = _transform_draws(t)[:10]
        t.set_rng_state(state)
        again = _transform_draws(t)[:10]
        t.manual_seed(0)
        restart = _transform_draws(t)[:10]
        return [first, second, again, restart, t.randn(4)]

    _same(fn)


def test_drawn_tensors_behave_as_tensors():
    """What a draw returns is read by kernels, viewed, written in place and shared with numpy as in torch."""

    def fn(t):
        t.manual_seed(5)
        out = []
        x = t.rand(3)
        out.append(x * 2 + 1)
        y = t.randint(0, 100, (4,))
        v = y[1:3]
        v.fill_(7)
        out += [y.clone(), v.clone()]
        z = t.rand(2, 3)
        out += [z.t().contiguous(), z.max(), z[1, 2].item()]
        w = t.randn(3)
        a = w.numpy()
        a[0] = 42.0  # numpy() shares the tensor's memory
        out.append(w.clone())
        w.add_(1)  # ...both ways
        out.append(np.array(a))
        p = t.randperm(5)
        out += [p.numpy().copy(), p.sort().values]
        e = t.empty(2).uniform_(0, 1)
        e.mul_(3)
        out.append(e)
        f = t.rand(4, requires_grad=True)
        (f * f).sum().backward()
        out += [f.grad, f.detach()]
        return out

    _same(fn)


def test_drawn_into_a_view_and_other_dtypes():
    def fn(t):
        t.manual_seed(9)
        base = t.zeros(3, 4)
        base[1].uniform_(2, 3)
        base[:, 2].normal_()
        h = t.rand(3, dtype=t.float16)
        b = t.randint(0, 2, (5,), dtype=t.bool)
        c = t.empty(2, dtype=t.complex64).uniform_()
        return [base, h, h.float() * 2, b, b.logical_not(), c, t.randint(0, 5, (2,), dtype=t.uint8) + 1]

    _same(fn)


@pytest.mark.parametrize("p", [0.5, 0.7, 0.3, 0.1, 1, 0])
def test_flip_decision_compares_as_torch(p):
    """rand(1) < p: torch rounds p to float32 before comparing (f32(0.7) < 0.7 < f32(0.3)...)."""
    from torchlike.vision.transforms._transforms import _rand_one_vs

    for seed in range(40):
        torch.manual_seed(seed)
        want = [bool(torch.rand(1) < p), bool(p < torch.rand(1))]
        torchlike.manual_seed(seed)
        r1, q1 = _rand_one_vs(p)
        r2, q2 = _rand_one_vs(p)
        assert want == [bool(r1 < q1), bool(q2 < r2)]
    # the boundary itself: a draw equal to float32(p) (as torch's float32 comparison sees it)
    v = float(np.float32(p))
    assert bool(torch.tensor([v]) < p) == (v < float(np.float32(p)))
    assert bool(p < torch.tensor([v])) == (float(np.float32(p)) < v)


def test_randperm_every_small_n_and_fills_of_strided_numpy_memory():
    def fn(t):
        t.manual_seed(2)
        out = [t.randperm(n) for n in range(0, 70)] + [t.randperm(n, dtype=t.int32) for n in (2, 5, 64, 65)]
        a = np.zeros((4, 3), np.float32)
        x = t.from_numpy(a.T)  # a base tensor over non-contiguous numpy memory: filled in memory order
        x.uniform_()
        y = t.from_numpy(np.zeros((3, 4), np.int64)[:, ::2].copy())
        y.random_(0, 50)
        return out + [x.clone(), a.copy(), y]

    _same(fn)


def test_host_backed_tensors_as_out_and_after_writes():
    """Factories and draws are host-backed until written: as ``out=`` of another size they resize, a write replaces
    their values (no copy into a host array nobody holds), and one shared through numpy() keeps seeing writes."""

    def fn(t):
        t.manual_seed(4)
        out = []
        for make in (lambda: t.empty(0), lambda: t.zeros(2), lambda: t.rand(5), lambda: t.randperm(3)):
            o = make()
            src = t.arange(6).reshape(2, 3) if o.dtype == t.int64 else t.rand(2, 3)
            t.add(src, 1, out=o)
            out += [o.shape, o.clone()]
            t.sum(src, 0, out=o)
            out += [o.shape, o.clone()]
        s = t.zeros(3)
        a = s.numpy()
        s.add_(t.rand(3))
        out += [a.copy(), s.clone()]
        f = t.full((4,), 2.5)
        f.copy_(t.rand(4))
        out += [f.mul(2), f.numpy().copy()]
        return out

    _same(fn)


def test_one_element_affine_draws():
    """uniform_(a, b) and normal_(mean, std) of one float32 element (the scalar form of the exact fused multiply-add)."""

    def fn(t):
        t.manual_seed(6)
        out = []
        for lo, hi in ((0.08, 1.0), (-0.3, 0.3), (3.0 / 4.0, 4.0 / 3.0), (-1e-3, 2e-3), (0.0, 1e-30), (-5.0, -5.0)):
            out += [t.empty(1).uniform_(lo, hi).item() for _ in range(50)]
        out += [t.empty(1).normal_(m, s).item() for m, s in ((0.0, 1.0), (2.5, 0.1), (-1e-3, 3.0)) for _ in range(50)]
        return out

    _same(fn)


def test_one_element_uniform_draws_match_torch_over_many_bounds():
    """A one-element float32 uniform_ takes a path in Python numbers (generator._uniform_one): torch's bits for
    bounds whose products land near float32 halfway points, tiny ranges, negative and unit bounds."""
    import random

    rng = random.Random(0)
    bounds = [(0.0, 1.0), (0.08, 1.0), (-1.0, 1.0), (1e-30, 1e-30 + 1e-38), (-3.5, -3.5 + 2.0**-20)]
    bounds += [(a, a + rng.uniform(0, 10) * rng.choice([1, 1e-6])) for a in (rng.uniform(-10, 10) for _ in range(60))]

    def draws(t):
        t.manual_seed(7)
        return [t.empty(1).uniform_(a, b) for a, b in bounds for _ in range(3)] + [t.rand(1) for _ in range(5)]

    _same(draws)


def _item_draws(t, uniform, randint, exp):
    """A transform's parameter draws through ``uniform``/``randint``/``exp`` (torchvision's tensor expressions,
    or torchlike's tensor-free draws), interleaved with tensor draws of the same stream: ("draw", value) items
    are the stream itself, ("exp", value) items are computed from it."""
    out = []
    for i in range(30):
        out.append(("draw", uniform(0.08, 1.0)))
        x = uniform(-0.2877, 0.2877)
        out += [("draw", x), ("exp", exp(x))]
        out.append(("draw", randint(0, 7 + i)))
        out.append(("draw", uniform(0.0, 1.0) < 0.5))
        out.append(("draw", randint(-3, 2**40)))  # torch's 64-bit path past 2**32
        if i % 7 == 0:
            out.append(("draw", t.rand(2).tolist()))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_transform_item_draws_follow_torch(dtype):
    from torchlike.vision.transforms import _transforms as tl

    def torch_side():
        torch.manual_seed(4)
        torch.set_default_dtype(getattr(torch, dtype))
        try:
            return _item_draws(
                torch, lambda a, b: torch.empty(1).uniform_(a, b).item(),
                lambda a, b: torch.randint(a, b, size=(1,)).item(), lambda x: torch.exp(torch.tensor([x])).item())
        finally:
            torch.set_default_dtype(torch.float32)

    def torchlike_side():
        torchlike.manual_seed(4)
        torchlike.set_default_dtype(getattr(torchlike, dtype))
        try:
            return _item_draws(torchlike, tl._uniform, tl._randint, tl._exp)
        finally:
            torchlike.set_default_dtype(torchlike.float32)

    want, got = torch_side(), torchlike_side()
    assert [k for k, _ in got] == [k for k, _ in want]
    assert [v for k, v in got if k == "draw"] == [v for k, v in want if k == "draw"]  # the stream, bit for bit
    ulp = 2**-23 if dtype == "float32" else 2**-52
    for (_, a), (_, b) in zip([w for w in want if w[0] == "exp"], [g for g in got if g[0] == "exp"]):
        assert abs(a - b) <= abs(a) * ulp  # torch's exp, or one ulp from it (see _transforms._exp)


@pytest.mark.parametrize("bounds", [(0.9, 0.1), (0.5, 0.5), (float("nan"), 1.0)])
def test_transform_uniform_draw_errors_and_edges_follow_torch(bounds):
    from torchlike.vision.transforms import _transforms as tl

    def run(fn):
        try:
            return ("ok", fn(*bounds))
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return (type(e).__name__, str(e))

    torch.manual_seed(1)
    torchlike.manual_seed(1)
    want = run(lambda a, b: torch.empty(1).uniform_(a, b).item())
    got = run(tl._uniform)
    assert _plain(got) == _plain(want) or (want[0] == got[0] == "ok" and np.isnan(want[1]) and np.isnan(got[1]))
    assert torch.rand(3).tolist() == torchlike.rand(3).tolist()  # the stream went on alike


@pytest.mark.parametrize("bounds", [(3, 3), (5, 2)])
def test_transform_randint_draw_errors_follow_torch(bounds):
    from torchlike.vision.transforms import _transforms as tl

    with pytest.raises(RuntimeError) as want:
        torch.randint(*bounds, size=(1,))
    with pytest.raises(RuntimeError) as got:
        tl._randint(*bounds)
    assert str(got.value) == str(want.value)
