"""torchlike.testing alone: assert_close messages (literals taken from torch 2.13) and make_tensor."""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import torchlike
import torchlike.testing

tl = torchlike
assert_close = torchlike.testing.assert_close
make_tensor = torchlike.testing.make_tensor


def message(*args, **kwargs) -> str:
    with pytest.raises(Exception) as info:
        assert_close(*args, **kwargs)
    return f"{type(info.value).__name__}: {info.value}"


def test_close_values_pass() -> None:
    assert_close(tl.tensor([1.0, 2.0, 3.0]), tl.tensor([1.0, 2.000001, 3.0]))
    assert_close(tl.tensor([1, 2]), tl.tensor([1, 2]))
    assert_close(tl.zeros(0), tl.zeros(0))
    assert_close(tl.tensor([1.0, math.inf]), tl.tensor([1.0, math.inf]))
    assert_close(tl.tensor([1.0, math.nan]), tl.tensor([1.0, math.nan]), equal_nan=True)
    assert_close(2.0 / math.sqrt(2.0), math.sqrt(2.0))
    assert_close(np.array([1.0, 0.1]), np.arccos(np.cos(np.array([1.0, 0.1]))))
    assert_close((1.0, tl.tensor([2.0])), [1.0, tl.tensor([2.0])])
    assert_close(OrderedDict(a=1.0, b=tl.tensor(2.0)), {"b": tl.tensor(2.0), "a": 1.0})
    assert_close(1.0, 1, check_dtype=False)
    assert_close(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 2.1]), rtol=0.1, atol=0.0)
    assert_close(tl.nn.Parameter(tl.tensor([1.0])), tl.tensor([1.0]))


def test_tensor_mismatch_message() -> None:
    got = message(tl.tensor([1.0, 2.0, 3.0, 4.0]), tl.tensor([1.0, 3.0, 4.0, 4.0]))
    assert got == (
        "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 2 / 4 (50.0%)\n"
        "Greatest absolute difference: 1.0 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.3333333432674408 at index (1,) (up to 1.3e-06 allowed)"
    )


def test_integer_and_bool_messages_say_equal() -> None:
    assert message(tl.tensor([1, 2, 3]), tl.tensor([1, 5, 0])) == (
        "AssertionError: Tensor-likes are not equal!\n\nMismatched elements: 2 / 3 (66.7%)\n"
        "Greatest absolute difference: 3 at index (1,)\nGreatest relative difference: inf at index (2,)"
    )
    assert message(tl.tensor([True, False]), tl.tensor([True, True])) == (
        "AssertionError: Tensor-likes are not equal!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 1 at index (1,)\nGreatest relative difference: 1.0 at index (1,)"
    )


def test_float16_and_complex_differences_in_their_dtype() -> None:
    assert message(tl.tensor([1.0, 2.0], dtype=tl.float16), tl.tensor([1.0, 2.01], dtype=tl.float16)) == (
        "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.009765625 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.00485992431640625 at index (1,) (up to 0.001 allowed)"
    )
    assert message(tl.tensor([1 + 1j, 2]), tl.tensor([1 + 1j, 2.01])) == (
        "AssertionError: Tensor-likes are not close!\n\nMismatched elements: 1 / 2 (50.0%)\n"
        "Greatest absolute difference: 0.009999990463256836 at index (1,) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.0049751196056604385 at index (1,) (up to 1.3e-06 allowed)"
    )


def test_nan_and_inf() -> None:
    assert message(tl.tensor(math.nan), tl.tensor(math.nan)) == (
        "AssertionError: Scalars are not close!\n\nExpected nan but got nan.\n"
        "Absolute difference: nan (up to 1e-05 allowed)\nRelative difference: nan (up to 1.3e-06 allowed)"
    )
    assert "Greatest absolute difference: inf at index (1,)" in message(
        tl.tensor([1.0, math.inf]), tl.tensor([1.0, -math.inf])
    )
    assert_close(tl.tensor([complex(math.nan, 1)]), tl.tensor([complex(math.nan, 1)]), equal_nan=True)


def test_scalar_messages() -> None:
    assert message(1e-9, 1e-10, rtol=0, atol=0) == (
        "AssertionError: Scalars are not equal!\n\nExpected 1e-10 but got 1e-09.\n"
        "Absolute difference: 9.000000000000001e-10\nRelative difference: 9.0"
    )
    assert message(1, 1.0) == "AssertionError: The (d)types do not match: <class 'int'> != <class 'float'>."
    assert message(True, False) == "AssertionError: Booleans mismatch: True is not False"
    assert message(None, 1.0) == "AssertionError: None mismatch: None is not 1.0"
    assert message(True, 1).startswith("RuntimeError: Originating a NumberPair() at item  with\n\nbool(): True")


def test_attribute_mismatches() -> None:
    assert message(tl.tensor([1.0, 2.0]), tl.tensor([1.0, 2.0, 3.0])) == (
        "AssertionError: The values for attribute 'shape' do not match: torch.Size([2]) != torch.Size([3])."
    )
    assert message(tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64)) == (
        "AssertionError: The values for attribute 'dtype' do not match: torch.float32 != torch.float64."
    )
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert message(x.t(), x.t().contiguous(), check_stride=True) == (
        "AssertionError: The values for attribute 'stride()' do not match: (1, 2) != (2, 1)."
    )
    assert_close(tl.tensor([1, 2]), tl.tensor([1.0, 2.0], dtype=tl.float64), check_dtype=False)


