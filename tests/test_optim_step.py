"""torchlike.optim alone: one jitted update per step, no recompiles on lr changes, the Optimizer API."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import torchlike
from torchlike.optim import _fused


def _params(n: int = 3) -> list:
    rng = np.random.default_rng(0)
    return [torchlike.tensor(rng.standard_normal((n, 2)).astype(np.float32), requires_grad=True) for _ in range(3)]


def _set_grads(params: list, k: int = 0) -> None:
    for p in params:
        p.grad = torchlike.tensor(np.full(tuple(p.shape), 0.1 * (k + 1), dtype=np.float32))


class _Counter:
    def __init__(self, fn: object) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: object) -> object:
        self.calls += 1
        return self.fn(*args)


@pytest.mark.skipif(torchlike.lazy.enabled(), reason="lazy mode: the update is one node of the step's program "
                    "(tests/test_lazy.py checks one program per step)")
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta",
                                  "Rprop", "ASGD"])  # fmt: skip
def test_step_is_one_jitted_call(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from torchlike._core import cold_kernels

    monkeypatch.setattr(cold_kernels, "_on", False)  # cold, the update's jaxpr is traced once and interpreted
    params = _params()
    opt = getattr(torchlike.optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.01}], lr=0.1)
    counter = _Counter(_fused.fused_update)
    monkeypatch.setattr(_fused, "fused_update", counter)
    for k in range(4):
        _set_grads(params, k)
        opt.step()
    assert counter.calls == 4  # one call per step covers every parameter of both groups


def test_lr_change_does_not_recompile(monkeypatch: pytest.MonkeyPatch) -> None:
    from torchlike._core import buckets, cold_kernels

    monkeypatch.setattr(cold_kernels, "_on", False)  # counts compiles: the cold path would compile nothing
    monkeypatch.setattr(buckets, "_on", False)  # and counts the exact executable's entries
    params = _params(5)
    opt = torchlike.optim.Adam(params, lr=0.1, betas=(0.9, 0.999))
    sched = torchlike.optim.lr_scheduler.ExponentialLR(opt, 0.5)
    _set_grads(params)
    opt.step()
    opt.step()
    size = _fused.fused_update._cache_size()
    before = [p.detach().numpy().copy() for p in params]
    for k in range(5):
        _set_grads(params, k)
        opt.step()
        sched.step()
        opt.param_groups[0]["betas"] = (0.8 + 0.01 * k, 0.99)
        opt.param_groups[0]["eps"] = 1e-6 * (k + 1)
    assert _fused.fused_update._cache_size() == size
    assert opt.param_groups[0]["lr"] == 0.1 * 0.5**5
    assert all(not np.array_equal(b, p.detach().numpy()) for b, p in zip(before, params))


def test_lr_change_takes_effect_next_step() -> None:
    p = torchlike.tensor([1.0], requires_grad=True)
    opt = torchlike.optim.SGD([p], lr=0.5)
    p.grad = torchlike.tensor([1.0])
    opt.step()
    opt.param_groups[0]["lr"] = 0.25
    opt.step()
    assert p.item() == 1.0 - 0.5 - 0.25


def test_params_without_grad_are_skipped() -> None:
    a, b, c = _params()
    opt = torchlike.optim.SGD([a, b, c], lr=0.1, momentum=0.9)
    b_before = b.detach().numpy().copy()
    a.grad = torchlike.ones_like(a)
    c.grad = torchlike.ones_like(c)
    opt.step()
    np.testing.assert_array_equal(b.detach().numpy(), b_before)
    assert b not in opt.state and a in opt.state and c in opt.state
    assert list(opt.state_dict()["state"]) == [0, 2]


def test_sgd_without_momentum_keeps_no_state() -> None:
    params = _params()
    opt = torchlike.optim.SGD(params, lr=0.1)
    _set_grads(params)
    opt.step()
    assert opt.state_dict()["state"] == {}


def test_state_layout() -> None:
    params = _params()
    opt = torchlike.optim.Adam(params, lr=0.1, amsgrad=True)
    _set_grads(params)
    opt.step()
    opt.step()
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"]
    assert list(sd["state"][0]) == ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
    step = sd["state"][0]["step"]
    assert isinstance(step, torchlike.Tensor) and step.dtype is torchlike.float32 and step.shape == ()
    assert step.item() == 2.0
    assert sd["param_groups"][0]["params"] == [0, 1, 2]
    assert sd["param_groups"][0]["lr"] == 0.1 and sd["param_groups"][0]["amsgrad"] is True


def test_adagrad_state_exists_at_construction() -> None:
    params = _params()
    opt = torchlike.optim.Adagrad(params, initial_accumulator_value=0.5)
    assert list(opt.state_dict()["state"]) == [0, 1, 2]
    np.testing.assert_array_equal(opt.state[params[0]]["sum"].numpy(), np.full((3, 2), 0.5, np.float32))


def test_load_state_dict_round_trip() -> None:
    params = _params()
    opt = torchlike.optim.RMSprop(params, lr=0.01, momentum=0.9, centered=True)
    for k in range(3):
        _set_grads(params, k)
        opt.step()
    sd = copy.deepcopy(opt.state_dict())  # as torch's, the state dict holds the live state tensors
    clones = [torchlike.tensor(p.detach().numpy(), requires_grad=True) for p in params]
    opt2 = torchlike.optim.RMSprop(clones, lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.01
    for k in range(3, 6):
        _set_grads(params, k)
        _set_grads(clones, k)
        opt.step()
        opt2.step()
    for a, b in zip(params, clones):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_zero_grad() -> None:
    params = _params()
    opt = torchlike.optim.SGD(params, lr=0.1)
    _set_grads(params)
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_step_updates_views_and_bumps_versions() -> None:
    base = torchlike.zeros(4, 2)
    p = base[1]  # a view: the update writes through to base
    p.requires_grad_(True)
    opt = torchlike.optim.SGD([p], lr=1.0)
    version = p._version
    p.grad = torchlike.ones(2)
    opt.step()
    assert p._version > version
    np.testing.assert_array_equal(base.numpy()[1], [-1.0, -1.0])
    np.testing.assert_array_equal(base.numpy()[0], [0.0, 0.0])


def test_closure_and_hooks() -> None:
    params = _params()
    opt = torchlike.optim.Adam(params, lr=0.1)
    seen = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: seen.append("pre"))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: seen.append("post"))
    h3 = torchlike.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: seen.append("global pre"))
    opt.register_state_dict_post_hook(lambda o, sd: seen.append("sd"))

    def closure() -> object:
        seen.append("closure")
        assert torchlike.is_grad_enabled()
        _set_grads(params)
        return torchlike.tensor(3.0)

    with torchlike.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 3.0
    opt.state_dict()
    assert seen == ["global pre", "pre", "closure", "post", "sd"]
    for h in (h1, h2, h3):
        h.remove()
    opt.step()
    assert seen[-1] == "sd"


def test_differentiable_is_refused() -> None:
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        torchlike.optim.Adam(_params(), differentiable=True)


def test_sparse_adam_refuses_dense_gradients() -> None:
    params = _params()
    opt = torchlike.optim.SparseAdam(params)
    _set_grads(params)
    with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
        opt.step()


@pytest.mark.slow
def test_lbfgs_minimises_a_quadratic() -> None:
    w = torchlike.zeros(3, dtype=torchlike.float64, requires_grad=True)
    target = torchlike.tensor([1.0, -2.0, 0.5], dtype=torchlike.float64)
    opt = torchlike.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure() -> object:
        opt.zero_grad()
        loss = ((w - target) ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), target.numpy(), atol=1e-8)
    assert opt.state[w]["n_iter"] >= 1


def test_scheduler_warns_when_stepped_first() -> None:
    opt = torchlike.optim.SGD(_params(), lr=0.1)
    sched = torchlike.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched.step()
    assert any("before `optimizer.step()`" in str(w.message) for w in caught)
    assert sched.get_last_lr() == [0.05]


def test_one_cycle_sets_momentum() -> None:
    opt = torchlike.optim.SGD(_params(), lr=0.1, momentum=0.9)
    sched = torchlike.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    assert opt.param_groups[0]["momentum"] == 0.95
    for _ in range(10):
        opt.step()
        if sched.last_epoch < 9:
            sched.step()
    assert sched.get_last_lr()[0] < 1e-3


def test_compiled_step_follows_scheduler() -> None:
    """Inside torchlike.compile the hyper-parameters are program inputs: a scheduler's lr is used."""
    losses = []
    for compiled in (False, True):
        torchlike.manual_seed(0)
        model = torchlike.nn.Linear(4, 2)
        opt = torchlike.optim.Adam(model.parameters(), lr=0.1)
        sched = torchlike.optim.lr_scheduler.StepLR(opt, 2, 0.5)
        x, y = torchlike.randn(8, 4), torchlike.randn(8, 2)

        def train_step(x: object, y: object) -> object:
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss

        step = torchlike.compile(train_step) if compiled else train_step
        run = []
        for _ in range(6):
            run.append(step(x, y).item())
            sched.step()
        losses.append(run)
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)


