"""torch.testing.assert_close: pairs of inputs, compared with torch's tolerances and messages.

Tensor values are compared on the host with NumPy, reproducing torch.isclose's arithmetic dtype by dtype (so
the reported differences are the numbers torch prints) without compiling a JAX kernel per shape.
"""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import math
import warnings
from typing import Any, Callable, NoReturn, Sequence

import numpy as np

import torchlike
from torchlike._core import dtype as D

_DTYPE_PRECISIONS = {
    D.float16: (0.001, 1e-5),
    D.bfloat16: (0.016, 1e-5),
    D.float32: (1.3e-6, 1e-5),
    D.float64: (1e-7, 1e-7),
    D.complex64: (1.3e-6, 1e-5),
    D.complex128: (1e-7, 1e-7),
}


class ErrorMeta(Exception):
    """An error found while comparing; turned into the user-facing exception (with the item path) at the end."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:
        super().__init__("internal torchlike.testing error: raise ErrorMeta.to_error() instead")
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg: str | Callable[[str], str] | None = None) -> Exception:
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += f"\n\nThe failure occurred for item {_item_path(self.id)}"
        return self.type(msg(text) if callable(msg) else text)


def _item_path(id: tuple[Any, ...]) -> str:
    return "".join(str([item]) for item in id)


def default_tolerances(*inputs: Any, dtype_precisions: dict | None = None) -> tuple[float, float]:
    """The loosest (rtol, atol) of the inputs' dtypes (0.0 for dtypes without a tolerance, e.g. integers)."""
    dtypes = []
    for input in inputs:
        if isinstance(input, torchlike.Tensor):
            dtypes.append(input.dtype)
        elif isinstance(input, D.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} instead.")
    table = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[table.get(dtype, (0.0, 0.0)) for dtype in dtypes])
    return max(rtols), max(atols)


def get_tolerances(*inputs: Any, rtol: float | None, atol: float | None, id: tuple[Any, ...] = ()) -> tuple:
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ErrorMeta(
            ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.", id=id
        )
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _mismatch_msg(identifier: Any, default: str, extra: str | None, abs_diff: Any, abs_idx: Any, atol: float,
                  rel_diff: Any, rel_idx: Any, rtol: float) -> str:  # fmt: skip
    equality = rtol == 0 and atol == 0
    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    for kind, diff, idx, tol in (("absolute", abs_diff, abs_idx, atol), ("relative", rel_diff, rel_idx, rtol)):
        line = (
            f"{kind.title()} difference: {diff}"
            if idx is None
            else f"Greatest {kind} difference: {diff} at index {idx}"
        )
        msg += line + ("" if equality else f" (up to {tol} allowed)") + "\n"
    return msg.strip()


def make_scalar_mismatch_msg(actual: Any, expected: Any, *, rtol: float, atol: float, identifier: Any = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(identifier, "Scalars", f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)  # fmt: skip


# ---- tensor values, compared on host arrays in torch's arithmetic dtypes -----------------------------------


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.detach()._data())


def _scalar(d: D.dtype, value: Any) -> Any:
    """A Python number like torch's Tensor.item() for an element of dtype ``d``."""
    if d is D.bool:
        return bool(value)
    if d.is_complex:
        return complex(value)
    return float(value) if d.is_floating_point else int(value)


def _opmath(d: D.dtype) -> np.dtype:
    # torch: float16/bfloat16 arithmetic with a Python scalar runs in float32 and rounds once to the result dtype.
    return np.dtype(np.float32) if d in (D.float16, D.bfloat16) else d.np


def _abs(x: np.ndarray, exact: bool = False) -> np.ndarray:
    if x.dtype.kind != "c":
        return np.abs(x)
    if exact and x.dtype == np.complex128:
        # NOTE: torch's complex128 abs (libm hypot) agrees with math.hypot; np.hypot is an ulp off now and then
        return _hypot(x.real, x.imag).astype(np.float64)
    # NOTE: np.abs of complex64 can be an ulp off torch's abs; hypot of the float32 parts agrees with it
    return np.hypot(x.real, x.imag)


