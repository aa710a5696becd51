"""DataLoader worker processes: host mode under fork, spawn, shutdown without stray processes."""

from __future__ import annotations

import gc
import os
import time

import numpy as np
import pytest

import torchlike
from torchlike.utils import data as D
from torchlike.utils.data import _worker

pytestmark = [pytest.mark.timeout(60), pytest.mark.slow]  # slow: starts worker processes


class Probe(D.Dataset):
    """Sample i exercises what host mode supports in a forked worker."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        base = torchlike.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3) + i)
        return {
            "tensor": torchlike.tensor([i, 2 * i]),
            "as_tensor": torchlike.as_tensor(np.full(2, i, np.int16)),
            "view": base[1, ::2],
            "item": float(base[0, 1]),
            "zeros": torchlike.zeros(2, dtype=torchlike.float64),
            "arange": torchlike.arange(i, i + 2),
            "rand": torchlike.rand(2),
            "in_worker": torchlike.utils.data.get_worker_info() is not None,
        }


def test_fork_worker_host_mode_matches_main_process():
    def epoch(workers):
        torchlike.manual_seed(0)
        return [{k: (v.tolist() if isinstance(v, torchlike.Tensor) else v) for k, v in b.items()}
                for b in D.DataLoader(Probe(), batch_size=2, num_workers=workers)]  # fmt: skip

    main, workers = epoch(0), epoch(2)
    assert [b.pop("in_worker") for b in main] == [[False, False]] * 2
    assert [b.pop("in_worker") for b in workers] == [[True, True]] * 2
    assert [b.pop("rand") for b in workers] != [b.pop("rand") for b in main]  # workers are seeded per worker
    assert main == workers


# What datasets and collate functions typically do, run by a forked worker through NumPy (_numpy_eval)
OP_EXPRS = [
    "x.float() / 255", "(x.float() - x.float().mean()) / (x.float().std() + 1e-6)", "x.clamp(10, 200)",
    "x.long() // 3", "(x.long() - 100) // 7", "(x.long() - 100) % 7", "x.int().fmod(5)", "x.float().exp().log()",
    "torch.where(x > 100, x, torch.zeros_like(x))", "x.flip(0)", "x.view(2, 3).permute(1, 0).contiguous()",
    "x.float().sort().values", "x.float().sort(descending=True).indices", "x.argmax()", "x.float().topk(2).values",
    "torch.cat([x, x]).sum()", "torch.stack([x, x], 1)", "x[torch.tensor([0, 2, 4])]", "x.float()[torch.tensor([5, 0])] * 2",
    "x.float().reshape(2, 3) @ torch.ones(3, 2)", "torch.bmm(x.float().view(1, 2, 3), torch.ones(1, 3, 4))",
    "F.one_hot(x.long() % 5, 5)", "x.float().sigmoid()", "F.softmax(x.float() / 100, 0)", "(x.float() / 4).round()",
    "x.float().cumsum(0)", "F.pad(x.float().view(1, 2, 3), (1, 1))", "x.float().unsqueeze(0).repeat(2, 1)",
    "x.float().tanh()", "x.bool().any()", "x.float().norm()", "x.float().max(0)", "x.float().median()",
    "F.interpolate(x.float().view(1, 1, 2, 3), scale_factor=2, mode='nearest')", "x.to(torch.float16) * 2",
    "x.float().erf()", "(x.float() ** 2).sqrt()", "x.float().masked_fill(x > 128, 0)", "x.float().unfold(0, 2, 1)",
    "torch.tensor(3.0) * x", "x.float()[1:4:2].neg()", "x.float().lerp(torch.ones(6), 0.5)",
    "x.float().index_add(0, torch.tensor([0, 0]), torch.ones(2))", "x.float().scatter(0, torch.tensor([1]), 7.0)",
    "x.float().chunk(3)", "x.float().split([2, 4])", "torch.atan2(x.float(), x.float() + 1)", "x.float().var(0)",
    "(x.float() * 0.5).floor() + (x.float() * 0.5).ceil()", "x.float().logsumexp(0)", "x.float().cummax(0).values",
    "x.double().prod()", "(x > 50).float().mean()", "x.float().clone().fill_(2)",
]  # fmt: skip


class UsesOps(D.Dataset):
    def __len__(self):
        return 3

    def __getitem__(self, i):
        x = torchlike.from_numpy(np.array([i * 40 + 3, 250, 17, i, 128, 99], np.uint8))
        env = {"torch": torchlike, "F": torchlike.nn.functional, "x": x}
        return [eval(e, env) for e in OP_EXPRS]  # noqa: S307 - the test's own expressions


def _leaves(v):
    """A sample's results as (expression, dtype, values) triples (tuples such as max's are flattened)."""
    out = []
    for expr, r in zip(OP_EXPRS, v):
        for t in r if isinstance(r, (tuple, list)) else [r]:
            out.append((expr, str(t.dtype), np.asarray(t.tolist(), float)))
    return out


@pytest.mark.timeout(300)  # each worker traces ~70 kernels: over a minute on a loaded 2-core machine
def test_fork_worker_runs_ops_like_the_main_process():
    main = [_leaves(b) for b in D.DataLoader(UsesOps(), batch_size=None, num_workers=0)]
    forked = [_leaves(b) for b in D.DataLoader(UsesOps(), batch_size=None, num_workers=2)]
    assert len(main) == len(forked) == 3
    for a_sample, b_sample in zip(main, forked):
        for (expr, dt_a, a), (_, dt_b, b) in zip(a_sample, b_sample):
            assert dt_b == dt_a, expr
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6, err_msg=expr)


class UsesConv(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torchlike.nn.functional.conv1d(torchlike.ones(1, 1, 4), torchlike.ones(1, 1, 2))


def test_fork_worker_refuses_unsupported_ops_clearly():
    with pytest.raises(RuntimeError) as info:
        list(D.DataLoader(UsesConv(), batch_size=2, num_workers=1))
    text = str(info.value)
    assert text.startswith("Caught RuntimeError in DataLoader worker process 0.")
    assert "torchlike: torch._convolution (it needs the JAX primitive 'conv_general_dilated') cannot run in a DataLoader worker" in text
    assert "multiprocessing_context='spawn'" in text


def test_fork_patch_points_exist():
    """Host mode replaces these attributes; if one is renamed, forked workers could hang instead of raising."""
    import jax
    from jax._src import compiler, pjit

    from torchlike._core import tensor as T
    from torchlike._ops import creation, registry
    from torchlike._ops import random as random_ops

    patches = _worker._fork_patches(None, T, creation, registry, random_ops, compiler, jax, pjit)
    missing = [name for owner, name, _ in patches if not hasattr(owner, name) and name != "backend_compile"]
    assert missing == []


class Slow(D.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        time.sleep(0.01)
        return np.full(3, i)


def _dead(processes):
    return not any(p.is_alive() for p in processes)


def test_no_stray_processes_after_break_or_error():
    it = iter(D.DataLoader(Slow(), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    for _ in it:
        break
    del it
    gc.collect()
    assert _dead(workers)
    it = iter(D.DataLoader(UsesConv(), num_workers=2))
    workers = list(it._workers)
    with pytest.raises(RuntimeError):
        next(it)
    del it
    gc.collect()  # the iterator sits in a garbage cycle with the exception's traceback
    assert _dead(workers)
    for pid in (w.pid for w in workers):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_persistent_workers_keep_their_processes():
    loader = D.DataLoader(list(range(6)), batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    workers = list(loader._iterator._workers)
    assert [b.tolist() for b in loader] == first == [[0, 1], [2, 3], [4, 5]]
    assert loader._iterator._workers == workers and not any(not w.is_alive() for w in workers)
    loader._iterator._shutdown_workers()
    assert _dead(workers)


def test_worker_init_fn_and_unpicklable_result():
    def init(worker_id):
        info = D.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2 and info.seed == torchlike.initial_seed()

    out = [b.tolist() for b in D.DataLoader(list(range(4)), batch_size=2, num_workers=2, worker_init_fn=init)]
    assert out == [[0, 1], [2, 3]]
    with pytest.raises(Exception, match="Caught .* in DataLoader worker process 0"):
        list(D.DataLoader([0, 1], batch_size=None, num_workers=1, collate_fn=lambda x: lambda: x))


def test_grad_leaf_tensors_cross_processes():
    w = torchlike.ones(2, 2, requires_grad=True)
    got = next(iter(D.DataLoader([w], batch_size=None, num_workers=1)))
    assert got.requires_grad and got.is_leaf and got.tolist() == [[1.0, 1.0], [1.0, 1.0]]


class SpawnOps(D.Dataset):
    def __init__(self):
        self.base = torchlike.arange(4.0)  # travels to the spawned workers pickled as numpy

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return (torchlike.ones(2) * self.base[i]).sum(), torchlike.initial_seed()


def collate_pairs(batch):
    return torchlike.stack([b[0] for b in batch]), [b[1] for b in batch]


def test_spawn_workers_run_torchlike_ops():
    before = os.environ.get("JAX_PLATFORMS")
    torchlike.manual_seed(1)
    loader = D.DataLoader(SpawnOps(), batch_size=2, num_workers=2, multiprocessing_context="spawn",
                          collate_fn=collate_pairs)  # fmt: skip
    out = [(x.tolist(), seeds) for x, seeds in loader]
    assert [x for x, _ in out] == [[0.0, 2.0], [4.0, 6.0]]
    assert out[1][1][0] == out[0][1][0] + 1  # worker seeds are base_seed + worker_id
    assert os.environ.get("JAX_PLATFORMS") == before


_SHIFT = _INV = None  # jax.jit functions the main process compiles before the workers fork


class UsesJax(D.Dataset):
    """Sample i runs a jit function the parent already ran for this shape, an eager jnp call and a write into a
    view; sample 3 asks for a primitive the NumPy evaluator lacks."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        import jax.numpy as jnp

        if i == 3:
            return np.asarray(_INV(np.eye(2, dtype=np.float32)))
        out = torchlike.zeros(2, 4)
        out[1, :2] = torchlike.tensor([float(i), 1.0])
        return np.asarray(_SHIFT(np.full(3, i, np.float32))), np.asarray(jnp.cumsum(jnp.arange(4) * i)), out


@pytest.mark.timeout(300)  # hung forever before host mode answered jit dispatch (the parent had run _SHIFT)
def test_fork_worker_runs_jax_calls_through_numpy_and_refuses_clearly():
    import jax
    import jax.numpy as jnp

    global _SHIFT, _INV
    _SHIFT = jax.jit(lambda a: jnp.sin(a) * 2 + 1)
    _INV = jax.jit(jnp.linalg.inv)
    _INV(np.eye(2, dtype=np.float32))
    expected = [(np.asarray(_SHIFT(np.full(3, i, np.float32))), np.cumsum(np.arange(4) * i)) for i in range(3)]
    loader = D.DataLoader(UsesJax(), batch_size=None, num_workers=2)
    it = iter(loader)
    for i in range(3):
        shifted, cums, out = next(it)
        np.testing.assert_allclose(shifted, expected[i][0], rtol=1e-6)
        assert cums.tolist() == expected[i][1].tolist()
        assert out.tolist() == [[0.0] * 4, [float(i), 1.0, 0.0, 0.0]]
    with pytest.raises(RuntimeError, match="cannot run in a DataLoader worker process started with fork"):
        next(it)
