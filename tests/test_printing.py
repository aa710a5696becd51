"""Unit tests of torchlike's tensor printing; expected texts are torch's (its docs and source)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from torchlike._core import dtype as D
from torchlike._core import printing as P

DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


@pytest.fixture(autouse=True)
def _reset_options():
    yield
    P.set_printoptions(profile="default")
    D.set_default_dtype(D.float32)


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32)


def test_default_options():
    assert P.get_printoptions() == DEFAULTS


def test_options_round_trip():
    P.set_printoptions(precision=2, threshold=10, edgeitems=1, linewidth=40, sci_mode=True)
    saved = P.get_printoptions()
    assert saved == {"precision": 2, "threshold": 10, "edgeitems": 1, "linewidth": 40, "sci_mode": True}
    P.set_printoptions(profile="default")
    assert P.get_printoptions() == DEFAULTS
    P.set_printoptions(**saved)
    assert P.get_printoptions() == saved


def test_profiles():
    P.set_printoptions(profile="short")
    assert P.get_printoptions() == {**DEFAULTS, "precision": 2, "edgeitems": 2}
    P.set_printoptions(profile="full")
    assert P.get_printoptions() == {**DEFAULTS, "threshold": math.inf}
    P.set_printoptions(profile="short", precision=6)
    assert P.get_printoptions()["precision"] == 6


def test_unknown_profile_ignored_and_sci_mode_reset():
    P.set_printoptions(precision=3, sci_mode=False)
    P.set_printoptions(profile="nonsense")
    assert P.get_printoptions() == {**DEFAULTS, "precision": 3}


def test_printoptions_context_restores():
    P.set_printoptions(linewidth=50)
    with P.printoptions(precision=1, sci_mode=True):
        assert P.get_printoptions() == {**DEFAULTS, "linewidth": 50, "precision": 1, "sci_mode": True}
    assert P.get_printoptions() == {**DEFAULTS, "linewidth": 50}


def test_docstring_examples():
    # torch.set_printoptions's own examples
    P.set_printoptions(precision=2)
    assert P.tensor_repr(f32([1.12345]), D.float32) == "tensor([1.12])"
    P.set_printoptions(threshold=5)
    assert P.tensor_repr(np.arange(10), D.int64) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    P.set_printoptions(profile="default")
    assert P.tensor_repr(f32([1.12345]), D.float32) == "tensor([1.1235])"
    assert P.tensor_repr(np.arange(10), D.int64) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


@pytest.mark.parametrize(
    "values,dtype,text",
    [
        (f32(3.14159265), D.float32, "tensor(3.1416)"),
        (f32([1.0, 2.0, 3.0]), D.float32, "tensor([1., 2., 3.])"),
        (f32([-1.0, 0.5]), D.float32, "tensor([-1.0000,  0.5000])"),
        (f32([1e-5, 1.0]), D.float32, "tensor([1.0000e-05, 1.0000e+00])"),
        (f32([-0.0, 1.0]), D.float32, "tensor([-0., 1.])"),
        (f32([math.nan, math.inf, 2.0]), D.float32, "tensor([nan, inf, 2.])"),
        (f32([0.0, 0.0]), D.float32, "tensor([0., 0.])"),
        (np.array([True, False]), D.bool, "tensor([ True, False])"),
        (np.array([-5, 100]), D.int64, "tensor([ -5, 100])"),
        (np.array([1, 2], np.int32), D.int32, "tensor([1, 2], dtype=torch.int32)"),
        (np.array([0.5]), D.float64, "tensor([0.5000], dtype=torch.float64)"),
        (np.array([1 + 2j], np.complex64), D.complex64, "tensor([1.+2.j])"),
        (np.array([1 - 2j], np.complex64), D.complex64, "tensor([1.-2.j])"),
        (np.array([0.1], ml_dtypes.bfloat16), D.bfloat16, "tensor([0.1001], dtype=torch.bfloat16)"),
        (f32([0.1]), D.bfloat16, "tensor([0.1001], dtype=torch.bfloat16)"),
        (np.array(7), D.int64, "tensor(7)"),
        (np.array(True), D.bool, "tensor(True)"),
    ],
)
def test_known_texts(values, dtype, text):
    assert P.tensor_repr(values, dtype) == text


def test_matrix_layout():
    values = f32([[1.5, -2.0], [3.0, 4.25]])
    assert P.tensor_repr(values, D.float32) == "tensor([[ 1.5000, -2.0000],\n        [ 3.0000,  4.2500]])"
    three = np.arange(8).reshape(2, 2, 2)
    assert (
        P.tensor_repr(three, D.int64)
        == "tensor([[[0, 1],\n         [2, 3]],\n\n        [[4, 5],\n         [6, 7]]])"
    )


def test_empty_tensors():
    assert P.tensor_repr(np.zeros(0, np.float32), D.float32) == "tensor([])"
    assert P.tensor_repr(np.zeros((0, 3), np.float32), D.float32) == "tensor([], size=(0, 3))"
    assert P.tensor_repr(np.zeros(0, np.int64), D.int64) == "tensor([], dtype=torch.int64)"
    assert P.tensor_repr(np.zeros((2, 0, 3), bool), D.bool) == "tensor([], size=(2, 0, 3), dtype=torch.bool)"


def test_shape_argument_reshapes():
    assert P.tensor_repr(np.zeros(0, np.float32), D.float32, shape=(0, 2)) == "tensor([], size=(0, 2))"
    assert P.tensor_repr(np.arange(4), D.int64, shape=(2, 2)) == "tensor([[0, 1],\n        [2, 3]])"


def test_autograd_and_device_suffixes():
    v = f32([1.0, 2.0])
    assert P.tensor_repr(v, D.float32, requires_grad=True) == "tensor([1., 2.], requires_grad=True)"
    got = P.tensor_repr(v, D.float32, requires_grad=True, grad_fn_name="MulBackward0")
    assert got == "tensor([1., 2.], grad_fn=<MulBackward0>)"
    assert P.tensor_repr(v, D.float32, device="cuda:0") == "tensor([1., 2.], device='cuda:0')"
    got = P.tensor_repr(np.array([1.0, 2.0]), D.float64, device="cuda:1", requires_grad=True)
    assert got == "tensor([1., 2.], device='cuda:1', dtype=torch.float64, requires_grad=True)"


def test_suffix_wraps_at_linewidth():
    values = f32(np.arange(8) + 0.5)
    body = "tensor([0.5000, 1.5000, 2.5000, 3.5000, 4.5000, 5.5000, 6.5000, 7.5000]"
    assert P.tensor_repr(values, D.float32, requires_grad=True) == body + ",\n       requires_grad=True)"


def test_default_dtype_float64():
    D.set_default_dtype(D.float64)
    assert P.tensor_repr(np.array([0.5]), D.float64) == "tensor([0.5000])"
    assert P.tensor_repr(f32([0.5]), D.float32) == "tensor([0.5000], dtype=torch.float32)"
    assert P.tensor_repr(np.array([1j]), D.complex128) == "tensor([0.+1.j])"
    assert (
        P.tensor_repr(np.array([1j], np.complex64), D.complex64) == "tensor([0.+1.j], dtype=torch.complex64)"
    )


def test_summarisation():
    P.set_printoptions(threshold=10, edgeitems=2)
    got = P.tensor_repr(np.arange(30).reshape(6, 5), D.int64)
    assert got == "tensor([[ 0,  1,  ...,  3,  4],\n        [ 5,  6,  ...,  8,  9],\n        ...,\n" + (
        "        [20, 21,  ..., 23, 24],\n        [25, 26,  ..., 28, 29]])"
    )
    P.set_printoptions(edgeitems=0)
    assert P.tensor_repr(np.arange(30), D.int64) == "tensor([...], size=(30,))"


def test_tensor_str_body_indent():
    assert P.tensor_str(np.arange(4).reshape(2, 2), D.int64, indent=0) == "[[0, 1],\n [2, 3]]"
    assert P.tensor_str(np.zeros((0, 2)), D.float32) == "[]"


def test_tensor_format():
    assert P.tensor_format(f32(1.23456), D.float32, ".3f") == "1.235"
    assert P.tensor_format(f32(1.5), D.float32, "") == "1.5"
    assert P.tensor_format(np.array(7), D.int64, "03d") == "007"
    assert P.tensor_format(f32([1.5]), D.float32, "") == "tensor([1.5000])"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        P.tensor_format(f32([1.5]), D.float32, ".3f")


def test_shape_mismatch_raises():
    with pytest.raises(ValueError):
        P.tensor_repr(np.zeros(6, np.float32), D.float32, shape=(2, 0, 3))
