"""Past the executable limit, the least recently used kernels' executables are dropped one kernel at a time;
JAX's caches are never wiped, so the kernels of the working set stay compiled (issue 40, cause 2)."""

import jax
import pytest

import torchlike as torch
from torchlike._core import buckets, cold_kernels, kernel_cache


def _working_set_step(x):
    return torch.nn.functional.softmax(torch.tanh(x) * 2.0, -1).sum()


def test_eviction_keeps_the_working_set_and_never_wipes_jax(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_on", False)  # every new shape compiles: the case eviction is for
    monkeypatch.setattr(cold_kernels, "_exact_on", False)
    monkeypatch.setattr(buckets, "_on", False)
    wiped = []
    monkeypatch.setattr(jax, "clear_caches", lambda: wiped.append(1))
    old = kernel_cache.get_kernel_cache_size()
    kernel_cache.set_kernel_cache_size(24)
    try:
        steady = torch.randn(5, 3)
        expect = _working_set_step(steady).item()
        before = torch.compile_stats()
        for n in range(6, 40):  # one-off shapes: ~4 executables each, far past the limit
            _working_set_step(torch.randn(n, 3))
            assert _working_set_step(steady).item() == expect  # same bits however often evicted
        mid = torch.compile_stats()
        for _ in range(5):  # the steady shape alone: compiled, and nothing evicts it again
            _working_set_step(steady)
        after = torch.compile_stats()
    finally:
        kernel_cache.set_kernel_cache_size(old)
    assert not wiped
    assert mid["flushes"] > before["flushes"] and mid["executables_evicted"] > before["executables_evicted"]
    assert after["compiles"] == mid["compiles"]


def _executables(name):
    from torchlike._ops.registry import OPS

    return sum(kernel_cache._jitted(k)._cache_size() for k in OPS[name].kernels.values())


@pytest.mark.skipif(torch.lazy.enabled(), reason="lazy mode runs these ops in programs, not their op kernels")
def test_evicted_kernels_are_dropped_least_recent_first(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_on", False)
    monkeypatch.setattr(buckets, "_on", False)  # one executable per shape
    old = kernel_cache.get_kernel_cache_size()
    kernel_cache.set_kernel_cache_size(16)
    try:
        x = torch.randn(7, 2)
        for n in range(2, 12):  # cos compiles ten shapes, then goes unused
            torch.cos(torch.ones(n, 5))
        assert _executables("cos") >= 10
        for n in range(2, 30):  # sin churns; exp on one shape stays in use throughout
            torch.sin(torch.ones(n, 6))
            torch.exp(x)
        assert _executables("cos") == 0  # the least recently used kernel went first
        assert _executables("exp") >= 1  # the one in use is compiled
    finally:
        kernel_cache.set_kernel_cache_size(old)
