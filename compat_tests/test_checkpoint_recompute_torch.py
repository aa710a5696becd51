"""Non-reentrant torch.utils.checkpoint (``use_reentrant=False``): recomputation, compared with real torch.

torch drops the region's saved tensors and re-runs the function when backward first unpacks one; these
tests watch that through the function's side effects (how often and how far it runs), RNG, errors and
gradients. ``test_checkpoint_drops_the_regions_arrays`` measures the memory torchlike's graph holds.
"""

import contextlib
import gc
import os
import warnings

import jax
import numpy as np
import pytest
import torch
from _harness import assert_same

import torchlike
import torchlike.utils.checkpoint

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def _same(fn):
    ref, got = fn(torch), fn(torchlike)
    assert ref.keys() == got.keys()
    for k in ref:
        if isinstance(ref[k], torch.Tensor):
            assert_same(ref[k], got[k], path=k)
        else:
            assert ref[k] == got[k], (k, ref[k], got[k])


def _ck(lib, fn, *args, **kw):
    return lib.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False, **kw)


@pytest.mark.parametrize("early_stop", [True, False])
def test_recompute_runs_once_per_backward_and_stops_early(early_stop):
    def fn(lib):
        log = []

        def f(a):
            log.append("start")
            y = a.sin()  # saves its input
            log.append("saved")
            z = y * 2 + 1  # saves nothing
            log.append("end")
            return z

        x = lib.tensor(X, requires_grad=True)
        out = _ck(lib, f, x, early_stop=early_stop)
        n_fwd = len(log)
        out.sum().backward(retain_graph=True)
        first = list(log[n_fwd:])
        out.sum().backward()  # a retained graph recomputes again
        return {"log": log, "first": first, "grad": x.grad, "grad_fn": type(out.grad_fn).__name__}

    _same(fn)


def test_global_early_stop_override():
    def fn(lib):
        log = []

        def f(a):
            y = a.exp()
            log.append("after")
            return y

        x = lib.tensor(X, requires_grad=True)
        with lib.utils.checkpoint.set_checkpoint_early_stop(False):
            out = _ck(lib, f, x)
        out.sum().backward()
        return {"log": log, "grad": x.grad}

    _same(fn)


def test_recompute_replays_dropout_and_rng_state():
    def fn(lib):
        lib.manual_seed(0)
        drop = lib.nn.Dropout(0.5)
        lin = lib.nn.Linear(4, 4)
        x = lib.tensor(X, requires_grad=True)
        out = _ck(lib, lambda a: lin(drop(a)).tanh(), x)
        between = lib.rand(3)  # draws between forward and backward do not change the recomputed mask
        (out * lib.arange(12.0).reshape(3, 4)).sum().backward()
        return {"out": out, "x.grad": x.grad, "w.grad": lin.weight.grad, "between": between, "after": lib.rand(2)}

    _same(fn)


def test_preserve_rng_state_false_draws_a_new_mask():
    def fn(lib):
        lib.manual_seed(0)
        x = lib.tensor(X, requires_grad=True)
        out = _ck(lib, lambda a: lib.nn.functional.dropout(a, 0.5).exp(), x, preserve_rng_state=False)
        out.sum().backward()
        return {"out": out, "x.grad": x.grad, "after": lib.rand(2)}

    _same(fn)


