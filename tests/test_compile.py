"""torchlike.compile: whole training steps as one program, matching eager runs."""

import warnings

import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike._compile import Unsupported, stats


def _mlp():
    return nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))


class _CNN(nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(dropout)
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


def _transformer():
    return nn.Sequential(nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), 1),
                         nn.Flatten(), nn.Linear(16 * 5, 3))  # fmt: skip


def _train(make, x, y, compiled, steps=50, opt="sgd", sched=False, **compile_kw):
    torch.manual_seed(0)
    model = make()
    optim = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9) if opt == "sgd" else torch.optim.AdamW(
        model.parameters(), lr=1e-2)  # fmt: skip
    scheduler = torch.optim.lr_scheduler.StepLR(optim, 10, 0.5) if sched else None

    def step():
        optim.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optim.step()
        return loss

    f = torch.compile(step, **compile_kw) if compiled else step
    losses = []
    for _ in range(steps):
        losses.append(f().item())
        if scheduler is not None:
            scheduler.step()
    return np.array(losses), model, f


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_compiled_training_matches_eager(name):
    torch.manual_seed(1)
    if name == "mlp":
        make, x, y = _mlp, torch.randn(16, 8), torch.randint(0, 4, (16,))
    elif name == "cnn":
        make, x, y = _CNN, torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    else:
        make, x, y = _transformer, torch.randn(4, 5, 16), torch.randint(0, 3, (4,))
    eager, m1, _ = _train(make, x, y, False)
    comp, m2, f = _train(make, x, y, True)
    np.testing.assert_allclose(comp, eager, rtol=2e-4, atol=2e-5)
    for (k, a), (_, b) in zip(m1.state_dict().items(), m2.state_dict().items()):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-3, atol=1e-4, err_msg=k)
    assert len(f.cache) == 1 and f.recompiles == 0


@pytest.mark.slow
def test_scheduler_lr_changes_do_not_recompile_and_take_effect():
    torch.manual_seed(2)
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    eager, _, _ = _train(_mlp, x, y, False, steps=30, opt="adamw", sched=True)
    comp, _, f = _train(_mlp, x, y, True, steps=30, opt="adamw", sched=True)
    np.testing.assert_allclose(comp, eager, rtol=2e-4, atol=2e-5)
    assert len(f.cache) == 1 and f.recompiles == 0


@pytest.mark.slow
def test_compiled_float32_step_has_no_float64_arrays():
    # the optimizer's float64 hyper-parameter vector must stay scalar maths: a float64 moment or update
    # doubles the step's memory traffic (and is slow on GPUs)
    import jax

    torch.manual_seed(4)
    x, y = torch.randn(16, 8), torch.randint(0, 4, (16,))
    for opt in ("adamw", "sgd"):
        _, _, f = _train(_mlp, x, y, True, steps=3, opt=opt)
        entry = next(iter(f.cache.values()))
        state = [b.get() for b in entry.state]
        args = (state[: entry.n_mut], state[entry.n_mut :], [], f._scalars_now(entry), f._key_state())
        jaxpr = jax.make_jaxpr(entry.pure)(*args)
        big64 = [v for v in _all_vars(jaxpr.jaxpr) if v.aval.dtype == np.float64 and v.aval.size > 16]
        assert not big64, (opt, [v.aval for v in big64][:3])


def _all_vars(jaxpr):
    for eqn in jaxpr.eqns:
        yield from eqn.outvars
        for p in eqn.params.values():
            inner = getattr(p, "jaxpr", p)
            if hasattr(inner, "eqns"):
                yield from _all_vars(inner)


@pytest.mark.slow
def test_dropout_in_compiled_steps_is_reproducible():
    torch.manual_seed(3)
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    a, _, _ = _train(lambda: _CNN(0.5), x, y, True, steps=20)
    b, _, _ = _train(lambda: _CNN(0.5), x, y, True, steps=20)
    e, _, _ = _train(lambda: _CNN(0.5), x, y, False, steps=20)
    np.testing.assert_array_equal(a, b)
    assert abs(a.mean() - e.mean()) < 0.5 * e.std() + 0.1  # same statistics, different random stream


