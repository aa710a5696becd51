"""The two compile tiers of lazy programs (fast first, autotuned later), exercised on the CPU by
making torchlike believe its arrays live on a GPU. The CPU compiler accepts the GPU-only options
(they are fields of XLA's debug options), so the tiers' mechanics run for real."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn
from torchlike._core import _xla_tiers as tiers
from torchlike._core import lazy as L


@pytest.fixture
def fake_gpu(monkeypatch):
    """Lazy mode on, arrays reported as GPU-resident (so a new structure compiles in two tiers)."""
    monkeypatch.setattr(tiers, "platform_of", lambda leaves: "gpu")
    monkeypatch.setattr(tiers, "TIERS", True)
    monkeypatch.setattr(tiers, "HOT", True)
    monkeypatch.setattr(L, "_COMPILE_AFTER", 1)  # a GPU compiles at the first sighting
    old = L.enabled()
    L.set_enabled(True)
    L.clear_caches()
    L.reset_stats()
    try:
        yield
    finally:
        L.set_enabled(old)
        _join()


def _join():
    for t in list(L._compiling):
        t.join()


def _train(steps, after_step=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
    losses = []
    for i in range(steps):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if after_step is not None:
            after_step(i)
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_cold_program_runs_first_then_the_autotuned_one_takes_over(fake_gpu):
    # each step waits for the background compile: the next run of a structure seen once is the hot one
    losses, params = _train(5, lambda i: _join())
    s = torch.lazy.stats()
    assert s["cold_compiles"] >= 1 and s["hot_compiles"] >= 1, s
    assert s["hot_takeovers"] >= 1 and s["hot_takeover_at"] == 2, s  # a structure's 2nd run
    with torch.lazy.mode(False):
        want_losses, want_params = _train(5)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(params, want_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_without_the_hot_tier_the_fast_program_stays(fake_gpu, monkeypatch):
    monkeypatch.setattr(tiers, "HOT", False)
    _train(3)
    s = torch.lazy.stats()
    assert s["cold_compiles"] >= 1 and s.get("hot_compiles", 0) == 0 and s.get("hot_takeovers", 0) == 0


def test_tiers_off_compiles_once_with_defaults(fake_gpu, monkeypatch):
    monkeypatch.setattr(tiers, "TIERS", False)
    _train(3)
    s = torch.lazy.stats()
    assert s.get("cold_compiles", 0) == 0 and s["compiles"] >= 1


def test_options_the_compiler_rejects_fall_back_to_one_tier(fake_gpu, monkeypatch):
    monkeypatch.setattr(tiers, "COLD_OPTIONS", {"xla_no_such_option_for_torchlike": 1})
    losses, _ = _train(3)
    s = torch.lazy.stats()
    assert s["cold_compile_failures"] >= 1 and s["compiles"] >= 1
    with torch.lazy.mode(False):
        want, _ = _train(3)
    np.testing.assert_allclose(losses, want, rtol=1e-5, atol=1e-6)


def test_options_only_for_gpu_platforms(monkeypatch):
    monkeypatch.setattr(tiers, "TIERS", True)
    assert tiers.cold_options("cpu") is None
    assert tiers.cold_options("tpu") is None
    assert tiers.cold_options("gpu") == tiers.COLD_OPTIONS
    assert tiers.cold_options("cuda") == tiers.COLD_OPTIONS
    monkeypatch.setattr(tiers, "TIERS", False)
    assert tiers.cold_options("gpu") is None
    assert tiers.platform_of([1.0, np.ones(2), jnp.ones(2)]) == "cpu"


def test_each_tier_has_its_own_persistent_cache_entry():
    """A program compiled with the cold options and the same lowering compiled with defaults are two
    entries (per-compile options are part of JAX's cache key), so neither is served for the other."""
    folder = jax.config.jax_compilation_cache_dir
    if not folder:
        pytest.skip("the persistent compilation cache is off in this process")
    salt = float(np.random.default_rng().integers(1 << 30))  # a program no earlier run has cached

    def tier_probe(x):
        return (x @ x.T + salt).sum()

    lowered = jax.jit(tier_probe).lower(jax.ShapeDtypeStruct((8, 8), jnp.float32))

    def entries():  # this program's entries only: other test workers share the folder
        return {n for n in os.listdir(folder) if n.startswith("jit_tier_probe-")}

    before = entries()
    cold = lowered.compile(dict(tiers.COLD_OPTIONS))
    after_cold = entries()
    hot = lowered.compile()
    after_hot = entries()
    assert len(after_cold - before) == 1 and len(after_hot - after_cold) == 1
    x = jnp.ones((8, 8), jnp.float32)
    assert float(cold(x)) == float(hot(x))


def test_compiled_step_runs_fast_compiled_then_autotuned(monkeypatch):
    """torchlike.compile's program takes the same two tiers on a GPU."""
    from torchlike._compile import stats as compile_stats

    monkeypatch.setattr(tiers, "HOT", True)
    monkeypatch.setattr(tiers, "cold_options", lambda platform: dict(tiers.COLD_OPTIONS))
    compile_stats.clear()

    def run(compiled):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))

        def step():
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        step = torch.compile(step) if compiled else step
        steps.append(step)
        losses = []
        for _ in range(5):
            losses.append(step().item())
            tiers.join()
        return losses

    steps = []
    got = run(True)
    assert compile_stats["cold_compiles"] == 1 and compile_stats["hot_compiles"] == 1, compile_stats
    assert compile_stats["hot_takeover_at"] == 2, compile_stats  # the program's 2nd run (the step's 3rd call)
    (entry,) = [e for e in steps[0].cache.values() if not e.eager]
    if jax.config.jax_compilation_cache_dir:
        # steady calls go through the jit object (JAX's C++ dispatch; its program read from the cache)
        assert entry.compiled is entry.jitted
    with jax.transfer_guard("disallow"):
        steps[0]()
    with torch.lazy.mode(False):
        want = run(False)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


