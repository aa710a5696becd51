"""Issue 2: creation, dtypes, metadata, devices, the NumPy bridge and bad input, torch vs torchlike."""

import numpy as np
import pytest
from _harness import check, check_raises

A = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize("expr", [
    "t.tensor([[1, -1], [-1, 1]])", "t.tensor([5.5, 3])", "t.tensor(3)", "t.tensor(2.5)", "t.tensor(True)",
    "t.tensor([1, 2.5])", "t.tensor([True, 1])", "t.tensor([[1, 2], [3, 4]], dtype=t.float64)", "t.tensor([])",
    "t.tensor(1 + 2j)", "t.zeros([2, 2])", "t.zeros(5, 3, dtype=t.long)", "t.ones([1, 2, 5])", "t.ones((2,))",
    "t.zeros(t.Size([2, 3]))", "t.zeros(())", "t.full((2, 3), 7)", "t.full((2,), 1.5)", "t.full((2,), True)",
    "t.arange(5)", "t.arange(1, 4)", "t.arange(0, 1, 0.1)", "t.arange(1.0, 4)", "t.arange(10, 0, -3)",
    "t.arange(0, 5, dtype=t.float64)", "t.linspace(0, 1, 7)", "t.linspace(-3.3, 7.1, 11)", "t.linspace(0, 10, 5, dtype=t.int64)",
    "t.logspace(0, 2, 5)", "t.logspace(0, 3, 4, base=2.0)", "t.eye(3)", "t.eye(2, 3)", "t.eye(2, dtype=t.int32)",
    "t.zeros_like(t.ones(2, 3, dtype=t.int32))", "t.ones_like(t.zeros(2))", "t.full_like(t.zeros(2), 3.5)",
    "t.ones(5, 3).new_ones(2, 2)", "t.zeros(2, dtype=t.double).new_zeros((3,))", "t.ones(2).new_full((2,), 4)",
    "t.ones(2).new_tensor([1, 2])", "t.tril_indices(3, 3)", "t.triu_indices(3, 4, 1)",
])  # fmt: skip
def test_creation(expr):
    check(lambda t: eval(expr), [], grad=False)


def test_size_and_metadata():
    def f(t, a):
        s = a.size()
        return (repr(s), str(s), s.numel(), s[1:], a.size(1), a.size(-1), a.shape, a.dim(), a.ndim, a.numel(),
                len(a), a.dtype, str(a.dtype), a.is_floating_point(), a.element_size(), a.T.shape, a.mT.shape,
                a.stride(), a.t().stride(), a.t().is_contiguous(), a[:, 1].storage_offset(), a.nbytes, a.itemsize,
                repr(t.float32), t.float is t.float32, t.long, t.get_default_dtype(), repr(t.Size([])))  # fmt: skip

    check(f, [A], grad=False)


def test_is_contiguous_per_memory_format():
    """``is_contiguous(memory_format=...)`` reads the geometry as torch does, for tensors whose strides are
    channels-last (a permuted copy) or not, size-1 channels, other ranks, and the 3-d format."""

    def f(t):
        x = t.ones(2, 3, 4, 5)
        cl = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        geos = [x, cl, x.transpose(1, 2), t.ones(2, 1, 4, 5), t.ones(3, 4), t.ones(2, 3, 4, 5, 6),
                t.ones(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3), x[:, :, ::2]]
        fmts = [t.contiguous_format, t.channels_last, t.channels_last_3d, t.preserve_format]
        return [[g.is_contiguous(memory_format=m) for m in fmts] + [g.is_contiguous(), g.stride()] for g in geos]

    check(f, [], grad=False)


def test_scalar_conversions():
    def f(t):
        x = t.tensor([2.5])
        return (x.item(), float(x), int(x), bool(t.tensor(0)), t.tensor(7).__index__(), t.tensor([[1, 2]]).tolist(),
                t.tensor(1.5).tolist(), complex(t.tensor(2.0)), t.tensor([1.25, 2.5], dtype=t.float16).tolist())  # fmt: skip

    check(f, [], grad=False)


def test_finfo_iinfo():
    def f(t):
        return [repr(t.finfo(d)) for d in (t.float16, t.bfloat16, t.float32, t.float64)] + [
            repr(t.iinfo(d)) for d in (t.uint8, t.int8, t.int16, t.int32, t.int64)] + [
            t.finfo().eps, t.iinfo(t.int64).max, t.finfo(t.float32).tiny]  # fmt: skip

    check(f, [], grad=False)


