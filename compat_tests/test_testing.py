"""torch.testing under torch and torchlike: assert_close outcomes (full messages) and make_tensor values."""

from __future__ import annotations

import collections
import math
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import torchlike
import torchlike.testing

nan, inf = math.nan, math.inf


def T(lib: Any, values: Any, dtype: str | None = None) -> Any:
    return lib.tensor(values) if dtype is None else lib.tensor(values, dtype=getattr(lib, dtype))


# name -> lib -> (actual, expected, kwargs)
CASES: dict[str, Callable[[Any], tuple]] = {
    "equal_floats": lambda L: (T(L, [1.0, 2.0, 3.0]), T(L, [1.0, 2.0, 3.0]), {}),
    "close_floats": lambda L: (T(L, [1.0, 2.0, 3.0]), T(L, [1.0, 2.000001, 3.0]), {}),
    "not_close_floats": lambda L: (T(L, [1.0, 2.0, 3.0]), T(L, [1.0, 2.5, 3.0]), {}),
    "two_mismatches_tie": lambda L: (T(L, [1.0, 2.0, 3.0, 4.0]), T(L, [1.0, 3.0, 4.0, 4.0]), {}),
    "2d_index": lambda L: (T(L, [[1.0, 2.0], [3.0, 4.0]]), T(L, [[1.0, 2.0], [3.0, 7.0]]), {}),
    "float64": lambda L: (T(L, [1.0, 2.0], "float64"), T(L, [1.0, 2.0000002], "float64"), {}),
    "float64_close": lambda L: (T(L, [1.0, 2.0], "float64"), T(L, [1.0, 2.0000001], "float64"), {}),
    "float16": lambda L: (T(L, [1.0, 2.0], "float16"), T(L, [1.0, 2.01], "float16"), {}),
    "float16_close": lambda L: (T(L, [1.0, 2048.0], "float16"), T(L, [1.0, 2050.0], "float16"), {}),
    "bfloat16": lambda L: (T(L, [1.0, 2.0], "bfloat16"), T(L, [1.0, 2.1], "bfloat16"), {}),
    "shape": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0, 3.0]), {}),
    "shape_empty": lambda L: (L.zeros(0), L.zeros(0, 1), {}),
    "empty": lambda L: (L.zeros(0), L.zeros(0), {}),
    "dtype": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0], "float64"), {}),
    "dtype_unchecked": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.0], "float64"), {"check_dtype": False}),
    "dtype_unchecked_fail": lambda L: (T(L, [1, 2]), T(L, [1.0, 2.5], "float64"), {"check_dtype": False}),
    "uint16_vs_int32": lambda L: (T(L, [1, 2], "uint16"), T(L, [1, 3], "int32"), {"check_dtype": False}),
    "ints": lambda L: (T(L, [1, 2, 3]), T(L, [1, 5, 0]), {}),
    "ints_equal": lambda L: (T(L, [1, 2, 3]), T(L, [1, 2, 3]), {}),
    "int8_wrap": lambda L: (T(L, [-128, 2], "int8"), T(L, [127, 2], "int8"), {}),
    "ints_atol": lambda L: (T(L, [10, 20]), T(L, [11, 22]), {"rtol": 0.0, "atol": 1.5}),
    "uint8_atol": lambda L: (T(L, [10, 20], "uint8"), T(L, [11, 18], "uint8"), {"rtol": 0.05, "atol": 0}),
    "bools": lambda L: (T(L, [True, False]), T(L, [True, True]), {}),
    "bools_tol": lambda L: (T(L, [True, False]), T(L, [True, True]), {"rtol": 0.5, "atol": 0.5}),
    "bool_0d": lambda L: (T(L, False), T(L, True), {}),
    "nan": lambda L: (T(L, [1.0, nan]), T(L, [1.0, nan]), {}),
    "nan_equal": lambda L: (T(L, [1.0, nan]), T(L, [1.0, nan]), {"equal_nan": True}),
    "nan_vs_number": lambda L: (T(L, [nan, 1.0, 5.0]), T(L, [1.0, 1.0, 1.0]), {"equal_nan": True}),
    "nan_0d": lambda L: (T(L, nan), T(L, nan), {}),
    "inf_equal": lambda L: (T(L, [1.0, inf]), T(L, [1.0, inf]), {}),
    "inf_sign": lambda L: (T(L, [1.0, inf]), T(L, [1.0, -inf]), {}),
    "inf_vs_finite": lambda L: (T(L, [1.0, inf]), T(L, [1.0, 3.0]), {}),
    "zero_expected": lambda L: (T(L, [1.0, 0.5]), T(L, [1.0, 0.0]), {}),
    "complex": lambda L: (T(L, [1 + 1j, 2]), T(L, [1 + 1j, 2.01]), {}),
    "complex128": lambda L: (T(L, [1 + 1j, 2], "complex128"), T(L, [1 + 1j, 2 + 1e-3j], "complex128"), {}),
    "complex_nan_equal": lambda L: (T(L, [complex(nan, 1)]), T(L, [complex(nan, 1)]), {"equal_nan": True}),
    "scalar_0d": lambda L: (T(L, 1.0), T(L, 1.5), {}),
    "scalar_0d_int": lambda L: (T(L, 3), T(L, 5), {}),
    "py_floats": lambda L: (1.0, 1.5, {}),
    "py_floats_close": lambda L: (1.0, 1.0 + 1e-9, {}),
    "py_ints": lambda L: (1, 2, {}),
    "py_int_float": lambda L: (1, 1.0, {}),
    "py_int_float_unchecked": lambda L: (1, 1.0, {"check_dtype": False}),
    "py_complex": lambda L: (1 + 1j, 1 + 2j, {}),
    "py_zero": lambda L: (1e-9, 0.0, {"rtol": 0, "atol": 0}),
    "py_nan": lambda L: (nan, nan, {}),
    "py_nan_equal": lambda L: (nan, nan, {"equal_nan": True}),
    "py_inf": lambda L: (inf, inf, {}),
    "py_bools": lambda L: (True, False, {}),
    "py_bool_int": lambda L: (True, 1, {}),
    "np_scalars": lambda L: (np.float32(1.0), np.float64(1.5), {"check_dtype": False}),
    "np_bool": lambda L: (np.bool_(True), False, {}),
    "none": lambda L: (None, None, {}),
    "none_mismatch": lambda L: (None, 1.0, {}),
    "scalar_vs_tensor": lambda L: (1.0, T(L, 1.0), {}),
    "strings": lambda L: ("a", "a", {}),
    "numpy_arrays": lambda L: (np.array([1.0, 2.0]), np.array([1.0, 2.5]), {}),
    "numpy_vs_tensor": lambda L: (np.array([1.0, 2.0]), T(L, [1.0, 2.0]), {}),
    "rtol_only": lambda L: (T(L, [1.0]), T(L, [1.0]), {"rtol": 1e-3}),
    "atol_only": lambda L: (T(L, [1.0]), T(L, [1.0]), {"atol": 1e-3}),
    "rtol_only_scalar": lambda L: (1.0, 1.0, {"rtol": 1e-3}),
    "given_tolerances_pass": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.1]), {"rtol": 0.1, "atol": 0.0}),
    "zero_tolerances": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 2.1]), {"rtol": 0, "atol": 0}),
    "list": lambda L: ([T(L, [1.0]), 2.0], [T(L, [1.0]), 2.5], {}),
    "list_length": lambda L: ([T(L, [1.0])], [T(L, [1.0]), 1], {}),
    "list_length_msg": lambda L: ([1.0], [1.0, 2.0], {"msg": "custom"}),
    "tuple_vs_list": lambda L: ((1.0, T(L, [2.0])), [1.0, T(L, [2.0])], {}),
    "nested": lambda L: ([[1.0, [T(L, [1.0, 2.0])]]], [[1.0, [T(L, [1.0, 3.0])]]], {}),
    "dict": lambda L: ({"a": T(L, [1.0]), "b": 2}, {"b": 2, "a": T(L, [1.5])}, {}),
    "dict_keys": lambda L: ({"a": 1}, {"b": 1}, {}),
    "ordered_dict": lambda L: (collections.OrderedDict(x=1.0), {"x": 1.5}, {}),
    "dict_in_list": lambda L: ([{"w": T(L, [1, 2])}], [{"w": T(L, [1, 3])}], {}),
    "dict_dtype": lambda L: ({"w": T(L, [1.0])}, {"w": T(L, [1], "int64")}, {}),
    "msg_str": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 3.0]), {"msg": "Argh!"}),
    "msg_callable": lambda L: (T(L, [1.0, 2.0]), T(L, [1.0, 3.0]), {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    "msg_callable_nested": lambda L: ([T(L, [1.0])], [T(L, [2.0])], {"msg": lambda m: m.upper()}),
    "msg_str_shape": lambda L: (T(L, [1.0]), T(L, [1.0, 2.0]), {"msg": "shapes!"}),
    "stride": lambda L: (T(L, [[1.0, 2.0], [3.0, 4.0]]).t(), T(L, [[1.0, 3.0], [2.0, 4.0]]), {"check_stride": True}),
    "stride_unchecked": lambda L: (T(L, [[1.0, 2.0], [3.0, 4.0]]).t(), T(L, [[1.0, 3.0], [2.0, 4.0]]), {}),
    "parameter": lambda L: (L.nn.Parameter(T(L, [1.0, 2.0])), T(L, [1.0, 2.0]), {}),
    "parameter_no_subclasses": lambda L: (L.nn.Parameter(T(L, [1.0])), T(L, [1.0]), {"allow_subclasses": False}),
    "requires_grad": lambda L: (T(L, [1.0, 2.0]).requires_grad_(), T(L, [1.0, 2.5]), {}),
    "size": lambda L: (L.Size([2, 3]), L.Size([2, 4]), {}),
    "numpy_0d": lambda L: (np.array(1.0), np.array(1.5), {}),
    "numpy_dtypes": lambda L: (np.array([1.0], np.float32), np.array([1.0]), {}),
    "numpy_float16": lambda L: (np.array([1.0, 2.0], np.float16), np.array([1.0, 2.01], np.float16), {}),
    "numpy_strings": lambda L: (np.array(["a"]), np.array(["a"]), {}),
    "sets": lambda L: ({1, 2}, {1, 2}, {}),
    "objects": lambda L: (object, object, {}),
    "int_keys_sorted": lambda L: ({2: 1.0, 1: 2.0}, {1: 2.5, 2: 1.5}, {}),
    "unsortable_keys": lambda L: ({1: 1.0, "a": 2.0}, {"a": 2.0, 1: 1.0}, {}),
    "range": lambda L: (range(3), [0, 1, 3], {}),
    "int_big_diff": lambda L: (T(L, [2**62, 0]), T(L, [-(2**62), 0]), {}),
    "float_max": lambda L: (T(L, [3.0e38]), T(L, [-3.0e38]), {}),
    "tiny_values": lambda L: (T(L, [1e-30, 0.0]), T(L, [2e-30, 1e-6]), {}),
    "complex_inf": lambda L: (T(L, [complex(inf, 0)]), T(L, [complex(inf, 1)]), {}),
}


def _outcome(lib: Any, case: Callable[[Any], tuple]) -> Exception | None:
    actual, expected, kwargs = case(lib)
    try:
        lib.testing.assert_close(actual, expected, **kwargs)
    except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
        return e
    return None


def _text(e: Exception) -> str:
    # the only allowed difference: the name of the tensor class in "inputs of type <class '...'>" messages
    return str(e).replace("<class 'torchlike.", "<class 'torch.")


@pytest.mark.parametrize("name", list(CASES))
def test_assert_close_matches_torch(name: str) -> None:
    ref, got = _outcome(torch, CASES[name]), _outcome(torchlike, CASES[name])
    if ref is None:
        assert got is None, f"torch passes, torchlike raised {type(got).__name__}: {got}"
        return
    assert got is not None, f"torch raised {type(ref).__name__}: {ref}; torchlike passed"
    assert type(got) is type(ref), f"torchlike raised {type(got).__name__}: {got}; torch {type(ref).__name__}: {ref}"
    assert _text(got) == _text(ref), f"message differs:\n torch:     {ref!r}\n torchlike: {got!r}"


def test_assert_close_tensor_class_name_is_the_only_difference() -> None:
    ref, got = _outcome(torch, CASES["scalar_vs_tensor"]), _outcome(torchlike, CASES["scalar_vs_tensor"])
    assert "<class 'torch.Tensor'>" in str(ref) and "<class 'torchlike.Tensor'>" in str(got)


def test_assert_allclose_deprecated() -> None:
    for lib in (torch, torchlike):
        with pytest.warns(FutureWarning, match=r"assert_allclose\(\)` is deprecated since 1.12"):
            lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.0, 2.00001])
    caught = []
    for lib in (torch, torchlike):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            try:
                lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.0, 2.1])
            except AssertionError as e:
                caught.append(str(e))
    assert len(caught) == 2 and caught[0] == caught[1]