@pytest.mark.slow
def test_new_shapes_recompile_and_limit_warns():
    f = torch.compile(lambda t: (t * 2).sum())
    for n in range(1, 4):
        f(torch.ones(n))
        f(torch.ones(n))
    assert len(f.cache) == 3
    from torchlike._compile import config

    old = config.recompile_limit
    config.recompile_limit = 2
    try:
        g = torch.compile(lambda t: (t * 3).sum())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for n in range(1, 5):
                g(torch.ones(n))
                g(torch.ones(n))
        assert any("recompile_limit" in str(x.message) for x in w)
        assert g(torch.ones(7)).item() == 21.0  # still correct, eagerly
    finally:
        config.recompile_limit = old


def test_graph_break_runs_eagerly_with_warning_and_fullgraph_raises():
    def f(t):
        if t.sum() > 0:  # a Python branch on a tensor value
            return t * 2
        return t * 3

    g = torch.compile(f)
    g(torch.ones(2))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = g(torch.ones(2))
    assert out.tolist() == [2.0, 2.0]
    assert any("graph break" in str(x.message) and "test_compile.py" in str(x.message) for x in w)
    assert g(-torch.ones(2)).tolist() == [-3.0, -3.0]
    h = torch.compile(f, fullgraph=True)
    h(torch.ones(2))
    with pytest.raises(Unsupported, match="test_compile.py"):
        h(torch.ones(2))


def test_state_not_passed_as_argument_is_lifted_not_baked():
    w = torch.ones(3)
    f = torch.compile(lambda x: x * w)
    f(torch.ones(3))
    f(torch.ones(3))
    w.add_(1)  # mutated between calls: the compiled program must see it
    assert f(torch.ones(3)).tolist() == [2.0, 2.0, 2.0]
    w.data = torch.full((3,), 5.0)  # rebinding the buffer is caught by the guards
    assert f(torch.ones(3)).tolist() == [5.0, 5.0, 5.0]


@pytest.mark.slow
def test_compiled_module_forward_with_eager_backward():
    torch.manual_seed(4)
    model = _mlp()
    cm = torch.compile(model)
    x = torch.randn(4, 8)
    for _ in range(3):
        model.zero_grad()
        cm(x).sum().backward()
    g_compiled = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for a, b in zip(g_compiled, model.parameters()):
        np.testing.assert_allclose(a.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert list(cm.state_dict())[0].startswith("_orig_mod.")


@pytest.mark.slow
def test_check_mode_compares_with_eager():
    torch.manual_seed(5)
    model = _mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 8), torch.randint(0, 4, (8,))

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    f = torch.compile(step, mode="check")
    for _ in range(4):
        f()
    assert stats["compiles"] >= 1


def test_scheduler_stepped_inside_the_compiled_function_breaks_the_graph():
    # the schedule is Python state: a program traced once would replay the first lr forever
    def run(compiled, **kw):
        torch.manual_seed(0)
        model = _mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, 1, 0.5)
        x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))

        def step():
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            sched.step()

        f = torch.compile(step, **kw) if compiled else step
        lrs = []
        for _ in range(4):
            f()
            lrs.append(opt.param_groups[0]["lr"])
        return lrs

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert run(True) == run(False) == [0.05, 0.025, 0.0125, 0.00625]
    assert any("graph break" in str(x.message) and "LR scheduler" in str(x.message) for x in w), [
        str(x.message) for x in w]  # (seen failing once per full-suite run on a 2-core machine; not alone)
    with pytest.raises(Unsupported, match="LR scheduler"):
        run(True, fullgraph=True)


def test_a_backward_structure_that_churned_eagerly_still_compiles(monkeypatch):
    # eagerly, a backward structure met with many shapes runs per node; traced, its program compiles once
    # per shape anyway, so that must not turn into a graph break (it did when earlier code had churned it)
    from torchlike.autograd import engine

    monkeypatch.setattr(engine, "CHURN_SHAPES", 0)
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    losses, _, _ = _train(_mlp, x, y, compiled=True, steps=3, fullgraph=True)
    assert losses[2] < losses[0]