_hypot = np.frompyfunc(math.hypot, 2, 1)


def _isclose(a: np.ndarray, e: np.ndarray, d: D.dtype, rtol: float, atol: float, equal_nan: bool) -> np.ndarray:
    """torch.isclose(actual, expected, rtol, atol, equal_nan) for two host arrays of torchlike dtype ``d``."""
    close = a == e
    if equal_nan and (d.is_floating_point or d.is_complex):
        close |= np.isnan(a) & np.isnan(e)
    if rtol == 0 and atol == 0:
        return close
    if d.is_floating_point or d.is_complex:
        op = _opmath(d)
        tol_dtype = d.to_real().np
        scaled = (e.astype(op) * op.type(rtol)).astype(d.np)
        allowed = (_abs(scaled).astype(_opmath(d.to_real())) + _opmath(d.to_real()).type(atol)).astype(tol_dtype)
        error = _abs(a - e)
    else:
        # torch: integer/bool tensors times a float scalar give the default float dtype.
        f = D.get_default_dtype().np
        ai, ei = (a.astype(f), e.astype(f)) if d is D.bool else (a, e)
        allowed = f.type(atol) + np.abs(ei.astype(f) * f.type(rtol))
        error = np.abs(ai - ei).astype(f)
    return close | (np.isfinite(error) & (error <= allowed))


def _unravel(flat_index: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat_index, shape)) if shape else ()


def _argmax(x: np.ndarray) -> int:
    # torch.max(x, 0) propagates NaN (first NaN wins), else the first maximum.
    nan = np.isnan(x)
    return int(np.argmax(nan)) if nan.any() else int(np.argmax(x))


def make_tensor_mismatch_msg(a: np.ndarray, e: np.ndarray, d: D.dtype, matches: np.ndarray, *, rtol: float,
                             atol: float, identifier: Any = None) -> str:  # fmt: skip
    total = matches.size
    mismatches = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    a, e, bad = a.reshape(-1), e.reshape(-1), ~matches.reshape(-1)
    if not (d.is_floating_point or d.is_complex):
        a, e, d = a.astype(np.int64), e.astype(np.int64), D.int64
    # torch zeroes both differences where the values match; only the mismatches are computed here
    # (torch: true division of integers gives the default float dtype)
    rel_dtype = D.get_default_dtype().np if d is D.int64 else d.to_real().np
    abs_diff = np.zeros(a.shape, d.to_real().np)
    rel_diff = np.zeros(a.shape, rel_dtype)
    with np.errstate(all="ignore"):
        abs_diff[bad] = _abs(a[bad] - e[bad], exact=True)
        rel_diff[bad] = abs_diff[bad].astype(rel_dtype) / _abs(e[bad], exact=True).astype(rel_dtype)
    ia, ir = _argmax(abs_diff), _argmax(rel_diff)
    real = d.to_real()
    return _mismatch_msg(identifier, "Tensor-likes", extra, _scalar(real, abs_diff[ia]), _unravel(ia, matches.shape),
                         atol, _scalar(D.float32 if d is D.int64 else real, rel_diff[ir]),
                         _unravel(ir, matches.shape), rtol)  # fmt: skip


# ---- pairs ----------------------------------------------------------------------------------------------------


class UnsupportedInputs(Exception):
    """Raised by a pair's constructor when it does not handle the inputs; the next pair type is tried."""


