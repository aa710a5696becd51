"""Recurring eager calls against torch: what a cached call plan (registry.call) and the host path for small
tensors (ColdKernel.host) keep must never change a result, a dtype, a grad_fn or an error.

Each case runs the same op many times in a row, with the argument signature fixed or changed on purpose
between calls (number values the kernel bakes in, signed zeros, the default dtype, grad mode, inference
mode, requires_grad, in-place variants), under torch and torchlike, and compares everything it returns."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check, check_raises

import torchlike
from torchlike._core import cold_kernels
from torchlike._ops import registry

rng = np.random.RandomState(0)
X = rng.randn(4, 5).astype(np.float32)
Y = rng.randn(4, 5).astype(np.float32)
I = rng.randint(-5, 6, (4, 5))


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def test_number_values_the_kernel_bakes_in():
    # alpha=1 is baked into add's kernel, other alphas are not; -0.0 and 0.0 are told apart
    def f(t, x, y):
        out = []
        for alpha in (1, 2, 1, -1.5, 1, 0.0, -0.0, 1):
            out.append(t.add(x, y, alpha=alpha))
        for z in (0.0, -0.0, 0.0, -0.0):
            out.append((x * 0.0) * z)
            out.append(t.zeros(3) * z)
        return out

    check(f, [X, Y], grad=False)


def test_scalar_types_and_promotion_recur():
    def f(t, i, x):
        i = i.long()
        out = []
        for s in (2, 2.5, True, 2, 2.5, 3, False):
            out += [i * s, i + s, x * s, i / (s if s else 1), i > s]
        return out

    check(f, [I, X], grad=False)


def test_default_dtype_change_between_calls():
    def f(t, i):
        i = i.long()
        before = i * 1.5
        old = t.get_default_dtype()
        t.set_default_dtype(t.float64)
        try:
            during = i * 1.5
        finally:
            t.set_default_dtype(old)
        return before, during, i * 1.5, before.dtype, during.dtype

    check(f, [I], grad=False)


def test_grad_mode_and_requires_grad_between_calls():
    def f(t, x, y):
        out = []
        for _ in range(3):
            out.append(_name(x * y))
            with t.no_grad():
                out.append(_name(x * y))
            out.append(_name(x.detach() * y))
        z = x * y + x
        z.sum().backward()
        out.append(x.grad)
        return out

    check(f, [X, Y], grad=True)


def test_inplace_and_out_of_place_forms_keep_their_node_names():
    def f(t, x):
        out = []
        for _ in range(3):
            a = x * 1
            out.append(_name(t.nn.functional.leaky_relu(a, 0.1)))
            b = x * 1
            out.append(_name(t.nn.functional.leaky_relu_(b, 0.1)))
            out.append(_name(t.nn.functional.leaky_relu(x * 1, 0.1)))
        return out

    check(f, [X], grad=True)


def test_inference_mode_between_calls():
    def f(t, x, y):
        out = []
        for _ in range(3):
            out.append((x + y).is_inference())
            with t.inference_mode():
                z = x + y
                out.append(z.is_inference())
        return out

    check(f, [X, Y], grad=False)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_integer_division_by_zero_raises_on_every_call(n):
    # the op's check reads the divisor's values on every call, planned or not
    def f(t, i):
        i = i.long()
        for _ in range(n):
            i // t.ones_like(i)
        return i // t.zeros_like(i)

    check_raises(f, [I])


def test_errors_of_a_recurring_signature_are_torchs():
    def f(t, x):
        for _ in range(3):
            x + x
        return x + t.ones(3)

    check_raises(f, [X])


def test_shapes_change_under_one_plan():
    # the plan's key has no sizes: every size runs its own kernel program, broadcasting included
    def f(t, x):
        out = []
        for n in (1, 3, 4, 2, 4, 1):
            a = x[:n]
            out += [a * 2 + 1, (a > 0).sum(), t.where(a > 0, a, -a), t.cat((a, a), 1), a[:, ::2].relu()]
        return out

    check(f, [X], grad=False)


def test_views_and_numpy_of_host_results():
    def f(t, x):
        y = x * 2 + 1  # small: computed on the host by torchlike
        n = y.numpy()
        v = y.view(-1)[3:7]
        y.add_(1)  # the numpy array and the view see the write
        w = y.t().contiguous()
        return n.tolist(), v, w, y.stride(), w.stride(), v.storage_offset()

    check(f, [X], grad=False)


# --- torchlike's own guarantees (no torch equivalent) ------------------------------------------------

eager_only = pytest.mark.skipif(torchlike.lazy.enabled(), reason="plans and the host path serve eager mode")
host_only = pytest.mark.skipif(torchlike.lazy.enabled() or not cold_kernels.host_enabled(),
                               reason="the host path runs eagerly in a CPU-only process")


@eager_only

def test_a_recurring_call_runs_its_plan(monkeypatch):
    calls = []
    run = registry._run_plan
    monkeypatch.setattr(registry, "_run_plan", lambda *a: calls.append(1) or run(*a))
    x, y = torchlike.tensor(X), torchlike.tensor(Y)
    for _ in range(5):
        x + y
    assert len(calls) >= 4


@host_only
def test_host_results_are_the_compiled_kernels_bits(monkeypatch):
    monkeypatch.setattr(cold_kernels, "_check", True)  # every host call also runs compiled and must match
    x, y = torchlike.tensor(X), torchlike.tensor(Y)
    before = cold_kernels.stats["host_calls"]
    for _ in range(3):
        z = (x * 1.01 + y) / (y.abs() + 0.5) - x.clamp(-0.5, 0.5)
        z = torchlike.where(z > 0, z.sqrt(), -z).maximum(x) * -0.0
        i = (x > y).long() * 3 - 7 // 2
    assert cold_kernels.stats["host_calls"] > before
    assert isinstance(z._buf.array, np.ndarray) and not z._buf.array.flags.writeable
    assert i.dtype == torchlike.int64


@host_only
def test_host_arrays_move_to_jax_once_for_compiled_kernels():
    x = torchlike.tensor(X) * 1  # a host array
    w = torchlike.ones(5, 3)
    assert isinstance(x._buf.array, np.ndarray)
    r = x @ w  # a float product and sum: compiled
    assert not isinstance(x._buf.array, np.ndarray)  # the buffer now holds the JAX twin
    assert np.array_equal((x @ w).numpy(), r.numpy())
