"""torch.optim.lr_scheduler under torch and torchlike: 100 steps of every schedule, warnings, state dicts."""

from __future__ import annotations

import warnings

import pytest
import torch

import torchlike


def _opt(lib: object, name: str = "SGD", **kw: object) -> object:
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    kw = kw or {"lr": 0.1, "momentum": 0.9}
    return getattr(lib.optim, name)([{"params": [a]}, {"params": [b], "lr": 0.05}], **kw)


SCHEDULES = {
    "StepLR": lambda m, o: m.StepLR(o, 7, gamma=0.5),
    "MultiStepLR": lambda m, o: m.MultiStepLR(o, [10, 30, 30, 60], gamma=0.3),
    "ExponentialLR": lambda m, o: m.ExponentialLR(o, 0.97),
    "CosineAnnealingLR": lambda m, o: m.CosineAnnealingLR(o, 17, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda m, o: m.CosineAnnealingWarmRestarts(o, 10, T_mult=2, eta_min=0.01),
    "LinearLR": lambda m, o: m.LinearLR(o, 0.2, 0.9, total_iters=30),
    "ConstantLR": lambda m, o: m.ConstantLR(o, 0.3, total_iters=20),
    "LambdaLR": lambda m, o: m.LambdaLR(o, lambda e: 0.95**e),
    "LambdaLR-list": lambda m, o: m.LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (e + 1)]),
    "MultiplicativeLR": lambda m, o: m.MultiplicativeLR(o, lambda e: 0.99),
    "PolynomialLR": lambda m, o: m.PolynomialLR(o, total_iters=60, power=2.0),
    "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=100),
    "OneCycleLR-3phase": lambda m, o: m.OneCycleLR(
        o, max_lr=[1.0, 0.5], epochs=10, steps_per_epoch=10, three_phase=True, anneal_strategy="linear"
    ),  # fmt: skip
    "CyclicLR": lambda m, o: m.CyclicLR(o, 0.01, 0.1, step_size_up=7, mode="triangular2"),
    "CyclicLR-exp": lambda m, o: m.CyclicLR(
        o, 0.01, [0.1, 0.2], step_size_up=5, step_size_down=9, mode="exp_range", gamma=0.99
    ),  # fmt: skip
    "CyclicLR-fn": lambda m, o: m.CyclicLR(
        o, 0.01, 0.1, step_size_up=4, scale_fn=lambda x: 0.9**x, scale_mode="iterations", cycle_momentum=False
    ),  # fmt: skip
    "SequentialLR": lambda m, o: m.SequentialLR(
        o,
        [m.LinearLR(o, 0.1, total_iters=10), m.CosineAnnealingLR(o, 50), m.ExponentialLR(o, 0.9)],
        milestones=[10, 60],
    ),
    "ChainedScheduler": lambda m, o: m.ChainedScheduler(
        [m.ConstantLR(o, 0.5, total_iters=10), m.ExponentialLR(o, 0.95)]
    ),
}


def _run(lib: object, make: object, steps: int = 100, opt: str = "SGD", metric: object = None, **kw: object) -> list:
    o = _opt(lib, opt, **kw)
    s = make(lib.optim.lr_scheduler, o)
    out = []
    for i in range(steps):
        o.step()
        if metric is None:
            s.step()
        else:
            s.step(metric(i))
        g = o.param_groups[0]
        out.append((list(s.get_last_lr()), [grp["lr"] for grp in o.param_groups], g.get("momentum", g.get("betas"))))
    return out


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_lr_sequence(name: str) -> None:
    assert _run(torchlike, SCHEDULES[name]) == _run(torch, SCHEDULES[name])


def test_cyclic_momentum_of_adam_betas() -> None:
    make = SCHEDULES["CyclicLR"]
    assert _run(torchlike, make, opt="Adam", lr=0.1) == _run(torch, make, opt="Adam", lr=0.1)


@pytest.mark.parametrize("kw", [{}, {"mode": "max", "threshold_mode": "abs", "min_lr": [0.001, 0.002], "patience": 2},
                                {"cooldown": 3, "factor": 0.5, "threshold": 0.1}])  # fmt: skip
def test_reduce_lr_on_plateau(kw: dict) -> None:
    make = lambda m, o: m.ReduceLROnPlateau(o, **kw)  # noqa: E731
    metric = lambda i: 1.0 / (1 + i % 13)  # noqa: E731
    assert _run(torchlike, make, metric=metric) == _run(torch, make, metric=metric)


def _warnings(lib: object, fn: object) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    return [(w.category.__name__, str(w.message)) for w in caught]


def _scheduler_first(lib: object) -> None:
    o = _opt(lib)
    s = lib.optim.lr_scheduler.StepLR(o, 2)
    s.step()
    o.step()


def _epoch_arg(lib: object) -> None:
    o = _opt(lib)
    s = lib.optim.lr_scheduler.StepLR(o, 2)
    o.step()
    s.step(3)


def _get_lr_outside_step(lib: object) -> None:
    s = lib.optim.lr_scheduler.ExponentialLR(_opt(lib), 0.5)
    s.get_lr()


