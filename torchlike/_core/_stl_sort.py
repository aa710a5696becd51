"""torch's CPU topk order, reproduced on the host: libstdc++'s partial_sort / nth_element / sort (used by
topk and by multinomial's exponential/top-k route).

torch's CPU topk (aten/src/ATen/native/TopKImpl.h) puts (value, index) pairs of a row in a vector and
calls std::partial_sort when k * 64 <= n, else std::nth_element followed by std::sort of the first k - 1
(when sorted). Those algorithms are not stable, so among equal values (and for sorted=False, for every
value) the indices torch returns are the ones these exact algorithms leave. This module runs the same
algorithms (introsort with median-of-three pivots and a 16-element insertion-sort threshold,
introselect, heap select) on a Python list, comparing values only, as torch's comparator does.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

__all__: list = []

_THRESHOLD = 16  # libstdc++'s _S_threshold


def _lg(n: int) -> int:
    return n.bit_length() - 1


class _Row:
    """A row of (value, index) pairs and torch's comparator on their values."""

    def __init__(self, values: list, largest: bool) -> None:
        self.q = [(v, i) for i, v in enumerate(values)]

        if largest:  # NaN counts as the largest (numpy compatibility, torch says)
            def less(a: float, b: float) -> bool:
                return (a != a and b == b) or a > b
        else:
            def less(a: float, b: float) -> bool:
                return (a == a and b != b) or a < b

        self.less = less

    def comp(self, i: int, j: int) -> bool:
        return self.less(self.q[i][0], self.q[j][0])

    def swap(self, i: int, j: int) -> None:
        q = self.q
        q[i], q[j] = q[j], q[i]

    # --- insertion sorts ---------------------------------------------------------------------------

    def unguarded_linear_insert(self, last: int, val: tuple | None = None) -> None:
        q, less = self.q, self.less
        if val is None:
            val = q[last]
        nxt = last - 1
        while less(val[0], q[nxt][0]):
            q[last] = q[nxt]
            last = nxt
            nxt -= 1
        q[last] = val

    def insertion_sort(self, first: int, last: int) -> None:
        if first == last:
            return
        q, less = self.q, self.less
        for i in range(first + 1, last):
            if less(q[i][0], q[first][0]):
                val = q[i]
                q[first + 1 : i + 1] = q[first:i]
                q[first] = val
            else:
                self.unguarded_linear_insert(i)

    def final_insertion_sort(self, first: int, last: int) -> None:
        if last - first > _THRESHOLD:
            self.insertion_sort(first, first + _THRESHOLD)
            for i in range(first + _THRESHOLD, last):
                self.unguarded_linear_insert(i)
        else:
            self.insertion_sort(first, last)

    # --- quicksort partitioning --------------------------------------------------------------------

    def move_median_to_first(self, result: int, a: int, b: int, c: int) -> None:
        comp = self.comp
        if comp(a, b):
            if comp(b, c):
                self.swap(result, b)
            elif comp(a, c):
                self.swap(result, c)
            else:
                self.swap(result, a)
        elif comp(a, c):
            self.swap(result, a)
        elif comp(b, c):
            self.swap(result, c)
        else:
            self.swap(result, b)

    def unguarded_partition(self, first: int, last: int, pivot: int) -> int:
        comp = self.comp
        while True:
            while comp(first, pivot):
                first += 1
            last -= 1
            while comp(pivot, last):
                last -= 1
            if not first < last:
                return first
            self.swap(first, last)
            first += 1

    def unguarded_partition_pivot(self, first: int, last: int) -> int:
        mid = first + (last - first) // 2
        self.move_median_to_first(first, first + 1, mid, last - 1)
        return self.unguarded_partition(first + 1, last, first)

    # --- heaps ------------------------------------------------------------------------------------------

    def push_heap(self, first: int, hole: int, top: int, value: tuple) -> None:
        q, less = self.q, self.less
        parent = (hole - 1) // 2
        while hole > top and less(q[first + parent][0], value[0]):
            q[first + hole] = q[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        q[first + hole] = value

    def adjust_heap(self, first: int, hole: int, length: int, value: tuple) -> None:
        q = self.q
        top = hole
        child = hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if self.comp(first + child, first + child - 1):
                child -= 1
            q[first + hole] = q[first + child]
            hole = child
        if length & 1 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            q[first + hole] = q[first + child - 1]
            hole = child - 1
        self.push_heap(first, hole, top, value)

    def make_heap(self, first: int, last: int) -> None:
        length = last - first
        if length < 2:
            return
        parent = (length - 2) // 2
        while True:
            self.adjust_heap(first, parent, length, self.q[first + parent])
            if parent == 0:
                return
            parent -= 1

    def pop_heap(self, first: int, last: int, result: int) -> None:
        q = self.q
        value = q[result]
        q[result] = q[first]
        self.adjust_heap(first, 0, last - first, value)

    def heap_select(self, first: int, middle: int, last: int) -> None:
        self.make_heap(first, middle)
        for i in range(middle, last):
            if self.comp(i, first):
                self.pop_heap(first, middle, i)

    def sort_heap(self, first: int, last: int) -> None:
        while last - first > 1:
            last -= 1
            self.pop_heap(first, last, last)

    # --- the std:: entry points -------------------------------------------------------------------------

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self.heap_select(first, middle, last)
        self.sort_heap(first, middle)

    def introsort_loop(self, first: int, last: int, depth: int) -> None:
        while last - first > _THRESHOLD:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.unguarded_partition_pivot(first, last)
            self.introsort_loop(cut, last, depth)
            last = cut

    def sort(self, first: int, last: int) -> None:
        if first != last:
            self.introsort_loop(first, last, _lg(last - first) * 2)
            self.final_insertion_sort(first, last)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = _lg(last - first) * 2
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.swap(first, nth)
                return
            depth -= 1
            cut = self.unguarded_partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)


