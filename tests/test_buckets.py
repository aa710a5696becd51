"""Bucketed executables (torchlike/_core/buckets.py, opt-in): a position-wise kernel meeting a shape off the size
classes on the CPU runs padded on its class's executable, forward and backward, within an ulp of its
exact-shape executable and with the same bits on every call whatever ran before; kernels that padding would
change (reductions, products, reshapes) keep exact shapes; executables grow with the log of the sizes met."""

import numpy as np
import pytest

import torchlike as torch
from torchlike._core import buckets, cold_kernels

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


@pytest.mark.parametrize("name", sorted(POSITIONWISE))
def test_padded_results_match_and_do_not_depend_on_history(name, monkeypatch):
    fn = POSITIONWISE[name]
    grad = name != "tril"
    for n, k in ((13, 7), (37, 11), (100, 3)):
        x, y = _inputs(n, k, n)
        monkeypatch.setattr(buckets, "_on", False)
        exact = _run(fn, x, y, grad)
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
    x.sum(-1), torch.softmax(x, -1), x @ x.T, x.reshape(7, 13)  # noqa: B018 - kernels that do not pad
    assert buckets.stats["refused"] >= refused + 3


def test_executables_grow_with_the_log_of_the_sizes(monkeypatch):
    monkeypatch.setattr(buckets, "_on", True)
    before = torch.compile_stats()["by_op"].get("hardswish", 0)
    for n in range(9, 200):  # 191 sizes: buckets 16, 32, 64, 128, 256
        F.hardswish(torch.ones(n, 3))
    compiled = torch.compile_stats()["by_op"].get("hardswish", 0) - before
    assert compiled <= 5, compiled


def test_size_classes():
    assert [buckets.size_class(n) for n in (1, 8, 9, 16, 17, 1000, 1024, 1025, 1100, 5000)] == [
        8, 8, 16, 16, 32, 1024, 1024, 1152, 1152, 5120]
