"""Bucketed executables (torchlike/_core/buckets.py): a position-wise kernel meeting a shape off the size classes on
the CPU runs padded on its class's executable, forward and backward, within an ulp of its exact-shape executable
and with the same bits on every call whatever ran before; declared kernels (linear, layer norm, softmax, matrix
products) pad the axes their op declares, within a few ulp; other reductions and reshapes keep exact shapes;
executables grow with the log of the sizes met. Also the exact cold tier (cold_kernels.py): kernels it runs
through NumPy give the compiled kernel's bits."""

import numpy as np
import pytest

import torchlike as torch
from torchlike._core import buckets, cold_kernels
from torchlike.autograd import engine

pytestmark = pytest.mark.skipif(
    torch.lazy.enabled() or not cold_kernels._cpu_only(), reason="bucketing serves eager mode on the CPU"
)

F = torch.nn.functional

POSITIONWISE = {
    "tanh": lambda x, y: torch.tanh(x),
    "sigmoid": lambda x, y: torch.sigmoid(x),
    "gelu": lambda x, y: F.gelu(x),
    "gelu_tanh": lambda x, y: F.gelu(x, approximate="tanh"),
    "silu": lambda x, y: F.silu(x),
    "softplus": lambda x, y: F.softplus(x),
    "exp_log1p": lambda x, y: torch.log1p(torch.exp(x)),
    "erf": lambda x, y: torch.erf(x),
    "pow": lambda x, y: torch.pow(x.abs() + 0.5, y),
    "atan2": lambda x, y: torch.atan2(x, y),
    "addcmul": lambda x, y: torch.addcmul(x, x, y, value=0.3),
    "lerp": lambda x, y: torch.lerp(x, y, 0.25),
    "where": lambda x, y: torch.where(x > 0, x * y, y - 1.5),
    "masked_fill": lambda x, y: x.masked_fill(y < 0, float("-inf")),
    "clamp": lambda x, y: torch.clamp(x, -0.5, 0.7),
    "mul_add_bias": lambda x, y: x * 1.7 + y[:1],
    "tril": lambda x, y: torch.tril(x),
    "leaky_relu": lambda x, y: F.leaky_relu(x, 0.1),
}


def _inputs(n, k, seed):
    g = np.random.default_rng(seed)
    x = g.standard_normal((n, k)).astype(np.float32)
    y = g.standard_normal((n, k)).astype(np.float32)
    return x, y


def _run(fn, x, y, grad):
    a = torch.tensor(x, requires_grad=grad)
    b = torch.tensor(y)
    out = fn(a, b)
    if not grad:
        return out.detach().numpy().copy(), None
    (out.float() * torch.tensor(y)).sum().backward() if out.dtype.is_floating_point else None
    return out.detach().numpy().copy(), None if a.grad is None else a.grad.numpy().copy()


@pytest.fixture(autouse=True)
def _pad_from_the_first_call(monkeypatch):
    # these tests are about padding: a kernel pads from its first signature (see the test of the default below)
    monkeypatch.setattr(buckets, "FIXED_SIGNATURES", 0)


def test_a_fixed_off_class_shape_runs_exact_until_the_shapes_change(monkeypatch):
    # padding that changes no bit may wait: the first signatures of a kernel run exact (no copies per call)
    monkeypatch.setattr(buckets, "FIXED_SIGNATURES", 1)
    monkeypatch.setattr(cold_kernels, "_exact_on", False)
    x = torch.randn(40, 6)
    before = buckets.stats["bucketed_calls"]
    for _ in range(3):
        x[torch.tensor([1, 3, 5])]  # a fixed off-class size
    assert buckets.stats["bucketed_calls"] == before
    outs = [x[torch.arange(n)] for n in range(6, 14)]  # the shapes change: the later ones pad
    assert buckets.stats["bucketed_calls"] > before
    for n, out in enumerate(outs, 6):
        assert np.array_equal(out.numpy(), x.numpy()[:n])