def topk_row(values: list, k: int, largest: bool, sorted: bool) -> list:
    """The indices torch's CPU topk returns for one row (``values`` as Python numbers)."""
    n = len(values)
    if k == 0:
        return []
    row = _Row(values, largest)
    if k * 64 <= n:
        row.partial_sort(0, k, n)
    else:
        row.nth_element(0, k - 1, n)
        if sorted:
            row.sort(0, k - 1)
    return [i for _, i in row.q[:k]]


def _needs_emulation(rows: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """Rows whose top-k indices depend on the algorithm when sorted: NaNs, or equal values among the
    k + 1 best (with distinct values every algorithm returns the same indices in the same order)."""
    n = rows.shape[-1]
    if rows.dtype.kind in "fc":
        nan = np.isnan(rows).any(axis=-1)
    else:
        nan = np.zeros(rows.shape[0], bool)
    m = min(k + 1, n)  # the k + 1 best, found in linear time, then sorted
    if m == n:
        window = np.sort(rows, axis=-1)
    elif largest:
        window = np.sort(np.partition(rows, n - m, axis=-1)[:, n - m :], axis=-1)
    else:
        window = np.sort(np.partition(rows, m - 1, axis=-1)[:, :m], axis=-1)
    return nan | (np.diff(window, axis=-1) == 0).any(axis=-1)


def topk_order(x: np.ndarray, k: int, dim: int, largest: bool, sorted: bool,
               fallback: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:  # fmt: skip
    """torch's CPU topk indices for ``x`` along ``dim``, or None when the stable order (what the device
    kernel computes) already equals them. ``fallback(rows)`` gives the stable order of rows."""
    moved = np.moveaxis(x, dim, -1)
    rows = moved.reshape(-1, moved.shape[-1]) if moved.size else moved.reshape(0, moved.shape[-1])
    special = np.ones(rows.shape[0], bool) if not sorted else _needs_emulation(rows, k, largest)
    if not special.any():
        return None
    order = fallback(rows)[:, :k].astype(np.int64)
    for r in np.flatnonzero(special):
        order[r] = topk_row(rows[r].tolist(), k, largest, sorted)
    out = order.reshape(moved.shape[:-1] + (k,))
    return np.moveaxis(out, -1, dim)
