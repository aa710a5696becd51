"""Number-tolerant comparison of printed output, line by line.

A line is split into number tokens and text. Numbers compare by value: integers exactly, floats
within ``atol + rtol * max(|a|, |b|)`` plus, for numbers printed with 4 or more decimals (torch's
precision), half a unit in the last printed digit of each: two values a rounding boundary apart
print one unit apart. Text compares
exactly, except that whitespace next to a number is ignored (torch pads columns by the widest
value, so one `-0.0000` changes every column's padding) and other whitespace runs count as one.
Memory addresses (`object at 0x7f...`) are normalised.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-5

_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+")
_NUMBER = re.compile(
    r"""
    (?<![\w.])                      # not the tail of an identifier (float32, AddBackward0) or version
    (?P<num>[-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|inf|nan))
    (?P<imag>j)?                    # complex parts print as `2.j`
    (?![\w.])
    """,
    re.VERBOSE,
)
_SPACE = re.compile(r"\s+")
# torch prints 4 decimals; a number printed with at least this many is treated as rounded.
_ROUNDED_DECIMALS = 4


@dataclass(frozen=True)
class _Num:
    text: str
    value: float
    is_int: bool
    is_imag: bool
    resolution: float  # half a unit in the last printed digit; 0 for exact forms


def _parse_number(text: str, imag: bool) -> _Num:
    value = float(text)
    mantissa, _, exponent = text.lower().partition("e")
    is_int = not exponent and "." not in mantissa and mantissa.lstrip("+-") not in ("inf", "nan")
    decimals = len(mantissa.partition(".")[2])
    if is_int or not math.isfinite(value) or decimals < _ROUNDED_DECIMALS:
        # `27.` (torch: integral values) and python's short reprs (`0.3`) are exact, not rounded.
        resolution = 0.0
    else:
        resolution = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    return _Num(text, value, is_int, imag, resolution)


def tokenize(line: str) -> list[str | _Num]:
    """Split a line into text pieces and numbers, alternating, starting and ending with text."""
    line = _ADDRESS.sub("at 0x?", line)
    tokens: list[str | _Num] = []
    pos = 0
    for m in _NUMBER.finditer(line):
        tokens.append(line[pos : m.start()])
        tokens.append(_parse_number(m.group("num"), m.group("imag") is not None))
        pos = m.end()
    tokens.append(line[pos:])
    # Text sits between numbers or at the line's ends, so stripping it drops exactly the whitespace
    # next to numbers and at the ends.
    return [_SPACE.sub(" ", t.strip()) if isinstance(t, str) else t for t in tokens]


def _numbers_close(a: _Num, b: _Num, rtol: float, atol: float) -> bool:
    if a.is_int != b.is_int or a.is_imag != b.is_imag:
        return False
    if a.is_int:
        return int(a.text) == int(b.text)
    if math.isnan(a.value) or math.isnan(b.value):
        return math.isnan(a.value) and math.isnan(b.value)
    if math.isinf(a.value) or math.isinf(b.value):
        return a.value == b.value
    slack = atol + rtol * max(abs(a.value), abs(b.value)) + a.resolution + b.resolution
    return abs(a.value - b.value) <= slack


def lines_match(expected: str, actual: str, rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> bool:
    """Whether two printed lines agree: numbers within tolerance, text exactly (see module doc)."""
    a, b = tokenize(expected), tokenize(actual)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str):
            if x != y:
                return False
        elif not _numbers_close(x, y, rtol, atol):
            return False
    return True


@dataclass(frozen=True)
class Divergence:
    """The first line (1-based) where two outputs disagree; a missing line is None."""

    line: int
    expected: str | None
    actual: str | None


def first_divergence(
    expected: str | Sequence[str],
    actual: str | Sequence[str],
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    ignore: re.Pattern[str] | None = None,
) -> Divergence | None:
    """Compare two outputs line by line; None when they agree.

    Lines matching `ignore` are dropped from both sides first (line numbers still count them).
    """
    a = _numbered(expected, ignore)
    b = _numbered(actual, ignore)
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if x is None or y is None or not lines_match(x[1], y[1], rtol, atol):
            line = next(side[0] for side in (x, y) if side is not None)
            return Divergence(line, x[1] if x else None, y[1] if y else None)
    return None


def _numbered(text: str | Sequence[str], ignore: re.Pattern[str] | None) -> list[tuple[int, str]]:
    lines = text.splitlines() if isinstance(text, str) else list(text)
    # A trailing run of blank lines is not output anyone reads; don't fail on it.
    while lines and not lines[-1].strip():
        lines.pop()
    return [(i + 1, line) for i, line in enumerate(lines) if ignore is None or not ignore.search(line)]


def unified_diff(
    expected: str,
    actual: str,
    context: int = 3,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
    ignore: re.Pattern[str] | None = None,
    max_lines: int = 60,
    labels: tuple[str, str] = ("torch", "torchlike"),
) -> list[str]:
    """A unified diff of two outputs (`--- torch`, `+++ torchlike`), from the first difference on,
    at most `max_lines` lines (a last line says how many were left out); [] when they agree.

    Lines that agree within tolerance, and ignored lines, count as equal, so the diff shows only
    what `first_divergence` would fail on (and what follows it).
    """
    a, b = expected.splitlines(), actual.splitlines()
    shown = list(b)
    for i in range(min(len(a), len(b))):
        both_ignored = ignore is not None and ignore.search(a[i]) and ignore.search(b[i])
        if both_ignored or lines_match(a[i], b[i], rtol, atol):
            shown[i] = a[i]  # equal for difflib
    if first_divergence(a, b, rtol, atol, ignore) is None:
        return []
    diff = list(difflib.unified_diff(a, shown, labels[0], labels[1], n=context, lineterm=""))
    if len(diff) > max_lines:
        left = len(diff) - max_lines
        diff = diff[:max_lines] + [f"... ({left} more diff lines)"]
    return diff
