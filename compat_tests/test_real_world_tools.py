"""Tools real scripts use around training: torch.autograd.gradcheck/gradgradcheck, torch.nn.utils.prune,
torch.profiler."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (torch.nn.utils does not import it itself)
from _harness import check_raises

import torchlike


def both(fn):  # noqa: ANN001, ANN201
    return fn(torch), fn(torchlike)


def _bad_square(t):  # noqa: ANN001, ANN202
    class BadSquare(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):  # noqa: ANN001, ANN205
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):  # noqa: ANN001, ANN205
            (a,) = ctx.saved_tensors
            return g * a  # should be 2 * g * a

    return BadSquare.apply


def test_gradcheck() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        x = t.randn(2, dtype=t.double, requires_grad=True)
        w = t.randn(2, 2, dtype=t.double, requires_grad=True)
        b = t.randn(2, dtype=t.double)
        return [
            t.autograd.gradcheck(lambda a, m: (m @ a.sin()).tanh(), (x, w)),
            t.autograd.gradgradcheck(lambda a: (a.sin() * a).sum(), (x,)),
            t.autograd.gradcheck(t.nn.functional.linear, (t.randn(1, 2, dtype=t.double, requires_grad=True), w, b)),
            t.autograd.gradcheck(lambda a: (a * 2, a.detach()), x),
            t.autograd.gradcheck(_bad_square(t), (x,), raise_exception=False),
        ]

    ref, got = both(run)
    assert got == ref == [True, True, True, True, False]


def test_gradcheck_errors() -> None:
    def mismatch(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        return t.autograd.gradcheck(_bad_square(t), (t.randn(3, dtype=t.double, requires_grad=True),))

    check_raises(mismatch)  # GradcheckError, "Jacobian mismatch for output 0 with respect to input 0,"
    assert issubclass(torchlike.autograd.gradcheck.__globals__["GradcheckError"], RuntimeError)
    check_raises(lambda t: t.autograd.gradcheck(lambda a: a * 2, (t.ones(2),)))

    def float32_warns(t):  # noqa: ANN001, ANN202
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t.autograd.gradcheck(lambda a: a * 2, (t.ones(2, requires_grad=True),), atol=1e-2, eps=1e-3)
        return [str(x.message) for x in w]

    ref, got = both(float32_warns)
    assert got == ref


def test_gradcheck_message_matches() -> None:
    caught = []
    for t in (torch, torchlike):
        t.manual_seed(0)
        with pytest.raises(RuntimeError) as info:
            t.autograd.gradcheck(_bad_square(t), (t.randn(3, dtype=t.double, requires_grad=True),))
        caught.append(str(info.value))
    assert caught[1] == caught[0]


def _pruned(t):  # noqa: ANN001, ANN202
    prune = t.nn.utils.prune
    nn = t.nn
    t.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(2, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))
    conv, lin = net[0], net[3]
    out = {}
    prune.random_unstructured(conv, "weight", amount=0.3)
    out["names"] = sorted(n for n, _ in conv.named_parameters()) + sorted(n for n, _ in conv.named_buffers())
    out["random"] = conv.weight_mask.clone()
    prune.l1_unstructured(conv, "bias", amount=2)
    prune.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)  # a PruningContainer now
    out["container"] = [type(h).__name__ for h in conv._forward_pre_hooks.values()]
    out["ln"] = conv.weight_mask.clone()
    prune.random_structured(lin, "weight", amount=0.4, dim=1)
    out["random_structured"] = lin.weight_mask.clone()
    prune.global_unstructured([(lin, "bias"), (conv, "bias")], pruning_method=prune.L1Unstructured, amount=3)
    out["global"] = [lin.bias_mask.clone(), conv.bias_mask.clone()]
    y = net(t.randn(2, 2, 5, 5))
    y.sum().backward()
    out["forward"] = y.detach()
    out["grad"] = conv.weight_orig.grad.clone()
    out["state"] = list(net.state_dict().keys())
    out["is_pruned"] = prune.is_pruned(net)
    prune.remove(conv, "weight")
    out["removed"] = sorted(n for n, _ in conv.named_parameters()) + [conv.weight.detach().clone()]
    prune.custom_from_mask(conv, "weight", mask=t.arange(72).view(4, 2, 3, 3) % 2)
    out["custom"] = conv.weight.detach().clone()
    return out


@pytest.mark.slow
def test_prune() -> None:
    from _harness import assert_same

    ref, got = both(_pruned)
    assert list(got) == list(ref)
    for key in ref:
        assert_same(ref[key], got[key], path=key)


def test_prune_errors() -> None:
    def lin(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        return t.nn.Linear(3, 2)

    check_raises(lambda t: t.nn.utils.prune.l1_unstructured(lin(t), "weight", amount=1.5))
    check_raises(lambda t: t.nn.utils.prune.random_structured(lin(t), "bias", amount=0.5, dim=0))
    check_raises(lambda t: t.nn.utils.prune.remove(lin(t), "weight"), match_message=False)  # the message holds a repr


def _profiled(t):  # noqa: ANN001, ANN202
    import importlib
    from collections import Counter

    P = importlib.import_module(t.__name__ + ".profiler")
    out = {}
    with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
        with P.record_function("model_inference"):
            for _ in range(2):
                with P.record_function("inner"):
                    t.ones(3) + 1
    averages = prof.key_averages()
    out["averages"] = {e.key: e.count for e in averages if e.is_user_annotation}
    lines = averages.table(sort_by="cpu_time_total", row_limit=10).splitlines()
    out["table"] = [lines[1].split(), lines[-2].split(":")[0] if not lines[-1] else lines[-1].split(":")[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = P.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    out["schedule"] = [s(i).name for i in range(8)]
    saved = []

    def ready(p):  # noqa: ANN001, ANN202
        names = Counter(e.name for e in p.events() if e.name.startswith(("Prof", "work")))
        saved.append((p.step_num, sorted(names.items())))

    with P.profile(schedule=P.schedule(wait=1, warmup=1, active=2, repeat=2), on_trace_ready=ready) as p:
        for _ in range(10):
            with P.record_function("work"):
                pass
            p.step()
    out["saved"] = saved

    @P.record_function("decorated")
    def f():  # noqa: ANN202
        return 1

    with P.profile() as p2:
        f()
        f()
    out["decorated"] = [(e.key, e.count) for e in p2.key_averages() if e.is_user_annotation]
    return out


def test_profiler() -> None:
    ref, got = both(_profiled)
    assert got == ref


def test_profiler_chrome_trace(tmp_path) -> None:  # noqa: ANN001
    import json

    from torchlike.profiler import profile, record_function, tensorboard_trace_handler

    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path), worker_name="w")) as prof:
        with record_function("step"):
            torchlike.ones(2).sum()
    (trace,) = tmp_path.glob("w.*.pt.trace.json")
    events = json.loads(trace.read_text())["traceEvents"]
    assert [e["name"] for e in events] == ["step"] and events[0]["dur"] >= 0
    assert prof.key_averages().table().splitlines()[-1].startswith("Self CPU time total: ")


def test_legacy_autograd_profiler() -> None:
    def run(t):  # noqa: ANN001, ANN202
        with t.autograd.profiler.profile() as prof:
            with t.autograd.profiler.record_function("outer"):
                for _ in range(2):
                    with t.autograd.profiler.record_function("inner"):
                        t.ones(2) * 2
        return [
            type(prof.function_events).__name__,
            prof.self_cpu_time_total > 0,
            str(prof).splitlines()[1].split(),
            prof.table(sort_by="self_cpu_time_total").splitlines()[1].split(),
            {e.key: e.count for e in prof.key_averages() if e.key in ("outer", "inner")},
            t.profiler.record_function is t.autograd.profiler.record_function,
        ]

    ref, got = both(run)
    assert got == ref
