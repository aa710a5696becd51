"""Differential fuzz of bad inputs: each call runs under torch and torchlike, and the exceptions are compared.

Calls cover creation (negative dimensions, requires_grad on integer tensors), indexing, views, in-place ops,
autograd misuse, nn layers, losses (BCE's value ranges, class indices, shapes), devices (CUDA on a machine
without it, malformed names) and serialization.
For every call where torch raises, torchlike must raise too (no silent success), with the same
exception type, and without an internal error (a crash: an exception type torch never raises for
bad input). Messages are compared on their first line, loosely where torch's carries C++ detail
(``[enforce fail at ...]`` prefixes, the "expected one of" signature lists); ``summary()`` counts them.
Run as a script for the figures: ``python compat_tests/test_fuzz_errors.py``. Last run (torch 2.13 CPU build):
718 calls, torch raises for 715, torchlike raises the same exception type for all 715 (682 with the same first
line of message), 0 silent successes, 0 crashes (docs/caches.md keeps the figures).
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from typing import Any, Callable

import pytest
import torch

import torchlike

Case = tuple[str, str, Callable[[Any], Any]]  # (family, name, fn(lib))
_TMP = tempfile.mkdtemp(prefix="fuzz_errors_")


def _creation() -> list[Case]:
    cases: list[Case] = []
    bad_sizes = {"neg": (-1,), "neg2": (2, -3), "float": (2.5,), "str": ("3",), "none": (None,), "nested": ((2,), 3)}
    for fn in ("zeros", "ones", "empty", "rand", "randn"):
        for tag, size in bad_sizes.items():
            cases.append(("creation", f"{fn}_{tag}", lambda t, fn=fn, size=size: getattr(t, fn)(*size)))
    for tag, size in bad_sizes.items():
        cases.append(("creation", f"full_{tag}", lambda t, size=size: t.full(size, 1.0)))
    for fn in ("zeros", "ones", "full"):
        extra = (1,) if fn == "full" else ()
        cases.append(("creation", f"{fn}_dtype_str", lambda t, fn=fn, e=extra: getattr(t, fn)((2,), *e, dtype="float32")))
        cases.append(("creation", f"{fn}_device_bad", lambda t, fn=fn, e=extra: getattr(t, fn)((2,), *e, device="gpu")))
        cases.append(("creation", f"{fn}_device_int", lambda t, fn=fn, e=extra: getattr(t, fn)((2,), *e, device=-1)))
    overflow = [("uint8", 256), ("uint8", -256), ("int8", 128), ("int8", -129), ("int16", 2**15), ("int32", 2**31),
                ("int8", float("nan")), ("int16", float("inf")), ("uint8", 1e10)]  # fmt: skip
    for dt, v in overflow:
        cases.append(("creation", f"tensor_{dt}_{v}", lambda t, dt=dt, v=v: t.tensor(v, dtype=getattr(t, dt))))
        cases.append(("creation", f"tensor_list_{dt}_{v}", lambda t, dt=dt, v=v: t.tensor([0, v], dtype=getattr(t, dt))))
        cases.append(("creation", f"full_{dt}_{v}", lambda t, dt=dt, v=v: t.full((2,), v, dtype=getattr(t, dt))))
        cases.append(("creation", f"fill_{dt}_{v}", lambda t, dt=dt, v=v: t.zeros(2, dtype=getattr(t, dt)).fill_(v)))
    for dt, v in (("float16", 1e5), ("bfloat16", 1e39), ("float32", 1e39)):
        cases.append(("creation", f"full_{dt}_{v}", lambda t, dt=dt, v=v: t.full((2,), v, dtype=getattr(t, dt))))
        cases.append(("creation", f"fill_{dt}_{v}", lambda t, dt=dt, v=v: t.zeros(2, dtype=getattr(t, dt)).fill_(v)))
    cases += [
        ("creation", "tensor_ragged", lambda t: t.tensor([[1, 2], [3]])),
        ("creation", "tensor_str", lambda t: t.tensor("abc")),
        ("creation", "tensor_dict", lambda t: t.tensor({"a": 1})),
        ("creation", "tensor_none_list", lambda t: t.tensor([1, None])),
        ("creation", "tensor_complex_int", lambda t: t.tensor(1 + 2j, dtype=t.int32)),
        ("creation", "arange_zero_step", lambda t: t.arange(0, 5, 0)),
        ("creation", "arange_wrong_sign", lambda t: t.arange(0, 5, -1)),
        ("creation", "arange_inf", lambda t: t.arange(0, float("inf"))),
        ("creation", "arange_nan", lambda t: t.arange(0, float("nan"))),
        ("creation", "linspace_neg_steps", lambda t: t.linspace(0, 1, -2)),
        ("creation", "logspace_neg_steps", lambda t: t.logspace(0, 1, -2)),
        ("creation", "eye_neg", lambda t: t.eye(-1)),
        ("creation", "eye_neg_m", lambda t: t.eye(2, -1)),
        ("creation", "randint_low_high", lambda t: t.randint(5, 2, (3,))),
        ("creation", "randint_no_size", lambda t: t.randint(5)),
        ("creation", "randperm_neg", lambda t: t.randperm(-1)),
        ("creation", "normal_neg_std", lambda t: t.normal(0.0, -1.0, (2,))),
        ("creation", "multinomial_neg", lambda t: t.multinomial(t.tensor([0.5, -0.1]), 1)),
        ("creation", "multinomial_too_many", lambda t: t.multinomial(t.tensor([0.5, 0.5]), 3)),
        ("creation", "bernoulli_p_gt1", lambda t: t.bernoulli(t.tensor([1.5]))),
        ("creation", "zeros_like_list", lambda t: t.zeros_like([1, 2])),
        ("creation", "full_like_str", lambda t: t.full_like(t.ones(2), "a")),
        ("creation", "empty_strided_bad", lambda t: t.empty_strided((2, 2), (1,))),
        ("creation", "from_numpy_list", lambda t: t.from_numpy([1, 2])),
        ("creation", "set_default_dtype_int", lambda t: t.set_default_dtype(t.int64)),
        ("creation", "tril_indices_neg", lambda t: t.tril_indices(-1, 3)),
        # no size at all, or a bad size= keyword
        ("creation", "zeros_no_size", lambda t: t.zeros()),
        ("creation", "ones_no_size", lambda t: t.ones()),
        ("creation", "ones_no_size_dtype", lambda t: t.ones(dtype=t.int64)),
        ("creation", "empty_no_size", lambda t: t.empty()),
        ("creation", "empty_no_size_device", lambda t: t.empty(device="cpu")),
        ("creation", "full_no_args", lambda t: t.full()),
        ("creation", "full_no_size", lambda t: t.full(fill_value=1.0)),
        ("creation", "full_no_fill_value", lambda t: t.full((2,))),
        ("creation", "full_size_none", lambda t: t.full(None, 1.0)),
        ("creation", "rand_no_size", lambda t: t.rand()),
        ("creation", "rand_no_size_dtype", lambda t: t.rand(dtype=t.float64)),
        ("creation", "randn_no_size", lambda t: t.randn()),
        ("creation", "randn_no_size_grad", lambda t: t.randn(requires_grad=True)),
        ("creation", "ones_size_none", lambda t: t.ones(size=None)),
        ("creation", "zeros_size_and_args", lambda t: t.zeros(2, size=(3,))),
        ("creation", "randn_size_int", lambda t: t.randn(size=3)),
        # negative floats into unsigned types overflow (negative ints wrap)
        ("creation", "fill_uint8_neg_float", lambda t: t.zeros(2, dtype=t.uint8).fill_(-1.0)),
        ("creation", "full_uint8_neg_half", lambda t: t.full((2,), -0.5, dtype=t.uint8)),
        ("creation", "tensor_uint8_neg_float", lambda t: t.tensor(-1.0, dtype=t.uint8)),
        ("creation", "fill_diagonal_int8_overflow", lambda t: t.zeros(3, 3, dtype=t.int8).fill_diagonal_(1000)),
        ("creation", "fill_diagonal_half_overflow", lambda t: t.zeros(2, 2, dtype=t.float16).fill_diagonal_(1e6)),
        ("creation", "fill_diagonal_complex_real", lambda t: t.zeros(2, 2).fill_diagonal_(1 + 2j)),
        ("creation", "fill_diagonal_int_nan", lambda t: t.zeros(2, 2, dtype=t.int64).fill_diagonal_(float("nan"))),
    ]
    return cases


def _indexing() -> list[Case]:
    keys = {
        "out_of_range": 5, "neg_out_of_range": -6, "float": 1.5, "str": "a", "too_many": (0, 0, 0),
        "tensor_oob": "T[7]", "bool_mask_shape": "B3", "float_tensor": "F", "two_ellipsis": (Ellipsis, Ellipsis),
        "list_oob": [0, 9], "none_str": (None, "x"), "dict": {}, "neg_tensor_oob": "T[-9]",
    }  # fmt: skip

    def key_for(t: Any, k: Any) -> Any:
        if k == "T[7]":
            return t.tensor([7])
        if k == "T[-9]":
            return t.tensor([-9])
        if k == "B3":
            return t.tensor([True, False, True])
        if k == "F":
            return t.tensor([0.0])
        return k

    cases: list[Case] = []
    for tag, k in keys.items():
        cases.append(("indexing", f"get_{tag}", lambda t, k=k: t.arange(20.0).reshape(5, 4)[key_for(t, k)]))
        cases.append(("indexing", f"set_{tag}", lambda t, k=k: t.zeros(5, 4).__setitem__(key_for(t, k), 1.0)))
    cases += [
        ("indexing", "set_shape_mismatch", lambda t: t.zeros(5, 4).__setitem__(0, t.ones(3))),
        ("indexing", "set_str_value", lambda t: t.zeros(3).__setitem__(0, "a")),
        ("indexing", "set_list_value", lambda t: t.zeros(3).__setitem__(0, [1, 2])),
        ("indexing", "index_select_float", lambda t: t.ones(3).index_select(0, t.tensor([0.0]))),
        ("indexing", "index_select_oob", lambda t: t.ones(3).index_select(0, t.tensor([3]))),
        ("indexing", "index_select_dim", lambda t: t.ones(3).index_select(1, t.tensor([0]))),
        ("indexing", "gather_dim", lambda t: t.ones(2, 2).gather(2, t.zeros(2, 2, dtype=t.int64))),
        ("indexing", "gather_float", lambda t: t.ones(2, 2).gather(0, t.zeros(2, 2))),
        ("indexing", "gather_oob", lambda t: t.ones(2, 2).gather(0, t.full((2, 2), 5))),
        ("indexing", "scatter_dtype", lambda t: t.zeros(3).scatter(0, t.tensor([0]), t.ones(1, dtype=t.float64))),
        ("indexing", "scatter_oob", lambda t: t.zeros(3).scatter(0, t.tensor([3]), t.ones(1))),
        ("indexing", "take_oob", lambda t: t.ones(3).take(t.tensor([5]))),
        ("indexing", "masked_fill_float_mask", lambda t: t.ones(3).masked_fill(t.ones(3), 0.0)),
        ("indexing", "masked_fill_shape", lambda t: t.ones(3).masked_fill(t.ones(4, dtype=t.bool), 0.0)),
        ("indexing", "masked_select_float", lambda t: t.ones(3).masked_select(t.ones(3))),
        ("indexing", "index_add_dtype", lambda t: t.zeros(3).index_add(0, t.tensor([0]), t.ones(1, dtype=t.float64))),
        ("indexing", "index_put_oob", lambda t: t.zeros(3).index_put_((t.tensor([4]),), t.tensor(1.0))),
        ("indexing", "nonzero_bad_arg", lambda t: t.nonzero(t.ones(3), as_tuple="x")),
        ("indexing", "where_shape", lambda t: t.where(t.ones(3, dtype=t.bool), t.ones(2), t.ones(3))),
        ("indexing", "where_float_cond", lambda t: t.where(t.ones(3), t.ones(3), t.ones(3))),
    ]
    return cases


def _views() -> list[Case]:
    x = lambda t: t.arange(24.0).reshape(2, 3, 4)  # noqa: E731
    calls = {
        "view_bad": lambda t: x(t).view(5, 5),
        "view_two_neg": lambda t: x(t).view(-1, -1),
        "view_noncontig": lambda t: x(t).transpose(0, 2).view(24),
        "view_dtype_size": lambda t: x(t)[..., :3].view(t.float64),
        "reshape_bad": lambda t: x(t).reshape(7, -1),
        "reshape_str": lambda t: x(t).reshape("a"),
        "permute_dup": lambda t: x(t).permute(0, 0, 1),
        "permute_len": lambda t: x(t).permute(0, 1),
        "permute_oob": lambda t: x(t).permute(0, 1, 5),
        "transpose_oob": lambda t: x(t).transpose(0, 5),
        "expand_bad": lambda t: x(t).expand(3, 3, 4),
        "expand_fewer": lambda t: x(t).expand(3, 4),
        "expand_neg": lambda t: t.ones(3).expand(-2, 3),
        "narrow_oob": lambda t: x(t).narrow(1, 2, 5),
        "narrow_neg_len": lambda t: x(t).narrow(1, 0, -1),
        "narrow_dim": lambda t: x(t).narrow(5, 0, 1),
        "select_oob": lambda t: x(t).select(1, 3),
        "select_dim": lambda t: x(t).select(3, 0),
        "squeeze_dim": lambda t: x(t).squeeze(4),
        "unsqueeze_dim": lambda t: x(t).unsqueeze(5),
        "flatten_order": lambda t: x(t).flatten(2, 0),
        "flatten_oob": lambda t: x(t).flatten(0, 5),
        "unflatten_bad": lambda t: x(t).unflatten(1, (2, 2)),
        "movedim_dup": lambda t: x(t).movedim((0, 0), (1, 2)),
        "movedim_len": lambda t: x(t).movedim((0, 1), (2,)),
        "split_neg": lambda t: x(t).split(-1),
        "split_sizes_sum": lambda t: x(t).split([1, 1], 1),
        "chunk_zero": lambda t: x(t).chunk(0),
        "unbind_dim": lambda t: x(t).unbind(3),
        "unbind_0d": lambda t: t.tensor(1.0).unbind(),
        "diagonal_same": lambda t: x(t).diagonal(0, 0, 0),
        "t_3d": lambda t: x(t).t(),
        "mT_1d": lambda t: t.ones(3).mT,
        "as_strided_oob": lambda t: t.ones(4).as_strided((3, 3), (3, 1)),
        "unfold_size": lambda t: t.ones(4).unfold(0, 5, 1),
        "unfold_step": lambda t: t.ones(4).unfold(0, 2, 0),
        "view_as_real_float": lambda t: t.ones(3).view_as_real() if hasattr(t.ones(3), "view_as_real") else
        t.view_as_real(t.ones(3)),  # fmt: skip
        "view_as_complex_shape": lambda t: t.view_as_complex(t.ones(3, 3)),
        "tensor_split_zero": lambda t: x(t).tensor_split(0),
        "hsplit_uneven": lambda t: t.ones(2, 3).hsplit(2),
        "vsplit_1d": lambda t: t.ones(4).vsplit(2),
        "cat_shape": lambda t: t.cat([t.ones(2, 3), t.ones(2, 4)]),
        "cat_dims": lambda t: t.cat([t.ones(2, 3), t.ones(3)]),
        "cat_empty": lambda t: t.cat([]),
        "cat_dim_oob": lambda t: t.cat([t.ones(2), t.ones(2)], 1),
        "stack_shape": lambda t: t.stack([t.ones(2), t.ones(3)]),
        "stack_empty": lambda t: t.stack([]),
        "broadcast_to_bad": lambda t: t.broadcast_to(t.ones(3), (2, 4)),
        "repeat_fewer": lambda t: x(t).repeat(2, 2),
        "repeat_neg": lambda t: t.ones(2).repeat(-1),
        "roll_dims_len": lambda t: t.ones(2, 2).roll((1, 1), (0,)),
        "flip_dup": lambda t: t.ones(2, 2).flip(0, 0),
        "tile_neg": lambda t: t.ones(2).tile((-1,)),
        "contiguous_bad_format": lambda t: t.ones(2, 2).contiguous(memory_format=t.channels_last),
    }
    return [("views", k, v) for k, v in calls.items()]


def _inplace() -> list[Case]:
    cases: list[Case] = []
    for op in ("add_", "sub_", "mul_", "div_"):
        cases.append(("inplace", f"{op}_int_by_float", lambda t, op=op: getattr(t.ones(3, dtype=t.int64), op)(1.5)))
        cases.append(("inplace", f"{op}_broadcast", lambda t, op=op: getattr(t.ones(3), op)(t.ones(2, 3))))
        cases.append(("inplace", f"{op}_leaf", lambda t, op=op: getattr(t.ones(3, requires_grad=True), op)(1.0)))
        cases.append(("inplace", f"{op}_leaf_view", lambda t, op=op: getattr(t.ones(3, requires_grad=True)[:2], op)(1)))
        cases.append(("inplace", f"{op}_overlap", lambda t, op=op: (lambda y: getattr(y[1:], op)(y[:-1]))(t.arange(5.0))))
        cases.append(("inplace", f"{op}_expanded", lambda t, op=op: getattr(t.ones(3).expand(2, 3), op)(t.ones(2, 3))))
        cases.append(("inplace", f"{op}_unbind", lambda t, op=op: getattr(
            t.ones(2, 2, requires_grad=True).clone().unbind(0)[0], op)(2.0)))  # fmt: skip
        cases.append(("inplace", f"{op}_bool", lambda t, op=op: getattr(t.ones(3, dtype=t.bool), op)(t.ones(3))))
    for op in ("exp_", "sqrt_", "sin_", "log_", "sigmoid_", "tanh_"):
        cases.append(("inplace", f"{op}_int", lambda t, op=op: getattr(t.ones(3, dtype=t.int64), op)()))
        cases.append(("inplace", f"{op}_leaf", lambda t, op=op: getattr(t.ones(3, requires_grad=True), op)()))
    cases += [
        ("inplace", "copy_overlap", lambda t: (lambda y: y[1:].copy_(y[:-1]))(t.arange(5.0))),
        ("inplace", "copy_transpose", lambda t: (lambda y: y.copy_(y.t()))(t.ones(3, 3))),
        ("inplace", "copy_shape", lambda t: t.ones(3).copy_(t.ones(4))),
        ("inplace", "copy_str", lambda t: t.ones(3).copy_("a")),
        ("inplace", "fill_tensor_1d", lambda t: t.ones(3).fill_(t.ones(2))),
        ("inplace", "fill_str", lambda t: t.ones(3).fill_("a")),
        ("inplace", "clamp_int_float", lambda t: t.ones(3, dtype=t.int64).clamp_(0.5)),
        ("inplace", "clamp_none", lambda t: t.ones(3).clamp_()),
        ("inplace", "pow_int_neg", lambda t: t.ones(3, dtype=t.int64).pow_(-1)),
        ("inplace", "floor_divide_zero", lambda t: t.ones(3, dtype=t.int64).floor_divide_(0)),
        ("inplace", "remainder_zero_int", lambda t: t.ones(3, dtype=t.int64).remainder_(0)),
        ("inplace", "zero_leaf", lambda t: t.ones(3, requires_grad=True).zero_()),
        ("inplace", "resize_leaf", lambda t: t.ones(3, requires_grad=True).resize_(4)),
        ("inplace", "requires_grad_int", lambda t: t.ones(3, dtype=t.int64).requires_grad_()),
        ("inplace", "normal_neg_std", lambda t: t.ones(3).normal_(0, -1)),
        ("inplace", "uniform_bad_range", lambda t: t.ones(3).uniform_(2, 1)),
        ("inplace", "random_int_bad", lambda t: t.ones(3).random_(5, 2)),
        ("inplace", "bernoulli_p", lambda t: t.ones(3).bernoulli_(1.5)),
        ("inplace", "exponential_neg", lambda t: t.ones(3).exponential_(-1.0)),
        ("inplace", "index_fill_float_idx", lambda t: t.ones(3).index_fill_(0, t.tensor([0.0]), 1)),
        ("inplace", "masked_fill_float_mask", lambda t: t.ones(3).masked_fill_(t.ones(3), 1)),
        ("inplace", "scatter_add_shape", lambda t: t.ones(3).scatter_add_(0, t.tensor([[0]]), t.ones(1))),
        ("inplace", "squeeze_dim", lambda t: t.ones(3).squeeze_(2)),
        ("inplace", "t_3d", lambda t: t.ones(2, 2, 2).t_()),
        ("inplace", "addmm_shape", lambda t: t.ones(2, 2).addmm_(t.ones(2, 3), t.ones(2, 2))),
        ("inplace", "lerp_shape", lambda t: t.ones(3).lerp_(t.ones(4), 0.5)),
        ("inplace", "setitem_leaf", lambda t: t.ones(3, requires_grad=True).__setitem__(0, 1.0)),
        ("inplace", "iadd_int_float", lambda t: t.ones(3, dtype=t.int64).__iadd__(t.ones(3))),
        ("inplace", "imul_bool_int", lambda t: t.ones(3, dtype=t.bool).__imul__(2)),
    ]
    return cases


def _autograd() -> list[Case]:
    def twice(t: Any, make: Callable) -> Any:
        x = t.ones(3, requires_grad=True)
        y = make(t, x)
        y.backward()
        y.backward()

    calls = {
        "backward_nonscalar": lambda t: (t.ones(3, requires_grad=True) * 2).backward(),
        "backward_no_grad": lambda t: t.ones(3).sum().backward(),
        "backward_int": lambda t: t.ones(3, dtype=t.int64).sum().backward(),
        "backward_grad_shape": lambda t: (t.ones(3, requires_grad=True) * 2).backward(t.ones(4)),
        "backward_grad_dtype": lambda t: (t.ones(3, requires_grad=True) * 2).backward(t.ones(3, dtype=t.int64)),
        "twice_mul_scalar": lambda t: twice(t, lambda t, x: (x * 2).sum()),
        "twice_mul_tensor": lambda t: twice(t, lambda t, x: (x * x).sum()),
        "twice_exp": lambda t: twice(t, lambda t, x: x.exp().sum()),
        "twice_matmul": lambda t: twice(t, lambda t, x: (x @ x)),
        "twice_sigmoid": lambda t: twice(t, lambda t, x: x.sigmoid().sum()),
        "grad_unused": lambda t: (lambda a, b: t.autograd.grad((a * 2).sum(), [a, b]))(
            t.ones(2, requires_grad=True), t.ones(2, requires_grad=True)),  # fmt: skip
        "grad_no_requires": lambda t: t.autograd.grad(t.ones(2).sum(), [t.ones(2)]),
        "grad_nonscalar": lambda t: (lambda a: t.autograd.grad(a * 2, [a]))(t.ones(2, requires_grad=True)),
        "grad_outputs_shape": lambda t: (lambda a: t.autograd.grad(a * 2, [a], t.ones(3)))(t.ones(2, requires_grad=True)),
        "requires_grad_int_tensor": lambda t: t.ones(2, dtype=t.int32, requires_grad=True),
        "requires_grad_nonleaf_false": lambda t: (t.ones(2, requires_grad=True) * 2).requires_grad_(False),
        "inplace_saved_modified": lambda t: (lambda a: (lambda b: (b.mul_(2), (b.sum()).backward()))(a.exp()))(
            t.ones(2, requires_grad=True)),  # fmt: skip
        "inplace_saved_sigmoid": lambda t: (lambda a: (lambda s: (s.add_(1), s.sum().backward()))(a.sigmoid()))(
            t.ones(2, requires_grad=True)),  # fmt: skip
        "detach_inplace_view": lambda t: t.ones(3, requires_grad=True)[:2].detach_(),
        "grad_set_shape": lambda t: setattr(t.ones(3, requires_grad=True), "grad", t.ones(4)),
        "grad_set_dtype": lambda t: setattr(t.ones(3, requires_grad=True), "grad", t.ones(3, dtype=t.int64)),
        "grad_set_list": lambda t: setattr(t.ones(3, requires_grad=True), "grad", [1.0]),
        "numpy_requires_grad": lambda t: t.ones(2, requires_grad=True).numpy(),
        "item_multi": lambda t: t.ones(2).item(),
        "bool_multi": lambda t: bool(t.ones(2)),
        "float_multi": lambda t: float(t.ones(2)),
        "int_multi": lambda t: int(t.ones(2)),
        "complex_multi": lambda t: complex(t.ones(2)),
        "float_empty": lambda t: float(t.ones(0)),
        "register_hook_no_grad": lambda t: t.ones(2).register_hook(lambda g: g),
        "retain_grad_no_grad": lambda t: t.ones(2).retain_grad(),
        "jacobian_non_tensor": lambda t: t.autograd.functional.jacobian(lambda a: a, [1.0]),
        "function_no_forward": lambda t: type("F", (t.autograd.Function,), {})().apply(t.ones(2)),
        "function_instance_call": lambda t: type("F", (t.autograd.Function,), {})()(t.ones(2)),
        "set_grad_enabled_str": lambda t: t.set_grad_enabled("yes"),
    }
    return [("autograd", k, v) for k, v in calls.items()]


def _nn() -> list[Case]:
    nn = lambda t: t.nn  # noqa: E731
    F = lambda t: t.nn.functional  # noqa: E731
    calls = {
        "linear_shape": lambda t: nn(t).Linear(3, 2)(t.ones(2, 4)),
        "hinge_int_mean": lambda t: F(t).hinge_embedding_loss(t.tensor([1, 2]), t.tensor([1, -1])),
        "hinge_int_float_target": lambda t: F(t).hinge_embedding_loss(t.tensor([1, 2]), t.tensor([1.0, -1.0])),
        "hinge_uint8_neg_margin": lambda t: F(t).hinge_embedding_loss(
            t.tensor([1, 2], dtype=t.uint8), t.tensor([1, -1]), margin=-0.5, reduction="sum"),
        "hinge_bool": lambda t: F(t).hinge_embedding_loss(t.tensor([True, False]), t.tensor([1, -1])),
        "pad_sequence_int_inf": lambda t: nn(t).utils.rnn.pad_sequence([t.tensor([1, 2]), t.tensor([3])],
                                                                       padding_value=float("inf")),
        "pad_sequence_uint8_neg": lambda t: nn(t).utils.rnn.pad_sequence(
            [t.tensor([1, 2], dtype=t.uint8), t.tensor([3], dtype=t.uint8)], padding_value=-1),
        "native_group_norm_eps_none": lambda t: t.native_group_norm(t.ones(2, 2, 2), None, None, 2, 2, 2, 1, None),
        "native_layer_norm_eps_none": lambda t: t.native_layer_norm(t.ones(2, 2), (2,), None, None, None),
        "native_batch_norm_eps_none": lambda t: t.native_batch_norm(t.ones(2, 2), None, None, None, None, True, 0.1,
                                                                    None),
        "rms_norm_int": lambda t: F(t).rms_norm(t.tensor([[1, 2]]), (2,)),
        "linear_neg": lambda t: nn(t).Linear(-1, 2),
        "linear_int_input": lambda t: nn(t).Linear(3, 2)(t.ones(2, 3, dtype=t.int64)),
        "linear_double_input": lambda t: nn(t).Linear(3, 2)(t.ones(2, 3, dtype=t.float64)),
        "conv2d_channels": lambda t: nn(t).Conv2d(3, 4, 3)(t.ones(1, 2, 5, 5)),
        "conv2d_small": lambda t: nn(t).Conv2d(1, 1, 5)(t.ones(1, 1, 3, 3)),
        "conv2d_dims": lambda t: nn(t).Conv2d(1, 1, 3)(t.ones(5, 5)),
        "conv2d_groups": lambda t: nn(t).Conv2d(3, 4, 3, groups=2),
        "conv2d_padding_str": lambda t: nn(t).Conv2d(1, 1, 3, padding="full"),
        "conv2d_same_stride": lambda t: nn(t).Conv2d(1, 1, 3, padding="same", stride=2),
        "conv1d_channels": lambda t: nn(t).Conv1d(2, 2, 3)(t.ones(1, 3, 8)),
        "conv_transpose_channels": lambda t: nn(t).ConvTranspose2d(2, 2, 3)(t.ones(1, 3, 4, 4)),
        "maxpool_big": lambda t: nn(t).MaxPool2d(5)(t.ones(1, 1, 3, 3)),
        "maxpool_pad": lambda t: nn(t).MaxPool2d(2, padding=2)(t.ones(1, 1, 4, 4)),
        "avgpool_dims": lambda t: nn(t).AvgPool2d(2)(t.ones(4)),
        "avgpool_2d_input": lambda t: F(t).avg_pool2d(t.ones(4, 4), 2),
        "batchnorm_features": lambda t: nn(t).BatchNorm1d(3)(t.ones(2, 4)),
        "batchnorm_one_value": lambda t: nn(t).BatchNorm1d(3)(t.ones(1, 3)),
        "batchnorm2d_dims": lambda t: nn(t).BatchNorm2d(3)(t.ones(2, 3)),
        "layernorm_shape": lambda t: nn(t).LayerNorm(4)(t.ones(2, 3)),
        "groupnorm_groups": lambda t: nn(t).GroupNorm(3, 4),
        "embedding_oob": lambda t: nn(t).Embedding(3, 2)(t.tensor([3])),
        "embedding_float": lambda t: nn(t).Embedding(3, 2)(t.tensor([0.0])),
        "embedding_neg": lambda t: nn(t).Embedding(3, 2)(t.tensor([-1])),
        "dropout_p": lambda t: nn(t).Dropout(1.5),
        "dropout_f_p": lambda t: F(t).dropout(t.ones(2), p=-0.1),
        "lstm_input_size": lambda t: nn(t).LSTM(3, 4)(t.ones(2, 1, 5)),
        "lstm_dims": lambda t: nn(t).LSTM(3, 4)(t.ones(3)),
        "gru_hidden": lambda t: nn(t).GRU(3, 4)(t.ones(2, 1, 3), t.ones(1, 1, 5)),
        "rnn_nonlinearity": lambda t: nn(t).RNN(3, 4, nonlinearity="gelu"),
        "mha_embed_heads": lambda t: nn(t).MultiheadAttention(5, 2),
        "transformer_heads": lambda t: nn(t).TransformerEncoderLayer(5, 2),
        "cross_entropy_shape": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 1, 2])),
        "cross_entropy_oob": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 3])),
        "cross_entropy_float_target": lambda t: F(t).cross_entropy(t.ones(2, 3), t.ones(2)),
        "nll_loss_dims": lambda t: F(t).nll_loss(t.ones(3), t.tensor([0, 1])),
        "mse_reduction": lambda t: F(t).mse_loss(t.ones(2), t.ones(2), reduction="avg"),
        "bce_range": lambda t: F(t).binary_cross_entropy(t.tensor([1.5]), t.tensor([1.0])),
        "bce_shape": lambda t: F(t).binary_cross_entropy(t.tensor([0.5]), t.tensor([1.0, 0.0])),
        "l1_int": lambda t: F(t).l1_loss(t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64)),
        "softmax_dim": lambda t: F(t).softmax(t.ones(2), dim=2),
        "log_softmax_int": lambda t: F(t).log_softmax(t.ones(2, dtype=t.int64), dim=0),
        "relu_str": lambda t: F(t).relu("a"),
        "gelu_approx": lambda t: F(t).gelu(t.ones(2), approximate="fast"),
        "leaky_relu_int": lambda t: F(t).leaky_relu(t.ones(2, dtype=t.int64)),
        "softplus_int": lambda t: F(t).softplus(t.ones(2, dtype=t.int64)),
        "elu_int": lambda t: F(t).elu(t.ones(2, dtype=t.int64)),
        "hardtanh_bool": lambda t: F(t).hardtanh(t.ones(2, dtype=t.bool)),
        "softshrink_neg": lambda t: F(t).softshrink(t.ones(2), -1.0),
        "celu_zero": lambda t: F(t).celu(t.ones(2), alpha=0.0),
        "pad_len": lambda t: F(t).pad(t.ones(2, 2), (1, 1, 1)),
        "pad_mode": lambda t: F(t).pad(t.ones(1, 2, 2), (1, 1), mode="mirror"),
        "pad_reflect_big": lambda t: F(t).pad(t.ones(1, 1, 2), (3, 3), mode="reflect"),
        "interpolate_neg": lambda t: F(t).interpolate(t.ones(1, 1, 4), scale_factor=-1),
        "interpolate_both": lambda t: F(t).interpolate(t.ones(1, 1, 4), size=2, scale_factor=2),
        "interpolate_none": lambda t: F(t).interpolate(t.ones(1, 1, 4)),
        "interpolate_mode": lambda t: F(t).interpolate(t.ones(1, 1, 4), scale_factor=2, mode="cubic"),
        "one_hot_neg": lambda t: F(t).one_hot(t.tensor([-1])),
        "one_hot_float": lambda t: F(t).one_hot(t.tensor([1.0])),
        "one_hot_classes": lambda t: F(t).one_hot(t.tensor([3]), 2),
        "normalize_p": lambda t: F(t).normalize(t.ones(2, 2), dim=3),
        "cosine_similarity_shape": lambda t: F(t).cosine_similarity(t.ones(2, 3), t.ones(2, 4)),
        "grid_sample_mode": lambda t: F(t).grid_sample(t.ones(1, 1, 2, 2), t.zeros(1, 1, 1, 2), mode="cubic"),
        "module_add_str": lambda t: nn(t).Module().add_module(1, nn(t).Linear(1, 1)),
        "module_dot_name": lambda t: nn(t).Module().add_module("a.b", nn(t).Linear(1, 1)),
        "module_param_type": lambda t: nn(t).Module().register_parameter("w", t.ones(2)),
        "load_state_dict_missing": lambda t: nn(t).Linear(2, 2).load_state_dict({}),
        "load_state_dict_shape": lambda t: nn(t).Linear(2, 2).load_state_dict({"weight": t.ones(3, 3),
                                                                              "bias": t.ones(2)}),  # fmt: skip
        "sequential_index": lambda t: nn(t).Sequential(nn(t).ReLU())[3],
        "modulelist_type": lambda t: nn(t).ModuleList([1]),
        "optim_lr_neg": lambda t: t.optim.SGD(nn(t).Linear(1, 1).parameters(), lr=-1),
        "optim_empty": lambda t: t.optim.Adam([]),
        "optim_betas": lambda t: t.optim.Adam(nn(t).Linear(1, 1).parameters(), betas=(1.5, 0.9)),
        "optim_momentum_neg": lambda t: t.optim.SGD(nn(t).Linear(1, 1).parameters(), lr=0.1, momentum=-1),
        "clip_grad_norm_type": lambda t: t.nn.utils.clip_grad_norm_([t.ones(2, requires_grad=True)], 1.0,
                                                                     norm_type="fro"),  # fmt: skip
    }
    return [("nn", k, v) for k, v in calls.items()]


def _serialization() -> list[Case]:
    def path(name: str) -> str:
        return os.path.join(_TMP, name)

    def write(name: str, data: bytes) -> str:
        with open(path(name), "wb") as f:
            f.write(data)
        return path(name)

    def saved_then(t: Any, edit: Callable[[bytes], bytes], **load_kw: Any) -> Any:
        buf = io.BytesIO()
        torch.save({"a": torch.arange(4.0)}, buf)
        return t.load(io.BytesIO(edit(buf.getvalue())), weights_only=True, **load_kw)

    calls = {
        "load_missing": lambda t: t.load(path("missing.pt")),
        "load_dir": lambda t: t.load(_TMP),
        "load_empty": lambda t: t.load(write("empty.pt", b"")),
        "load_garbage": lambda t: t.load(write("garbage.pt", b"not a checkpoint at all")),
        "load_truncated": lambda t: saved_then(t, lambda b: b[: len(b) // 2]),
        "load_zip_junk": lambda t: saved_then(t, lambda b: b"PK\x03\x04" + b[100:]),
        "load_bad_map_location": lambda t: t.load(io.BytesIO(b""), map_location=5),
        "load_map_location_not_callable": lambda t: saved_then(t, lambda b: b, map_location=5),
        "load_garbage_unsafe": lambda t: t.load(io.BytesIO(b"not a checkpoint"), weights_only=False),
        "load_truncated_pickle": lambda t: t.load(io.BytesIO(b"(")),
        "load_pickle_not_magic": lambda t: t.load(io.BytesIO(b"\x80\x02K\x05.")),
        "load_bytes_object": lambda t: t.load(b"abc"),
        "load_int": lambda t: t.load(5),
        "save_to_dir": lambda t: t.save(t.ones(2), _TMP),
        "save_missing_parent": lambda t: t.save(t.ones(2), path("no/such/dir/x.pt")),
        "save_int_file": lambda t: t.save(t.ones(2), 5),
        "save_lambda": lambda t: t.save(lambda: 0, io.BytesIO()),
        "save_readonly_buffer": lambda t: t.save(t.ones(2), io.BytesIO(b"x").getbuffer()),
        "load_weights_only_global": lambda t: t.load(io.BytesIO(_pickled_global()), weights_only=True),
        "load_state_dict_str": lambda t: t.nn.Linear(1, 1).load_state_dict("weights.pt"),
    }
    return [("serialization", k, v) for k, v in calls.items()]


def _pickled_global() -> bytes:
    buf = io.BytesIO()
    torch.save({"f": os.getcwd}, buf)  # a global weights_only refuses
    return buf.getvalue()


def _negative_sizes_and_grad() -> list[Case]:
    """Negative dimensions (torch: "Trying to create tensor with negative dimension -1: [-1, 2]") and
    requires_grad on integer tensors, through every factory."""
    cases: list[Case] = []
    sizes = {"lead": (-1, 2), "trail": (2, -3), "tuple": ((-5,),), "list": ([3, -1],), "min": (-2,)}
    makers = {
        "zeros": lambda t, s: t.zeros(*s), "ones": lambda t, s: t.ones(*s), "empty": lambda t, s: t.empty(*s),
        "rand": lambda t, s: t.rand(*s), "randn": lambda t, s: t.randn(*s),
        "new_zeros": lambda t, s: t.ones(2).new_zeros(*s), "new_ones": lambda t, s: t.ones(2).new_ones(*s),
        "new_empty": lambda t, s: t.ones(2).new_empty(*s),
        "full": lambda t, s: t.full(s[0] if isinstance(s[0], (tuple, list)) else s, 1.5),
        "new_full": lambda t, s: t.ones(2).new_full(s[0] if isinstance(s[0], (tuple, list)) else s, 1.5),
        "randint": lambda t, s: t.randint(0, 5, s[0] if isinstance(s[0], (tuple, list)) else s),
        "empty_strided": lambda t, s: t.empty_strided(s[0] if isinstance(s[0], (tuple, list)) else s,
                                                      (1,) * len(s[0] if isinstance(s[0], (tuple, list)) else s)),
    }  # fmt: skip
    for name, make in makers.items():
        for tag, size in sizes.items():
            cases.append(("creation", f"{name}_negdim_{tag}", lambda t, make=make, size=size: make(t, size)))
    cases += [
        ("creation", "randperm_neg_int32", lambda t: t.randperm(-3, dtype=t.int32)),
        ("creation", "randperm_neg_out", lambda t: t.randperm(-1, out=t.empty(0, dtype=t.int64))),
        ("creation", "normal_size_neg", lambda t: t.normal(0.0, 1.0, size=(-1,))),
        ("creation", "zeros_neg_dtype", lambda t: t.zeros(-1, dtype=t.int64)),
        ("creation", "ones_neg_kw_size", lambda t: t.ones(size=(2, -2))),
    ]
    grad_makers = {
        "tensor": lambda t, dt: t.tensor([1, 2], dtype=dt, requires_grad=True),
        "zeros": lambda t, dt: t.zeros(2, dtype=dt, requires_grad=True),
        "ones": lambda t, dt: t.ones(2, dtype=dt, requires_grad=True),
        "empty": lambda t, dt: t.empty(2, dtype=dt, requires_grad=True),
        "full": lambda t, dt: t.full((2,), 1, dtype=dt, requires_grad=True),
        "arange": lambda t, dt: t.arange(3, dtype=dt, requires_grad=True),
        "randint": lambda t, dt: t.randint(0, 2, (2,), dtype=dt, requires_grad=True),
        "zeros_like": lambda t, dt: t.zeros_like(t.ones(2, dtype=dt), requires_grad=True),
        "ones_like": lambda t, dt: t.ones_like(t.ones(2, dtype=dt), requires_grad=True),
        "eye": lambda t, dt: t.eye(2, dtype=dt, requires_grad=True),
        "parameter": lambda t, dt: t.nn.Parameter(t.ones(2, dtype=dt)),
        "requires_grad_": lambda t, dt: t.ones(2, dtype=dt).requires_grad_(),
        "setter": lambda t, dt: setattr(t.ones(2, dtype=dt), "requires_grad", True),
    }  # fmt: skip
    for name, make in grad_makers.items():
        for dt in ("int64", "int32", "uint8", "bool"):
            cases.append(("creation", f"{name}_grad_{dt}", lambda t, make=make, dt=dt: make(t, getattr(t, dt))))
    return cases


def _losses() -> list[Case]:
    def F(t: Any) -> Any:
        return t.nn.functional

    p = lambda t: t.tensor([0.2, 0.5, 0.9])  # noqa: E731
    calls: dict[str, Callable] = {
        "bce_target_gt1": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, 2.0, 1.0])),
        "bce_target_neg": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, -0.5, 1.0])),
        "bce_target_nan": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, float("nan"), 1.0])),
        "bce_target_inf": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, float("inf"), 1.0])),
        "bce_target_gt1_none": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, 1.5, 1.0]), reduction="none"),
        "bce_target_gt1_sum": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([0.0, 1.5, 1.0]), reduction="sum"),
        "bce_target_gt1_weight": lambda t: F(t).binary_cross_entropy(p(t), t.tensor([3.0, 0.0, 1.0]),
                                                                     weight=t.ones(3)),  # fmt: skip
        "bce_target_gt1_double": lambda t: F(t).binary_cross_entropy(p(t).double(), t.tensor([0.0, 2.0, 1.0]).double()),
        "bce_target_gt1_2d": lambda t: F(t).binary_cross_entropy(t.full((2, 2), 0.5), t.tensor([[0.0, 1.0], [1.1, 0]])),
        "bce_module_target": lambda t: t.nn.BCELoss()(p(t), t.tensor([0.0, 1.0, -1.0])),
        "bce_input_gt1": lambda t: F(t).binary_cross_entropy(t.tensor([0.5, 1.5, 0.2]), t.tensor([0.0, 1.0, 1.0])),
        "bce_input_neg": lambda t: F(t).binary_cross_entropy(t.tensor([-0.5, 0.5, 0.2]), t.tensor([0.0, 1.0, 1.0])),
        "bce_both_bad": lambda t: F(t).binary_cross_entropy(t.tensor([1.5]), t.tensor([2.0])),
        "bce_shape": lambda t: F(t).binary_cross_entropy(p(t), t.ones(2)),
        "bce_reduction": lambda t: F(t).binary_cross_entropy(p(t), p(t), reduction="avg"),
        "bce_logits_shape": lambda t: F(t).binary_cross_entropy_with_logits(t.ones(3), t.ones(4)),
        "bce_logits_reduction": lambda t: F(t).binary_cross_entropy_with_logits(t.ones(3), t.ones(3), reduction="x"),
        "ce_target_oob": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 3])),
        "ce_target_neg": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, -2])),
        "ce_target_float_shape": lambda t: F(t).cross_entropy(t.ones(2, 3), t.ones(2, 4)),
        "ce_target_batch": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 1, 2])),
        "ce_smoothing": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 1]), label_smoothing=1.5),
        "ce_weight_len": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 1]), weight=t.ones(2)),
        "ce_reduction": lambda t: F(t).cross_entropy(t.ones(2, 3), t.tensor([0, 1]), reduction="avg"),
        "ce_int_input": lambda t: F(t).cross_entropy(t.ones(2, 3, dtype=t.int64), t.tensor([0, 1])),
        "nll_target_oob": lambda t: F(t).nll_loss(t.ones(2, 3), t.tensor([0, 5])),
        "nll_target_float": lambda t: F(t).nll_loss(t.ones(2, 3), t.tensor([0.0, 1.0])),
        "nll_batch": lambda t: F(t).nll_loss(t.ones(2, 3), t.tensor([0])),
        "mse_broadcast_bad": lambda t: F(t).mse_loss(t.ones(3), t.ones(4)),
        "mse_int": lambda t: F(t).mse_loss(t.ones(2, dtype=t.int64), t.ones(2, dtype=t.int64)),
        "l1_shape": lambda t: F(t).l1_loss(t.ones(2, 3), t.ones(4)),
        "smooth_l1_beta_neg": lambda t: F(t).smooth_l1_loss(t.ones(2), t.zeros(2), beta=-1.0),
        "huber_delta_neg": lambda t: F(t).huber_loss(t.ones(2), t.zeros(2), delta=-1.0),
        "huber_delta_zero": lambda t: F(t).huber_loss(t.ones(2), t.zeros(2), delta=0.0),
        "kl_div_shape": lambda t: F(t).kl_div(t.ones(2, 3), t.ones(2, 4), reduction="batchmean"),
        "kl_div_reduction": lambda t: F(t).kl_div(t.ones(2), t.ones(2), reduction="x"),
        "margin_ranking_shape": lambda t: F(t).margin_ranking_loss(t.ones(3), t.ones(3), t.ones(2)),
        "cosine_embedding_dims": lambda t: F(t).cosine_embedding_loss(t.ones(2, 3), t.ones(2, 3), t.ones(2, 1)),
        "triplet_dims": lambda t: F(t).triplet_margin_loss(t.ones(2, 3), t.ones(2, 3), t.ones(2, 4)),
        "gaussian_nll_var_neg": lambda t: F(t).gaussian_nll_loss(t.ones(2), t.ones(2), -t.ones(2)),
        "gaussian_nll_var_shape": lambda t: F(t).gaussian_nll_loss(t.ones(2, 3), t.ones(2, 3), t.ones(2, 2)),
        "poisson_nll_reduction": lambda t: F(t).poisson_nll_loss(t.ones(2), t.ones(2), reduction="x"),
        "multi_margin_p": lambda t: F(t).multi_margin_loss(t.ones(2, 3), t.tensor([0, 1]), p=3),
        "multi_margin_target_oob": lambda t: F(t).multi_margin_loss(t.ones(2, 3), t.tensor([0, 7])),
        "multilabel_margin_shape": lambda t: F(t).multilabel_margin_loss(t.ones(2, 3), t.tensor([[0, 1]])),
        "soft_margin_shape": lambda t: F(t).soft_margin_loss(t.ones(2), t.ones(3)),
        "hinge_shape": lambda t: F(t).hinge_embedding_loss(t.ones(2), t.ones(3)),
        "ctc_lengths": lambda t: F(t).ctc_loss(t.ones(5, 1, 3).log_softmax(2), t.tensor([[1, 2]]), t.tensor([5]),
                                               t.tensor([7])),  # fmt: skip
    }
    return [("losses", k, v) for k, v in calls.items()]


def _devices() -> list[Case]:
    """Devices this machine lacks (torch's CPU build: AssertionError "Torch not compiled with CUDA enabled")
    and malformed device names."""
    cuda_like = {"cuda": "cuda", "cuda0": "cuda:0", "cuda1": "cuda:1", "obj": "OBJ", "obj_index": "OBJ0"}

    def dev(t: Any, d: str) -> Any:
        return t.device("cuda") if d == "OBJ" else t.device("cuda", 0) if d == "OBJ0" else d

    makers = {
        "zeros": lambda t, d: t.zeros(2, device=d), "ones": lambda t, d: t.ones(2, device=d),
        "empty": lambda t, d: t.empty(2, device=d), "full": lambda t, d: t.full((2,), 1.0, device=d),
        "rand": lambda t, d: t.rand(2, device=d), "randn": lambda t, d: t.randn(2, device=d),
        "randint": lambda t, d: t.randint(0, 3, (2,), device=d), "arange": lambda t, d: t.arange(3, device=d),
        "tensor": lambda t, d: t.tensor([1.0], device=d), "eye": lambda t, d: t.eye(2, device=d),
        "linspace": lambda t, d: t.linspace(0, 1, 3, device=d), "zeros_like": lambda t, d: t.zeros_like(t.ones(2), device=d),
        "to": lambda t, d: t.ones(2).to(d), "to_kw": lambda t, d: t.ones(2).to(device=d),
        "new_zeros": lambda t, d: t.ones(2).new_zeros(2, device=d), "as_tensor": lambda t, d: t.as_tensor([1.0], device=d),
    }  # fmt: skip
    cases: list[Case] = []
    for name, make in makers.items():
        for tag, d in cuda_like.items():
            cases.append(("devices", f"{name}_{tag}", lambda t, make=make, d=d: make(t, dev(t, d))))
    for tag, d in {"gpu": "gpu", "bad_index": "cuda:x", "neg_index": "cuda:-1", "two_colons": "cuda:0:1",
                   "empty": "", "upper": "CUDA", "cpu_str_index": "cpu:a"}.items():  # fmt: skip
        cases.append(("devices", f"name_{tag}", lambda t, d=d: t.zeros(2, device=d)))
        cases.append(("devices", f"device_{tag}", lambda t, d=d: t.device(d)))
    cases += [
        ("devices", "cuda_method", lambda t: t.ones(2).cuda()),
        ("devices", "cuda_method_index", lambda t: t.ones(2).cuda(0)),
        ("devices", "module_cuda", lambda t: t.nn.Linear(1, 1).cuda()),
        ("devices", "module_to_cuda", lambda t: t.nn.Linear(1, 1).to("cuda")),
        ("devices", "current_device", lambda t: t.cuda.current_device()),
        ("devices", "get_device_name", lambda t: t.cuda.get_device_name()),
        ("devices", "get_device_properties", lambda t: t.cuda.get_device_properties(0)),
        ("devices", "synchronize", lambda t: t.cuda.synchronize()),
        ("devices", "device_int_neg", lambda t: t.device(-1)),
        ("devices", "device_type_int", lambda t: t.device(3.5)),
    ]
    return cases


def all_cases() -> list[Case]:
    return (_creation() + _negative_sizes_and_grad() + _indexing() + _views() + _inplace() + _autograd() + _nn()
            + _losses() + _devices() + _serialization())


# --- running and comparing ------------------------------------------------------------------------

# Exception types torch raises for bad input; anything else from torchlike is an internal error (a crash).
_TORCH_TYPES = (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError, AttributeError, OSError,
                KeyError, EOFError, OverflowError, ZeroDivisionError, AssertionError)  # fmt: skip


def _run(lib: Any, fn: Callable) -> BaseException | None:
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - every exception is compared
        return e
    return None


def _first_line(e: BaseException) -> str:
    text = str(e).split("\n")[0]
    text = re.sub(r"^\[enforce fail at [^\]]*\] \. ", "", text)
    text = text.replace("torchlike", "torch")
    return text.strip().strip("'\"")


def loose_same_message(ref: BaseException, got: BaseException) -> bool:
    r, g = _first_line(ref), _first_line(got)
    return r == g or (len(r) > 20 and (r.startswith(g[:40]) or g.startswith(r[:40])))


def compare_case(fn: Callable) -> dict:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _run(torch, fn)
        got = _run(torchlike, fn)
    out = {"torch": ref, "torchlike": got}
    if ref is None:
        out["status"] = "torch_ok"
    elif got is None:
        out["status"] = "silent"
    elif not isinstance(got, Exception) or (type(got).__name__ != type(ref).__name__ and not isinstance(got, type(ref))):
        out["status"] = "crash" if not isinstance(got, _TORCH_TYPES) else "type"
    else:
        out["status"] = "same_message" if loose_same_message(ref, got) else "same_type"
    return out


def summary(cases: list[Case] | None = None) -> dict:
    cases = all_cases() if cases is None else cases
    counts: dict = {"calls": len(cases)}
    details: dict = {}
    for family, name, fn in cases:
        res = compare_case(fn)
        counts[res["status"]] = counts.get(res["status"], 0) + 1
        details[f"{family}/{name}"] = res
    counts["torch_raises"] = len(cases) - counts.get("torch_ok", 0)
    counts["same_type"] = counts.get("same_type", 0) + counts.get("same_message", 0)
    return {"counts": counts, "details": details}


# Where torchlike still raises another type than torch: the reason, so the gap stays visible (none left).
KNOWN: dict[str, str] = {}

_CASES = all_cases()


def test_fuzz_has_enough_calls():
    assert len(_CASES) >= 500


@pytest.mark.parametrize("family,name,fn", _CASES, ids=[f"{f}/{n}" for f, n, _ in _CASES])
def test_bad_input_like_torch(family, name, fn):
    if f"{family}/{name}" in KNOWN:
        pytest.xfail(KNOWN[f"{family}/{name}"])
    res = compare_case(fn)
    ref, got = res["torch"], res["torchlike"]
    assert res["status"] != "silent", f"torchlike did not raise; torch raised {type(ref).__name__}: {ref}"
    assert res["status"] not in ("crash", "type"), (
        f"torchlike raised {type(got).__name__}: {got}\n torch raised {type(ref).__name__}: {ref}"
    )


if __name__ == "__main__":
    import sys

    result = summary()
    print(result["counts"])
    for key, res in result["details"].items():
        if res["status"] in ("silent", "crash", "type") or ("-v" in sys.argv and res["status"] == "same_type"):
            r, g = res["torch"], res["torchlike"]
            print(f"{res['status']:8} {key}\n   torch:     {type(r).__name__}: {_first_line(r) if r else ''}"
                  f"\n   torchlike: {type(g).__name__ if g else None}: {_first_line(g) if g else ''}")  # fmt: skip