MAKE = [
    ((2, 3), "float32", {}),
    ((4,), "float64", {"low": -1, "high": 1}),
    ((4,), "float16", {}),
    ((4,), "bfloat16", {"low": 0}),
    ((3,), "complex64", {}),
    ((2, 3), "int64", {}),
    ((5,), "int8", {"low": -300, "high": 300}),
    ((5,), "uint8", {}),
    ((5,), "bool", {}),
    ((2, 3), "float32", {"noncontiguous": True}),
    ((5,), "int32", {"low": -1, "high": 2, "exclude_zero": True}),
    ((3,), "float32", {"low": -3.4e38, "high": 3.4e38}),
    ((3,), "float32", {"requires_grad": True}),
    ((4,), "uint16", {}),
    ((4,), "uint32", {"high": 2**40}),
    ((4,), "uint64", {}),
    ((4,), "int16", {"low": -(2**20)}),
    ((4,), "int64", {"low": -(2**63), "high": 2**63}),
    ((4,), "float16", {"low": -60000, "high": 60000}),
    ((2, 2), "complex128", {"noncontiguous": True, "exclude_zero": True}),
    ((2, 3), "bool", {"noncontiguous": True, "exclude_zero": True}),
    ((0, 3), "float32", {"noncontiguous": True}),
]