def test_fma_follows_torchs_cpu_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's AVX2/AVX-512 kernels fuse ``a * b + c``; its baseline x86-64 kernels round the product."""
    import jax
    import jax.numpy as jnp

    from torchlike.optim import _math as M

    x86 = M.platform.machine().lower() in ("x86_64", "amd64")
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    assert M._torch_fuses() is not x86
    monkeypatch.delenv("ATEN_CPU_CAPABILITY")
    monkeypatch.setattr(M, "_cpu_flags", lambda: {"sse4_2", "avx"})
    assert M._torch_fuses() is not x86
    monkeypatch.setattr(M, "_cpu_flags", lambda: {"avx", "avx2", "fma"})
    assert M._torch_fuses()

    def fma(fuses: bool) -> float:
        monkeypatch.setattr(M, "_FUSES", fuses)

        def kernel(a, c, zero):  # noqa: ANN001, ANN202
            with M.fence_zero(zero):
                return M._fma(a, a, c, jnp.float32)

        # (1 + 2**-13)**2 - (1 + 2**-12) is 2**-26, which the product rounded to float32 loses
        return float(jax.jit(kernel)(jnp.float32(1 + 2**-13), jnp.float32(-(1 + 2**-12)), np.int64(0)))

    assert fma(True) == 2**-26 and fma(False) == 0.0
