"""The eager fast path (registry.call's plans, ColdKernel.host, Tensor._geometry's stride table): a recurring
small call must give what its first call (the full path) gives, bit for bit, with the same dtype and autograd
record, whatever changed between the calls."""

import numpy as np
import pytest

import torchlike as torch
from torchlike._core import cold_kernels, kernel_cache
from torchlike._core.views import contiguous_strides
from torchlike._ops import registry

pytestmark = pytest.mark.skipif(torch.lazy.enabled(), reason="plans and the host path serve eager mode")

rng = np.random.RandomState(0)
X = rng.randn(4, 5).astype(np.float32)
Y = rng.randn(4, 5).astype(np.float32)


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.numpy().view(np.uint8), b.numpy().view(np.uint8))


CASES = {
    "add": lambda x, y: x + y,
    "sub_alpha": lambda x, y: torch.sub(x, y, alpha=2),
    "add_alpha_float": lambda x, y: torch.add(x, y, alpha=0.5),
    "mul_number": lambda x, y: x * 1.01,
    "mul_one": lambda x, y: x * 1,
    "minus_zero": lambda x, y: x + -0.0,
    "int_number": lambda x, y: x + 3,
    "compare": lambda x, y: x > y,
    "where": lambda x, y: torch.where(x > y, x, y),
    "cat": lambda x, y: torch.cat((x, y)),
    "exp": lambda x, y: x.exp(),
    "sum": lambda x, y: x.sum(1),
    "matmul": lambda x, y: x @ y.t(),
    "view_arg": lambda x, y: x[1:3] + y[2:4],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_recurring_call_gives_its_first_calls_bits(name):
    f = CASES[name]
    x, y = torch.tensor(X), torch.tensor(Y)
    first = f(x, y)
    for _ in range(6):  # the plan, then the host path's bound program, then its straight-line program
        _same(f(x, y), first)


@pytest.mark.parametrize("name", ["add", "mul_number", "exp", "cat", "sub_alpha"])
def test_a_recurring_call_records_the_same_gradients(name):
    f = CASES[name]
    grads = []
    for _ in range(5):
        x, y = torch.tensor(X, requires_grad=True), torch.tensor(Y, requires_grad=True)
        out = f(x, y)
        out.sum().backward()
        grads.append((type(out.grad_fn).__name__, x.grad, y.grad))
    for name_, gx, gy in grads[1:]:
        assert name_ == grads[0][0]
        _same(gx, grads[0][1])
        if gy is not None or grads[0][2] is not None:
            _same(gy, grads[0][2])


def test_a_plan_made_without_grad_mode_records_once_it_is_on():
    x, y = torch.tensor(X, requires_grad=True), torch.tensor(Y)
    with torch.no_grad():
        for _ in range(3):
            assert (x * y).grad_fn is None
    z = x * y
    assert type(z.grad_fn).__name__ == "MulBackward0"
    z.sum().backward()
    _same(x.grad, torch.tensor(Y))


def test_requires_grad_toggled_between_calls():
    x, y = torch.tensor(X), torch.tensor(Y)
    for _ in range(3):
        assert (x + y).grad_fn is None
    x.requires_grad_(True)
    for _ in range(3):
        assert type((x + y).grad_fn).__name__ == "AddBackward0"
    x.requires_grad_(False)
    assert (x + y).grad_fn is None and not (x + y).requires_grad


def test_default_dtype_change_between_calls():
    i = torch.tensor([1, 2, 3])
    old = torch.get_default_dtype()
    try:
        for _ in range(3):
            assert (i / 2).dtype == torch.float32
        torch.set_default_dtype(torch.float64)
        for _ in range(3):
            assert (i / 2).dtype == torch.float64
    finally:
        torch.set_default_dtype(old)
    assert (i / 2).dtype == torch.float32


def test_a_planned_call_whose_kernel_was_evicted_builds_it_again():
    x, y = torch.tensor(X), torch.tensor(Y)
    first = x - y
    for _ in range(3):
        x - y
    size = kernel_cache.get_kernel_cache_size()
    try:
        kernel_cache.set_kernel_cache_size(1)
        for k in range(3):  # other kernels of sub's table push its kernel out
            torch.sub(x, y, alpha=k + 2)
        _same(x - y, first)
    finally:
        kernel_cache.set_kernel_cache_size(size)
    _same(x - y, first)


def test_host_results_are_fresh_read_only_arrays():
    # ``x * 1`` passes its value through on the host (XLA drops it): never as the result itself
    k = cold_kernels.cold(lambda x: x * 1)
    k2 = cold_kernels.cold(lambda x, y: x + y * 1)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a.setflags(write=False)
    if not (cold_kernels.host_enabled() and cold_kernels._exact_on):
        pytest.skip("the host path runs in a CPU-only process")
    for _ in range(4):  # bound program, then straight-line function
        r = k.host([a])
        assert r is not a and not r.flags.writeable and np.array_equal(r, a)
        r2 = k2.host([a, a])
        assert np.array_equal(r2, a + a) and not r2.flags.writeable
        assert np.array_equal(np.asarray(k2.hot(a, a)), r2)


def test_host_signatures_of_jax_and_numpy_arrays():
    if not (cold_kernels.host_enabled() and cold_kernels._exact_on):
        pytest.skip("the host path runs in a CPU-only process")
    import jax.numpy as jnp

    k = cold_kernels.cold(lambda x, y: x - y)
    a = np.ones((3, 2), np.float32)
    a.setflags(write=False)
    j = jnp.full((3, 2), 2.0, jnp.float32)
    for _ in range(4):
        assert np.array_equal(k.host([a, j]), np.full((3, 2), -1.0, np.float32))
        assert np.array_equal(k.host([j, [j][0]]), np.zeros((3, 2), np.float32))
    assert k.host([np.ones(cold_kernels.HOST_ELEMENTS + 1, np.float32), a[0, :1]]) is None  # too big: XLA's


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (4, 5), (2, 3, 1, 4)])
def test_row_major_strides(shape):
    t = torch.zeros(shape)
    assert t.stride() == contiguous_strides(shape)
    assert t.stride() == t.stride()  # the table's answer the second time
    assert t.is_contiguous()