@pytest.mark.parametrize("shape, dtype, kwargs", MAKE)
def test_make_tensor_values_match_torch(shape: tuple, dtype: str, kwargs: dict) -> None:
    out = []
    for lib in (torch, torchlike):
        lib.manual_seed(1234)
        t = lib.testing.make_tensor(shape, dtype=getattr(lib, dtype), device="cpu", **kwargs)
        out.append((t, lib.rand(2).tolist()))  # the generator is left where torch leaves it
    (ref, ref_next), (got, got_next) = out
    assert got_next == ref_next
    assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
    assert got.stride() == ref.stride() and got.requires_grad == ref.requires_grad
    assert got.is_contiguous() == ref.is_contiguous()
    r, g = ref.detach(), got.detach()
    if dtype == "bfloat16":
        r, g = r.float(), g.float()
    np.testing.assert_array_equal(g.numpy(), r.numpy())


def test_make_tensor_shape_forms_and_memory_format() -> None:
    for lib in (torch, torchlike):
        lib.manual_seed(0)
        a = lib.testing.make_tensor(2, 3, dtype=lib.float32, device="cpu")
        b = lib.testing.make_tensor([2, 3], dtype=lib.float32, device="cpu")
        c = lib.testing.make_tensor(1, 2, 2, 3, dtype=lib.float32, device="cpu", memory_format=lib.channels_last)
        if lib is torch:
            ref = (a.numpy(), b.numpy(), c.numpy(), c.stride())
    np.testing.assert_array_equal(a.numpy(), ref[0])
    np.testing.assert_array_equal(b.numpy(), ref[1])
    np.testing.assert_array_equal(c.numpy(), ref[2])
    assert c.stride() == ref[3]


