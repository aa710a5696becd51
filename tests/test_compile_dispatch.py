"""A steady-state compiled training step is one device program and nothing else: no transfers
(implicit or explicit), no extra dispatches. The lifted hyper-parameters and the RNG key stay on
the device between calls; a scheduler's new lr is one explicit upload, made only when it changes.

Programs are counted where JAX launches them (``ExecuteReplicated.__call__``), with JAX's C++
fast path switched off for the test so every launch goes through Python.
"""

import jax
import pytest
from jax._src import pjit
from jax._src.interpreters import pxla

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike._core.lazy import LazyArray


@pytest.fixture
def launches(monkeypatch):
    if not hasattr(pjit, "_get_fastpath_data") or not hasattr(pxla, "ExecuteReplicated"):
        pytest.skip("this JAX launches programs elsewhere: the counter needs updating")
    names = []
    call = pxla.ExecuteReplicated.__call__

    def counted(self, *args):
        names.append(self.name)
        return call(self, *args)

    monkeypatch.setattr(pjit, "_get_fastpath_data", lambda *a, **k: None)
    monkeypatch.setattr(pxla.ExecuteReplicated, "__call__", counted)
    jax.clear_caches()  # programs cached with a fast path would bypass the count
    yield names
    monkeypatch.undo()
    jax.clear_caches()  # and programs cached without one would stay slow


def _training_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    x, y = torch.randn(32, 8), torch.randint(0, 4, (32,))

    @torch.compile
    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step, model, opt, sched


def test_steady_state_step_is_one_program_without_transfers(launches):
    step, model, opt, sched = _training_step()
    step()  # discovery (eager)
    step()  # trace, compile, first run
    bn = model[1]
    before = bn.running_mean.clone()
    torch.lazy.mark_step()  # in lazy mode the clone is pending work of its own: launch it before counting
    del launches[:]
    losses = []
    with jax.transfer_guard("disallow_explicit"):  # no transfer of any kind
        for _ in range(3):
            losses.append(step())
    assert len(launches) == 3 and all("pure" in name for name in launches), launches
    assert len({float(v) for v in losses}) == 3  # dropout drew new masks: the key advanced on the device
    assert not torch.equal(before, bn.running_mean)  # BatchNorm's running stats were written back

    sched.step()  # a new lr: uploaded once, explicitly, then on the device again
    lr = opt.param_groups[0]["lr"]
    del launches[:]
    with jax.transfer_guard("disallow"):
        step()
    with jax.transfer_guard("disallow_explicit"):
        step()
    assert len(launches) == 2 and all("pure" in name for name in launches), launches
    assert opt.param_groups[0]["lr"] == lr and len(step.cache) == 1 and step.recompiles == 0


def test_lazy_mode_steady_step_records_nothing_and_flushes_only_pending_work(launches):
    """In lazy mode (the GPU default) a compiled call does what it does with lazy mode off: no lazy
    node is recorded, no flush runs unless work is pending, and the step is its one program."""
    with torch.lazy.mode(True):
        step, model, opt, sched = _training_step()
        torch.lazy.mark_step()
        torch.lazy.reset_stats()
        step()  # discovery runs eagerly, as with lazy mode off
        step()
        assert torch.lazy.stats()["nodes"] == 0
        del launches[:]
        with jax.transfer_guard("disallow"):
            losses = [step() for _ in range(3)]
        s = torch.lazy.stats()
        assert s["nodes"] == 0 and s.get("flushes", 0) == 0, s
        assert len(launches) == 3 and all("pure" in name for name in launches), launches
        assert all(type(v._buf.array) is not LazyArray for v in losses)  # concrete results
        x = torch.ones(1) * 2  # pending work before a call: one flush, then the program
        step()
        s = torch.lazy.stats()
        assert s["flush_reasons"] == {"compiled step": 1}, s
        assert float(x) == 2.0


def test_last_steps_grads_are_not_arguments_of_the_program():
    """zero_grad(set_to_none=True) drops last step's .grads: they are not state (not passed each call,
    not kept alive by the program), and the fresh .grads are still the step's results."""

    def run(compiled):
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(8, 4)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss

        f = torch.compile(step) if compiled else step
        for _ in range(4):
            f()
        return f, model

    step, model = run(True)
    entry = next(e for e in step.cache.values() if not e.eager)
    assert sorted(tuple(b.get().shape) for b in entry.state) == [(3,), (3, 4), (8, 4)]  # bias, weight, x
    _, want = run(False)
    assert torch.allclose(model.weight, want.weight) and torch.allclose(model.weight.grad, want.weight.grad)
