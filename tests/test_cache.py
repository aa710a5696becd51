"""The persistent compilation cache (torchlike/_cache.py): where it lives, the off switch, atomic
writes, and that a corrupt entry is a miss that the next compile replaces."""

import os
import subprocess
import sys

import jax
import pytest

from torchlike import _cache

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_suite_does_not_use_the_user_cache():
    if _cache.cache_dir() is None:  # the suite was run with TORCHLIKE_CACHE=0
        assert jax.config.jax_compilation_cache_dir is None
        return
    assert jax.config.jax_compilation_cache_dir == os.environ["TORCHLIKE_CACHE_DIR"]
    assert not jax.config.jax_compilation_cache_dir.startswith(os.path.expanduser("~/.cache"))


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.delenv("TORCHLIKE_CACHE_DIR", raising=False)
    monkeypatch.delenv("TORCHLIKE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _cache.cache_dir() == os.path.join(str(tmp_path), "torchlike", "jax")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _cache.cache_dir() == os.path.join(str(tmp_path), ".cache", "torchlike", "jax")
    monkeypatch.setenv("TORCHLIKE_CACHE_DIR", str(tmp_path / "x"))
    assert _cache.cache_dir() == str(tmp_path / "x")
    for off in ("0", "false", "OFF"):
        monkeypatch.setenv("TORCHLIKE_CACHE", off)
        assert _cache.cache_dir() is None


def test_store_put_is_atomic_and_corrupt_entries_miss(tmp_path):
    from jax._src import compilation_cache

    store = _cache._Store(str(tmp_path))
    assert store.get("k") is None
    good = compilation_cache.compress_executable(b"payload" * 100)
    store.put("k", good)
    assert store.get("k") == good
    assert sorted(os.listdir(tmp_path)) == ["k-cache"]  # no temporary file left behind
    (tmp_path / "k-cache").write_bytes(good[: len(good) // 2])  # truncated, as a crash mid-write would leave it
    assert store.get("k") is None
    (tmp_path / "k-cache").write_bytes(b"\x00garbage")
    assert store.get("k") is None
    store.put("k", good)  # the recompiled program replaces the bad entry
    assert store.get("k") == good


_SCRIPT = """
import sys
import jax
misses = []
jax.monitoring.register_event_listener(lambda name, **kw: misses.append(name) if name.endswith("cache_misses") else 0)
import torchlike as torch
from jax._src import compilation_cache
assert type(compilation_cache._cache).__name__ == "TorchlikeCache"
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(7, 3), torch.nn.Dropout(0.2))
opt = torch.optim.Adam(m.parameters())
x = torch.ones(2, 7)

@torch.compile
def step():
    opt.zero_grad()
    loss = m(x).square().mean()
    loss.backward()
    opt.step()
    return loss

print(repr([round(float(step()), 5) for _ in range(3)]))
sys.stderr.write(f"misses={len(misses)}\\n")
"""


def _run(env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", _SCRIPT], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=ROOT, JAX_PLATFORMS="cpu", **extra)
    return env


@pytest.mark.slow
def test_second_run_reads_the_cache_and_survives_corruption(tmp_path):
    env = _env(TORCHLIKE_CACHE_DIR=str(tmp_path))
    procs = [_run(env), _run(env)]  # two processes filling one folder at once
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert outs[0][0] == outs[1][0]
    entries = [f for f in os.listdir(tmp_path) if f.endswith("-cache")]
    assert entries and not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]
    assert any(f.startswith("jit_pure") for f in entries)  # the compiled step is cached too
    p = _run(env)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0 and out == outs[0][0], err
    assert "misses=0" in err  # every program, the compiled step's included, came from the cache
    for f in entries:  # corrupt every entry
        (tmp_path / f).write_bytes(b"corrupt")
    p = _run(env)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0 and out == outs[0][0], err
    assert "persistent compilation cache" not in err
    assert all((tmp_path / f).read_bytes() != b"corrupt" for f in entries)  # rewritten by the recompiles


def test_switched_off(tmp_path):
    p = subprocess.run([sys.executable, "-c", "import torchlike, jax; print(jax.config.jax_compilation_cache_dir)"],
                       env=_env(TORCHLIKE_CACHE="0", TORCHLIKE_CACHE_DIR=str(tmp_path / "c")), cwd=ROOT,
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "None" and not (tmp_path / "c").exists()