_ONE_OP_SCRIPT = r"""
import json, sys
import jax
import torchlike as torch
import torchlike.nn as nn
from torchlike._core import _xla_tiers
from torchlike._ops import registry
from torchlike.autograd import engine
from torchlike.optim import _fused

if sys.argv[1] == "gpu":
    _xla_tiers._default_platform = "gpu"  # what jax.default_backend() says on a GPU machine
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))

def step():
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss

losses = [step().item() for _ in range(3)]
compiled = torch.compile(step)
losses += [compiled().item() for _ in range(3)]
kernels = [k for op in registry.OPS.values() for k in op.kernels.values()]
kernels += list(engine._vjp_kernels.values()) + [k for k in _fused._fused_update_one_op if k is not None]
kernels = [getattr(k, "jitted", k) for k in kernels]  # the CPU's cold-kernel wrapper: the jit it compiles with
kinds = sorted({type(k).__name__ for k in kernels})
# a one-op kernel called at top level compiled its cold program; inside traces (the compiled step) the plain jit
cold = sum(k.cold._cache_size() for k in kernels if hasattr(k, "cold"))
print(json.dumps({"losses": losses, "kinds": kinds, "cold_programs": cold}))
"""


@pytest.mark.slow  # two processes
@pytest.mark.parametrize("lazy", ["0", "1"])
def test_one_op_kernels_compile_cold_on_a_gpu(tmp_path, lazy):
    """On a GPU the op table's kernels, the VJPs and the optimizer's fused update compile without
    autotuning when called at top level (eager mode, lazy mode's first sighting, compile's discovery) and
    as the plain jit inside a trace; the CPU keeps plain jit objects. Same numbers either way."""
    import json
    import subprocess
    import sys

    script = tmp_path / "one_op.py"
    script.write_text(_ONE_OP_SCRIPT)
    env = dict(os.environ, TORCHLIKE_LAZY=lazy, TORCHLIKE_LAZY_TIERS="1", TORCHLIKE_GPU_KERNEL_TIERS="1",
               PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(torch.__file__)),
                                           os.environ.get("PYTHONPATH", "")]))

    def run(platform):
        out = subprocess.run([sys.executable, str(script), platform], env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    cpu, gpu = run("cpu"), run("gpu")
    assert cpu["kinds"] == ["PjitFunction"] and cpu["cold_programs"] == 0, cpu
    assert gpu["kinds"] == ["_OneOp"] and gpu["cold_programs"] > 0, gpu
    assert gpu["losses"] == cpu["losses"]


def test_one_op_jit_is_plain_jit_off_a_gpu(monkeypatch):
    monkeypatch.setattr(tiers, "_default_platform", "cpu")
    assert type(tiers.one_op_jit(jnp.sin)) is type(jax.jit(jnp.sin))
    monkeypatch.setattr(tiers, "_default_platform", "gpu")
    monkeypatch.setattr(tiers, "COLD_KERNELS", False)
    assert type(tiers.one_op_jit(jnp.sin)) is type(jax.jit(jnp.sin))
    monkeypatch.setattr(tiers, "COLD_KERNELS", True)
    k = tiers.one_op_jit(lambda a, b: a @ b)
    a = jnp.arange(4.0).reshape(2, 2)
    # top level: the cold program; nested in a trace (JAX refuses compiler_options there): the plain jit
    np.testing.assert_array_equal(k(a, a), a @ a)
    np.testing.assert_array_equal(jax.jit(lambda a: k(a, a) + 1)(a), a @ a + 1)
    np.testing.assert_array_equal(jax.grad(lambda a: k(a, a).sum())(a), jax.grad(lambda a: (a @ a).sum())(a))
    assert k.cold._cache_size() == 1 and k.plain._cache_size() == 0
    assert k.__name__ == "<lambda>" and k.eval_shape(a, a).shape == (2, 2)
