"""torchlike.utils.data in the main process: datasets, samplers, collation, the TensorDataset fast path."""

from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest

import torchlike
from torchlike.utils import data as D
from torchlike.utils.data import _collate, _fetch, _host, _worker


def test_public_module_paths():
    import torchlike.utils.data.dataloader as dataloader_mod
    import torchlike.utils.data.dataset as dataset_mod
    import torchlike.utils.data.sampler as sampler_mod

    assert dataset_mod.Subset is D.Subset and sampler_mod.BatchSampler is D.BatchSampler
    assert dataloader_mod.default_collate is D.default_collate and dataloader_mod._DatasetKind.Iterable == 1
    assert torchlike.utils.data is D
    with pytest.raises(AttributeError, match="torch.utils.nope"):
        torchlike.utils.nope


def test_datasets():
    x, y = torchlike.arange(12.0).view(6, 2), torchlike.arange(6)
    ds = D.TensorDataset(x, y)
    assert len(ds) == 6 and ds[2][0].tolist() == [4.0, 5.0] and ds[-1][1].item() == 5
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(x, torchlike.arange(5))
    cat = ds + D.TensorDataset(x[:2], y[:2])
    assert (
        isinstance(cat, D.ConcatDataset)
        and len(cat) == 8
        and cat[7][1].item() == 1
        and cat[-8][1].item() == 0
    )
    with pytest.raises(ValueError, match="absolute value of index"):
        cat[-9]
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        D.ConcatDataset([ds, D.ChainDataset([])])
    stacked = D.StackDataset(ds, list("abcdef"))
    assert stacked[1][1] == "b" and stacked.__getitems__([0, 5])[1][1] == "f"
    assert D.StackDataset(a=list(range(3)), b=D.Subset(list("xyz"), [2, 1, 0])).__getitems__([0, 2]) == [
        {"a": 0, "b": "z"}, {"a": 2, "b": "x"}
    ]  # fmt: skip
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        D.StackDataset([1], [1, 2])
    sub = D.Subset(list("abcdef"), [5, 0])
    assert sub[0] == "f" and sub.__getitems__([1, 0]) == ["a", "f"] and len(sub) == 2

    class Bad(D.Subset):
        def __getitem__(self, i):
            return i

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad([1], [0])
    with pytest.raises(NotImplementedError, match="Subclasses of Dataset should implement __getitem__"):
        D.Dataset()[0]