def test_numpy_bridge_shares_memory():
    def f(t):
        a = t.ones(5)
        b = a.numpy()
        a.add_(1)
        c = np.ones(5)
        d = t.from_numpy(c)
        np.add(c, 1, out=c)
        e = t.arange(6.0).view(2, 3)
        n = e.numpy()
        e[0, 1] = 100.0
        v = e.t()
        nv = v.numpy()
        f2 = t.as_tensor(c)
        c[0] = 42
        return a, b.tolist(), d, n.tolist(), nv.tolist(), nv.strides, f2, np.asarray(t.ones(2)).dtype.name

    check(f, [], grad=False)


def test_numpy_conversion_errors():
    check_raises(lambda t: t.ones(2, requires_grad=True).numpy())
    check_raises(lambda t: t.from_numpy(np.ones(3)[::-1]), match_message=False)
    check_raises(lambda t: t.from_numpy(np.array(["a"])), match_message=False)


def test_views_alias():
    def f(t, a):
        a = a.clone()
        y = a.view(12)
        y.add_(1)
        a[:, 1] = 0
        z = a.t()
        z[0].fill_(-1)
        s = a.narrow(1, 2, 2)
        s.mul_(10)
        return a, y, z.is_contiguous(), s.storage_offset(), s.stride()

    check(f, [A], grad=False)


@pytest.mark.parametrize("case", [
    "a.view(5, 2)", "a.view(-1, -1)", "a.t().view(-1)", "t.cat([a, a[0]])", "t.cat([a, a[:2]], 1)",
    "a @ a", "t.matmul(a[0], a[:, 0])", "a.sum(2)", "a.transpose(0, 3)", "a[5]", "a[:, 9]", "a[0, 0, 0]",
    "a[::-1]", "a[1.5]", "a.squeeze(4)", "t.stack([a, a[0]])", "a.expand(2, 5)", "a.permute(0)",
    "a.unsqueeze(5)", "a + t.ones(5)", "t.zeros(2, -1)", "t.arange(0, 10, 0)", "t.arange(10, 0, 1)",
    "t.tensor([[1, 2], [3]])", "t.zeros(2.5)", "a.item()", "bool(a)", "len(t.tensor(1.0))",
    "t.ones(2).to('cuda')", "t.device('cud')", "t.device('cuda:x')",
])  # fmt: skip
def test_bad_input_raises_like_torch(case):
    exact = case not in ("a[::-1]", "t.zeros(2.5)", "a.transpose(0, 3)", "a.permute(0)")
    check_raises(lambda t, a: eval(case), [A], match_message=exact)


def test_cuda_fallback_snippet():
    def f(t):
        x = t.tensor([1.9551])
        out = []
        if t.cuda.is_available():
            device = t.device("cuda")
            y = t.ones_like(x, device=device)
            x = x.to(device)
            out.append(x + y)
        out.append(x.to("cpu", t.double))
        return out, t.cuda.is_available(), t.cuda.device_count(), str(t.device("cpu")), repr(t.device("cuda:1"))

    check(f, [], grad=False)


def test_repr_suffixes():
    def f(t):
        x = t.ones(2, 2, requires_grad=True)
        return [repr(x), repr(x + 2), repr(t.ones(2, dtype=t.float64)), repr(t.zeros(0, 3)), repr(t.tensor([])),
                repr(t.arange(6).view(2, 3)), repr(t.tensor([True, False])), repr(t.rand(3) * 0 + 1e-8)]  # fmt: skip

    check(f, [], grad=False)


def test_float_of_a_tensor_requiring_grad_warns_once():
    import os
    import subprocess
    import sys

    code = (
        "import warnings, {lib} as t\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    x = t.ones(1, requires_grad=True)\n"
        "    int(x * 2); x.item(); bool(x); float(x); float(x * 3); float(x.detach())\n"
        "print([str(m.message).splitlines()[0] for m in w])\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))
    out = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True, text=True, env=env,
                          timeout=120).stdout for lib in ("torch", "torchlike")]  # fmt: skip
    assert out[0] == out[1] and "Converting a tensor with requires_grad=True" in out[0], out