@pytest.mark.parametrize("name", sorted(POSITIONWISE))
def test_padded_results_match_and_do_not_depend_on_history(name, monkeypatch):
    monkeypatch.setattr(cold_kernels, "_exact_on", False)  # the exact tier would run some of these through NumPy
    fn = POSITIONWISE[name]
    grad = name != "tril"
    for n, k in ((13, 7), (37, 11), (100, 3)):
        x, y = _inputs(n, k, n)
        monkeypatch.setattr(buckets, "_on", False)
        # (a backward runs per node at the first two sightings of a shape, its fused program from the third)
        exact = [_run(fn, x, y, grad) for _ in range(3)][-1]
        monkeypatch.setattr(buckets, "_on", True)
        before = buckets.stats["bucketed_calls"]
        first = _run(fn, x, y, grad)
        assert buckets.stats["bucketed_calls"] > before
        for _ in range(3):  # recurring: the same executable, the same bits
            again = _run(fn, x, y, grad)
            np.testing.assert_array_equal(again[0], first[0])
            if grad:
                np.testing.assert_array_equal(again[1], first[1])
        np.testing.assert_array_max_ulp(first[0], exact[0], maxulp=2) if first[0].dtype.kind == "f" else (
            np.testing.assert_array_equal(first[0], exact[0]))
        if grad and exact[1] is not None:
            np.testing.assert_array_max_ulp(first[1], exact[1], maxulp=2)


def test_refused_kernels_keep_exact_shapes(monkeypatch):
    monkeypatch.setattr(buckets, "_on", True)
    refused = buckets.stats["refused"]
    x = torch.randn(13, 7)
    x.mean(-1), x.cumsum(0), x.prod(0)  # noqa: B018 - kernels that padding would change
    assert buckets.stats["refused"] >= refused + 3


DECLARED = {
    "linear": lambda x, w: F.linear(x, w, w[:, 0]),
    "linear_3d": lambda x, w: F.linear(x.reshape(1, *x.shape), w),
    "layer_norm": lambda x, w: F.layer_norm(x, (x.shape[-1],), w[0], w[1]),
    "softmax": lambda x, w: torch.softmax(x, -1),
    "softmax_dim0": lambda x, w: torch.softmax(x, 0),
    "log_softmax": lambda x, w: F.log_softmax(x, dim=-1),
    "matmul": lambda x, w: x @ w.T,
    "mm_contraction": lambda x, w: torch.mm(x.T, x),
    "batched_matmul": lambda x, w: torch.matmul(x.reshape(1, *x.shape), x.T.reshape(1, *x.T.shape)),
}


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_declared_kernels_pad_the_axes_their_op_declares(name, monkeypatch):
    fn = DECLARED[name]
    for n, k in ((13, 7), (37, 11), (100, 9)):
        g = np.random.default_rng(n)
        x = g.standard_normal((n, k)).astype(np.float32)
        w = g.standard_normal((5, k)).astype(np.float32)
        monkeypatch.setattr(buckets, "_on", False)
        exact = fn(torch.tensor(x), torch.tensor(w)).numpy().copy()
        monkeypatch.setattr(buckets, "_on", True)
        before = buckets.stats["bucketed_calls"]
        first = fn(torch.tensor(x), torch.tensor(w)).numpy().copy()
        assert buckets.stats["bucketed_calls"] > before
        assert first.shape == exact.shape
        for _ in range(2):
            np.testing.assert_array_equal(fn(torch.tensor(x), torch.tensor(w)).numpy(), first)
        # sums of the same terms, in an order that may change with the padded length
        np.testing.assert_allclose(first, exact, rtol=1e-5, atol=1e-6)


def test_softmax_padding_keeps_masked_rows():
    # rows masked to -inf (causal attention) keep their zeros; a fully masked row is nan, as unpadded
    x = torch.randn(11, 11).masked_fill(torch.ones(11, 11).triu(1).bool(), float("-inf"))
    x[3] = float("-inf")
    with_buckets = torch.softmax(x, -1).numpy()
    buckets.set_enabled(False)
    try:
        exact = torch.softmax(x, -1).numpy()
    finally:
        buckets.set_enabled(True)
    np.testing.assert_allclose(with_buckets, exact, rtol=1e-6)
    assert np.isnan(with_buckets[3]).all() and (with_buckets[0, 1:] == 0).all()