def test_iterable_and_chain():
    class Count(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    chain = Count(2) + Count(3)
    assert isinstance(chain, D.ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(D.ChainDataset([[1]]))


def test_random_split_reproducible_and_fractions():
    torchlike.manual_seed(0)
    a = [s.indices for s in D.random_split(range(10), [0.34, 0.33, 0.33])]
    torchlike.manual_seed(0)
    b = [s.indices for s in D.random_split(range(10), [4, 3, 3])]
    assert a == b and sorted(sum(a, [])) == list(range(10)) and [len(x) for x in a] == [4, 3, 3]
    g1, g2 = torchlike.Generator().manual_seed(5), torchlike.Generator().manual_seed(5)
    assert D.random_split(range(7), [5, 2], generator=g1)[0].indices == D.random_split(range(7), [5, 2],
                                                                                       generator=g2)[0].indices  # fmt: skip
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        D.random_split(range(2), [1.0, 0.0])


def test_samplers_basic():
    assert list(D.SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert list(D.BatchSampler(range(7), 3, False)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(D.BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    g = torchlike.Generator().manual_seed(1)
    perm = list(D.RandomSampler(range(9), generator=g))
    assert sorted(perm) == list(range(9))
    s = D.RandomSampler(range(5), replacement=True, num_samples=70)
    drawn = list(s)
    assert len(drawn) == len(s) == 70 and set(drawn) <= set(range(5))
    w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0], 5))
    assert w == [1] * 5
    assert sorted(D.SubsetRandomSampler([10, 20, 30])) == [10, 20, 30]
    # without torchlike.distributed: "Requires distributed package..."; with it, torch's own error
    with pytest.raises(
        (RuntimeError, ValueError), match="Requires distributed package|Default process group"
    ):
        D.DistributedSampler(range(4))


Pair = collections.namedtuple("Pair", "a b")


def test_default_collate_types():
    out = D.default_collate(
        [{"x": np.ones(2, np.float32), "n": 1, "f": 0.5, "s": "a", "p": Pair(True, b"q")}] * 3
    )
    assert out["x"].dtype is torchlike.float32 and tuple(out["x"].shape) == (3, 2)
    assert out["n"].dtype is torchlike.int64 and out["f"].dtype is torchlike.float64
    assert out["s"] == ["a"] * 3 and isinstance(out["p"], Pair) and out["p"].a.dtype is torchlike.bool
    assert out["p"].b == (b"q",) * 3  # torch: zip gives the strings a tuple
    mixed = D.default_collate([torchlike.tensor([1, 2]), torchlike.tensor([0.5, 1.0])])
    assert mixed.dtype is torchlike.float32 and mixed.tolist() == [[1.0, 2.0], [0.5, 1.0]]
    with pytest.raises(RuntimeError, match=r"stack expects each tensor to be equal size, but got \[2\] at entry 0 "
                                           r"and \[3\] at entry 2"):  # fmt: skip
        D.default_collate([np.zeros(2), np.zeros(2), np.zeros(3)])
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors"):
        D.default_collate([None, None])
    assert D.default_convert((np.int32(3), [np.zeros(1)]))[0].dtype is torchlike.int32


@pytest.mark.slow
def test_collate_keeps_autograd_history():
    w = torchlike.ones(2, requires_grad=True)
    batch = D.default_collate([w * 2, w * 3])
    assert batch.grad_fn is not None and type(batch.grad_fn).__name__ == "StackBackward0"
    batch.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]


def test_host_array_reads_views_without_touching_buffers():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = torchlike.from_numpy(base)
    for view in (t[1], t[:, 2], t.t(), t[1:3, ::2], t[2, 3]):
        np.testing.assert_array_equal(_host.host_array(view), view.numpy())
    base[0, 0] = 100.0  # from_numpy shares memory: the host read sees the write
    assert _host.host_array(t[0])[0] == 100.0
    u = torchlike.arange(6.0).view(2, 3)
    assert _host.host_array(u.t()).tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert u._buf.np is None  # reading did not switch the buffer to numpy sharing


def test_tensor_pickling_for_workers():
    leaf = torchlike.tensor([1.0, 2.0], requires_grad=True)
    got = pickle.loads(
        _worker.dumps({"a": leaf, "b": [torchlike.arange(6).view(2, 3).t(), torchlike.tensor(3)]})
    )
    assert got["a"].requires_grad and got["a"].is_leaf and got["a"].tolist() == [1.0, 2.0]
    assert got["b"][0].tolist() == [[0, 3], [1, 4], [2, 5]] and got["b"][1].shape == ()
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        _worker.dumps(leaf * 2)


def _loader_batches(ds, **kw):
    return [[t.tolist() for t in b] for b in D.DataLoader(ds, **kw)]


def test_tensor_dataset_fast_path_matches_per_sample_path():
    class PerSample(D.TensorDataset):  # overriding __getitem__ turns the fast path off
        def __getitem__(self, index):
            return super().__getitem__(index)

    x = torchlike.arange(40.0).view(10, 4)[:, ::2]  # a non-contiguous view
    y = torchlike.arange(10, dtype=torchlike.int32)
    fast, slow = D.TensorDataset(x, y), PerSample(x, y)
    assert _fetch._rows_source(fast) is not None and _fetch._rows_source(slow) is None
    for kw in (
        {"batch_size": 3},
        {"batch_size": 4, "shuffle": True},
        {"batch_size": 2, "sampler": [9, -1, 0]},
    ):
        torchlike.manual_seed(0)
        a = _loader_batches(fast, **kw)
        torchlike.manual_seed(0)
        assert a == _loader_batches(slow, **kw)
    sub = D.Subset(D.Subset(fast, [9, 8, 7, 6, 5]), [4, 0, 2])
    assert _loader_batches(sub, batch_size=2) == _loader_batches(D.Subset(D.Subset(slow, [9, 8, 7, 6, 5]),
                                                                          [4, 0, 2]), batch_size=2)  # fmt: skip
    batch = next(iter(D.DataLoader(fast, batch_size=3)))
    assert isinstance(batch, list) and batch[1].dtype is torchlike.int32 and tuple(batch[0].shape) == (3, 2)
    with pytest.raises(IndexError):  # out of range: the per-sample path raises torch's error
        next(iter(D.DataLoader(fast, batch_size=2, sampler=[0, 10])))


def test_loader_basics():
    loader = D.DataLoader(list(range(10)), batch_size=4)
    assert len(loader) == 3 and [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [b for b in D.DataLoader(["a", "b"], batch_size=None)] == ["a", "b"]
    it = iter(loader)
    assert len(it) == 3
    with pytest.raises(NotImplementedError):
        pickle.dumps(it)
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(D.DataLoader([1], timeout=1))
    if not torchlike.cuda.is_available():
        with pytest.warns(UserWarning, match="no accelerator is found"):
            iter(D.DataLoader([1], pin_memory=True))


def test_collate_functions_are_torchs_map():
    assert _collate.default_collate_fn_map[torchlike.Tensor] is _collate.collate_tensor_fn
    assert D.default_collate.__module__.endswith("_collate")
