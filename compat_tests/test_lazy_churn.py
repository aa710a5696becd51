"""Lazy mode on shapes that keep changing (torchlike/_core/lazy.py, ``_churns``): a loop whose every step is a new
structure (a growing context, batches padded to their longest sequence) runs its steps op by op on bucketed
kernels instead of compiling a program per step, fuses again once a structure recurs, and prints what torch
prints. Each case also runs on the route off the CPU (``staged``: data movement on the host, the rest on bucketed
executables with the padding staged through the host), here on the CPU's arrays."""

import numpy as np
import pytest
import torch

import torchlike
from torchlike._core import cold_kernels, lazy


@pytest.fixture
def lazy_on(monkeypatch):
    import collections

    for table in ("_programs", "_skeletons"):  # no structure met before the test
        monkeypatch.setattr(lazy, table, collections.OrderedDict())
    old = lazy.enabled()
    lazy.set_enabled(True)
    lazy.reset_stats()
    try:
        yield
    finally:
        lazy.set_enabled(old)


@pytest.fixture(params=["cpu", "staged"])
def route(request, monkeypatch):
    if request.param == "staged":
        monkeypatch.setattr(cold_kernels, "_cpu", False)
        monkeypatch.setattr(cold_kernels, "_host_ok", False)
    return request.param


def _decoder(t, V=17, D=16):
    nn = t.nn
    t.manual_seed(0)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(64, D)
            self.ln = nn.LayerNorm(D)
            self.qkv, self.head = nn.Linear(D, 3 * D), nn.Linear(D, V)

        def forward(self, idx):
            n = idx.size(1)
            x = self.tok(idx) + self.pos(t.arange(n))
            q, k, v = self.qkv(self.ln(x)).split(D, dim=2)
            att = (q @ k.transpose(-2, -1)) * D**-0.5
            att = att.masked_fill(t.tril(t.ones(n, n)) == 0, float("-inf"))
            return self.head(x + t.softmax(att, dim=-1) @ v)

    return LM().eval()


def _greedy(t, steps, cap):
    model = _decoder(t)
    idx = t.zeros((1, 1), dtype=t.long)
    tokens = []
    with t.no_grad():
        for _ in range(steps):
            logits = model(idx[:, -cap:])[:, -1, :]
            nxt = logits.argmax(-1, keepdim=True)
            tokens.append(nxt.item())  # (a read per step, as a streaming sampler prints each token)
            idx = t.cat((idx, nxt), dim=1)
    return tokens, logits.numpy()


def test_a_growing_context_runs_op_by_op_on_bucketed_kernels(lazy_on, route):
    want_tokens, want_logits = _greedy(torch, 24, 64)
    before = torchlike.compile_stats()["compiles"]
    tokens, logits = _greedy(torchlike, 24, 64)
    assert tokens == want_tokens
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-6)
    assert lazy.stats["churn_runs"] >= 20  # every step past the first few is a new structure
    assert lazy.stats["compiles"] <= 2  # none of them compiled as a program (a recurring one-node step may)
    # ~12 ops at 24 sizes would be ~290 kernels compiled for their exact shapes
    assert torchlike.compile_stats()["compiles"] - before < 120
    if route == "staged":
        assert cold_kernels.stats["moved_calls"] > 0


def test_a_structure_that_settles_is_fused_again(lazy_on, route, monkeypatch):
    monkeypatch.setattr(lazy, "_BACKGROUND", False)
    want_tokens, want_logits = _greedy(torch, 20, 6)
    tokens, logits = _greedy(torchlike, 20, 6)
    assert tokens == want_tokens
    np.testing.assert_allclose(logits, want_logits, rtol=1e-5, atol=1e-6)
    assert lazy.stats["churn_runs"] > 0
    assert lazy.stats["compiles"] >= 1 and lazy.stats["hits"] >= 5  # the capped context's step, compiled


def _padded_training(t, steps=10):
    nn, F = t.nn, t.nn.functional
    t.manual_seed(0)
    emb, gru, fc = nn.Embedding(30, 8, padding_idx=0), nn.GRU(8, 16, batch_first=True), nn.Linear(16, 3)
    params = [*emb.parameters(), *gru.parameters(), *fc.parameters()]
    opt = t.optim.Adam(params, lr=1e-2)
    g = t.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        lengths = t.randint(3, 19, (6,), generator=g)
        x = t.zeros(6, int(lengths.max()), dtype=t.long)
        for i, n in enumerate(lengths.tolist()):
            x[i, :n] = t.randint(1, 30, (n,), generator=g)
        out, _ = gru(emb(x))
        loss = F.cross_entropy(fc(out[t.arange(6), lengths - 1]), x[:, 0] % 3)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, fc.weight.detach().numpy()


def test_a_batch_padded_to_its_longest_sequence_trains_as_torch(lazy_on, route):
    want, want_w = _padded_training(torch)
    got, w = _padded_training(torchlike)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(w, want_w, rtol=1e-4, atol=1e-6)
    assert lazy.stats["churn_runs"] > 0


def _sweep(t, sizes):
    nn, F = t.nn, t.nn.functional
    t.manual_seed(0)
    model = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 5))
    for b in sizes:  # nothing read until the end: gradients accumulate over every size
        x, y = t.randn(b, 12), t.randint(0, 5, (b,))
        F.cross_entropy(model(x), y).backward()
    return [p.grad.numpy() for p in model.parameters()]


def test_a_loop_that_reads_nothing_is_cut_at_each_backward(lazy_on, route):
    sizes = range(1, 31)
    want = _sweep(torch, sizes)
    got = _sweep(torchlike, sizes)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert lazy.flush_reasons["second backward"] >= 10  # a sequence of two-step graphs, not one of 30 steps
    assert lazy.stats["churn_runs"] > 0


@pytest.mark.parametrize("shape", [(3,), (7, 64), (5, 3, 2), (65,)])
def test_a_churning_draw_from_a_key_stream_gives_the_exact_kernels_bits(shape):
    """CUDA generators draw from a key stream (torchlike/_ops/random.py): a churning structure draws at a bucketed
    flat size and cuts, which must give the exact-shape kernel's values (here on the CPU's device)."""
    from torchlike._core import dtype as D
    from torchlike._ops import random as R

    for kind, dt, params in [("normal", D.float32, {"mean": 0.5, "std": 2.0}), ("uniform", D.float64, {"low": -1.0, "high": 3.0}),
                             ("random", D.int64, {"low": 0, "high": 10}), ("exponential", D.float32, {"lambd": 1.5}),
                             ("bernoulli", D.float32, {"p": 0.3}), ("cauchy", D.bfloat16, {"median": 0.0, "sigma": 1.0})]:  # fmt: skip
        k = R._draw_kernel((kind, shape, dt, tuple(params), tuple(map(type, params.values())), torchlike.device("cpu")))
        args = (np.int64(5), np.int64(3), tuple(params.values()))
        exact, cut = np.asarray(k.jitted(*args)), np.asarray(k.per_node(*args))
        assert cut.shape == exact.shape == shape and cut.dtype == exact.dtype
        assert cut.tobytes() == exact.tobytes(), kind
