"""torch.optim.swa_utils under torch and torchlike: averaged models, SWALR, update_bn."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike


def _run(lib: object, kind: str, strategy: str) -> tuple:
    lib.manual_seed(0)
    su = lib.optim.swa_utils
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.BatchNorm1d(8), lib.nn.ReLU(), lib.nn.Linear(8, 1))
    avg = {
        "swa": lambda: su.AveragedModel(model),
        "ema-multi": lambda: su.AveragedModel(model, multi_avg_fn=su.get_ema_multi_avg_fn(0.9)),
        "ema-buffers": lambda: su.AveragedModel(model, avg_fn=su.get_ema_avg_fn(0.9), use_buffers=True),
        "swa-fn": lambda: su.AveragedModel(model, avg_fn=su.get_swa_avg_fn()),
    }[kind]()
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = su.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
    x = lib.tensor(np.linspace(-1, 1, 64, dtype=np.float32).reshape(16, 4))
    y = lib.tensor(np.sin(np.arange(16, dtype=np.float32)).reshape(16, 1))
    lrs = []
    for _ in range(8):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        avg.update_parameters(model)
        sched.step()
        lrs.append(sched.get_last_lr())
    su.update_bn([(x, y)], avg)
    state = [t.detach().float().numpy().copy() for t in list(avg.parameters()) + list(avg.buffers())]
    return state, lrs, avg(x).detach().numpy(), int(avg.n_averaged)


@pytest.mark.parametrize(
    "kind,strategy", [("swa", "cos"), ("ema-multi", "linear"), ("ema-buffers", "cos"), ("swa-fn", "cos")]
)
def test_averaged_model(kind: str, strategy: str) -> None:
    ref, got = _run(torch, kind, strategy), _run(torchlike, kind, strategy)
    assert got[1] == ref[1]
    assert got[3] == ref[3]
    for r, g in zip(ref[0], got[0]):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-5, atol=1e-6)


def test_swalr_state_dict() -> None:
    sds = []
    for lib in (torch, torchlike):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=4)
        for _ in range(3):
            opt.step()
            sched.step()
        sds.append(sched.state_dict())
    assert list(sds[1]) == list(sds[0])
    assert sds[1] == sds[0]
