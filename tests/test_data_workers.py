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

pytestmark = pytest.mark.timeout(60)


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


class UsesOps(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torchlike.ones(3) * i


def test_fork_worker_refuses_ops_clearly():
    with pytest.raises(RuntimeError) as info:
        list(D.DataLoader(UsesOps(), batch_size=2, num_workers=1))
    text = str(info.value)
    assert text.startswith("Caught RuntimeError in DataLoader worker process 0.")
    assert "torchlike: torch.mul cannot run in a DataLoader worker process started with fork" in text
    assert "multiprocessing_context='spawn'" in text


def test_fork_patch_points_exist():
    """Host mode replaces these attributes; if one is renamed, forked workers could hang instead of raising."""
    import jax
    from jax._src import compiler

    from torchlike._core import tensor as T
    from torchlike._ops import creation, registry
    from torchlike._ops import random as random_ops

    patches = _worker._fork_patches(None, T, creation, registry, random_ops, compiler, jax)
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
    it = iter(D.DataLoader(UsesOps(), num_workers=2))
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