def test_plan_key_reads_the_arguments_arrays():
    x = torch.tensor(X)
    v = x[1:3]  # a view: its array is read through the view
    arrays = []
    key = registry._plan_key(torch.add._op, (v, x[0:2], 1), (), arrays)
    assert key is not None and len(arrays) == 3 and arrays[2] == 1
    assert np.array_equal(np.asarray(arrays[0]), X[1:3])
    assert registry._plan_key(torch.add._op, (x, object(), 1), (), []) is None


# view writes: (the view of a NumPy array, the same view of a tensor); each runs the host's NumPy write
# (through a NumPy view of the base's copy, or through positions where a step copies) from its first call
WRITES = {
    "rows": lambda x: x[1:3],
    "columns": lambda x: x[:, 1:4],
    "step": lambda x: x[::2, 1::2],
    "view_of_view": lambda x: x[1:][:, 2:][1:2],
    "transposed": lambda x: x.T[1:4] if isinstance(x, np.ndarray) else x.t()[1:4],
    "row": lambda x: x[2],
    "element": lambda x: x[2, 3],
    "flat": lambda x: x.reshape(-1)[3:11] if isinstance(x, np.ndarray) else x.view(-1)[3:11],
    "flat_element": lambda x: x.reshape(-1)[7] if isinstance(x, np.ndarray) else x.view(-1)[7],
}


@pytest.mark.parametrize("name", WRITES)
def test_view_writes_on_the_host(name):
    view = WRITES[name]
    for i in range(4):
        expect = X.copy()
        value = np.asarray(view(expect)).copy() * 0 + np.float32(i + 1.5)
        if np.ndim(value):
            value = value + np.arange(np.size(value), dtype=np.float32).reshape(np.shape(value))
        expect_view = view(expect)
        if np.ndim(expect_view):
            expect_view[...] = value
        else:
            expect.reshape(-1)[view(np.arange(X.size).reshape(X.shape))] = value
        base = torch.tensor(X)
        shared = base.numpy()  # a NumPy array sharing the base's memory sees the write
        target = view(base)
        target.copy_(torch.tensor(value))
        _same(base, torch.tensor(expect))
        assert np.array_equal(shared, expect)
        assert np.array_equal(target.numpy(), np.asarray(view(expect)))


def test_slice_writes_run_on_the_host_and_keep_aliasing():
    c = torch.zeros(8, 8)
    v = torch.ones(3, 8)
    before = cold_kernels.stats["host_calls"]
    for i in range(3):
        c[2:5] = v * i
        rows = c[2:5]
        rows[:, 1:3] = v[:, :2] * 10
        assert isinstance(c._buf.array, np.ndarray) and not c._buf.array.flags.writeable
        assert float(c.sum()) == 24 * i + 6 * 10 - 6 * i
    assert cold_kernels.stats["host_calls"] > before
    c[2:5] = torch.ones(3, 8, dtype=torch.float64)  # a cast: the compiled write
    assert float(c.sum()) == 24
    with pytest.raises(RuntimeError):
        c[0].expand(3, 8)[:] = v


@pytest.mark.parametrize(
    "shape,new", [((8, 8), (-1,)), ((8, 8), (1, 64, 1)), ((2, 3, 4), (6, 1, 4)), ((0, 3), (3, 0)), ((0, 3), (0, 3)),
                  ((1, 5), (5, 1)), ((4,), (2, 1, 2))],
)  # fmt: skip
def test_a_whole_tensors_view_has_computestrides_strides(shape, new):
    from torchlike._core.views import view_strides

    t = torch.zeros(*shape)
    v = t.view(*new)
    assert v.stride() == view_strides(tuple(t.shape), t.stride(), tuple(v.shape))
    assert v.stride() == t.view(-1).view(*new).stride()  # (a view's view: computeStride itself)


def test_a_single_slice_key_is_the_first_dims_view():
    x = torch.tensor(X)
    for key in (slice(1, 3), slice(None), slice(None, None, 2), slice(-2, None), slice(5, 9), slice(3, 1)):
        got = x[key]
        assert got._base is x and got.shape == X[key].shape and got.stride() == (5 * (key.step or 1), 1)
        assert np.array_equal(got.numpy(), X[key])
        y = torch.tensor(X)
        y[key] = torch.tensor(-np.ones_like(X[key]))
        expect = X.copy()
        expect[key] = -1
        assert np.array_equal(y.numpy(), expect)
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1] = 0.0
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
        torch.tensor(1.0)[1:]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 0"):
        torch.tensor(1.0)[1:] = 0.0


@pytest.mark.parametrize("name", [n for n in WRITES if n not in ("element", "flat_element")])
def test_view_reads_on_the_host(name):
    view = WRITES[name]
    base = torch.tensor(X) * 1  # (a host result)
    for _ in range(3):
        got = view(base) + 0  # (an op reads the view: the host read, from its first call)
        assert np.array_equal(got.numpy(), np.asarray(view(X)))
        arr = view(base)._peek()
        assert arr.flags.c_contiguous and not arr.flags.writeable and not np.shares_memory(arr, base._peek())
    n = X.copy()
    shared = torch.from_numpy(n)
    first = view(shared) * 1
    n[...] = -n  # the user's array changes: a new read of the view sees it
    assert np.array_equal((view(shared) * 1).numpy(), -first.numpy())