def test_recompute_under_the_forwards_autocast_and_context_fn():
    def fn(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        log = []

        @contextlib.contextmanager
        def tag(name):
            log.append(name + " in")
            yield
            log.append(name + " out")

        x = lib.tensor(X, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = _ck(lib, lambda a: lin(a).relu(), x, context_fn=lambda: (tag("fwd"), tag("re")))
        out.float().sum().backward()
        return {"out": out, "dtype": str(out.dtype), "log": log, "x.grad": x.grad, "w.grad": lin.weight.grad}

    _same(fn)


def test_nested_checkpoints_and_partial_grad():
    def fn(lib):
        log = []

        def inner(a):
            log.append("inner")
            return a.sin().exp()

        def outer(a, b):
            log.append("outer")
            h = _ck(lib, inner, a * b)
            return (h * b).tanh()

        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=True)
        out = _ck(lib, outer, a, b)
        (ga,) = lib.autograd.grad(out.sum(), [a], retain_graph=True)
        out.sum().backward()
        return {"out": out, "ga": ga, "a.grad": a.grad, "b.grad": b.grad, "log": log}

    _same(fn)


def test_multiple_outputs_views_inplace_and_kwargs():
    def fn(lib):
        def f(a, w, *, k):
            h = a @ w
            v = h[:, 1:].t()
            y = v.clone()
            y.mul_(k)
            return y.softmax(0), h.sum(1)

        a = lib.tensor(X, requires_grad=True)
        w = lib.tensor(X.T[:, :3].copy() * 0.5, requires_grad=True)
        y, s = _ck(lib, f, a, w, k=3.0)
        (y.pow(2).sum() + s.sum()).backward()
        return {"y": y, "s": s, "a.grad": a.grad, "w.grad": w.grad, "fns": (type(y.grad_fn).__name__,
                type(s.grad_fn).__name__)}  # fmt: skip

    _same(fn)


def test_no_grad_and_create_graph():
    def fn(lib):
        x = lib.tensor(X, requires_grad=True)
        with lib.no_grad():
            plain = _ck(lib, lambda a: a.exp(), x)
        out = _ck(lib, lambda a: (a * a * a).sum(), x)
        (g,) = lib.autograd.grad(out, x, create_graph=True)
        g.sum().backward()
        return {"plain_rg": plain.requires_grad, "g": g, "x.grad": x.grad}

    _same(fn)


def _messages(fn):
    out = []
    for lib in (torch, torchlike):
        with pytest.raises(Exception) as e:
            fn(lib)
        out.append((type(e.value).__name__, str(e.value)))
    return out


def test_determinism_errors():
    def fewer(lib):
        calls = []

        def f(a):
            calls.append(1)
            return a.sin().sin() if len(calls) == 1 else a.sin() * 1.0

        _ck(lib, f, lib.tensor(X, requires_grad=True)).sum().backward()

    def other_shape(lib):
        calls = []

        def f(a):
            calls.append(1)
            return a.sin().sum() if len(calls) == 1 else a[:2].sin().sum()

        _ck(lib, f, lib.tensor(X, requires_grad=True)).backward()

    def more_without_early_stop(lib):
        calls = []

        def f(a):
            calls.append(1)
            return a.sin() if len(calls) == 1 else a.sin().cos()

        _ck(lib, f, lib.tensor(X, requires_grad=True), early_stop=False).sum().backward()

    def unchecked(lib):
        calls = []

        def f(a):
            calls.append(1)
            return a.sin().sum() if len(calls) == 1 else a[:2].sin().sum()

        x = lib.tensor(X, requires_grad=True)
        _ck(lib, f, x, determinism_check="none").backward()
        return x.grad

    for case in (fewer, other_shape, more_without_early_stop):
        ref, got = _messages(case)
        assert ref == got, case.__name__
    for lib in (torch, torchlike):  # the check is skipped; torch's backward then fails on the shapes
        with pytest.raises(RuntimeError):
            unchecked(lib)


def test_forward_context_that_suppresses_raises():
    @contextlib.contextmanager
    def swallow():
        try:
            yield
        except ValueError:
            pass

    def fn(lib):
        def f(a):
            raise ValueError("boom")

        _ck(lib, f, lib.tensor(X, requires_grad=True), context_fn=lambda: (swallow(), contextlib.nullcontext()))

    ref, got = _messages(fn)
    assert ref == got


def _graph_bytes(out):
    """Bytes of the arrays torchlike's backward nodes reachable from ``out`` hold before backward."""
    total, seen, stack = 0, set(), [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or not hasattr(n, "args"):
            continue
        seen.add(id(n))
        for a in n.args or ():
            for x in a if isinstance(a, list) else (a,):
                arrayish = isinstance(x, (jax.Array, np.ndarray)) or type(x).__name__ == "LazyArray"
                if arrayish and id(x) not in seen:
                    seen.add(id(x))
                    total += int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize
        stack.extend(m for m, _ in n.edges)
    return total


def _deep(lib, x, layers, checkpointed):
    def block(h):
        for w in layers:
            h = (h @ w).tanh()
        return h

    h = _ck(lib, block, x) if checkpointed else block(x)
    return (h * h).sum()


def test_checkpoint_drops_the_regions_arrays():
    rs = np.random.RandomState(0)
    ws = [torchlike.tensor(rs.randn(256, 256).astype(np.float32) / 16, requires_grad=True) for _ in range(8)]
    x = torchlike.tensor(rs.randn(512, 256).astype(np.float32), requires_grad=True)
    act = 512 * 256 * 4
    loss_full = _deep(torchlike, x, ws, False)
    full = _graph_bytes(loss_full)
    loss_ck = _deep(torchlike, x, ws, True)
    kept = _graph_bytes(loss_ck)
    # Without checkpointing the graph holds each layer's input, weight and tanh output; with it, only what the
    # nodes after the region hold: its output h (saved by h * h) and h * h (sum's input until backward).
    assert full >= 8 * 2 * act
    assert kept <= 2 * act, (full, kept)
    if os.environ.get("TORCHLIKE_LAZY", "0") == "0":
        del loss_full, loss_ck
        gc.collect()
        live = sum(a.nbytes for a in jax.live_arrays())
        loss_ck = _deep(torchlike, x, ws, True)
        gc.collect()
        assert sum(a.nbytes for a in jax.live_arrays()) - live <= 2 * act + 16384  # and a few scalars and keys
    loss_ck.backward()
    g_ck = [w.grad.numpy().copy() for w in ws]
    for w in ws:
        w.grad = None
    _deep(torchlike, x, ws, False).backward()
    for a, b in zip(g_ck, (w.grad.numpy() for w in ws)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_checkpoint_sequential_non_reentrant():
    def fn(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(*[lib.nn.Linear(4, 4) for _ in range(4)], lib.nn.Dropout(0.3), lib.nn.Tanh())
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
        out.sum().backward()
        return {"out": out, "x.grad": x.grad, "w.grad": model[0].weight.grad, "after": lib.rand(2)}

    _same(fn)


def test_custom_function_inside_the_region():
    def fn(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g

        calls = []

        def f(a):
            calls.append(1)
            return Sq.apply(a.sin()).exp()

        x = lib.tensor(X, requires_grad=True)
        out = _ck(lib, f, x)
        out.sum().backward()
        return {"out": out, "x.grad": x.grad, "calls": len(calls), "grad_fn": type(out.grad_fn).__name__}

    _same(fn)


def test_custom_function_saves_are_dropped_and_recomputed():
    class Sq(torchlike.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torchlike.tensor(X, requires_grad=True)
    out = _ck(torchlike, lambda a: Sq.apply(a.sin()), x)
    dropped = type(out.grad_fn.to_save[0]).__name__
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.sin(X) * np.cos(X), rtol=1e-6)
    assert dropped == "_Dropped"  # the region's custom Function kept no tensor until backward
