"""torch.utils.data under torch and torchlike: the same batches in the same order, with 0 and 2 workers."""

from __future__ import annotations

import collections
import random

import numpy as np
import pytest
import torch

import torchlike

LIBS = (torch, torchlike)

# torch's own workers fork this process, which has JAX loaded too
pytestmark = pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
Point = collections.namedtuple("Point", ["x", "y"])


def plain(obj):
    """A comparable picture of a batch: tensors as (dtype, shape, values), containers with their type names."""
    if isinstance(obj, (torch.Tensor, torchlike.Tensor)):
        return ("tensor", str(obj.dtype), tuple(obj.shape), obj.tolist(), obj.requires_grad)
    if isinstance(obj, dict):
        return ("dict", {k: plain(v) for k, v in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__, [plain(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [plain(v) for v in obj])
    if isinstance(obj, np.ndarray):
        return ("ndarray", str(obj.dtype), obj.tolist())
    return (type(obj).__name__, obj)


def same(fn):
    """Run ``fn(lib)`` under torch and torchlike; assert equal pictures; return torch's."""
    ref, got = (plain(fn(lib)) for lib in LIBS)
    assert got == ref
    return ref


def tensor_data(lib, n=10):
    return lib.utils.data.TensorDataset(lib.arange(2.0 * n).view(n, 2), lib.arange(n))


class NumpyDataset:
    """A map-style dataset of numpy arrays, Python numbers, strings and dicts (no tensors)."""

    def __init__(self, n=9):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = np.arange(3, dtype=np.float32) + i
        return {"x": x, "label": i % 3, "w": 0.5 * i, "name": f"s{i}", "flag": i % 2 == 0,
                "p": Point(np.int16(i), np.float64(i) / 4)}  # fmt: skip


@pytest.mark.parametrize("workers", [0, 2])
@pytest.mark.parametrize("shuffle", [False, True])
def test_tensor_dataset_order(workers, shuffle):
    def run(lib):
        lib.manual_seed(3)
        loader = lib.utils.data.DataLoader(
            tensor_data(lib), batch_size=4, shuffle=shuffle, num_workers=workers
        )
        return [list(loader) for _ in range(2)] + [lib.rand(2)]  # two epochs, then the generator's state

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_drop_last_and_len(workers):
    def run(lib):
        lib.manual_seed(0)
        loader = lib.utils.data.DataLoader(tensor_data(lib), batch_size=3, shuffle=True, drop_last=True,
                                           num_workers=workers)  # fmt: skip
        return [len(loader), list(loader)]

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_default_collate_structures(workers):
    def run(lib):
        lib.manual_seed(1)
        return list(
            lib.utils.data.DataLoader(NumpyDataset(), batch_size=4, shuffle=True, num_workers=workers)
        )

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_custom_collate(workers):
    def collate(lib):
        def fn(batch):
            xs = [b[0] for b in batch]
            return {"n": len(batch), "ys": lib.tensor([int(b[1]) for b in batch]), "first": xs[0]}

        return fn

    def run(lib):
        lib.manual_seed(5)
        loader = lib.utils.data.DataLoader(tensor_data(lib, 7), batch_size=3, shuffle=True, num_workers=workers,
                                           collate_fn=collate(lib))  # fmt: skip
        return list(loader) + list(lib.utils.data.DataLoader(tensor_data(lib, 5), batch_size=2,
                                                             collate_fn=lambda b: b, num_workers=workers))  # fmt: skip

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_samplers(workers):
    def run(lib):
        D = lib.utils.data
        data = tensor_data(lib, 12)
        lib.manual_seed(7)
        g = lib.Generator().manual_seed(11)
        out = []
        for sampler in (
            D.RandomSampler(data, replacement=True, num_samples=40),
            D.RandomSampler(data, num_samples=30, generator=g),
            D.SubsetRandomSampler([1, 3, 5, 7, 9]),
            D.WeightedRandomSampler([0.1, 0.4, 0.0, 0.3, 0.2] + [0.0] * 7, 9),
            D.WeightedRandomSampler(list(range(1, 13)), 6, replacement=False),
            D.SequentialSampler(data),
        ):
            out.append(list(D.DataLoader(data, batch_size=5, sampler=sampler, num_workers=workers)))
        batches = D.BatchSampler(D.RandomSampler(data), batch_size=4, drop_last=False)
        out.append(list(D.DataLoader(data, batch_sampler=batches, num_workers=workers)))
        out.append(list(D.DataLoader(data, batch_size=None, sampler=[4, 0, 2], num_workers=workers)))
        return out

    same(run)


def test_sampler_lengths_and_distributed():
    def run(lib):
        D = lib.utils.data
        data = list(range(11))
        out = [len(D.BatchSampler(range(10), 3, True)), len(D.BatchSampler(range(10), 3, False))]
        for rank in range(3):
            for drop_last in (False, True):
                s = D.DistributedSampler(
                    data, num_replicas=3, rank=rank, shuffle=True, seed=4, drop_last=drop_last
                )
                s.set_epoch(2)
                out.append((len(s), list(s)))
        out.append(list(D.DistributedSampler(data, num_replicas=4, rank=1, shuffle=False)))
        return out

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_random_split(workers):
    def run(lib):
        D = lib.utils.data
        lib.manual_seed(2)
        a, b, c = D.random_split(tensor_data(lib, 11), [0.5, 0.3, 0.2])
        d, e = D.random_split(range(10), [3, 7], generator=lib.Generator().manual_seed(42))
        loader = D.DataLoader(a, batch_size=2, shuffle=True, num_workers=workers)
        return [a.indices, b.indices, c.indices, d.indices, e.indices, list(loader), list(e)]

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_worker_seeds_and_generator(workers):
    class Seeds:
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 6

        def __getitem__(self, i):
            lib = self.lib
            info = lib.utils.data.get_worker_info()
            return (lib.initial_seed(), -1 if info is None else info.id, np.random.randint(1000),
                    random.random(), lib.rand(()), lib.randint(0, 50, (2,)))  # fmt: skip

    def run(lib):
        lib.manual_seed(9)
        np.random.seed(0)
        random.seed(0)
        g = lib.Generator().manual_seed(123)
        loader = lib.utils.data.DataLoader(
            Seeds(lib), batch_size=2, num_workers=workers, generator=g, shuffle=True
        )
        return list(loader) + [lib.rand(1)]

    same(run)


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_dataset_sharding(workers):
    def make(lib):
        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self):
                info = lib.utils.data.get_worker_info()
                lo, hi = 3, 12
                if info is not None:
                    per = -(-(hi - lo) // info.num_workers)
                    lo, hi = lo + info.id * per, min(lo + (info.id + 1) * per, hi)
                return iter(range(lo, hi))

            def __len__(self):
                return 9

        return Stream()

    def run(lib):
        D = lib.utils.data
        return [list(D.DataLoader(make(lib), num_workers=workers)),
                list(D.DataLoader(make(lib), batch_size=2, num_workers=workers)),
                list(D.DataLoader(make(lib), batch_size=2, drop_last=True, num_workers=workers)),
                list(D.DataLoader(make(lib), batch_size=None, num_workers=workers)),
                len(D.DataLoader(make(lib), batch_size=2)),
                list(D.DataLoader(D.ChainDataset([make(lib), make(lib)]), batch_size=5))]  # fmt: skip

    same(run)


def test_persistent_workers_two_epochs():
    def run(lib):
        lib.manual_seed(4)
        loader = lib.utils.data.DataLoader(tensor_data(lib, 9), batch_size=2, shuffle=True, num_workers=2,
                                           persistent_workers=True, prefetch_factor=1)  # fmt: skip
        return [list(loader), list(loader), lib.rand(1)]

    same(run)


def test_datasets():
    def run(lib):
        D = lib.utils.data
        a, b = tensor_data(lib, 3), tensor_data(lib, 4)
        cat = a + b
        stack_t = D.StackDataset(a, list(range(10, 13)))
        stack_d = D.StackDataset(x=a, y=list("abc"))
        sub = D.Subset(cat, [6, 0, 3])
        return [len(cat), cat.cumulative_sizes, cat[-1], cat[4], stack_t[2], stack_d[1], len(sub), sub[0],
                list(D.DataLoader(stack_d, batch_size=2)), list(D.DataLoader(sub, batch_size=2)),
                list(D.DataLoader(D.ConcatDataset([a, b]), batch_size=3))]  # fmt: skip

    same(run)


def test_default_collate_and_convert_direct():
    def run(lib):
        D = lib.utils.data
        return [
            D.default_collate([1, 2, 3]),
            D.default_collate([1.5, 2.0]),
            D.default_collate([True, False]),
            D.default_collate(["a", "b"]),
            D.default_collate([b"a", b"b"]),
            D.default_collate([np.float32(1.5), np.float32(2)]),
            D.default_collate([np.int16(1), np.int16(2)]),
            D.default_collate([np.ones((2,), np.uint8), np.zeros((2,), np.uint8)]),
            D.default_collate([lib.tensor([1, 2]), lib.tensor([3.5, 4])]),
            D.default_collate([Point(1, 2.0), Point(3, 4.0)]),
            D.default_collate([[1, 2], [3, 4]]),
            D.default_collate([{"a": (1, [2.0])}, {"a": (3, [4.0])}]),
            D.default_convert({"a": np.arange(3), "b": (np.float64(2), "s"), "c": [np.array(["x"])]}),
            D.default_convert(Point(np.int8(3), 4)),
        ]

    same(run)


@pytest.mark.parametrize(
    "batch",
    [
        [np.zeros(2), np.zeros(3)],
        [[1, 2], [1]],
        [object(), object()],
        [np.array(["a"]), np.array(["b"])],
        [np.zeros(3)[::-1], np.zeros(3)],
    ],
    ids=["shapes", "lengths", "object", "strings", "negative-stride"],
)
def test_default_collate_errors(batch):
    caught = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            lib.utils.data.default_collate(batch)
        caught.append(info.value)
    ref, got = caught
    assert type(got) is type(ref)
    assert str(got).replace("torchlike", "torch") == str(ref)


def test_tensor_collate_shape_error():
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.utils.data.default_collate([lib.zeros(2, 3), lib.zeros(2, 3), lib.zeros(3, 2)])
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]


def test_loader_argument_errors():
    D_cases = [
        lambda D, d: D.DataLoader(d, num_workers=-1),
        lambda D, d: D.DataLoader(d, timeout=-1),
        lambda D, d: D.DataLoader(d, prefetch_factor=2),
        lambda D, d: D.DataLoader(d, persistent_workers=True),
        lambda D, d: D.DataLoader(d, sampler=[0], shuffle=True),
        lambda D, d: D.DataLoader(d, batch_sampler=[[0]], batch_size=2),
        lambda D, d: D.DataLoader(d, batch_size=None, drop_last=True),
        lambda D, d: D.DataLoader(d, multiprocessing_context="fork"),
        lambda D, d: D.DataLoader(d, num_workers=1, multiprocessing_context="nope"),
        lambda D, d: D.BatchSampler([0], 0, False),
        lambda D, d: D.BatchSampler([0], 2, 1),
        lambda D, d: D.RandomSampler(d, num_samples=0),
        lambda D, d: D.RandomSampler(d, replacement=1),
        lambda D, d: D.WeightedRandomSampler([[1.0]], 2),
        lambda D, d: D.random_split(d, [3, 4]),
        lambda D, d: D.random_split(d, [1.5, -0.5]),
        lambda D, d: D.DistributedSampler(d, num_replicas=2, rank=2),
        lambda D, d: D.StackDataset(),
        lambda D, d: D.ConcatDataset([]),
        lambda D, d: setattr(D.DataLoader(d), "batch_size", 3),
    ]
    for case in D_cases:
        caught = []
        for lib in LIBS:
            with pytest.raises(Exception) as info:
                case(lib.utils.data, tensor_data(lib, 5))
            caught.append(info.value)
        ref, got = caught
        assert type(got) is type(ref), (type(got), type(ref), ref)
        assert str(got) == str(ref)
