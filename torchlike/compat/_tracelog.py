"""The per-op value log of `python -m torchlike compare --trace`: writing it, reading it, comparing two.

Both traced runs write the same format, so this module uses only the standard library and NumPy:
the torch-side driver (`_trace_torch.py`, run under real torch) loads it by file path, since
`import torchlike` there would load JAX, or the reference shim that answers it with torch.

A log is a pickle stream of records, one per logged call, in call order:

    {"i": index, "name": "F.relu", "where": "train.py:42", "outs": [value, ...], "ins": digest}

A value is ``{"dtype": "torch.float32", "shape": (64, 10), "full": bool, "values": float64 array
(all elements, or an evenly spaced sample of a large tensor), "sum": float, "abssum": float}``; ``ins``
is a digest of the call's tensor and number arguments (None when an input was too large to hash),
which says whether both runs fed the op bit-identical inputs.
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import numpy as np

FULL_LIMIT = 4096  # a tensor up to this many elements is logged whole; a larger one by a sample
SAMPLE = 1024  # elements kept from a larger tensor (evenly spaced in row-major order)
HASH_LIMIT = 1 << 22  # inputs with more elements are not hashed (the digest is then None)
MAX_OUTPUTS = 16  # tensors logged per call (tuple results)
STEP_OUTPUTS = 64  # parameters (and gradients) logged per optimizer step, each as its own value
DEFAULT_MAX_OPS = 20000

# Relative tolerance per dtype, in units of the dtype's machine epsilon: a few ulps of the value,
# measured against the larger of the element and the tensor's mean magnitude (so that sums that
# cancel to near zero are judged on the scale of what was summed). Integers and bool: exact.
DEFAULT_ULPS = 16
_EPS = {
    "torch.float64": float(np.finfo(np.float64).eps),
    "torch.float32": float(np.finfo(np.float32).eps),
    "torch.complex128": float(np.finfo(np.float64).eps),
    "torch.complex64": float(np.finfo(np.float32).eps),
    "torch.float16": float(np.finfo(np.float16).eps),
    "torch.bfloat16": 2.0**-7,
}
_LOW_PRECISION_ULPS = 4  # fp16/bf16: their eps is already coarse; float32 accumulation inside differs less


def rtol_for(dtype: str, ulps: float = DEFAULT_ULPS) -> float:
    """The relative tolerance for an output of ``dtype`` (0 for integer and bool dtypes: exact)."""
    eps = _EPS.get(dtype)
    if eps is None:
        return 0.0
    if dtype in ("torch.float16", "torch.bfloat16"):
        return eps * min(ulps, _LOW_PRECISION_ULPS)
    return eps * ulps


# --- writing ---------------------------------------------------------------------------------


def value_record(dtype: str, arr: np.ndarray) -> dict:
    """The logged form of one tensor, from its values as a float64 (or complex128) array."""
    flat = arr.reshape(-1)
    n = flat.size
    finite = flat[np.isfinite(flat)]
    record = {
        "dtype": dtype,
        "shape": tuple(int(s) for s in arr.shape),
        "full": n <= FULL_LIMIT,
        "sum": complex(finite.sum()) if np.iscomplexobj(flat) else float(finite.sum()),
        "abssum": float(np.abs(finite).sum()),
    }
    record["values"] = flat.copy() if n <= FULL_LIMIT else flat[sample_indices(n)].copy()
    return record


def sample_indices(n: int) -> np.ndarray:
    return np.linspace(0, n - 1, SAMPLE).round().astype(np.int64)


def digest(parts: Iterable[bytes]) -> str:
    h = hashlib.blake2b(digest_size=12)
    for p in parts:
        h.update(p)
        h.update(b"|")
    return h.hexdigest()


def scalar_bytes(x: Any) -> bytes | None:
    """The digest part of a non-tensor argument that both runs see alike (numbers, None, strings), else None."""
    if x is None or isinstance(x, (bool, int, float, complex, str)):
        return repr(x).encode()
    if isinstance(x, (tuple, list)) and all(y is None or isinstance(y, (bool, int, float, str)) for y in x):
        return repr(tuple(x)).encode()
    return None


class LogWriter:
    """Appends records to a log file; stops after ``max_ops`` records."""

    def __init__(self, path: str, max_ops: int = DEFAULT_MAX_OPS) -> None:
        self.file: BinaryIO = open(path, "wb")  # kept open for the whole run
        self.max_ops = max_ops
        self.count = 0
        self.pid = os.getpid()  # a forked child (a DataLoader worker) inherits the file: it never writes

    @property
    def full(self) -> bool:
        return self.count >= self.max_ops

    def write(self, name: str, where: str, outs: list[dict], ins: str | None) -> None:
        if self.full or os.getpid() != self.pid:
            return
        record = {"i": self.count, "name": name, "where": where, "outs": outs, "ins": ins}
        pickle.dump(record, self.file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1
        if self.count % 64 == 0:
            self.file.flush()

    def close(self) -> None:
        if not self.file.closed and os.getpid() == self.pid:
            self.file.flush()
            self.file.close()


def read_log(path: str) -> list[dict]:
    """Every record of a log (a log cut short by a crash gives the records written before it)."""
    records = []
    try:
        with open(path, "rb") as f:
            while True:
                try:
                    records.append(pickle.load(f))
                except EOFError:
                    break
                except (pickle.UnpicklingError, ValueError, AttributeError):
                    break  # a truncated last record
    except FileNotFoundError:
        pass
    return records


class Tracer:
    """What both traced runs share: turning a call's inputs and outputs into a record.

    ``is_tensor(x)`` and ``values(t) -> (dtype name, float64/complex128 array)`` adapt it to one library.
    ``busy`` is set while the tracer itself reads tensors, so its own calls are never logged.
    """

    def __init__(self, writer: LogWriter, is_tensor: Any, values: Any) -> None:
        self.writer = writer
        self.is_tensor = is_tensor
        self.values = values
        self.busy = False

    def tensors(self, out: Any, limit: int = MAX_OUTPUTS) -> list:
        """The tensors of a result: itself, or those in a (nested) tuple or list, in order."""
        found: list = []
        queue = [out]
        while queue and len(found) < limit:
            x = queue.pop(0)
            if self.is_tensor(x):
                found.append(x)
            elif isinstance(x, (tuple, list)):
                queue[:0] = list(x)
        return found

    def digest_inputs(self, args: Sequence[Any], kwargs: dict | None = None) -> str | None:
        """A digest of the tensor and number arguments (one level into lists), or None if one is too large."""
        parts = []
        items = list(args) + list((kwargs or {}).values())
        flat = []
        for x in items:
            flat += list(x) if isinstance(x, (tuple, list)) and any(self.is_tensor(y) for y in x) else [x]
        self.busy = True
        try:
            for x in flat:
                if self.is_tensor(x):
                    if x.numel() > HASH_LIMIT:
                        return None
                    dtype, arr = self.values(x)
                    parts.append(f"{dtype}{tuple(arr.shape)}".encode() + np.ascontiguousarray(arr).tobytes())
                else:
                    b = scalar_bytes(x)
                    parts.append(b if b is not None else b"?")
        except Exception:
            return None
        finally:
            self.busy = False
        return digest(parts)

    def log(self, name: str, where: str, tensors: Sequence[Any], ins: str | None) -> None:
        self.busy = True
        try:
            outs = []
            for t in tensors:
                try:
                    dtype, arr = self.values(t)
                except Exception:  # a tensor without host values (meta, sparse): logged as unreadable
                    continue
                outs.append(value_record(dtype, arr))
        finally:
            self.busy = False
        if outs:
            self.writer.write(name, where, outs, ins)

    def log_scalar(self, name: str, where: str, dtype: str, value: Any, ins: str | None) -> None:
        """``Tensor.item()``'s number, logged as a 0-dim value of the tensor's dtype."""
        arr = np.asarray(value, dtype=np.complex128 if isinstance(value, complex) else np.float64)
        self.writer.write(name, where, [value_record(dtype, arr)], ins)


def user_frame(frame: Any, library: str | tuple[str, ...]) -> Any:
    """The first frame from ``frame`` outward whose file is not under ``library`` (a prefix or prefixes)."""
    while frame is not None and frame.f_code.co_filename.startswith(library):
        frame = frame.f_back
    return frame


def where(filename: str, lineno: int) -> str:
    """``file:line`` of a call, the file relative to the working directory when it lies below it."""
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        rel = filename
    if rel.startswith(".."):
        rel = os.path.basename(filename)
    return f"{rel}:{lineno}"


def is_container_file(filename: str) -> bool:
    """A file of nn's containers (Sequential, ModuleList): modules they call are logged like the user's."""
    parts = filename.replace(os.sep, "/").split("/")
    return parts[-3:-1] == ["nn", "modules"] and parts[-1] in ("container.py", "_container.py")


def module_name(module: Any) -> str:
    """``nn.Linear`` for the library's modules, the class name for the user's."""
    cls = type(module)
    return f"nn.{cls.__name__}" if cls.__module__.startswith(("torch.nn.", "torchlike.nn.")) else cls.__name__


def in_place_target(name: str, args: Sequence[Any], is_tensor: Any) -> list:
    """What an in-place op that returns None changed (``x[i] = v``, ``x.add_(y)``): its first argument."""
    op = name.rsplit(".", 1)[-1]
    if args and is_tensor(args[0]) and (op == "__setitem__" or (op.endswith("_") and not op.startswith("__"))):
        return [args[0]]
    return []


# --- comparing -------------------------------------------------------------------------------


# Operators under the names torch's TorchFunctionMode reports for them (`x + 1` is `Tensor.add`, `x += 1`
# is `Tensor.add_`, `1 - x` is `Tensor.__rsub__`); the others lose their underscores.
_OPERATOR_KEYS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__sub__": "sub", "__isub__": "sub_",
    "__rsub__": "rsub", "__mul__": "mul", "__rmul__": "mul", "__imul__": "mul_", "__truediv__": "div",
    "__div__": "div", "__rtruediv__": "rdiv", "__rdiv__": "rdiv", "__itruediv__": "div_", "__idiv__": "div_",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_", "__pow__": "pow",
    "__ipow__": "pow_", "__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__matmul__": "matmul",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt", "__ge__": "ge",
    "__iand__": "bitwise_and_", "__ior__": "bitwise_or_", "__ixor__": "bitwise_xor_",
    "__ilshift__": "bitwise_left_shift_", "__irshift__": "bitwise_right_shift_",
}  # fmt: skip


def key(record: dict) -> str:
    """What aligns two records: the op's own name, without its namespace (`torch.add` is `Tensor.add`),
    operators under one name (`Tensor.__add__` is `Tensor.add`)."""
    name = record["name"].rsplit(".", 1)[-1]
    if name.startswith("__") and name.endswith("__"):
        return _OPERATOR_KEYS.get(name, name.strip("_"))
    return name


@dataclass
class ValueDiff:
    """How one output of a matched op compares."""

    index: int  # which output of the call
    dtype: str
    shape: tuple
    max_abs: float
    max_rel: float
    rtol: float
    ok: bool
    reason: str = ""  # a difference other than values: shape, dtype, count of outputs
    worst: int = -1  # the flat position (in the logged values) of the largest difference


def _mean_magnitude(v: dict) -> float:
    x = v["values"]
    finite = np.abs(x[np.isfinite(x)])
    return float(finite.mean()) if finite.size else 0.0


def compare_values(a: dict, b: dict, ulps: float = DEFAULT_ULPS, floor: float = 0.0) -> ValueDiff:
    """Compare torch's value ``a`` with torchlike's ``b``: an element's difference counts relative to the
    larger of the two elements, or of ``floor`` and the tensor's mean magnitude when that is larger (sums
    that cancel to near zero are judged on the scale of what was summed)."""
    rtol = rtol_for(a["dtype"], ulps)
    if a["shape"] != b["shape"]:
        return ValueDiff(
            0, a["dtype"], a["shape"], math.inf, math.inf, rtol, False, f"shape {a['shape']} vs {b['shape']}"
        )
    if a["dtype"] != b["dtype"]:
        return ValueDiff(
            0, a["dtype"], a["shape"], math.inf, math.inf, rtol, False, f"dtype {a['dtype']} vs {b['dtype']}"
        )
    x, y = a["values"], b["values"]
    if x.size == 0:
        return ValueDiff(0, a["dtype"], a["shape"], 0.0, 0.0, rtol, True)
    same_special = (np.isnan(x) & np.isnan(y)) | ((x == y) & ~np.isfinite(x))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        diff = np.where(same_special, 0.0, np.abs(x - y))
        diff = np.where(np.isnan(diff), np.inf, diff)  # NaN or inf on one side only
        scale = np.maximum(np.maximum(np.abs(x), np.abs(y)), max(floor, _mean_magnitude(a)))
        scale = np.where(np.isfinite(scale), scale, 0.0)
        rel = np.where(diff == 0, 0.0, np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.inf))
    worst = int(np.argmax(rel))
    max_abs, max_rel = float(diff.max()), float(rel.max())
    if not (a["full"] and b["full"]) and max_rel <= rtol:  # a sample: the sums must agree too
        total = max(a["abssum"], b["abssum"])
        sum_rel = abs(a["sum"] - b["sum"]) / total if total else 0.0
        if sum_rel > 4 * rtol:
            max_rel = sum_rel
    return ValueDiff(0, a["dtype"], a["shape"], max_abs, max_rel, rtol, max_rel <= rtol, worst=worst)


def compare_records(a: dict, b: dict, ulps: float = DEFAULT_ULPS) -> list[ValueDiff]:
    """Compare every output of two matched records. The outputs of one call (an optimizer step's
    gradients, say) share a scale: a gradient that is zero up to rounding (a bias before a norm layer)
    is judged against the magnitude of the others, not its own noise."""
    if len(a["outs"]) != len(b["outs"]):
        n = f"{len(a['outs'])} tensors vs {len(b['outs'])}"
        first = a["outs"][0] if a["outs"] else {"dtype": "?", "shape": ()}
        return [ValueDiff(0, first["dtype"], first["shape"], math.inf, math.inf, 0.0, False, n)]
    sizes = [max(1, x["values"].size) for x in a["outs"]]
    floor = sum(_mean_magnitude(x) * n for x, n in zip(a["outs"], sizes)) / max(1, sum(sizes))
    diffs = []
    for k, (x, y) in enumerate(zip(a["outs"], b["outs"])):
        d = compare_values(x, y, ulps, floor if len(a["outs"]) > 1 else 0.0)
        d.index = k
        diffs.append(d)
    return diffs


@dataclass
class Step:
    """One matched pair of records and how they compare."""

    a: dict
    b: dict
    diffs: list[ValueDiff]

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.diffs)

    @property
    def same_inputs(self) -> bool | None:
        if self.a["ins"] is None or self.b["ins"] is None:
            return None
        return self.a["ins"] == self.b["ins"]

    @property
    def worst(self) -> ValueDiff | None:
        return max(self.diffs, key=lambda d: d.max_rel, default=None)


@dataclass
class TraceComparison:
    """The alignment of two logs and where they first part."""

    torch_count: int
    torchlike_count: int
    matched: int = 0
    first: Step | None = None  # the first matched op whose outputs differ beyond tolerance
    first_local: Step | None = None  # the first such op whose inputs were bit-identical in both runs
    first_inexact: Step | None = None  # the first matched op whose outputs are not bit-identical
    first_large: Step | None = None  # the first matched op that differs by more than `large`, relatively
    largest_before: Step | None = None  # the largest in-tolerance difference before `first`
    skipped: list[tuple[str, list[dict]]] = field(default_factory=list)  # ("torch"|"torchlike", records)
    lost: tuple[dict | None, dict | None] | None = None  # where the sequences could not be realigned

    @property
    def ok(self) -> bool:
        return self.first is None and self.lost is None and not self.skipped


def _resync(a: Sequence[dict], b: Sequence[dict], i: int, j: int, window: int, run: int) -> tuple[int, int] | None:
    """The nearest (i2, j2), fewest records skipped first, where ``run`` names in a row agree again."""
    for total in range(1, 2 * window + 1):
        for di in range(max(0, total - window), min(total, window) + 1):
            dj = total - di
            i2, j2 = i + di, j + dj
            if i2 >= len(a) or j2 >= len(b):
                continue
            n = min(run, len(a) - i2, len(b) - j2)
            if all(key(a[i2 + k]) == key(b[j2 + k]) for k in range(n)):
                return i2, j2
    return None


LARGE = 1e-3  # a relative difference that is no longer rounding in any float dtype but bfloat16


def compare_logs(
    a: Sequence[dict],
    b: Sequence[dict],
    ulps: float = DEFAULT_ULPS,
    window: int = 64,
    run: int = 3,
    large: float = LARGE,
) -> TraceComparison:
    """Align torch's records ``a`` with torchlike's ``b`` by position and name, and find the first
    op whose outputs differ beyond their dtype's tolerance (and the first not bit-identical, the first
    beyond tolerance on bit-identical inputs, the first beyond ``large``). Where names differ, skip the
    fewest records on either side that make ``run`` names in a row agree again (within ``window``)."""
    result = TraceComparison(len(a), len(b))
    i = j = 0
    while i < len(a) and j < len(b):
        if key(a[i]) != key(b[j]):
            found = _resync(a, b, i, j, window, run)
            if found is None:
                result.lost = (a[i], b[j])
                break
            i2, j2 = found
            if i2 > i:
                result.skipped.append(("torch", list(a[i:i2])))
            if j2 > j:
                result.skipped.append(("torchlike", list(b[j:j2])))
            i, j = i2, j2
            continue
        step = Step(a[i], b[j], compare_records(a[i], b[j], ulps))
        result.matched += 1
        worst = step.worst
        if result.first_inexact is None and worst is not None and worst.max_rel > 0:
            result.first_inexact = step
        if result.first_large is None and worst is not None and worst.max_rel > max(large, worst.rtol):
            result.first_large = step
        if not step.ok:
            if result.first is None:
                result.first = step
            if step.same_inputs and result.first_local is None:
                result.first_local = step
            if result.first_local is not None and result.first_large is not None:
                break
        elif result.first is None and step.diffs:
            worst = step.worst
            best = result.largest_before.worst if result.largest_before else None
            if worst is not None and worst.max_rel > 0 and (best is None or worst.max_rel > best.max_rel):
                result.largest_before = step
        i += 1
        j += 1
    if result.first is None and result.lost is None:  # one run logged more ops at the end
        if i < len(a):
            result.skipped.append(("torch", list(a[i:])))
        if j < len(b):
            result.skipped.append(("torchlike", list(b[j:])))
    return result


# --- reporting -------------------------------------------------------------------------------


def _shape(v: dict) -> str:
    return f"{v['dtype'].removeprefix('torch.')}{list(v['shape'])}"


def _op(r: dict) -> str:
    outs = ", ".join(_shape(v) for v in r["outs"][:4]) + (", ..." if len(r["outs"]) > 4 else "")
    return f"#{r['i']} {r['name']} at {r['where']} -> {outs}"


def _values(v: dict, around: int) -> str:
    vals = v["values"]
    lo = max(0, around - 2)
    shown = vals[lo : lo + 5]
    where = "" if v["full"] else " (sampled)"
    return (
        f"[{', '.join(f'{x:.9g}' for x in shown)}]{where} from flat element {lo if v['full'] else 'sample ' + str(lo)}"
    )


def _describe(step: Step, title: str, max_outputs: int = 3) -> list[str]:
    a, b = step.a, step.b
    lines = [f"{title}: op #{a['i']} under torch, #{b['i']} under torchlike: {a['name']}"]
    lines.append(f"  called at {a['where']}" + (f" (torchlike: {b['where']})" if b["where"] != a["where"] else ""))
    failing = sorted((d for d in step.diffs if not d.ok), key=lambda d: -d.max_rel)
    for d in failing[:max_outputs]:
        head = f"  output {d.index}: {d.dtype.removeprefix('torch.')}{list(d.shape)}"
        if d.reason:
            lines.append(f"{head}: {d.reason}")
            continue
        tol = "exact" if d.rtol == 0 else f"rel {d.rtol:.1e}"
        lines.append(f"{head}: max abs diff {d.max_abs:.3g}, max rel diff {d.max_rel:.3g} (tolerance {tol})")
        x, y = a["outs"][d.index], b["outs"][d.index]
        lines.append(f"    torch:     {_values(x, d.worst)}")
        lines.append(f"    torchlike: {_values(y, d.worst)}")
    if len(failing) > max_outputs:
        lines.append(f"  ... and {len(failing) - max_outputs} more outputs beyond tolerance")
    same = step.same_inputs
    if same is True:
        lines.append("  inputs: bit-identical in both runs, so this op itself computes differently")
    elif same is False:
        lines.append("  inputs: not bit-identical between the runs, so this may be rounding carried from earlier ops")
    return lines


def format_comparison(result: TraceComparison, max_skipped: int = 5) -> str:
    lines = [
        f"ops logged: {result.torch_count} under torch, {result.torchlike_count} under torchlike; "
        f"{result.matched} compared"
    ]
    for side, records in result.skipped[:max_skipped]:
        names = ", ".join(f"#{r['i']} {r['name']} ({r['where']})" for r in records[:4])
        more = f" and {len(records) - 4} more" if len(records) > 4 else ""
        lines.append(f"only under {side}: {names}{more}")
    if len(result.skipped) > max_skipped:
        lines.append(f"... {len(result.skipped) - max_skipped} more places where one run has ops the other lacks")
    inexact = result.first_inexact
    if inexact is not None and inexact is not result.first:
        w = inexact.worst
        how = {True: "bit-identical inputs", False: "inputs already not bit-identical", None: "inputs not hashed"}
        lines.append(f"first op not bit-identical: {_op(inexact.a)}: rel {w.max_rel:.3g} ({how[inexact.same_inputs]})")
    if result.first is None:
        if result.lost is None:
            lines.append("no op differs beyond its dtype's tolerance")
    else:
        lines += _describe(result.first, "FIRST DIVERGENCE")
        before = result.largest_before
        if before is not None and before.worst is not None:
            w = before.worst
            lines.append(
                f"  before it, the largest difference within tolerance: rel {w.max_rel:.3g} at {_op(before.a)}"
            )
        else:
            lines.append("  every op before it agreed exactly")
        if result.first_local is not None and result.first_local is not result.first:
            lines += _describe(result.first_local, "FIRST DIVERGENCE WITH BIT-IDENTICAL INPUTS")
        elif result.first_local is None:
            lines.append("no op given bit-identical inputs differs beyond tolerance")
        large = result.first_large
        if large is not None and large is not result.first and large is not result.first_local:
            lines += _describe(large, f"FIRST DIFFERENCE ABOVE {LARGE:g} RELATIVE")
        elif large is None:
            lines.append(f"no op differs by more than {LARGE:g} relative")
    if result.lost is not None:
        x, y = result.lost
        lines.append("the op sequences part here and could not be realigned:")
        lines.append(f"  torch:     {_op(x) if x else '(end)'}")
        lines.append(f"  torchlike: {_op(y) if y else '(end)'}")
    return "\n".join(lines)