def test_structure_and_type_errors() -> None:
    assert message([1.0], [1.0, 2.0], msg="ignored") == "AssertionError: The length of the sequences mismatch: 1 != 2"
    assert message({"a": 1}, {"b": 1}) == (
        "AssertionError: The keys of the mappings do not match:\nMissing keys in the actual mapping: ['b']\n"
        "Additional keys in the actual mapping: ['a']"
    )
    assert message([{"w": tl.tensor([1.0])}], [{"w": tl.tensor([1])}]).endswith(
        "torch.float32 != torch.int64.\n\nThe failure occurred for item [0]['w']"
    )
    assert message("a", "a") == (
        "TypeError: No comparison pair was able to handle inputs of type <class 'str'> and <class 'str'>."
    )
    assert message(np.array([1.0]), tl.tensor([1.0])).startswith("TypeError: No comparison pair")
    assert message(tl.nn.Parameter(tl.tensor([1.0])), tl.tensor([1.0]), allow_subclasses=False).startswith("TypeError")
    assert message(tl.tensor([1.0]), tl.tensor([1.0]), rtol=1e-3) == (
        "ValueError: Both 'rtol' and 'atol' must be either specified or omitted, but got no atol."
    )


def test_msg_string_and_callable() -> None:
    a, b = tl.tensor([1.0, 2.0, 3.0]), tl.tensor([1.0, 4.0, 5.0])
    assert message(a, b, msg="Argh, the tensors are not close!") == "AssertionError: Argh, the tensors are not close!"
    got = message(a, b, msg=lambda m: f"Header\n\n{m}\n\nFooter")
    assert got.startswith("AssertionError: Header\n\nTensor-likes are not close!\n\nMismatched elements: 2 / 3 (66.7%)")
    assert got.endswith("(up to 1.3e-06 allowed)\n\nFooter")
    assert message([a], [b], msg=lambda m: m[-5:]) == "AssertionError: m [0]"


def test_assert_allclose_is_deprecated() -> None:
    with pytest.warns(FutureWarning, match="deprecated since 1.12"):
        torchlike.testing.assert_allclose(tl.tensor([1.0, 2.0]), [1.0, 2.00001])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(AssertionError, match="up to 1e-05 allowed"):
            torchlike.testing.assert_allclose(tl.tensor([1.0, 2.0]), [1.0, 2.1])


def test_make_tensor_values_are_torchs() -> None:
    # values printed by torch 2.13 after torch.manual_seed(0)
    tl.manual_seed(0)
    assert make_tensor(4, dtype=tl.float32, device="cpu").tolist() == [
        -0.06738138198852539, 4.8279924392700195, -7.407406330108643, -6.623451232910156
    ]  # fmt: skip
    tl.manual_seed(0)
    assert make_tensor(2, 3, dtype=tl.int64, device="cpu").tolist() == [[6, -5, -9], [-9, 2, -2]]
    tl.manual_seed(0)
    z = make_tensor((2,), dtype=tl.complex64, device="cpu")
    assert z.dtype is tl.complex64 and z.tolist()[1] == complex(-7.407406330108643, -6.623451232910156)
    tl.manual_seed(0)
    n = make_tensor([2, 2], dtype=tl.float64, device="cpu", noncontiguous=True)
    assert n.tolist() == [[3.740757559196183, 7.573458314195285], [5.240662059245466, -2.680062760909289]]
    assert not n.is_contiguous() and n.stride() == (4, 2)


def test_make_tensor_options() -> None:
    t = make_tensor(50, dtype=tl.int8, device="cpu", low=-1, high=2, exclude_zero=True)
    assert set(t.tolist()) <= {-1, 1}
    t = make_tensor(50, dtype=tl.float32, device="cpu", low=0.5, high=0.75)
    assert 0.5 <= t.min().item() and t.max().item() < 0.75
    assert make_tensor(3, dtype=tl.float32, device="cpu", requires_grad=True).requires_grad
    assert make_tensor(3, dtype=tl.bool, device="cpu").dtype is tl.bool
    c = make_tensor(1, 2, 2, 3, dtype=tl.float32, device="cpu", memory_format=tl.channels_last)
    assert c.stride() == (12, 1, 6, 2)
    wide = make_tensor(3, dtype=tl.float32, device="cpu", low=-3.4e38, high=3.4e38)
    assert bool(tl.isfinite(wide).all())


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"dtype": tl.int64, "requires_grad": True}, "`requires_grad=True` is not supported for boolean and integral"),
        ({"dtype": tl.float32, "low": 5, "high": 1}, "`low` must be less than `high`, but got 5 >= 1"),
        ({"dtype": tl.float32, "low": math.nan}, "`low` and `high` cannot be NaN, but got low=nan and high=9"),
        ({"dtype": tl.uint8, "low": -10, "high": -1}, r"\[-10, -1\), but torch.uint8 only supports \[0, 256\)"),
        ({"dtype": tl.float32, "noncontiguous": True, "memory_format": tl.contiguous_format}, "mutually exclusive"),
    ],
)
def test_make_tensor_value_errors(kwargs: dict, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        make_tensor(2, device="cpu", **kwargs)


def test_make_tensor_channels_last_rank() -> None:
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        make_tensor(2, 3, dtype=tl.float32, device="cpu", memory_format=tl.channels_last)