EXACT_TIER = {
    "add": lambda x, y: x + y,
    "sub_alpha": lambda x, y: torch.sub(x, y, alpha=1),
    "div": lambda x, y: x / (y.abs() + 0.5),
    "sqrt": lambda x, y: (x.abs() + 1e-3).sqrt(),
    "where": lambda x, y: torch.where(x > y, x, y),
    "masked_fill": lambda x, y: x.masked_fill(y < 0, float("-inf")),
    "clamp": lambda x, y: x.clamp(-0.5, 0.7),
    "max": lambda x, y: torch.maximum(x, y),
    "argmax": lambda x, y: x.argmax(-1),
    "cat": lambda x, y: torch.cat((x, y), 1),
    "tril": lambda x, y: torch.tril(x),
    "index": lambda x, y: x[torch.tensor([2, 0, 1])],
    "double": lambda x, y: x.double() * 3,
    "int_sum": lambda x, y: (x > 0).long().sum(-1),
}


@pytest.mark.parametrize("name", sorted(EXACT_TIER))
def test_exact_tier_runs_without_compiling_and_gives_the_compiled_bits(name, monkeypatch):
    monkeypatch.setattr(cold_kernels, "_on", False)
    monkeypatch.setattr(cold_kernels, "_exact_on", True)
    monkeypatch.setattr(cold_kernels, "_check", True)  # each cold call also runs compiled and must match
    fn = EXACT_TIER[name]
    for n in (3, 13, 29):
        g = np.random.default_rng(n)
        x, y = (torch.tensor(g.standard_normal((n, 5)).astype(np.float32)) for _ in range(2))
        before = cold_kernels.stats["cold_calls"] + cold_kernels.stats["host_calls"]
        fn(x, y)  # (small: the host path runs it; it is the exact tier's program too)
        assert cold_kernels.stats["cold_calls"] + cold_kernels.stats["host_calls"] > before


def test_exact_tier_refuses_transcendentals_sums_and_fused_products(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_on", False)
    monkeypatch.setattr(cold_kernels, "_exact_on", True)
    x = torch.randn(17, 3)
    xt = x.T.contiguous()
    for fn in (torch.exp, lambda t: t.sum(-1), lambda t: torch.addcmul(t, t, t, value=0.5), lambda t: t @ xt):
        before = cold_kernels.stats["cold_calls"]
        fn(x)
        assert cold_kernels.stats["cold_calls"] == before


def test_executables_grow_with_the_log_of_the_sizes(monkeypatch):
    monkeypatch.setattr(buckets, "_on", True)
    before = torch.compile_stats()["by_op"].get("hardswish", 0)
    for n in range(9, 200):  # 191 sizes: buckets 16, 32, 64, 128, 256
        F.hardswish(torch.ones(n, 3))
    compiled = torch.compile_stats()["by_op"].get("hardswish", 0) - before
    assert compiled <= 5, compiled


def test_size_classes():
    assert [buckets.size_class(n) for n in (1, 3, 8, 9, 16, 17, 1000, 1024, 1025, 1100, 5000)] == [
        1, 4, 8, 16, 16, 32, 1024, 1024, 1152, 1152, 5120]


def _train_step(n, on):
    buckets.set_enabled(on)
    try:
        torch.manual_seed(0)
        lin, ln = torch.nn.Linear(8, 6), torch.nn.LayerNorm(6)
        x = torch.randn(n, 8, requires_grad=True)
        y = F.log_softmax(ln(lin(x)) @ torch.ones(6, 6), -1)
        y.sum().backward()
        return [t.numpy().copy() for t in (y.detach(), x.grad, lin.weight.grad, lin.bias.grad, ln.weight.grad)]
    finally:
        buckets.set_enabled(True)


def test_backward_kernels_pad_as_their_forward_op_declares():
    for n in (200, 201, 202, 203, 204):  # the structure churns: later shapes run per node, on bucketed kernels
        _train_step(n, True)
    for n in (13, 37, 100):
        exact, padded = _train_step(n, False), _train_step(n, True)
        for a, b in zip(exact, padded):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    names = {name for name, _ in buckets.stats["buckets"]}
    assert {"_linear_backward", "_layer_norm_backward", "log_softmax_backward", "matmul_backward"} <= names


def test_a_churning_backward_compiles_with_the_log_of_the_sizes():
    _train_step(200, True)  # the structure's kernels exist; its fused program compiled for a few shapes
    before = torch.compile_stats()["compiles"]
    for n in range(9, 120, 3):
        _train_step(n, True)
    # 37 sizes, 4 size classes: about 4 executables per op forward and backward, no fused program per size
    assert torch.compile_stats()["compiles"] - before <= 50


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_class_index_losses_pad_their_targets_with_ignore_index(reduction, smoothing):
    results = []
    for on in (False, True):
        buckets.set_enabled(on)
        try:
            torch.manual_seed(0)
            x = torch.randn(13, 5, requires_grad=True)
            y = torch.randint(0, 5, (13,))
            y[2] = -100
            loss = F.cross_entropy(x, y, reduction=reduction, label_smoothing=smoothing)
            nll = F.nll_loss(x.log_softmax(-1), y.clamp(min=0), reduction=reduction, ignore_index=3)
            (loss.sum() + nll.sum()).backward()
            results.append([t.detach().numpy().copy() for t in (loss, nll, x.grad)])
        finally:
            buckets.set_enabled(True)
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert any(name == "_cross_entropy" and shapes[0] == (16, 5) for name, shapes in buckets.stats["buckets"])


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
def test_embedding_pads_its_indices(padding_idx):
    results = []
    for on in (False, True):
        buckets.set_enabled(on)
        try:
            torch.manual_seed(0)
            emb = torch.nn.Embedding(10, 4, padding_idx=padding_idx)
            idx = torch.randint(0, 10, (3, 13))
            (emb(idx) * torch.arange(4.0)).sum().backward()
            results.append([emb(idx).detach().numpy().copy(), emb.weight.grad.numpy().copy()])
        finally:
            buckets.set_enabled(True)
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)
    if padding_idx is not None:  # (a plain gather runs in the exact cold tier instead)
        # (its padding changes no bit, so a small call runs at the coarse size: buckets.coarse_class)
        padded = (buckets.coarse_class(3), buckets.coarse_class(13))
        assert any(name == "embedding" and shapes[1] == padded for name, shapes in buckets.stats["buckets"])