MAKE_ERRORS = [
    ((2,), "int64", {"requires_grad": True}),
    ((2,), "float32", {"low": 5, "high": 1}),
    ((2,), "float32", {"low": nan}),
    ((2,), "uint8", {"low": -10, "high": -1}),
    ((2,), "float32", {"noncontiguous": True, "memory_format": "contiguous_format"}),
    ((2, 3), "float32", {"memory_format": "channels_last"}),
]


@pytest.mark.parametrize("shape, dtype, kwargs", MAKE_ERRORS)
def test_make_tensor_errors_match_torch(shape: tuple, dtype: str, kwargs: dict) -> None:
    caught = []
    for lib in (torch, torchlike):
        kw = {k: (getattr(lib, v) if k == "memory_format" else v) for k, v in kwargs.items()}
        with pytest.raises(Exception) as info:
            lib.testing.make_tensor(shape, dtype=getattr(lib, dtype), device="cpu", **kw)
        caught.append(info.value)
    ref, got = caught
    assert type(got) is type(ref) and str(got) == str(ref)


def test_make_tensor_low_equals_high_warns() -> None:
    for lib in (torch, torchlike):
        with pytest.warns(FutureWarning, match="Passing `low==high`"):
            t = lib.testing.make_tensor((2,), dtype=lib.float32, device="cpu", low=1.0, high=1.0)
        assert t.tolist() == [1.0, 1.0]
