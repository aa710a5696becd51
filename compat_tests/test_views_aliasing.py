"""Views and aliasing against torch: strides, storage offsets, contiguity, bases, version counters,
writes through any alias, .data/.detach(), in-place ops on views under autograd, view errors."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check, check_raises

rng = np.random.RandomState(0)
X = rng.randn(2, 3, 4)
A = rng.randn(4, 4)


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def _geometry(x, v):
    return (tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous(), v._base is x, v._is_view(), _name(v))


VIEWS = [
    "x.view(6, 4)", "x.view(-1)", "x.view(2, 12)", "x.reshape(4, 6)", "x.transpose(0, 1).reshape(-1)", "x.permute(2, 0, 1)",
    "x.transpose(0, 2)", "x.mT", "x[0].t()", "x.unsqueeze(1)", "x[:, :1].squeeze(1)", "x.squeeze()", "x[0].expand(5, 3, 4)",
    "x[:, None].expand(2, 2, 3, 4)", "x.narrow(2, 1, 2)", "x.select(1, 2)", "x.unfold(2, 2, 1)", "x.diagonal(0, 1, 2)",
    "x.diagonal(1, 0, 2)", "x.as_strided((3, 2), (1, 4), 2)", "x.flatten(1)", "x.unflatten(2, (2, 2))", "x.movedim(0, -1)",
    "x[..., 1:3].transpose(1, 2)", "x.view_as(x)", "x.expand_as(x)", "x[1].view(12)[::3]", "x.view(2, 3, 2, 2)[:, 1]",
    "x.split(2, 2)[1]", "x.chunk(3, 1)[2]", "x.unbind(2)[3]", "x.swapaxes(1, 2)", "x[:, 1:, ::2].unsqueeze(-1)",
    "x.t() if x.dim() == 2 else x[0].T", "x.view(x.dtype)", "x.float().view(t.int32)", "x.view(t.int16)",
]  # fmt: skip


@pytest.mark.parametrize("expr", VIEWS)
def test_view_geometry(expr):
    check(lambda t, x: _geometry(x, eval(expr, {"x": x, "t": t})), [X], grad=False)


def test_view_gradients():
    check(lambda t, x: (x.view(6, 4) * 2, x.permute(2, 0, 1), x[0].expand(5, 3, 4), x.unfold(2, 2, 1), x.diagonal(0, 1, 2),
                        x.as_strided((3, 2), (1, 4), 2), x[:, 1:, ::2].unsqueeze(-1), x.transpose(0, 1).reshape(-1)), [X])  # fmt: skip


def test_writes_through_views_are_seen_by_all_aliases():
    def fn(t, x):
        x = x.detach().clone()
        y = x.view(24)
        y.add_(1)
        x.transpose(0, 2)[0].fill_(-1.0)
        x[:, 1] = 0
        w = x[1, 1:3, ::2]
        w.mul_(10)
        d = x.detach()
        d[1, 2, 3] = 99.0
        x.data[0, 0, 0] = 42.0
        u = x.unsqueeze(0).expand(2, 2, 3, 4)
        s = x.split(1)[1]
        s.zero_()
        x.diagonal(0, 1, 2).copy_(t.tensor([7.0, 8.0, 9.0]))
        x.unfold(2, 2, 2)[0, 0].sub_(100)
        return x, y, w, d, u, s, x._version == y._version, d._version == x._version, x._version > 0

    check(fn, [X], grad=False)


def test_version_counters():
    def fn(t, x):
        x = x.detach().clone()
        v0 = x._version
        y = x[0]
        y.add_(1)
        z = x.detach()
        z.mul_(2)
        d = x.data
        d.add_(1)
        x[1] = 3.0
        return v0, x._version, y._version, z._version, d._version

    check(fn, [X], grad=False)


def test_param_update_through_data():
    def fn(t, x):
        p = x.clone().requires_grad_()
        (p * p).sum().backward()
        p.data -= 0.1 * p.grad
        with t.no_grad():
            p -= 0.1 * p.grad
            p[0, 0] = 3.0
        return p.detach(), p.grad, p.requires_grad, p.is_leaf, p._version

    check(fn, [X], grad=False)


def test_detach_and_data_share_memory():
    def fn(t, x):
        p = x.clone().requires_grad_()
        d = p.detach()
        d[0, 0, 0] = 5.0
        dd = p.data
        dd[1] += 1
        return p.detach(), d.requires_grad, dd.requires_grad, d._base is None, p.grad_fn is None, _name(p.detach())

    check(fn, [X], grad=False)


def test_inplace_on_views_under_autograd():
    def fn(t, x, a):
        b = x * 1
        v = b[1]
        v.mul_(a[0, 0])
        c = b.transpose(0, 2)
        c[0, :2] = a[:2, :2]
        w = b.view(6, 4)[2:]
        w.add_(a[:4])
        e = a.clone()
        e.diagonal().mul_(3)
        f = a.clone()
        f.t()[0].fill_(2.0)
        return b, v, c, w, e, f, _name(b), _name(v), _name(e), _name(f)

    check(fn, [X, A])


def test_view_of_view_after_base_change():
    def fn(t, x):
        b = x * 2
        v = b[0]
        b.add_(1)  # v must now read the new values, and its gradient go through b's new history
        w = v.exp()
        return v, w, _name(v)

    check(fn, [X])


ERRORS = [
    ("view_noncontig", lambda t, x: x.transpose(0, 1).view(-1), [X]),
    ("view_size", lambda t, x: x.view(5, 5), [X]),
    ("view_two_infer", lambda t, x: x.view(-1, -1), [X]),
    ("view_negative", lambda t, x: x.view(-2, 12), [X]),
    ("view_dtype_stride", lambda t, x: x.float().transpose(1, 2).view(t.int16), [X]),
    ("view_dtype_size", lambda t, x: x.float()[..., 1:].view(t.float64), [X]),
    ("view_dtype_offset", lambda t, x: x.float()[..., 1:3].view(t.float64), [X]),
    ("view_dtype_0d", lambda t: t.tensor(1.0).view(t.float64), []),
    ("expand_shrink", lambda t, x: x.expand(3, 4), [X]),
    ("expand_mismatch", lambda t, x: x.expand(2, 3, 5), [X]),
    ("expand_leading_negative", lambda t, x: x.expand(-1, 2, 3, 4), [X]),
    ("narrow_start", lambda t, x: x.narrow(0, 3, 1), [X]),
    ("narrow_length", lambda t, x: x.narrow(2, 1, 4), [X]),
    ("select_range", lambda t, x: x.select(2, 4), [X]),
    ("select_0d", lambda t: t.tensor(1.0).select(0, 0), []),
    ("diagonal_same", lambda t, x: x.diagonal(0, 1, 1), [X]),
    ("unfold_size", lambda t, x: x.unfold(2, 5, 1), [X]),
    ("unfold_step", lambda t, x: x.unfold(2, 2, 0), [X]),
    ("permute_len", lambda t, x: x.permute(1, 0), [X]),
    ("transpose_range", lambda t, x: x.transpose(0, 3), [X]),
    ("squeeze_range", lambda t, x: x.squeeze(-4), [X]),
    ("mT_1d", lambda t, x: x[0, 0].mT, [X]),
    ("H_3d", lambda t, x: x.H, [X]),
    ("leaf_view_inplace", lambda t, x: x.requires_grad_()[0].add_(1), [X]),
    ("leaf_inplace", lambda t, x: x.requires_grad_().add_(1), [X]),
    ("expanded_write", lambda t, x: x[0].expand(2, 3, 4).add_(1), [X]),
    ("saved_modified", lambda t, x: (lambda y: (y.exp_(), y.sum().backward()))(x.requires_grad_().exp()), [X]),
]


@pytest.mark.parametrize("fn,inputs", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_view_errors(fn, inputs):
    check_raises(fn, inputs)