@pytest.mark.parametrize("mode", ["GRU", "LSTM", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_recurrent_layers_pad_time_and_stop_each_sequence_at_its_length(mode, bidirectional):
    results = []
    for on in (False, True):
        buckets.set_enabled(on)
        try:
            torch.manual_seed(0)
            rnn = getattr(torch.nn, mode)(4, 5, num_layers=2, bidirectional=bidirectional, batch_first=True)
            x = torch.randn(3, 11, 4, requires_grad=True)
            out, h = rnn(x)
            hs = h if isinstance(h, tuple) else (h,)
            (out.sum() + sum(t.sum() for t in hs)).backward()
            results.append([out.detach().numpy().copy(), *[t.detach().numpy().copy() for t in hs],
                            x.grad.numpy().copy(), rnn.weight_hh_l0.grad.numpy().copy()])  # fmt: skip
        finally:
            buckets.set_enabled(True)
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert any(name == "_rnn_layer" and shapes[0][0] == 16 for name, shapes in buckets.stats["buckets"])


def _padded_then_exact(run):
    """``run(on)``'s results with bucketing on, then off (padded first: later, the exact pass's fused backward
    programs would serve the padded pass): (padded, exact)."""
    out = []
    for on in (True, False):
        buckets.set_enabled(on)
        try:
            out.append(run(on))
        finally:
            buckets.set_enabled(True)
    return out


@pytest.mark.parametrize("key", ["mask", "rows", "pair"])
def test_advanced_indexing_pads_its_indices_with_zero(key, monkeypatch):
    monkeypatch.setattr(cold_kernels, "_exact_on", False)  # (else the exact tier runs the gathers and scatters)
    # every backward per node, on the kernels bucketing serves (else whether a structure has churned before
    # depends on which tests ran first in this process)
    monkeypatch.setattr(engine, "CHURN_SHAPES", 0)

    def run(on):
        results = []
        torch.manual_seed(0)
        x = torch.randn(40, 6, requires_grad=True)
        ct = torch.randn(40, 6)
        for n in (5, 13, 21, 22):  # duplicate rows too: their cotangents add up in the backward
            idx = torch.arange(n) % 11 * 3
            pick = {"mask": lambda: x[x[:, 0] > 0.3 * n / 22],
                    "rows": lambda: x[idx], "pair": lambda: x[idx, idx % 6]}[key]  # fmt: skip
            out = pick()
            (out * ct[: out.shape[0]] if out.dim() == 2 else out * ct[: out.shape[0], 0]).sum().backward()
            results.append([out.detach().numpy().copy(), x.grad.numpy().copy()])
        return results

    padded, exact = _padded_then_exact(run)
    for p, e in zip(padded, exact):
        for a, b in zip(e, p):
            np.testing.assert_array_equal(b, a)
    assert any(name == "_index_backward" for name, _ in buckets.stats["buckets"])


def test_view_reads_run_in_numpy_untraced_with_the_compiled_bits(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_check", True)  # every cold call compared with the compiled kernel
    traces = cold_kernels.stats["traces"]
    x = torch.randn(3, 50, 8)
    for t in range(9, 40, 5):
        v = x[:, -t:].view(3, t, 2, 4).transpose(1, 2)[1, :, 2:].expand(4, 2, t - 2, 4)
        want = x.numpy()[:, -t:].reshape(3, t, 2, 4).transpose(0, 2, 1, 3)[1, :, 2:]
        np.testing.assert_array_equal(v.numpy(), np.broadcast_to(want, (4,) + want.shape))
    assert cold_kernels.stats["traces"] == traces


def test_view_writes_run_in_numpy_untraced_with_the_compiled_bits(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_check", True)
    x = torch.zeros(4, 50, dtype=torch.long)
    want = np.zeros((4, 50), np.int64)
    values = [torch.arange(n) * 7 for n in (9, 17, 33, 40)]
    traces = cold_kernels.stats["traces"]
    for i, n in enumerate((9, 17, 33, 40)):
        x[i, :n] = values[i]
        x.view(4, 5, 10).transpose(1, 2)[i, 3, 1:] = torch.tensor(-1)
        want[i, :n] = np.arange(n) * 7
        want.reshape(4, 5, 10).transpose(0, 2, 1)[i, 3, 1:] = -1
    np.testing.assert_array_equal(x.numpy(), want)
    assert cold_kernels.stats["traces"] == traces


@pytest.mark.parametrize("k,n", [(64, 192), (256, 64), (1024, 32), (8, 65)])
def test_linear_rows_padded_give_the_exact_bits(k, n):
    # the linear forward declares its row padding exact (``_linear_pad.exact``): checked here on the installed XLA
    g = np.random.default_rng(k + n)
    w, b = g.standard_normal((n, k), np.float32), g.standard_normal(n, np.float32)
    for m in (2, 3, 5, 17, 33, 63, 100):
        x = g.standard_normal((m, k), np.float32)
        padded = np.zeros((buckets.coarse_class(m), k), np.float32)
        padded[:m] = x
        exact = F.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
        rows = F.linear(torch.tensor(padded), torch.tensor(w), torch.tensor(b)).numpy()[:m]
        np.testing.assert_array_equal(rows.view(np.uint32), exact.view(np.uint32))


def test_a_growing_context_meets_few_executables(monkeypatch):
    # sampling with a growing context: linear and embedding pad exactly, so sizes 3..64 share one executable
    monkeypatch.setattr(buckets, "FIXED_SIGNATURES", 1)
    torch.manual_seed(0)
    emb, lin = torch.nn.Embedding(50, 16), torch.nn.Linear(16, 24)
    outs = {}
    before = dict(torch.compile_stats()["by_op"])
    with torch.no_grad():
        for t in range(1, 65):
            idx = torch.arange(t) % 50
            outs[t] = lin(emb(idx)).numpy().copy()
    after = torch.compile_stats()["by_op"]
    for name in ("embedding", "_linear"):
        assert after.get(name, 0) - before.get(name, 0) <= 3, (name, after.get(name, 0) - before.get(name, 0))
    with torch.no_grad():  # each result is the exact call's, bit for bit
        buckets.set_enabled(False)
        try:
            for t in (2, 3, 17, 40, 64):
                np.testing.assert_array_equal(lin(emb(torch.arange(t) % 50)).numpy(), outs[t])
        finally:
            buckets.set_enabled(True)


@pytest.mark.parametrize("last", ["lengths", "minus_one"])
def test_indexing_an_axis_with_nonnegative_indices_pads_that_axis(last, monkeypatch):
    # ``out[arange(B), lengths - 1]`` of a padded batch: the time axis changes every batch; non-negative indices
    # let the padded call pad it too, so the backward compiles per size class, not per length
    monkeypatch.setattr(cold_kernels, "_exact_on", False)
    monkeypatch.setattr(engine, "CHURN_SHAPES", 0)  # (every backward per node, as a churning structure runs)

    def run(on):
        results = []
        torch.manual_seed(0)
        before = torch.compile_stats()["by_op"].get("_index_backward", 0)
        for t in (9, 11, 14, 15, 23, 30, 31):
            out = torch.randn(4, t, 3, requires_grad=True)
            lengths = torch.tensor([t, 2, t - 3, 5])
            pick = out[torch.arange(4), lengths - 1] if last == "lengths" else out[torch.arange(4), -1]
            (pick * torch.arange(3.0)).sum().backward()
            results.append([pick.detach().numpy().copy(), out.grad.numpy().copy()])
        compiled = torch.compile_stats()["by_op"].get("_index_backward", 0) - before
        if on and last == "lengths":
            assert compiled <= 3, compiled
        return results

    padded, exact = _padded_then_exact(run)
    for p, e in zip(padded, exact):
        for a, b in zip(e, p):
            np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mean_losses_of_padded_calls_divide_by_the_exact_count(name, reduction):
    def run(on):
        results = []
        torch.manual_seed(0)
        for n in (5, 13, 21):
            x = torch.randn(n, 2, requires_grad=True)
            loss = getattr(F, name)(x, torch.randn(n, 2), reduction=reduction)
            loss.sum().backward()
            results.append([loss.detach().numpy().copy(), x.grad.numpy().copy(), loss.grad_fn.name()])
        return results

    padded, exact = _padded_then_exact(run)
    for p, e in zip(padded, exact):
        assert p[2] == e[2]
        for a, b in zip(e[:2], p[:2]):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert any(n == "_" + name for n, _ in buckets.stats["buckets"])


def test_a_boolean_mask_compiles_nothing_for_its_count():
    x = torch.randn(64, 3)
    before = torch.compile_stats()["by_op"].get("stage", 0)
    for i in range(8):
        x[x[:, 0] > i / 10 - 0.4]
    assert torch.compile_stats()["by_op"].get("stage", 0) == before


def test_a_recurring_exactly_padded_signature_moves_to_its_exact_executable(monkeypatch):
    # linear's forward pads exactly: once a signature's staging has cost about a compile (modelled, not timed)
    # it runs its own executable, with the same bits as every padded call before
    staged = 64 * 64 + 64 * 96  # 40 rows pad to 64: the padded input in, the padded result sliced
    monkeypatch.setattr(buckets, "COMPILE_COST", 3.5 * (buckets.STAGE_CALL + buckets.STAGE_ELEMENT * staged))
    g = np.random.default_rng(3)
    x, w, b = (torch.tensor(g.standard_normal(s, np.float32)) for s in ((1, 40, 64), (96, 64), (96,)))
    first = None
    calls = []
    with torch.no_grad():
        for _ in range(12):
            before = buckets.stats["bucketed_calls"]
            out = F.linear(x, w, b).numpy().copy()
            calls.append(buckets.stats["bucketed_calls"] - before)
            first = out if first is None else first
            np.testing.assert_array_equal(out.view(np.uint32), first.view(np.uint32))
    # the modelled staging passes 3.5 calls' worth after 4 padded calls
    assert calls[:4] == [1, 1, 1, 1] and sum(calls[4:]) == 0, calls
    kernel = next(k for k in _kernels_named("_linear") if any(r is k.hot for r in k.routes.values()))
    assert kernel is not None


def test_a_recurring_inexactly_padded_signature_keeps_its_bucket(monkeypatch):
    # softmax's padded rows may round differently from its exact executable's: its bucket never changes
    monkeypatch.setattr(buckets, "COMPILE_COST", 0.0)
    x = torch.randn(3, 37)
    outs = []
    before = buckets.stats["bucketed_calls"]
    for _ in range(6):
        outs.append(F.softmax(x, dim=-1).numpy().copy())
    assert buckets.stats["bucketed_calls"] - before == 6
    assert all(np.array_equal(o.view(np.uint32), outs[0].view(np.uint32)) for o in outs)


def _kernels_named(name):
    import gc

    return [o for o in gc.get_objects() if type(o) is cold_kernels.ColdKernel and o.__name__ == name]


def test_a_recurring_cold_signature_is_routed_with_the_compiled_bits(monkeypatch):
    # from a signature's second cold call, its program bound to its sizes runs straight from the route table
    monkeypatch.setattr(cold_kernels, "_check", True)  # every cold call compared with the compiled kernel
    x = torch.randn(2, 3, 29, 31)  # more elements than the host path takes
    mask = torch.randn(29, 31) > 0
    want = np.where(mask.numpy(), np.float32(-np.inf), x.numpy())
    for _ in range(2):
        np.testing.assert_array_equal(x.masked_fill(mask, float("-inf")).numpy(), want)
    kernel = next(k for k in _kernels_named("masked_fill") if any(getattr(r, "__name__", "") == "route"
                                                                  for r in k.routes.values()))  # fmt: skip
    calls = cold_kernels.stats["cold_calls"]

    def no_signature(*a, **k):
        raise AssertionError("a routed call looked up its signature")

    monkeypatch.setattr(cold_kernels, "_signature", no_signature)
    np.testing.assert_array_equal(x.masked_fill(mask, float("-inf")).numpy(), want)
    assert cold_kernels.stats["cold_calls"] == calls + 1
    monkeypatch.undo()
    # the rent paid, the route gives way to the compiled kernel: the same bits
    entry = next(e for e in kernel.entries.values() if e is not cold_kernels._HOT)
    entry.spent = cold_kernels.COMPILE_COST
    x.masked_fill(mask, float("-inf"))
    assert not any(getattr(r, "__name__", "") == "route" for r in kernel.routes.values())
    np.testing.assert_array_equal(x.masked_fill(mask, float("-inf")).numpy(), want)


def test_view_reads_are_routed(monkeypatch):
    x = torch.randn(20, 300) * 1.5  # (a JAX array: a host-backed one is read with NumPy directly), over 4096
    reads = cold_kernels.stats["cold_calls"]
    for _ in range(2):
        x[:, 7:250].contiguous()  # (the view's read kernel runs, cold)
    assert cold_kernels.stats["cold_calls"] >= reads + 2
    monkeypatch.setattr(cold_kernels, "_signature", lambda *a: (_ for _ in ()).throw(AssertionError("unrouted")))
    np.testing.assert_array_equal(x[:, 7:250].contiguous().numpy(), x.numpy()[:, 7:250])


@pytest.mark.parametrize("case", ["rows", "rows_fill", "two_axes", "negative_clamped"])
def test_row_gathers_run_as_one_take_with_the_compiled_bits(case, monkeypatch):
    import jax.numpy as jnp

    monkeypatch.setattr(cold_kernels, "_check", True)
    takes = []
    real = cold_kernels._take_rows
    monkeypatch.setattr(cold_kernels, "_take_rows", lambda *a: takes.append(1) or real(*a))
    fns = {
        "rows": lambda a, i: jnp.take(a, i, axis=0, mode="clip"),
        "rows_fill": lambda a, i: jnp.take(a, i, axis=0, mode="fill", fill_value=-3.0),
        "two_axes": lambda a, i: a.at[i, i + 1].get(mode="clip"),
        "negative_clamped": lambda a, i: a.at[i - 9].get(mode="promise_in_bounds"),
    }
    kernel = cold_kernels.cold(fns[case], name=f"take_{case}")
    a = np.arange(13 * 5 * 3, dtype=np.float32).reshape(13, 5, 3)
    i = np.array([[0, 4, 12, 15], [-2, 3, 3, 1]], np.int64)  # out of range both ways
    out = np.asarray(kernel(cold_kernels.to_jax(a), cold_kernels.to_jax(i)))
    np.testing.assert_array_equal(out, np.asarray(kernel.jitted(a, i)))
    assert takes


def test_the_cost_model_counts_a_row_gather_as_one_take():
    # an embedding's lookup is one NumPy take (ROW_STEPS); a gather along another axis is index arithmetic
    x = torch.randn(40, 30) * 1.0
    idx = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6] * 80)
    rows, cols = x[idx], x[:, idx]
    np.testing.assert_array_equal(rows.numpy(), x.numpy()[idx.numpy()])
    np.testing.assert_array_equal(cols.numpy(), x.numpy()[:, idx.numpy()])
    steps = {}
    for k in _kernels_named("_index"):
        for program in k.programs.values():
            if program is not cold_kernels._HOT:
                run = program[0]
                steps.setdefault("gathers", []).append(run.n_steps)
    assert min(steps["gathers"]) < cold_kernels.SLOW_STEPS <= max(steps["gathers"]), steps


def test_a_recurring_signature_turns_hot_when_its_modelled_cost_passes_a_compile(monkeypatch):
    x = torch.randn(2, 3, 29, 33) * 1.0
    mask = torch.randn(29, 33) > 0
    spent = cold_kernels.stats["cold_seconds"]
    x.masked_fill(mask, 0.5)
    per_call = cold_kernels.stats["cold_seconds"] - spent
    size = x.numel()  # the call's larger side: its input and its output hold as many elements
    assert per_call == pytest.approx(cold_kernels.CALL_COST + 4 * cold_kernels.STEP_COST
                                     + cold_kernels.ELEMENT_COST * (size + mask.numel()), rel=0.5)  # fmt: skip
    monkeypatch.setattr(cold_kernels, "COMPILE_COST", 4.5 * per_call)
    cold = []
    for _ in range(7):
        calls = cold_kernels.stats["cold_calls"]
        x.masked_fill(mask, 0.5)
        cold.append(cold_kernels.stats["cold_calls"] - calls)
    assert cold == [1, 1, 1, 1, 0, 0, 0], cold  # 5 calls modelled past 4.5 calls' cost: then compiled


def test_small_row_gathers_run_on_the_host_with_the_compiled_bits(monkeypatch):
    # a row take is cheap in NumPy (general index arithmetic is not): small lookups skip XLA's dispatch
    monkeypatch.setattr(cold_kernels, "_check", True)
    x = torch.randn(40, 6) * 1.0
    emb = torch.nn.Embedding(30, 8)
    idx = torch.tensor([[3, 1, 4], [1, 5, 9]])
    calls = cold_kernels.stats["host_calls"]
    with torch.no_grad():
        rows, looked_up = x[idx], emb(idx)
    assert cold_kernels.stats["host_calls"] >= calls + 2
    np.testing.assert_array_equal(rows.numpy(), x.numpy()[idx.numpy()])
    np.testing.assert_array_equal(looked_up.numpy(), emb.weight.detach().numpy()[idx.numpy()])


def test_a_host_op_builds_its_straight_line_function_when_its_signature_recurs(monkeypatch):
    # a size met once or twice (a growing context meets each once a run) runs its bound program; generating
    # the straight-line function (about 0.2 ms) waits for the signature's third call
    monkeypatch.setattr(cold_kernels, "_check", True)
    built = []
    real = cold_kernels._straight_line
    monkeypatch.setattr(cold_kernels, "_straight_line", lambda *a: built.append(1) or real(*a))
    x = torch.randn(3, 97)  # a size no other test uses
    y = torch.randn(3, 97)
    calls = cold_kernels.stats["host_calls"]
    outs, builds = [], []
    for _ in range(4):
        outs.append(torch.maximum(x, y).numpy().copy())
        builds.append(len(built))
    assert cold_kernels.stats["host_calls"] == calls + 4
    # built at the third call (an inner jit's body builds its own too)
    assert builds[0] == builds[1] == 0 and builds[2] == builds[3] > 0, builds
    np.testing.assert_array_equal(outs[0], np.maximum(x.numpy(), y.numpy()))
    assert all(np.array_equal(o, outs[0]) for o in outs)
