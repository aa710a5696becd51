"""Shape and joining ops against torch: values, dtypes, shapes, grad_fn names, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest
from _harness import check, check_raises

rng = np.random.RandomState(0)
A = rng.randn(3, 4)  # float64 so gradients compare tightly
B = rng.randn(2, 3, 4)
V = rng.randn(3)
S = np.array(1.5)
I = np.arange(12).reshape(3, 4)
E = np.zeros((0, 4))


def _name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# (id, fn(lib, *inputs), inputs); fn returns tensors and grad_fn names
CASES = [
    ("cat", lambda t, a, b: t.cat([a, b[0], a.t().t()], 0), [A, B]),
    ("cat_neg_dim", lambda t, a: t.cat((a, a), -1), [A]),
    ("cat_promote", lambda t, a, i: t.cat([a, i]), [A, I]),
    ("cat_empty_legacy", lambda t, a: t.cat([a, t.zeros(0, dtype=t.float64)]), [A]),
    ("cat_out", lambda t, a: t.cat([a.detach(), a.detach()], out=t.zeros(6, 4, dtype=t.float64)), [A]),
    ("concat", lambda t, a: (t.concat([a, a], 1), t.concatenate([a, a])), [A]),
    ("stack", lambda t, a: (t.stack([a, a * 2], 1), t.stack([a, a], -1)), [A]),
    ("stack_0d", lambda t, s: t.stack([s, s]), [S]),
    ("hstack", lambda t, a, v: (t.hstack([a, a]), t.hstack([v, v]), _name(t.hstack([a, a]))), [A, V]),
    ("vstack", lambda t, a, v: (t.vstack([a, a]), t.vstack([v, v]), t.row_stack([v, v])), [A, V]),
    ("dstack", lambda t, a, v: (t.dstack([a, a]), t.dstack([v, v])), [A, V]),
    ("column_stack", lambda t, a, v: (t.column_stack([v, v]), t.column_stack([a[:, :1], v, a])), [A, V]),
    ("flip", lambda t, b: (t.flip(b, [0, 2]), b.flip(1), b.flip((-1,)), _name(b.flip(0))), [B]),
    ("fliplr_ud", lambda t, a: (t.fliplr(a), t.flipud(a), a.fliplr()), [A]),
    ("roll", lambda t, a: (t.roll(a, 1), a.roll(-2, 1), a.roll((1, 2), (0, 1)), _name(a.roll(1))), [A]),
    ("rot90", lambda t, a: (a.rot90(), t.rot90(a, 2), t.rot90(a, -1, [1, 0]), a.rot90(4), _name(a.rot90())), [A]),
    ("rot90_3d", lambda t, b: t.rot90(b, 1, (0, 2)), [B]),
    ("repeat", lambda t, a: (a.repeat(2, 1), a.repeat((1, 2, 1)), _name(a.repeat(2, 1))), [A]),
    ("repeat_0d", lambda t, s: s.repeat(3), [S]),
    ("tile", lambda t, a: (t.tile(a, (2,)), a.tile(2, 1, 1), _name(t.tile(a, (2,)))), [A]),
    (
        "repeat_interleave",
        lambda t, a: (a.repeat_interleave(2), t.repeat_interleave(a, 2, dim=0), _name(a.repeat_interleave(2))),
        [A],
    ),  # fmt: skip
    (
        "repeat_interleave_tensor",
        lambda t, a: (
            a.repeat_interleave(t.tensor([1, 0, 2]), dim=0),
            _name(a.repeat_interleave(t.tensor([1, 0, 2]), dim=0)),
        ),
        [A],
    ),  # fmt: skip
    ("repeat_interleave_counts", lambda t: t.repeat_interleave(t.tensor([2, 0, 1])), []),
    (
        "broadcast_to",
        lambda t, v: (t.broadcast_to(v, (2, 3)), v.broadcast_to((4, 3)).stride(), _name(v.broadcast_to((2, 3)))),
        [V],
    ),
    ("broadcast_tensors", lambda t, a, v: t.broadcast_tensors(a, v[:, None], t.tensor(2.0, dtype=t.float64)), [A, V]),
    (
        "broadcast_shapes",
        lambda t: (t.broadcast_shapes((2,), (3, 1), (1, 1, 1)), t.broadcast_shapes(5, (1,)), t.broadcast_shapes()),
        [],
    ),
    ("meshgrid_ij", lambda t, v: t.meshgrid(v, v[:2], indexing="ij"), [V]),
    ("meshgrid_xy", lambda t, v: t.meshgrid([v, v[:2], v[:1]], indexing="xy"), [V]),
    ("tril_triu", lambda t, a: (t.tril(a), a.triu(1), t.tril(a, -1), a.triu(-5), _name(a.tril())), [A]),
    ("tril_batched", lambda t, b: (b.tril(), t.triu(b, 2)), [B]),
    ("tril_int", lambda t, i: (i.tril(), i.triu(1)), [I]),
    (
        "diag",
        lambda t, a, v: (
            t.diag(v),
            t.diag(v, 1),
            t.diag(v, -2),
            t.diag(a),
            t.diag(a, 1),
            t.diag(a, -1),
            _name(t.diag(v)),
            _name(t.diag(a)),
        ),
        [A, V],
    ),  # fmt: skip
    ("diagonal", lambda t, b: (b.diagonal(), t.diagonal(b, 1, 1, 2), b.diagonal(-1, 2, 0), b.diagonal(offset=9)), [B]),
    (
        "diag_embed",
        lambda t, a: (t.diag_embed(a), t.diag_embed(a, 1), t.diag_embed(a, -1, 0, 2), _name(t.diag_embed(a))),
        [A],
    ),
    ("diagflat", lambda t, a, v: (t.diagflat(v), t.diagflat(a, 1), t.diagflat(v, -1)), [A, V]),
    ("trace", lambda t, a, i: (t.trace(a), i.trace(), _name(a.trace())), [A, I]),
    ("kron", lambda t, a, v: (t.kron(a, a[:2, :2]), t.kron(v, v), t.kron(a, v), _name(t.kron(v, v))), [A, V]),
    ("kron_int", lambda t, i: t.kron(i, i[:1]), [I]),
    ("cartesian_prod", lambda t, v: (t.cartesian_prod(v, v[:2]), t.cartesian_prod(v)), [V]),
    ("block_diag", lambda t, a, v, s: t.block_diag(a, v, s, a[:1]), [A, V, S]),
    (
        "combinations",
        lambda t, v: (t.combinations(v), t.combinations(v, 3), t.combinations(v, with_replacement=True)),
        [V],
    ),
    (
        "atleast",
        lambda t, v, s, a, b: (
            t.atleast_1d(s),
            t.atleast_2d(v),
            t.atleast_3d(v),
            t.atleast_3d(a),
            t.atleast_3d(b),
            t.atleast_1d(v, s),
            t.atleast_2d((s, v)),
            _name(t.atleast_2d(v)),
            _name(t.atleast_3d(s)),
        ),
        [V, S, A, B],
    ),  # fmt: skip
    ("ravel", lambda t, a: (a.ravel(), a.t().ravel(), t.ravel(a[:, 1:]), _name(a.t().ravel())), [A]),
    (
        "take",
        lambda t, a: (
            t.take(a, t.tensor([[0, 5], [-1, 11]])),
            a.t().take(t.tensor([1, 2])),
            _name(a.take(t.tensor([0]))),
        ),
        [A],
    ),
    (
        "take_along_dim",
        lambda t, a: (
            t.take_along_dim(a, t.tensor([[0], [2], [1]]), 1),
            t.take_along_dim(a, t.tensor([3, 0])),
            t.take_along_dim(a, t.tensor([[0, 1, 2, 0]]), dim=0),
        ),
        [A],
    ),  # fmt: skip
    (
        "narrow_copy",
        lambda t, a: (a.narrow_copy(1, 1, 2), t.narrow_copy(a, 0, 1, 2), _name(a.narrow_copy(0, 0, 1))),
        [A],
    ),
    (
        "squeeze",
        lambda t, b: (
            b[:, :1].squeeze(),
            b[:1].squeeze(0),
            b.unsqueeze(0).squeeze((0, 2)),
            b.squeeze(1),
            _name(b.squeeze((0, 1))),
        ),
        [B],
    ),  # fmt: skip
    ("unsqueeze", lambda t, b: (b.unsqueeze(0), t.unsqueeze(b, -1), b.unsqueeze(2).stride()), [B]),
    ("expand", lambda t, v: (v.expand(2, 3), v[None].expand(4, -1), v.expand(1, 2, 3).stride()), [V]),
    (
        "flatten",
        lambda t, b: (b.flatten(), t.flatten(b, 1), b.flatten(0, 1), b.transpose(0, 1).flatten(1), _name(b.flatten(1))),
        [B],
    ),
    ("unflatten", lambda t, b: (b.unflatten(2, (2, 2)), t.unflatten(b, 1, (-1, 1)), b.unflatten(-1, (4,))), [B]),
    (
        "movedim",
        lambda t, b: (b.movedim(0, 2), t.movedim(b, (0, 1), (2, 0)), b.moveaxis(-1, 0), _name(b.movedim(0, 1))),
        [B],
    ),
    (
        "swapaxes",
        lambda t, b: (b.swapaxes(0, 2), t.swapdims(b, 1, 0), t.transpose(b, -1, 0), _name(b.swapaxes(0, 1))),
        [B],
    ),
    # NOTE: torch's clone keeps a dense input's strides (a.t().clone().stride() == (1, 3)); torchlike's
    # results are always contiguous, so that is not compared.
    (
        "contiguous_clone",
        lambda t, a: (
            a.t().contiguous(),
            a.t().contiguous().stride(),
            a.clone(),
            _name(a.t().contiguous()),
            a.contiguous() is a,
        ),
        [A],
    ),  # fmt: skip
    (
        "split_chunk",
        lambda t, b: (
            b.split(2, 2),
            t.split(b, [1, 3], 2),
            b.chunk(2, 1),
            t.chunk(b, 3, 2),
            b.tensor_split(3, 2),
            t.tensor_split(b, [1, 2], 1),
            b.hsplit([2]),
            b.vsplit([1]),
            b.dsplit(2),
            b.unbind(1),
        ),
        [B],
    ),  # fmt: skip
]


# Gradients are compared for one representative case per op (each new backward graph costs JAX
# compiles); the others compare values, dtypes, shapes and grad_fn names only.
GRAD = {
    "block_diag",
    "broadcast_tensors",
    "cat",
    "column_stack",
    "combinations",
    "diag_embed",
    "diagflat",
    "hstack",
    "kron",
    "meshgrid_xy",
    "movedim",
    "narrow_copy",
    "ravel",
    "repeat",
    "repeat_interleave_tensor",
    "roll",
    "rot90",
    "stack",
    "take",
    "take_along_dim",
    "trace",
    "tril_triu",
    "unflatten",
}


@pytest.mark.parametrize("name,fn,inputs", CASES, ids=[c[0] for c in CASES])
def test_shape_op(name, fn, inputs):
    check(fn, inputs, grad=name in GRAD)


def test_shape_ops_float32():
    check(lambda t, a: (t.flip(a, [0]), a.roll(1, 0), a.rot90(), a.repeat(2, 1), t.tril(a), t.kron(a, a),
                        t.diag_embed(a), t.hstack([a, a]), a.repeat_interleave(2, 0)), [A.astype(np.float32)],
          grad=False)  # fmt: skip


def test_shape_ops_bool_and_int():
    for x in (A > 0, I):
        check(lambda t, a: (t.flip(a, [0]), a.roll(1, 0), a.rot90(), a.repeat(2, 1), t.tril(a), t.triu(a),
                            t.diag(a), t.hstack([a, a]), t.stack([a, a]), a.repeat_interleave(2, 0), a.ravel(),
                            t.take(a, t.tensor([1])), t.diag_embed(a)), [x])  # fmt: skip


def test_shape_ops_empty():
    check(lambda t, e: (t.flip(e, [0]), e.roll(1, 0), e.repeat(2, 1), t.cat([e, e]), t.tril(e), e.t().diag(),
                        t.kron(e, e), e.ravel(), t.stack([e, e]), e.flatten()), [E])  # fmt: skip


def test_inplace_and_out():
    def fn(t, a):
        b = a * 1
        b.tril_(1)
        c = a * 1
        c.triu_()
        o = t.zeros(3, 4, dtype=t.float64)
        t.tril(a.detach(), out=o)
        return b, c, o, _name(b)

    check(fn, [A])


def test_inplace_view_ops():
    def fn(t, b):
        outs = []
        for op in (
            "squeeze_()",
            "squeeze_(1)",
            "unsqueeze_(0)",
            "transpose_(0, 2)",
            "swapaxes_(0, 1)",
            "swapdims_(1, 2)",
        ):
            x = b[:, :1] * 1
            r = eval("x." + op)
            outs += [r is x, tuple(x.shape), x.stride(), x._is_view(), _name(x), x * 2]
        y = b * 1
        v = y[0]
        v.t_()
        v[0, 1] = 5.0
        z = b.detach().clone()
        w = z[1]
        z.unsqueeze_(0)
        z[0, 1, 0, 0] = -7.0
        return outs, y, v, z, w, w._base is z

    check(fn, [B])


def test_scatter_views_and_misc():
    check(lambda t, a, b: (t.slice_scatter(a, a[:, :2] * 10, 1, 1, 3), t.slice_scatter(a, a[::2], 0, None, None, 2),
                           t.select_scatter(a, a[0] * 3, 0, -1), t.diagonal_scatter(a, a[0, :3], 0), t.diagonal_scatter(a, a[0, :2], 2),
                           t.diagonal_scatter(b, b[0, :2, 0][None].expand(4, 2) * 0, 0, 0, 1), _name(t.slice_scatter(a, a[:, :2], 1, 0, 2)),
                           a.type_as(t.ones(1, dtype=t.int32)), b.split_with_sizes([1, 2], 1)), [A, B])  # fmt: skip
    check(lambda t, a: (a.clone().fill_diagonal_(2.5), t.ones(7, 3, dtype=t.float64).fill_diagonal_(4.0, wrap=True),
                        t.zeros(7, 3).fill_diagonal_(1.0), t.zeros(3, 3, 3).fill_diagonal_(2.0), (a * 1).fill_diagonal_(0.0)), [A])  # fmt: skip


def test_scatter_view_errors():
    check_raises(lambda t, a: t.slice_scatter(a, a[:, :1], 1, 0, 2), [A])
    check_raises(lambda t, a: t.select_scatter(a, a[0], 1, 0), [A])


# --- dtype conversion ----------------------------------------------------------------------------------

F = np.array([0.5, -0.5, 1.7, -1.7, 300.7, -300.7, 70000.2, 3e9, -3e9, 1e19, np.nan, np.inf, -np.inf, 255.9, 128.5])
INTS = np.array([127, 128, 255, 256, -1, -129, 2**31, -(2**31) - 1, 2**40 + 5])


@pytest.mark.parametrize("src", ["float32", "float64", "float16", "bfloat16"])
def test_float_to_int_truncation_and_wrap(src):
    check(lambda t, x: (x.int(), x.long(), x.short(), x.char(), x.byte(), x.bool(), x.to(t.int64)), [F], dtype=src)


def test_int_overflow_wraps():
    check(lambda t, x: (x.int(), x.short(), x.char(), x.byte(), x.bool(), x.half(), x.bfloat16(), x.float(), x.double()),
          [INTS])  # fmt: skip


def test_copy_and_setitem_convert_as_torch():
    def fn(t, f):
        x = t.zeros(len(f), dtype=t.uint8)
        x.copy_(f)
        y = t.zeros(2, len(f), dtype=t.int16)
        y[0] = f
        z = t.zeros(len(f), dtype=t.int32)
        z[...] = f.float()
        return x, y, z

    check(fn, [F[np.isfinite(F)]], grad=False)


def test_conversion_methods():
    def fn(t, a):
        return (a.float(), a.double(), a.half(), a.bfloat16(), a.type(t.float32), a.type("torch.IntTensor"), a.type(),
                a.to(t.float16), a.to("cpu", t.float32), a.to(t.zeros(1, dtype=t.int32)), a.to(dtype=t.bfloat16),
                _name(a.float()), _name(a.double()), a.double() is a, a.to(t.float64, copy=True) is a,
                a.float().to(a) is a)  # fmt: skip

    check(fn, [A], grad=False)
    check(lambda t, a: (a.float() * 2, a.half()), [A])


# --- errors -------------------------------------------------------------------------------------------

ERRORS = [
    ("cat_0d", lambda t, s: t.cat([s, s]), [S]),
    ("cat_empty_list", lambda t: t.cat([]), []),
    ("cat_ndim", lambda t, a, v: t.cat([a, v]), [A, V]),
    ("cat_sizes", lambda t, a: t.cat([a, a[:, :2]]), [A]),
    ("cat_dim", lambda t, a: t.cat([a, a], 2), [A]),
    ("stack_sizes", lambda t, a: t.stack([a, a[:2]]), [A]),
    ("stack_empty", lambda t: t.stack([]), []),
    ("stack_dim", lambda t, a: t.stack([a, a], 4), [A]),
    ("hstack_empty", lambda t: t.hstack([]), []),
    ("flip_dup", lambda t, a: t.flip(a, [0, 0]), [A]),
    ("flip_range", lambda t, a: a.flip(2), [A]),
    ("fliplr_1d", lambda t, v: t.fliplr(v), [V]),
    ("flipud_0d", lambda t, s: t.flipud(s), [S]),
    ("roll_align", lambda t, a: t.roll(a, (1, 2), 0), [A]),
    ("roll_nodim", lambda t, a: t.roll(a, (1, 2)), [A]),
    ("rot90_dims", lambda t, a: a.rot90(1, [0, 1, 2]), [A]),
    ("rot90_same", lambda t, a: a.rot90(1, [0, 0]), [A]),
    ("rot90_1d", lambda t, v: v.rot90(), [V]),
    ("rot90_range", lambda t, a: a.rot90(1, [0, 2]), [A]),
    ("repeat_few", lambda t, a: a.repeat(2), [A]),
    ("repeat_interleave_neg", lambda t, a: a.repeat_interleave(-1), [A]),
    ("repeat_interleave_size", lambda t, a: a.repeat_interleave(t.tensor([1, 2]), dim=0), [A]),
    ("tril_1d", lambda t, v: t.tril(v), [V]),
    ("diag_3d", lambda t, b: t.diag(b), [B]),
    ("diag_embed_same", lambda t, a: t.diag_embed(a, 0, 1, 1), [A]),
    ("trace_1d", lambda t, v: t.trace(v), [V]),
    ("cartesian_2d", lambda t, a: t.cartesian_prod(a, a), [A]),
    ("block_diag_3d", lambda t, b: t.block_diag(b), [B]),
    ("hsplit_div", lambda t, b: b.hsplit(2), [B]),
    ("vsplit_1d", lambda t, v: t.vsplit(v, 1), [V]),
    ("dsplit_2d", lambda t, a: t.dsplit(a, [1]), [A]),
    ("rot90_neg_same", lambda t, a: a.rot90(1, [0, -2]), [A]),
    ("repeat_interleave_neg_tensor", lambda t, a: a.repeat_interleave(t.tensor([-1, 1, 1]), dim=0), [A]),
    ("movedim_repeat", lambda t, b: b.movedim([0, 0], [1, 2]), [B]),
    ("unflatten_empty", lambda t, b: b.unflatten(1, ()), [B]),
    ("meshgrid_indexing", lambda t, v: t.meshgrid(v, v, indexing="ab"), [V]),
    ("broadcast_tensors", lambda t, a, v: t.broadcast_tensors(a, v), [A, V]),
    ("broadcast_to", lambda t, a: t.broadcast_to(a, (2, 4)), [A]),
    ("broadcast_shapes", lambda t: t.broadcast_shapes((2, 3), (4,)), []),
    ("take_range", lambda t, a: t.take(a, t.tensor([12])), [A]),
    ("take_int32", lambda t, a: t.take(a, t.tensor([1], dtype=t.int32)), [A]),
    ("take_along_dim_ndim", lambda t, a: t.take_along_dim(a, t.tensor([0]), 1), [A]),
    ("narrow_copy_len", lambda t, a: a.narrow_copy(0, 2, 2), [A]),
    ("expand_shrink", lambda t, a: a.expand(3), [A]),
    ("expand_mismatch", lambda t, a: a.expand(3, 5), [A]),
    ("view_bad", lambda t, a: a.t().view(12), [A]),
    ("view_size", lambda t, a: a.view(5, -1), [A]),
    ("view_two_infer", lambda t, a: a.view(-1, -1), [A]),
    ("reshape_size", lambda t, a: a.reshape(5), [A]),
    ("flatten_order", lambda t, b: b.flatten(2, 1), [B]),
    ("unflatten_size", lambda t, b: b.unflatten(1, (2, 2)), [B]),
    ("squeeze_range", lambda t, a: a.squeeze(3), [A]),
    ("unsqueeze_range", lambda t, a: a.unsqueeze(4), [A]),
    ("permute_dup", lambda t, b: b.permute(0, 0, 1), [B]),
    ("permute_len", lambda t, b: b.permute(0, 1), [B]),
    ("t_3d", lambda t, b: b.t(), [B]),
    ("movedim_len", lambda t, b: b.movedim((0, 1), 2), [B]),
    ("split_sizes", lambda t, a: a.split([1, 1], 0), [A]),
    ("chunk_zero", lambda t, a: a.chunk(0), [A]),
    ("narrow_0d", lambda t, s: s.narrow(0, 0, 1), [S]),
    ("select_range", lambda t, a: a.select(1, 4), [A]),
    ("unbind_0d", lambda t, s: s.unbind(), [S]),
    ("type_bad", lambda t, a: a.type("torch.FooTensor"), [A]),
]


@pytest.mark.parametrize("fn,inputs", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_shape_errors(fn, inputs):
    check_raises(fn, inputs)


def test_meshgrid_errors_and_warning():
    # torch prints the offending tensor in its legacy format; compare the type only
    check_raises(lambda t, a: t.meshgrid(a, a, indexing="ij"), [A], match_message=False)
    import warnings

    import torch

    import torchlike

    for lib in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.meshgrid(lib.ones(2), lib.ones(3))
        assert any("indexing argument" in str(x.message) for x in w), lib
