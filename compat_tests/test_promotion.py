"""torch's type promotion over all dtype pairs x {tensor, 0-dim tensor, Python scalar} for add/mul/div."""

import itertools

import numpy as np
import pytest
import torch

import torchlike

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]  # fmt: skip
SCALARS = [True, 3, 2.5, 1 + 2j]
OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b}


def _make(lib, dtype, zero_dim):
    values = [1, 1] if dtype == "bool" else [3, 2]
    t = lib.tensor(values[0] if zero_dim else values, dtype=getattr(lib, dtype))
    return t


def _result(lib, op, a_dtype, b, kind):
    a = _make(lib, a_dtype, False)
    if kind == "tensor":
        other = _make(lib, b, False)
    elif kind == "zero_dim":
        other = _make(lib, b, True)
    else:
        other = b
    fn = OPS[op]
    try:
        r = fn(a, other)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__)
    vals = r.abs() if r.dtype.is_complex else r
    vals = vals.float() if str(vals.dtype).endswith("bfloat16") or str(vals.dtype).endswith("float16") else vals
    return ("ok", str(r.dtype).replace("torch.", ""), tuple(r.shape), tuple(np.round(np.asarray(vals.tolist(), dtype=float), 2)))


# add runs the whole lattice; mul and div share its promotion code, so they check the kinds where
# their own rules (bool * bool, int / int -> float) apply. Each pair is a JAX compile: keep it lean.
CASES = [("add", "tensor"), ("add", "zero_dim"), ("add", "scalar"), ("mul", "scalar"), ("div", "scalar"),
         ("div", "same")]  # fmt: skip


@pytest.mark.parametrize("op,kind", CASES)
def test_promotion_matrix(op, kind):
    others = SCALARS if kind == "scalar" else DTYPES
    mismatches = []
    pairs = [(d, d) for d in DTYPES] if kind == "same" else itertools.product(DTYPES, others)
    kind = "tensor" if kind == "same" else kind
    for a_dtype, b in pairs:
        ref = _result(torch, op, a_dtype, b, kind)
        got = _result(torchlike, op, a_dtype, b, kind)
        if ref[:2] == ("ok", "complex32") and got == ("raise", "NotImplementedError"):
            continue  # torchlike refuses complex32 (JAX has none) rather than returning complex64
        if ref != got:
            mismatches.append(f"{a_dtype} {op} {kind}:{b}: torch {ref} vs torchlike {got}")
    assert not mismatches, "\n".join(mismatches[:20]) + f"\n({len(mismatches)} mismatches)"


def test_result_type_and_promote_types():
    for a, b in itertools.product(DTYPES, DTYPES):
        ta, tb = getattr(torch, a), getattr(torch, b)
        la, lb = getattr(torchlike, a), getattr(torchlike, b)
        assert str(torchlike.promote_types(la, lb)) == str(torch.promote_types(ta, tb))
        assert torchlike.can_cast(la, lb) == torch.can_cast(ta, tb)
    for a, s in itertools.product(DTYPES, SCALARS):
        ref = torch.result_type(torch.ones(2, dtype=getattr(torch, a)), s)
        if ref == torch.complex32:
            with pytest.raises(NotImplementedError, match="complex32"):
                torchlike.result_type(torchlike.ones(2, dtype=getattr(torchlike, a)), s)
            continue
        got = torchlike.result_type(torchlike.ones(2, dtype=getattr(torchlike, a)), s)
        assert str(got) == str(ref), (a, s)
