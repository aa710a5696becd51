"""Cold kernels (torchlike/_core/cold_kernels.py): new shapes run through NumPy instead of compiling, agree
with the compiled kernels, keep their tables bounded, and the compile warning names the user's line."""

import warnings

import jax
import numpy as np
import pytest

import torchlike as torch
from torchlike._core import buckets, cold_kernels, kernel_cache

pytestmark = pytest.mark.skipif(
    torch.lazy.enabled() or not cold_kernels._cpu_only(), reason="the cold path serves eager mode on the CPU"
)


@pytest.fixture(autouse=True)
def _cold_path_on(monkeypatch):
    # the cold path is opt-in (TORCHLIKE_COLD_KERNELS=1): these tests switch it on for themselves
    monkeypatch.setattr(cold_kernels, "_on", True)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))


def _step(model, b):
    torch.manual_seed(b)
    x = torch.randn(b, 16)
    y = torch.randint(0, 5, (b,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    model.zero_grad()
    loss.backward()
    return loss.item(), [p.grad.numpy().copy() for p in model.parameters()]


def test_changing_batch_sizes_compile_nothing_and_tables_stay_bounded():
    model = _mlp()
    _step(model, 3)
    sizes = {id(k): (len(k.entries), len(k.programs)) for k in _cold_kernels_in_use()}  # earlier tests' kernels
    kernel_cache.set_kernel_cache_size(8)
    try:
        before = torch.compile_stats()["compiles"]
        for b in range(1, 41):
            _step(model, b)
        compiled = torch.compile_stats()["compiles"] - before
        tables = _cold_kernels_in_use()
    finally:
        kernel_cache.set_kernel_cache_size(kernel_cache.DEFAULT_SIZE)
    # 40 new batch sizes, ~10 kernels each: none compiled (the few allowed: fills of a shape met before)
    assert compiled <= 3, compiled
    grown = [k for k in tables if len(k.entries) > sizes.get(id(k), (0, 0))[0]]
    assert grown and all(len(k.entries) <= max(8, sizes.get(id(k), (0, 0))[0]) for k in tables)
    assert all(len(k.programs) <= max(8, sizes.get(id(k), (0, 0))[1]) for k in tables)
    assert any(len(k.entries) == 8 for k in grown)  # the bound was reached, and held


def _cold_kernels_in_use():
    import gc

    return [o for o in gc.get_objects() if type(o) is cold_kernels.ColdKernel and len(o.entries)]


def test_cold_results_match_compiled(monkeypatch):
    model = _mlp()
    cold = [_step(model, b) for b in (1, 7, 33)]
    monkeypatch.setattr(cold_kernels, "_on", False)
    hot = [_step(model, b) for b in (1, 7, 33)]
    for (lc, gc_), (lh, gh) in zip(cold, hot):
        assert lc == pytest.approx(lh, rel=1e-6)
        for a, b in zip(gc_, gh):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


_CASES = [
    lambda x, i: (x.exp() - x.tanh().sigmoid()).sum(dim=1) / x.abs().clamp(min=0.5).sqrt().mean(),
    lambda x, i: x.log(),  # NaN for negative entries, -inf at 0
    lambda x, i: (x.amax(dim=0), x.argmax(dim=1), x.cumsum(0), x.softmax(-1)),
    lambda x, i: (x[i], x.gather(1, i.unsqueeze(1).clamp(max=3)), x.index_select(0, i)),
    lambda x, i: torch.nn.functional.pad(x, (1, 2)) @ torch.ones(7, 2),
    lambda x, i: torch.bmm(x.reshape(2, 3, 4), x.reshape(2, 4, 3)).transpose(1, 2),
    lambda x, i: torch.where(x > 0, x, x * 0.1) ** 2,
    lambda x, i: torch.cat([x, x.flip(0)], dim=1).max(dim=1).values,
    lambda x, i: (x * 1000).to(torch.int64),  # float to int: sent to XLA (saturating conversion)
    lambda x, i: (i // (i + 1), i % 3, -i & 6),  # integer division and remainder: sent to XLA
]


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_interpreted_ops_match_xla(case, monkeypatch):
    x = torch.tensor(np.linspace(-2, 3, 24, dtype=np.float32).reshape(6, 4))
    x[2, 1] = 0.0
    i = torch.tensor([0, 5, 2, 2, 1, 3])
    f = _CASES[case]
    cold = f(x, i)
    monkeypatch.setattr(cold_kernels, "_on", False)
    hot = f(x, i)
    cold = cold if isinstance(cold, tuple) else (cold,)
    hot = hot if isinstance(hot, tuple) else (hot,)
    for a, b in zip(cold, hot):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-6, atol=1e-6)


def test_backward_through_indexing_matches(monkeypatch):
    def run():
        w = torch.arange(12.0).reshape(4, 3).requires_grad_()
        idx = torch.tensor([3, 0, 3, 1])
        (w[idx] * torch.arange(1.0, 5.0).unsqueeze(1)).sum().backward()  # repeated rows accumulate
        return w.grad.numpy()

    cold = run()
    monkeypatch.setattr(cold_kernels, "_on", False)
    np.testing.assert_array_equal(cold, run())


def test_a_recurring_signature_turns_hot_and_compiles(monkeypatch):
    monkeypatch.setattr(cold_kernels, "COMPILE_COST", 0.0)
    before = torch.compile_stats()["compiles"]
    x = torch.ones(3, 5, 7)
    outs = [(x * 3.5).sum().item() for _ in range(4)]
    assert outs == [3.5 * 105] * 4
    assert torch.compile_stats()["compiles"] > before  # the second call made it hot


def test_compile_warning_points_at_the_users_line(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_on", False)
    monkeypatch.setattr(buckets, "_on", False)  # every size its own executable, so each compiles
    monkeypatch.setattr(kernel_cache, "WARN_AFTER", 3)
    monkeypatch.setattr(kernel_cache, "_warned", set())
    monkeypatch.setattr(kernel_cache, "_by_op", kernel_cache.collections.Counter())
    jax.clear_caches()  # the shapes below compile again even if an earlier test met them
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(2, 6):
            torch.ones(n, 3).expm1()
    hits = [w for w in caught if "'expm1' has compiled 3 times" in str(w.message)]
    assert hits, [str(w.message) for w in caught]
    assert hits[0].filename == __file__


def test_a_recurring_row_take_leaves_the_host_for_its_compiled_kernel(monkeypatch):
    """``x[idx]`` runs on the host path (no compile for a new size); at a size that keeps coming it costs about
    twice its compiled call there, so after ``HOST_TAKES`` calls that size goes to the compiled kernel, with the
    same bits. Another size starts on the host again."""
    torch.manual_seed(0)
    idx = torch.tensor([1, 3, 5, -1])

    def host_calls(rows, limit):  # host calls of 12 x[idx] at a size met for the first time (and the results)
        monkeypatch.setattr(cold_kernels, "HOST_TAKES", limit)
        a = torch.randn(rows, 8)
        before = cold_kernels.stats["host_calls"]
        outs = [a[idx] for _ in range(12)]
        assert all(np.array_equal(o.numpy(), a.numpy()[[1, 3, 5, -1]]) for o in outs)
        return cold_kernels.stats["host_calls"] - before

    unlimited = host_calls(8, 10**9)
    limited = host_calls(9, 5)  # (the index's own small ops are counted in both)
    assert unlimited - limited in (6, 7), (unlimited, limited)
    assert host_calls(10, 10**9) == unlimited  # a new size: the host path again


def test_a_kernel_whose_result_holds_no_array_recurs():
    """A cold kernel whose result has no array in it (a gradient that is None) keeps returning that as its
    signature recurs and is routed (a None result is a pytree leaf holding no value)."""
    k = cold_kernels.cold(lambda x, y: None, "nothing")
    k2 = cold_kernels.cold(lambda x: (x + 1, None), "pair_with_none")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(6):
        assert k(x, x) is None
        a, b = k2(x)
        assert b is None and np.array_equal(np.asarray(a), x + 1)