class Pair:
    """Two corresponding inputs plus the comparison options; ``compare`` raises :class:`ErrorMeta` on mismatch."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **unknown_parameters: Any) -> None:
        self.actual, self.expected, self.id = actual, expected, id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _unsupported() -> NoReturn:
        raise UnsupportedInputs

    @staticmethod
    def _require(*inputs: Any, cls: Any) -> None:
        if not all(isinstance(input, cls) for input in inputs):
            Pair._unsupported()

    def _fail(self, type: type[Exception], msg: str) -> NoReturn:
        raise ErrorMeta(type, msg, id=self.id)

    def compare(self) -> None:
        raise NotImplementedError

    def extra_repr(self) -> Sequence[str]:
        return []

    def __repr__(self) -> str:
        fields = [("id", self.id), ("actual", self.actual), ("expected", self.expected)]
        fields += [(name, getattr(self, name)) for name in self.extra_repr()]
        return "\n".join([f"{type(self).__name__}(", *[f"    {k}={v!s}," for k, v in fields], ")"])


class ObjectPair(Pair):
    """Fallback pair comparing with ``==`` (not used by assert_close)."""

    def compare(self) -> None:
        try:
            equal = self.actual == self.expected
        except Exception as error:
            raise ErrorMeta(
                ValueError, f"{self.actual} == {self.expected} failed with:\n{error}.", id=self.id
            ) from error
        if not equal:
            self._fail(AssertionError, f"{self.actual} != {self.expected}")


class NonePair(Pair):
    def __init__(self, actual: Any, expected: Any, **other_parameters: Any) -> None:
        if not (actual is None or expected is None):
            self._unsupported()
        super().__init__(actual, expected, **other_parameters)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    """Python and NumPy booleans."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...], **other_parameters: Any) -> None:
        self._require(actual, expected, cls=(bool, np.bool_))
        actual, expected = (bool(x) if isinstance(x, bool) else x.item() for x in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """Python and NumPy numbers; int, float and complex stand for int64, float64 and complex128."""

    _TYPE_TO_DTYPE = {int: D.int64, float: D.float64, complex: D.complex128}

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = False,
                 **other_parameters: Any) -> None:  # fmt: skip
        self._require(actual, expected, cls=(int, float, complex, np.number))
        actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)
        # torch: a Python bool reaches this lookup (bool is an int) and fails with KeyError, reported as RuntimeError
        dtypes = [self._TYPE_TO_DTYPE[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = get_tolerances(*dtypes, rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self._fail(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        self._fail(AssertionError, make_scalar_mismatch_msg(actual, expected, rtol=self.rtol, atol=self.atol))

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_dtype")


class TensorLikePair(Pair):
    """Tensors, or two inputs of directly related types that ``torchlike.as_tensor`` accepts (e.g. NumPy arrays)."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), allow_subclasses: bool = True,
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **other_parameters: Any) -> None:  # fmt: skip
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            self._unsupported()
        if not allow_subclasses and type(actual) is not type(expected):
            self._unsupported()
        actual, expected = self._to_tensor(actual), self._to_tensor(expected)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _to_tensor(self, tensor_like: Any) -> Any:
        if isinstance(tensor_like, torchlike.Tensor):
            return tensor_like
        try:
            return torchlike.as_tensor(tensor_like)
        except Exception:
            self._unsupported()

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        if actual.device.type == "meta" or expected.device.type == "meta":
            return
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _mismatch(self, name: str, actual_value: Any, expected_value: Any) -> NoReturn:
        self._fail(
            AssertionError, f"The values for attribute '{name}' do not match: {actual_value} != {expected_value}."
        )

    def _compare_attributes(self, actual: Any, expected: Any) -> None:
        if actual.shape != expected.shape:
            self._mismatch("shape", actual.shape, expected.shape)
        # torchlike tensors are never quantized and always strided, so is_quantized/qscheme/layout always agree.
        if self.check_stride and actual.stride() != expected.stride():
            self._mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            self._mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            self._mismatch("dtype", actual.dtype, expected.dtype)

    def _equalize_attributes(self, actual: Any, expected: Any) -> tuple:
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            # torch: the wide unsigned types compare as int64 (promote_types refuses them)
            wide = (D.uint16, D.uint32, D.uint64)
            a_dtype = D.int64 if actual.dtype in wide else actual.dtype
            e_dtype = D.int64 if expected.dtype in wide else expected.dtype
            dtype = D.promote_types(a_dtype, e_dtype)
            actual, expected = actual.to(dtype), expected.to(dtype)
        return actual, expected

    def _compare_values(self, actual: Any, expected: Any) -> None:
        d = actual.dtype
        a, e = _host(actual), _host(expected)
        with np.errstate(all="ignore"):
            matches = _isclose(a, e, d, self.rtol, self.atol, self.equal_nan)
        if matches.all():
            return
        if actual.shape == ():
            msg = make_scalar_mismatch_msg(_scalar(d, a[()]), _scalar(d, e[()]), rtol=self.rtol, atol=self.atol)
        else:
            msg = make_tensor_mismatch_msg(a, e, d, matches, rtol=self.rtol, atol=self.atol)
        self._fail(AssertionError, msg)

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout", "check_stride")


# ---- pairing nested inputs ------------------------------------------------------------------------------------


def originate_pairs(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]],
                    sequence_types: tuple = (collections.abc.Sequence,),
                    mapping_types: tuple = (collections.abc.Mapping,), id: tuple[Any, ...] = (),
                    **options: Any) -> list[Pair]:  # fmt: skip
    """Pairs for the leaves of two (possibly nested) sequences/mappings, checking their structure."""
    nested = dict(pair_types=pair_types, sequence_types=sequence_types, mapping_types=mapping_types, **options)
    # strings are sequences of strings: "a"[0] == "a", so they are never recursed into
    if (isinstance(actual, sequence_types) and not isinstance(actual, str)
            and isinstance(expected, sequence_types) and not isinstance(expected, str)):  # fmt: skip
        if len(actual) != len(expected):
            raise ErrorMeta(
                AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", id=id
            )
        return [p for i in range(len(actual)) for p in originate_pairs(actual[i], expected[i], id=(*id, i), **nested)]
    if isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise ErrorMeta(
                AssertionError,
                f"The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id=id,
            )
        keys: Any = actual_keys
        with contextlib.suppress(Exception):  # sorted when the keys allow it, so the first failure is deterministic
            keys = sorted(keys)
        return [p for k in keys for p in originate_pairs(actual[k], expected[k], id=(*id, k), **nested)]
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {_item_path(id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_FILE_AN_ISSUE}"
            ) from error
    raise ErrorMeta(
        TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", id=id
    )


# torch's wording, so messages match; it points at torch's tracker because the behaviour mirrored is torch's.
_FILE_AN_ISSUE = (
    "If you are a user and see this message during normal operation please file an issue at "
    "https://github.com/pytorch/pytorch/issues. If you are a developer and working on the comparison functions, "
    "please except the previous error and raise an expressive `ErrorMeta` instead."
)


def not_close_error_metas(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]] = (ObjectPair,),
                          sequence_types: tuple = (collections.abc.Sequence,),
                          mapping_types: tuple = (collections.abc.Mapping,), **options: Any) -> list[ErrorMeta]:  # fmt: skip
    """The mismatches between two inputs; structural errors raise at once (without the user's ``msg``)."""
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types, sequence_types=sequence_types,
                                mapping_types=mapping_types, **options)  # fmt: skip
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
        except Exception as error:
            raise RuntimeError(
                f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above. {_FILE_AN_ISSUE}"
            ) from error
    return error_metas


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: str | Callable[[str], str] | None = None) -> None:  # fmt: skip
    """Implementation of torch.testing.assert_close (same tolerances, messages and exception types).

    Differs: torchlike has no sparse, quantized, jagged, float8 or DTensor tensors, so those branches don't exist.
    """
    __tracebackhide__ = True
    error_metas = not_close_error_metas(
        actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
        check_dtype=check_dtype, check_layout=check_layout, check_stride=check_stride, msg=msg,
    )  # fmt: skip
    if error_metas:
        raise error_metas[0].to_error(msg)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:  # fmt: skip
    """Implementation of the deprecated torch.testing.assert_allclose (warns FutureWarning, as torch does)."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. "
        "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, torchlike.Tensor):
        actual = torchlike.tensor(actual)
    if not isinstance(expected, torchlike.Tensor):
        expected = torchlike.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        precisions = {D.float16: (1e-3, 1e-3), D.float32: (1e-4, 1e-5), D.float64: (1e-5, 1e-8)}
        rtol, atol = default_tolerances(actual, expected, dtype_precisions=precisions)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)  # fmt: skip
