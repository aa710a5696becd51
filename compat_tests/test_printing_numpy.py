"""torchlike's printing (fed numpy arrays) against repr() of real torch tensors."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch

from torchlike._core import dtype as D
from torchlike._core import printing as P


@pytest.fixture(autouse=True)
def _reset_options():
    yield
    torch.set_printoptions(profile="default")
    P.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    D.set_default_dtype(D.float32)


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(seed), dtype=torch.float64).to(dtype)


def _numpy(t: torch.Tensor, bf16_as_float32: bool = False) -> np.ndarray:
    t = t.detach()
    if t.dtype == torch.bfloat16:
        if bf16_as_float32:
            return t.float().numpy()
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def _mine(t: torch.Tensor, bf16_as_float32: bool = False, prefix: str = "tensor(") -> str:
    grad_fn = t.grad_fn
    return P.tensor_repr(
        _numpy(t, bf16_as_float32),
        D.to_dtype(str(t.dtype)),
        requires_grad=t.requires_grad,
        grad_fn_name=None if grad_fn is None else type(grad_fn).__name__,
        prefix=prefix,
    )


def _set(opts: dict) -> None:
    torch.set_printoptions(**opts)
    P.set_printoptions(**opts)


nan, inf = math.nan, math.inf

# Small and medium tensors: checked under every option set below.
SMALL = {
    "f0d_pi": lambda: torch.tensor(3.14159265),
    "f0d_negzero": lambda: torch.tensor(-0.0),
    "f0d_nan": lambda: torch.tensor(nan),
    "f0d_ninf": lambda: torch.tensor(-inf),
    "f0d_tiny": lambda: torch.tensor(1.5e-5),
    "f0d_huge": lambda: torch.tensor(2.5e10),
    "f0d_int": lambda: torch.tensor(42.0),
    "i0d": lambda: torch.tensor(-7),
    "b0d": lambda: torch.tensor(True),
    "c0d": lambda: torch.tensor(1.5 - 2j),
    "d0d": lambda: torch.tensor(0.1, dtype=torch.float64),
    "h0d": lambda: torch.tensor(0.1, dtype=torch.float16),
    "bf0d": lambda: torch.tensor(0.1, dtype=torch.bfloat16),
    "f_randn5": lambda: _randn(5),
    "f_ints": lambda: torch.tensor([1.0, 2.0, 3.0]),
    "f_neg_ints": lambda: torch.tensor([-1.0, 20.0, -300.0]),
    "f_mixed_mag": lambda: torch.tensor([1e-5, 1.0]),
    "f_ratio": lambda: torch.tensor([1.0, 1001.0]),
    "f_ratio_frac": lambda: torch.tensor([0.5, 999.0]),
    "f_big": lambda: torch.tensor([1e8, 1.0]),
    "f_bigint": lambda: torch.tensor([1e9]),
    "f_hugeexp": lambda: torch.tensor([1e30, -2e-30]),
    "f_zeros": lambda: torch.zeros(2, 3),
    "f_negzero": lambda: torch.tensor([-0.0, 0.0]),
    "f_negzero_frac": lambda: torch.tensor([-0.0, 0.25]),
    "f_nonfinite": lambda: torch.tensor([nan, inf, -inf]),
    "f_one_nan": lambda: torch.tensor([1.0, nan]),
    "f_frac_inf": lambda: torch.tensor([1.5, inf, -2.25]),
    "f_tiny_nan": lambda: torch.tensor([1e-10, nan, 0.0]),
    "f_rounding": lambda: torch.tensor([0.99995, 9.99995, 0.00015]),
    "f_2d": lambda: _randn(3, 4, seed=1),
    "f_3d": lambda: _randn(2, 3, 4, seed=2),
    "f_5d": lambda: _randn(2, 1, 2, 2, 2, seed=3),
    "f_ones4d": lambda: torch.ones(1, 1, 1, 1),
    "f_wide": lambda: _randn(30, seed=4),
    "f_wide2d": lambda: _randn(3, 25, seed=5) * 100,
    "f_wide_sci": lambda: _randn(20, seed=6) * 1e6,
    "f_at_1e-4": lambda: torch.tensor([1e-4, 1.0]),
    "d_at_1e-4": lambda: torch.tensor([1e-4, 1.0], dtype=torch.float64),
    "f_at_1e8": lambda: torch.tensor([1e8, 2e8]),
    "f_ratio_1000": lambda: torch.tensor([0.5, 500.0]),
    "d_extreme": lambda: torch.tensor([1e308, -1e-308, 5e-324], dtype=torch.float64),
    "h_nonfinite": lambda: torch.tensor([inf, nan, 0.5], dtype=torch.float16),
    "bf_nonfinite": lambda: torch.tensor([-inf, nan, 3.0], dtype=torch.bfloat16),
    "i_range": lambda: torch.arange(10),
    "i_neg": lambda: torch.tensor([-5, 0, 12345, -1]),
    "i_big": lambda: torch.tensor([2**62, -(2**63)]),
    "i_wide": lambda: torch.arange(100) * 1000003,
    "i_2d": lambda: torch.arange(12).reshape(3, 4) - 5,
    "i32": lambda: torch.tensor([1, -2, 3], dtype=torch.int32),
    "i16": lambda: torch.tensor([1, -2, 300], dtype=torch.int16),
    "i8": lambda: torch.tensor([[-128, 127]], dtype=torch.int8),
    "u8": lambda: torch.tensor([0, 255, 7], dtype=torch.uint8),
    "u16": lambda: torch.tensor([0, 65535], dtype=torch.uint16),
    "u32": lambda: torch.tensor([[1], [2**32 - 1]], dtype=torch.uint32),
    "u64": lambda: torch.tensor([2**63 + 5], dtype=torch.uint64),
    "b_vec": lambda: torch.tensor([True, False, True]),
    "b_2d": lambda: torch.tensor([[True], [False]]),
    "b_all_true": lambda: torch.tensor([True, True]),
    "d_randn": lambda: _randn(4, dtype=torch.float64, seed=7),
    "d_precise": lambda: torch.tensor([1 / 3, 2 / 3], dtype=torch.float64),
    "h_randn": lambda: _randn(6, dtype=torch.float16, seed=8),
    "h_big": lambda: torch.tensor([65504.0, 1e-3, 0.5], dtype=torch.float16),
    "h_2d": lambda: _randn(2, 3, dtype=torch.float16, seed=9),
    "bf_randn": lambda: _randn(6, dtype=torch.bfloat16, seed=10),
    "bf_wide": lambda: _randn(3, 11, dtype=torch.bfloat16, seed=11) * 1e4,
    "bf_ints": lambda: torch.tensor([1.0, 256.0, -3.0], dtype=torch.bfloat16),
    "c_randn": lambda: torch.complex(_randn(4, seed=12), _randn(4, seed=13)),
    "c_ints": lambda: torch.tensor([1 + 2j, -3 - 4j, 0j]),
    "c_negzero": lambda: torch.complex(torch.tensor([1.0, -0.0]), torch.tensor([-0.0, 0.0])),
    "c_nonfinite": lambda: torch.tensor([complex(nan, 1), complex(1, inf), complex(-inf, nan)]),
    "c_sci": lambda: torch.tensor([1e-6 + 1e6j, 2 + 0.5j]),
    "c_2d": lambda: torch.complex(_randn(2, 3, seed=14), _randn(2, 3, seed=15)),
    "c_wide": lambda: torch.complex(_randn(12, seed=16), _randn(12, seed=17)),
    "c128": lambda: torch.tensor([0.1 + 0.2j, 3j], dtype=torch.complex128),
    "e_1d": lambda: torch.zeros(0),
    "e_2d": lambda: torch.zeros(0, 3),
    "e_3d": lambda: torch.zeros(2, 0, 3),
    "e_int": lambda: torch.zeros(0, dtype=torch.int64),
    "e_bool": lambda: torch.zeros(3, 0, dtype=torch.bool),
    "e_c64": lambda: torch.zeros(0, dtype=torch.complex64),
    "e_f64": lambda: torch.zeros(0, 2, dtype=torch.float64),
    "s_range1001": lambda: torch.arange(1001),
    "s_randn1001": lambda: _randn(1001, seed=18),
    "s_c1001": lambda: torch.complex(_randn(1001, seed=19), _randn(1001, seed=20)),
    "s_bool": lambda: torch.arange(2000) % 3 == 0,
    "s_3x400": lambda: _randn(3, 400, seed=21),
    "s_400x3": lambda: _randn(400, 3, seed=22),
    "s_3d": lambda: _randn(12, 10, 9, seed=23),
    "s_6x6x6x6": lambda: _randn(6, 6, 6, 6, seed=24),
    "s_edges_sci": lambda: torch.cat([torch.tensor([1e-8]), torch.ones(1000), torch.tensor([5.0])]),
    "s_hidden_sci": lambda: torch.cat([torch.ones(10), torch.tensor([1e-8]), torch.ones(1000)]),
}

# Large tensors: checked under fewer option sets, to keep the suite fast.
LARGE = {
    "l_100x100": lambda: _randn(100, 100, seed=25),
    "l_int_100x100": lambda: torch.randint(-1000, 1000, (100, 100), generator=_gen(26)),
    "l_3d": lambda: _randn(20, 30, 40, seed=27),
}

OPTIONS = {
    "default": {},
    "prec2": {"precision": 2},
    "prec8": {"precision": 8},
    "prec0": {"precision": 0},
    "sci": {"sci_mode": True},
    "nosci": {"sci_mode": False},
    "thresh5": {"threshold": 5},
    "thresh0": {"threshold": 0},
    "edge1": {"threshold": 5, "edgeitems": 1},
    "edge0": {"edgeitems": 0},
    "edge0_summ": {"threshold": 5, "edgeitems": 0},
    "lw40": {"linewidth": 40},
    "lw120": {"linewidth": 120},
    "lw10": {"linewidth": 10},
    "short": {"profile": "short"},
    "full": {"profile": "full"},
    "short_sci_lw50": {"profile": "short", "sci_mode": True, "linewidth": 50},
}

LARGE_OPTIONS = ("default", "prec2", "sci", "edge1", "short", "lw40")


@pytest.mark.parametrize("opts", OPTIONS.values(), ids=OPTIONS.keys())
@pytest.mark.parametrize("make", SMALL.values(), ids=SMALL.keys())
def test_repr_small(make, opts):
    t = make()
    _set(opts)
    assert _mine(t) == repr(t)


@pytest.mark.parametrize("opts", [OPTIONS[k] for k in LARGE_OPTIONS], ids=LARGE_OPTIONS)
@pytest.mark.parametrize("make", LARGE.values(), ids=LARGE.keys())
def test_repr_large(make, opts):
    t = make()
    _set(opts)
    assert _mine(t) == repr(t)


def test_repr_full_profile_prints_everything():
    t = _randn(40, 30, seed=28)
    _set({"profile": "full"})
    assert _mine(t) == repr(t)
    assert "..." not in _mine(t)


@pytest.mark.parametrize("name", ["bf0d", "bf_randn", "bf_wide", "bf_ints"])
def test_bfloat16_upcast_to_float32(name):
    t = SMALL[name]()
    assert _mine(t, bf16_as_float32=True) == repr(t)


def test_bfloat16_rounds_float32_input():
    # float32 data for a bfloat16 tensor is rounded to bfloat16 first, as .to(bfloat16) would
    x = _randn(7, seed=29)
    got = P.tensor_repr(x.numpy(), D.bfloat16)
    assert got == repr(x.to(torch.bfloat16))


GRAD_CASES = {
    "leaf": lambda x: x,
    "mul": lambda x: x * 2,
    "add": lambda x: x + 1,
    "sum": lambda x: x.sum(),
    "mean": lambda x: x.mean(),
    "view": lambda x: x.view(-1, 1),
    "exp": lambda x: x.exp(),
    "double": lambda x: x.double() * 3,
    "half_sci": lambda x: (x * 1e6).half(),
}


@pytest.mark.parametrize("shape", [(3,), (9,), (2, 9)], ids=["3", "9", "2x9"])
@pytest.mark.parametrize("op", GRAD_CASES.values(), ids=GRAD_CASES.keys())
def test_repr_autograd_suffixes(op, shape):
    x = _randn(*shape, seed=30).requires_grad_()
    t = op(x)
    assert _mine(t) == repr(t)


@pytest.mark.parametrize("linewidth", [40, 60, 80])
def test_suffix_wrapping(linewidth):
    _set({"linewidth": linewidth})
    for n in range(1, 12):
        x = _randn(n, dtype=torch.float64, seed=n).requires_grad_()
        for t in (x, x * 2, x.to(torch.float16)):
            assert _mine(t) == repr(t)
        e = torch.zeros(0, n, dtype=torch.int32, requires_grad=False)
        assert _mine(e) == repr(e)


def test_empty_with_requires_grad():
    t = torch.zeros(0, 3, requires_grad=True)
    assert _mine(t) == repr(t)


@pytest.mark.parametrize("name", ["f_randn5", "d_randn", "c_randn", "c128", "e_1d", "e_f64", "e_c64", "i_2d"])
def test_default_dtype_float64(name):
    torch.set_default_dtype(torch.float64)
    D.set_default_dtype(D.float64)
    t = SMALL[name]()
    assert _mine(t) == repr(t)


def test_parameter_repr():
    p = torch.nn.Parameter(_randn(2, 3, seed=31))
    assert "Parameter containing:\n" + _mine(p) == repr(p)


def test_subclass_prefix():
    class MyTensor(torch.Tensor):
        pass

    t = _randn(2, 12, seed=32).as_subclass(MyTensor)
    mine = P.tensor_repr(t.numpy(), D.float32, prefix="MyTensor(")
    assert mine == repr(t)


def test_str_is_repr():
    t = _randn(3, 3, seed=33)
    assert str(t) == repr(t) == _mine(t)


def test_tensor_str_body():
    t = _randn(4, 5, seed=34)
    assert "tensor(" + P.tensor_str(t.numpy(), D.float32) + ")" == repr(t)


FORMAT_CASES = [
    (lambda: torch.tensor(1.23456), ".3f"),
    (lambda: torch.tensor(1.23456), ""),
    (lambda: torch.tensor(1.23456), ">12.2e"),
    (lambda: torch.tensor(0.1, dtype=torch.bfloat16), ""),
    (lambda: torch.tensor(0.1, dtype=torch.float16), ".10f"),
    (lambda: torch.tensor(7), "05d"),
    (lambda: torch.tensor(7), ".2f"),
    (lambda: torch.tensor(True), ""),
    (lambda: torch.tensor(True), ".1f"),
    (lambda: torch.tensor(1 + 2j), ""),
    (lambda: torch.tensor(1 + 2j), ".2f"),
    (lambda: torch.tensor([1.5, 2.5]), ""),
]


@pytest.mark.parametrize("make,spec", FORMAT_CASES)
def test_format(make, spec):
    t = make()
    assert P.tensor_format(_numpy(t), D.to_dtype(str(t.dtype)), spec) == format(t, spec)


def test_format_nonscalar_raises_like_torch():
    t = torch.tensor([1.5])
    with pytest.raises(TypeError) as want:
        format(t, ".3f")
    with pytest.raises(TypeError) as got:
        P.tensor_format(t.numpy(), D.float32, ".3f")
    assert str(got.value) == str(want.value)


def test_options_match_torch():
    for opts in OPTIONS.values():
        _set(opts)
        assert P.get_printoptions() == torch._tensor_str.get_printoptions()
    with torch._tensor_str.printoptions(precision=1), P.printoptions(precision=1):
        assert P.get_printoptions() == torch._tensor_str.get_printoptions()
    assert P.get_printoptions() == torch._tensor_str.get_printoptions()
