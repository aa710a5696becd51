"""Views, indexing and aliasing, checked against numpy (no torch here)."""

from __future__ import annotations

import numpy as np
import pytest

import torchlike as torch
from torchlike._core import views as V
from torchlike._ops import indexing

BASE = np.arange(60.0).reshape(3, 4, 5)

KEYS = [
    (1,), (slice(None), 2), (Ellipsis, slice(1, 4, 2)), (None, 1, slice(None, None, 3)), ([2, 0],), ([0, 2], [1, 3]),
    (slice(None), [3, 0], [1, 1]), ([0, 1], slice(None), [4, 2]), (BASE > 30,), (1, BASE[0, :, 0] > 4),
    (np.array([[0], [2]]), slice(1, 3), np.array([0, 4])), (Ellipsis, [1, 2]),
]  # fmt: skip


def _tl_key(key):
    return tuple(torch.from_numpy(k) if isinstance(k, np.ndarray) else k for k in key)


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_getitem_matches_numpy(key):
    # torch applies integers before advanced indices; all keys here place them where numpy agrees
    x = torch.tensor(BASE)
    np.testing.assert_array_equal(x[_tl_key(key)].numpy(), BASE[key])


@pytest.mark.parametrize("key", KEYS, ids=range(len(KEYS)))
def test_setitem_matches_numpy(key):
    x = torch.tensor(BASE)
    expected = BASE.copy()
    expected[key] = -1.0
    x[_tl_key(key)] = -1.0
    np.testing.assert_array_equal(x.numpy(), expected)


def test_integer_applied_before_advanced_indices():
    # torch (unlike numpy) selects x[0] first, so [1, 2] stays in place: shape (4, 2), not (2, 4)
    x = torch.tensor(BASE)
    assert tuple(x[0, :, [1, 2]].shape) == (4, 2)


def test_writes_through_a_chain_of_views():
    x = torch.tensor(BASE.copy())
    v = x.transpose(0, 2)[1:, ::2].unsqueeze(0)  # shape (1, 4, 2, 3)
    v.mul_(0)
    expected = BASE.copy()
    expected.transpose(2, 1, 0)[1:, ::2] = 0
    np.testing.assert_array_equal(x.numpy(), expected)
    np.testing.assert_array_equal(v.numpy()[0], np.zeros((4, 2, 3)))


def test_view_geometry_rules():
    assert V.view_strides((4, 6), (6, 1), (2, 2, 6)) == (12, 6, 1)
    assert V.view_strides((4, 6), (1, 4), (24,)) is None  # transposed: not viewable
    assert V.view_strides((2, 3), (3, 1), (3, 2)) == (2, 1)
    assert V.is_contiguous((3, 1, 4), (4, 99, 1))  # size-1 dims may have any stride
    assert not V.is_contiguous((3, 4), (1, 3))
    assert V.has_internal_overlap((3, 4), (0, 1))


def test_zero_dim_views():
    s = torch.tensor(2.5)
    assert s.view(1, 1).stride() == (1, 1)
    assert tuple(s.reshape(1).shape) == (1,)
    assert tuple(s[None].shape) == (1,)
    assert s[...].item() == 2.5


def test_indexing_kernels_are_reused():
    x = torch.tensor(BASE)
    x[0]
    before = len(V._read_kernels)
    for i in range(3):
        x[i]
        x[i] = float(i)
    assert len(V._read_kernels) == before


def test_index_bounds_are_cached_per_index_tensor():
    x = torch.tensor(BASE)
    idx = torch.tensor([0, 2])
    x[idx]
    cached = idx.__dict__["_index_bounds"]
    assert cached[1] == (0, 2)
    idx[0] = 5  # the array changed: the cache must not hide the new out-of-range value
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[idx]


def test_slice_bounds():
    assert indexing._slice_bounds(slice(None), 5) == (0, 5, 1)
    assert indexing._slice_bounds(slice(-2, None), 5) == (3, 2, 1)
    assert indexing._slice_bounds(slice(1, 100, 2), 5) == (1, 2, 2)
    assert indexing._slice_bounds(slice(4, 1), 5) == (4, 0, 1)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        indexing._slice_bounds(slice(None, None, -1), 5)


def test_float_to_int_conversion_rules():
    x = torch.tensor([2.7, -2.7, 300.5, float("nan"), 1e10])
    assert x.long().tolist()[:3] == [2, -2, 300]
    assert x.to(torch.uint8).tolist()[:3] == [2, 254, 44]  # through int32, then wrapped
    assert x.int().tolist()[3:] == [-(2**31), -(2**31)]  # out of range and NaN give INT32_MIN