def _overridden_step(lib: object) -> None:
    o = _opt(lib)
    s = lib.optim.lr_scheduler.StepLR(o, 2)
    o.step = lambda: None
    s.step()


@pytest.mark.parametrize("fn", [_scheduler_first, _epoch_arg, _get_lr_outside_step, _overridden_step])
def test_warnings(fn: object) -> None:
    ref = _warnings(torch, fn)
    assert ref
    assert _warnings(torchlike, fn) == ref


def test_no_warning_in_the_right_order() -> None:
    def right(lib: object) -> None:
        o = _opt(lib)
        s = lib.optim.lr_scheduler.StepLR(o, 2)
        for _ in range(3):
            o.step()
            s.step()

    assert _warnings(torchlike, right) == _warnings(torch, right) == []


def _comparable(sd: dict) -> dict:
    return {k: v for k, v in sd.items() if not callable(v) and k not in ("_scale_fn_ref", "_schedulers")}


@pytest.mark.parametrize(
    "name", ["StepLR", "OneCycleLR", "CyclicLR", "LambdaLR", "SequentialLR", "CosineAnnealingWarmRestarts"]
)
def test_state_dict(name: str) -> None:
    sds = []
    for lib in (torch, torchlike):
        o = _opt(lib)
        s = SCHEDULES[name](lib.optim.lr_scheduler, o)
        for _ in range(7):
            o.step()
            s.step()
        sds.append(s.state_dict())
    ref, got = sds
    assert list(got) == list(ref)
    assert _comparable(got) == _comparable(ref)
    if "_schedulers" in ref:
        assert [_comparable(x) for x in got["_schedulers"]] == [_comparable(x) for x in ref["_schedulers"]]


def test_load_state_dict_resumes() -> None:
    """A scheduler state saved after 30 steps and loaded into a fresh one continues like torch's."""
    out = []
    for lib in (torch, torchlike):
        o = _opt(lib)
        s = lib.optim.lr_scheduler.CosineAnnealingLR(o, 40)
        for _ in range(30):
            o.step()
            s.step()
        sd, osd = s.state_dict(), o.state_dict()
        o2 = _opt(lib)
        s2 = lib.optim.lr_scheduler.CosineAnnealingLR(o2, 40)
        s2.load_state_dict(sd)
        o2.load_state_dict(osd)
        for _ in range(20):
            o2.step()
            s2.step()
        out.append(s2.get_last_lr())
    assert out[1] == out[0]


ERRORS = [
    ("not an optimizer", lambda lib, o: lib.optim.lr_scheduler.StepLR(object(), 2)),
    ("ConstantLR factor", lambda lib, o: lib.optim.lr_scheduler.ConstantLR(o, factor=2.0)),
    ("LinearLR start", lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, start_factor=0)),
    ("LinearLR end", lambda lib, o: lib.optim.lr_scheduler.LinearLR(o, end_factor=2)),
    ("LambdaLR count", lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, [lambda e: 1.0])),
    ("MultiplicativeLR callable", lambda lib, o: lib.optim.lr_scheduler.MultiplicativeLR(o, [1, 2])),
    ("resume without initial_lr", lambda lib, o: lib.optim.lr_scheduler.StepLR(o, 2, last_epoch=3)),
    ("warm restarts T_0", lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 0)),
    ("warm restarts T_mult", lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 2, T_mult=0)),
    ("OneCycle total", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0)),
    ("OneCycle pct", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5)),
    ("OneCycle anneal", lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10, anneal_strategy="x")),
    ("OneCycle overrun", lambda lib, o: _step_n(lib.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=2), 3)),
    ("CyclicLR mode", lambda lib, o: lib.optim.lr_scheduler.CyclicLR(o, 0.1, 1.0, mode="x")),
    (
        "CyclicLR no momentum",
        lambda lib, o: lib.optim.lr_scheduler.CyclicLR(lib.optim.Rprop([lib.zeros(1, requires_grad=True)]), 0.1, 1.0),
    ),
    ("plateau factor", lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, factor=1.0)),
    ("plateau mode", lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, mode="x")),
    ("plateau min_lr", lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, min_lr=[0.1])),
    (
        "Sequential milestones",
        lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
            o, [lib.optim.lr_scheduler.StepLR(o, 2), lib.optim.lr_scheduler.StepLR(o, 3)], milestones=[]
        ),
    ),
    ("Sequential empty", lambda lib, o: lib.optim.lr_scheduler.SequentialLR(o, [], milestones=[])),
    (
        "Sequential plateau",
        lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
            o, [lib.optim.lr_scheduler.ReduceLROnPlateau(o)], milestones=[]
        ),
    ),
    ("Chained empty", lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler([])),
]


def _step_n(scheduler: object, n: int) -> None:
    for _ in range(n):
        scheduler.step()


def _raises(fn: object) -> tuple | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("name,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(name: str, fn: object) -> None:
    results = [_raises(lambda: fn(lib, _opt(lib))) for lib in (torch, torchlike)]
    assert results[0] is not None
    assert results[1] == results[0]
