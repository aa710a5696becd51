"""Measure torchlike against torch's own OpInfo database (``op_db``): a measuring script, not a CI test.

    python compat_tests/opinfo_harness.py                    # every op (slow: tens of minutes on one core)
    python compat_tests/opinfo_harness.py --ops add,matmul   # these op names only
    python compat_tests/opinfo_harness.py --limit 50 -v      # the first 50 ops, a line per op

For each OpInfo and each dtype of float32, int64 and bool that torch supports on CPU, the op's
``sample_inputs`` run under torch and, converted, under torchlike: the same-named torchlike function
(``torchlike.<name>``, ``torchlike.linalg.<name>``, ...) or, for a method-only op, the Tensor method. An
OpInfo whose ``op`` is a small Python wrapper written in torch's testing modules (``lambda x: x.clone().resize_
(...)``) runs that wrapper with its ``torch`` globals rebound to torchlike. Outputs are compared for type,
dtype, shape and value (float32: rtol 1e-4, atol 1e-5; integers and bools exactly). For float32 samples of
ops that support autograd, the gradients of ``sum(out * w)`` (``w`` a fixed random weight) with respect
to every input that requires grad are compared too.

A sample counts as passing when torchlike gives the same result, or when torch raises and torchlike raises
too. Samples of ops that torchlike lacks count as failures. Both libraries are seeded identically before
each sample, so random ops compare as well (torchlike reproduces torch's CPU generator).

Skip list: op_db entries that are not torch's Python API are left out of the percentages, and their samples
are reported as skipped with the reason (``internal_reason``): aten operators called through ``torch.ops.aten``
(``slice``, ``native_dropout_backward``, ``_safe_softmax``, or a wrapper calling one:
``max_pool2d_with_indices_backward``), private ``torch._*`` functions
(``_chunk_cat``, ``_segment_reduce``) and CUDA jiterator kernels (which torch itself cannot run on CPU).
``--include-internal`` counts them like any other op.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import signal
import sys
import time
import types
import warnings
from collections import Counter
from typing import Any

import numpy as np
import torch

import torchlike

RTOL, ATOL = 1e-4, 1e-5
DTYPES = ("float32", "int64", "bool")
# op_db entries that exist only for CUDA kernels or test torch internals (no CPU sample, or an aten-level op)
INTERNAL_PREFIXES = ("_", "torch.", "jiterator_")
# ops whose values are uninitialised memory in torch: only type, dtype and shape are compared
UNINITIALISED = ("empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted")


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: float) -> Any:
    def handler(signum: int, frame: Any) -> None:
        raise _Timeout(f"over {seconds}s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --- finding the torchlike op --------------------------------------------------------------------------


def _resolve(root: Any, dotted: str) -> Any:
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _torchlike_module_for(value: types.ModuleType) -> Any:
    name = value.__name__
    if name == "torch" or name.startswith("torch."):
        return _resolve(torchlike, name[len("torch."):]) if name != "torch" else torchlike
    return None


def _names_used(code: types.CodeType) -> set:
    """The global names ``code`` and the functions nested in it read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_used(const)
    return names


def _wrapper_set_seed(op: Any, *args: Any, **kwargs: Any) -> Any:
    """torch.testing._utils.wrapper_set_seed for torchlike: seed 42, then run."""
    torchlike.manual_seed(42)
    return op(*args, **kwargs)


def _rebind(fn: types.FunctionType) -> types.FunctionType | None:
    """``fn`` (a wrapper from torch's testing modules) with its torch globals and closure cells rebound to
    torchlike; None when a name it uses has no torchlike counterpart."""

    def convert(value: Any) -> Any:
        if isinstance(value, types.ModuleType):
            return _torchlike_module_for(value)
        if getattr(value, "__name__", None) == "wrapper_set_seed":
            return _wrapper_set_seed
        qual = getattr(value, "__qualname__", "") or ""
        if callable(value) and qual.split(".")[0] in ("TensorBase", "Tensor") and "." in qual:
            return getattr(torchlike.Tensor, qual.split(".")[-1], None)
        mod = getattr(value, "__module__", None) or ""
        if callable(value) and (mod == "torch" or mod.startswith("torch.")) and not mod.startswith("torch.testing"):
            qual = getattr(value, "__qualname__", getattr(value, "__name__", ""))
            sub = mod[len("torch."):] if mod.startswith("torch.") else ""
            for path in (f"{sub}.{qual}" if sub else qual, qual):
                found = _resolve(torchlike, path.replace("_C._nn.", "nn.functional.").replace("_C._linalg.", ""))
                if found is not None:
                    return found
            return _resolve(torchlike, getattr(value, "__name__", ""))
        if isinstance(value, torch.dtype):
            return getattr(torchlike, str(value).replace("torch.", ""))
        return value

    glb = dict(fn.__globals__)
    for name in _names_used(fn.__code__):
        if name in glb:
            new = convert(glb[name])
            if new is None and glb[name] is not None:
                return None
            glb[name] = new
    cells = None
    if fn.__closure__:
        cells = []
        for cell in fn.__closure__:
            v = cell.cell_contents
            new = convert(v)
            if new is None and v is not None:
                return None
            cells.append(types.CellType(new))
        cells = tuple(cells)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, cells)


def internal_reason(op: Any) -> str | None:
    """Why an op_db entry is outside torch's Python API (skipped from the percentages), or None."""
    fn = op.op
    if isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)) or (
        isinstance(fn, types.FunctionType) and "aten" in _names_used(fn.__code__)  # a wrapper calling torch.ops.aten
    ):
        return "an aten operator (torch.ops.aten.*), not torch's Python API"
    if (getattr(fn, "__module__", None) or "").startswith("torch.cuda.jiterator"):
        return "a CUDA jiterator kernel, which torch cannot run on CPU"
    if (op.name.startswith("_") and not op.name.startswith("__")) or op.name.startswith("torch._"):
        return "a private torch function (torch._*)"
    return None


def torchlike_callable(op: Any) -> Any:
    """The torchlike function that stands for ``op`` (None when torchlike lacks the name)."""
    fn = op.op
    if isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith("torch.testing"):
        if is_missing(op):
            return None
        return _rebind(fn)
    found = _resolve(torchlike, op.name)
    if found is None:
        found = _resolve(torchlike, op.name.replace("nn.functional.", "nn.functional."))
    if found is not None and callable(found):
        return found
    method = getattr(torchlike.Tensor, op.name.split(".")[-1], None)
    if method is not None and op.method_variant is not None:
        return lambda x, *a, **k: getattr(x, op.name.split(".")[-1])(*a, **k)
    return None


def is_missing(op: Any) -> bool:
    """Whether torchlike lacks the op's name: as a function, a Tensor method, or (for an op that exists in torch
    only in place, ``cauchy`` = ``Tensor.cauchy_``) an in-place method."""
    method = op.name.split(".")[-1]
    return (_resolve(torchlike, op.name) is None and getattr(torchlike.Tensor, method, None) is None
            and getattr(torchlike.Tensor, method + "_", None) is None)  # fmt: skip


# --- converting samples --------------------------------------------------------------------------------


def _module_to_torchlike(module: Any) -> Any:
    """A stateless torch module (``nn.PairwiseDistance()`` passed as a distance function) as torchlike's module
    of the same class with the same settings; modules with parameters, buffers or children are not converted."""
    cls = getattr(torchlike.nn, type(module).__name__, None)
    stateful = any(True for _ in module.parameters()) or any(True for _ in module.buffers()) or module._modules
    if cls is None or stateful:
        raise NotImplementedError(f"a torch module as a sample argument: {type(module).__name__}")
    new = cls.__new__(cls)
    torchlike.nn.Module.__init__(new)
    for k, v in vars(module).items():
        if not k.startswith("_"):
            setattr(new, k, v)
    return new


def _to_torchlike(value: Any, leaves: list) -> Any:
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            raise NotImplementedError("sparse sample input")
        host = value.detach()
        dt = str(host.dtype).replace("torch.", "")
        arr = host.float().numpy() if dt == "bfloat16" else host.resolve_conj().resolve_neg().numpy()
        t = torchlike.tensor(arr, dtype=getattr(torchlike, dt))
        if value.requires_grad:
            t.requires_grad_(True)
        leaves.append((value, t))
        return t
    if isinstance(value, torch.dtype):
        return getattr(torchlike, str(value).replace("torch.", ""))
    if isinstance(value, torch.device):
        return torchlike.device(str(value))
    if isinstance(value, torch.Size):
        return torchlike.Size(value)
    if isinstance(value, torch.memory_format):
        return getattr(torchlike, str(value).replace("torch.", ""))
    if isinstance(value, torch.layout):
        return getattr(torchlike, str(value).replace("torch.", ""))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_to_torchlike(v, leaves) for v in value])
    if isinstance(value, (list, tuple)):
        return type(value)(_to_torchlike(v, leaves) for v in value)
    if isinstance(value, dict):
        return {k: _to_torchlike(v, leaves) for k, v in value.items()}
    if isinstance(value, torch.Generator):
        raise NotImplementedError("a torch.Generator sample argument")
    if isinstance(value, torch.nn.Module):
        return _module_to_torchlike(value)
    mod = getattr(value, "__module__", None) or ""
    if callable(value) and hasattr(value, "__name__") and (mod == "torch" or mod.startswith("torch.")) and not mod.startswith("torch.testing"):
        found = _resolve(torchlike, mod[len("torch."):] + "." + value.__name__ if mod != "torch" else value.__name__)
        if found is None:
            raise NotImplementedError(f"a sample argument torchlike lacks: {mod}.{value.__name__}")
        return found  # a torch function passed as an argument (distance_function=F.pairwise_distance)
    return value


# --- comparing -----------------------------------------------------------------------------------------


def _numpy(t: Any) -> np.ndarray:
    t = t.detach()
    if str(t.dtype).endswith("bfloat16") or str(t.dtype).endswith("float16"):
        t = t.float()
    if isinstance(t, torch.Tensor):
        if t._is_zerotensor():  # torch's symbolic zero gradient (sgn of a real input) has no numpy view
            return np.zeros(tuple(t.shape), _numpy(torch.zeros((), dtype=t.dtype)).dtype)
        return t.resolve_conj().resolve_neg().cpu().numpy()
    return np.asarray(t.numpy())


def same(ref: Any, got: Any, values: bool = True) -> bool:
    if isinstance(ref, torch.Tensor):
        if not isinstance(got, torchlike.Tensor):
            return False
        if str(ref.dtype) != str(got.dtype) or tuple(ref.shape) != tuple(got.shape):
            return False
        if not values:
            return True
        if ref.layout != torch.strided:
            ref = ref.to_dense()
        e, g = _numpy(ref), _numpy(got)
        if e.dtype.kind in "fc":
            return bool(np.allclose(g, e, rtol=RTOL, atol=ATOL, equal_nan=True))
        return bool(np.array_equal(g, e))
    if isinstance(ref, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(ref) == len(got) and all(same(r, g, values) for r, g in zip(ref, got))
    if isinstance(ref, float) and isinstance(got, (float, int)):
        return math.isclose(ref, got, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(ref) and math.isnan(got))
    if isinstance(ref, torch.dtype):
        return str(ref) == str(got)
    if isinstance(ref, torch.Size):
        return tuple(ref) == tuple(got)
    return bool(ref == got)


def _float_outputs(out: Any, lib: Any) -> list:
    if isinstance(out, lib.Tensor):
        return [out] if out.dtype.is_floating_point and out.requires_grad else []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _float_outputs(o, lib)]
    return []


def _weighted_sum(outs: list, lib: Any) -> Any:
    rng = np.random.RandomState(0)
    total = None
    for o in outs:
        w = lib.tensor(rng.uniform(0.5, 1.5, size=tuple(o.shape)).astype(np.float32)).to(o.dtype)
        term = (o * w).sum()
        total = term if total is None else total + term
    return total


# --- running -------------------------------------------------------------------------------------------


def _call(fn: Any, sample: Any) -> Any:
    return fn(sample.input, *sample.args, **sample.kwargs)


def run_sample(op: Any, fn: Any, sample: Any, grad: bool, timeout: float) -> tuple[bool, str]:
    """(passed, reason) for one sample; ``grad`` compares gradients instead of forward values."""
    torch.manual_seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = _call(op.op, sample)
            ref_err = None
    except Exception as e:  # noqa: BLE001 - torch's behaviour decides what counts as agreement
        ref, ref_err = None, e
    leaves: list = []
    try:
        tl_sample = types.SimpleNamespace(
            input=_to_torchlike(sample.input, leaves),
            args=_to_torchlike(tuple(sample.args), leaves),
            kwargs=_to_torchlike(dict(sample.kwargs), leaves),
        )
    except NotImplementedError as e:
        return False, f"input: {e}"
    torchlike.manual_seed(0)
    try:
        with warnings.catch_warnings(), _time_limit(timeout):
            warnings.simplefilter("ignore")
            got = _call(fn, tl_sample)
    except Exception as e:  # noqa: BLE001
        if ref_err is not None:
            return True, ""
        return False, f"raises {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    if ref_err is not None:
        return False, f"torch raises {type(ref_err).__name__}, torchlike returns"
    if not grad:
        return (True, "") if same(ref, got, op.name not in UNINITIALISED) else (False, "values differ")
    ref_outs = _float_outputs(ref, torch)
    if not ref_outs:
        return True, ""
    ref_inputs = [(r, t) for r, t in leaves if r.requires_grad]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref_g = torch.autograd.grad(_weighted_sum(ref_outs, torch), [r for r, _ in ref_inputs], allow_unused=True)
    except Exception:  # noqa: BLE001 - torch cannot differentiate this sample: nothing to compare
        return True, ""
    try:
        with warnings.catch_warnings(), _time_limit(timeout):
            warnings.simplefilter("ignore")
            got_outs = _float_outputs(got, torchlike)
            if len(got_outs) != len(ref_outs):
                return False, "grad: outputs not differentiable"
            got_g = torchlike.autograd.grad(_weighted_sum(got_outs, torchlike), [t for _, t in ref_inputs],
                                            allow_unused=True)  # fmt: skip
    except Exception as e:  # noqa: BLE001
        return False, f"grad raises {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    for r, g in zip(ref_g, got_g):
        if r is None:
            if g is not None and bool((g != 0).any()):
                return False, "grad: torch gives None"
            continue
        if g is None:
            if bool((r != 0).any()):
                return False, "grad: torchlike gives None"
            continue
        if not same(r, g):
            return False, "grad values differ"
    return True, ""


def _samples(op: Any, dtype: Any, requires_grad: bool, limit: int) -> list:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = []
            for s in op.sample_inputs("cpu", dtype, requires_grad=requires_grad):
                out.append(s)
                if len(out) >= limit:
                    break
            return out
    except Exception:  # noqa: BLE001 - a sample generator that fails on CPU has nothing to measure
        return []


def measure(ops: list, max_samples: int, timeout: float, verbose: bool = False, out: Any = sys.stdout,
            include_internal: bool = False) -> dict:  # fmt: skip
    """Run every op; return totals and per-op counts (ops on the skip list: counted under ``skipped``)."""
    totals = Counter()
    per_op: dict = {}
    failures: Counter = Counter()
    missing: list = []
    skipped: Counter = Counter()
    for op in ops:
        key = op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")
        reason = None if include_internal else internal_reason(op)
        if reason is not None:
            n = sum(len(_samples(op, getattr(torch, dt), grad, max_samples))
                    for dt in DTYPES if op.supports_dtype(getattr(torch, dt), "cpu")
                    for grad in (False, True) if not grad or (dt == "float32" and op.supports_autograd))  # fmt: skip
            skipped[reason] += n
            if verbose:
                print(f"{key:45s} skipped ({n} samples): {reason}", file=out, flush=True)
            continue
        fn = torchlike_callable(op)
        if fn is None and op.name not in missing:
            missing.append(op.name)
        counts = Counter()
        start = time.time()
        for dt_name in DTYPES:
            dt = getattr(torch, dt_name)
            if not op.supports_dtype(dt, "cpu"):
                continue
            for grad in (False, True):
                if grad and (dt_name != "float32" or not op.supports_autograd):
                    continue
                kind = "grad" if grad else "fwd"
                for sample in _samples(op, dt, grad, max_samples):
                    if fn is None:
                        ok, why = False, "missing"
                    else:
                        try:
                            ok, why = run_sample(op, fn, sample, grad, timeout)
                        except Exception as e:  # noqa: BLE001 - a harness-level failure counts against the op
                            ok, why = False, f"harness: {type(e).__name__}: {e}"
                    counts[kind] += 1
                    counts[kind + "_ok"] += ok
                    if not ok:
                        failures[(key, dt_name, kind, why)] += 1
        per_op[key] = counts
        totals.update(counts)
        if verbose:
            print(f"{key:45s} fwd {counts['fwd_ok']:3d}/{counts['fwd']:<3d} grad {counts['grad_ok']:3d}/"
                  f"{counts['grad']:<3d} {time.time() - start:5.1f}s", file=out, flush=True)  # fmt: skip
    return {"totals": totals, "per_op": per_op, "failures": failures, "missing": missing, "skipped": skipped}


def _pct(ok: int, n: int) -> str:
    return f"{100.0 * ok / n:.1f}%" if n else "n/a"


def report(result: dict, out: Any = sys.stdout, show_failures: bool = False) -> None:
    t = result["totals"]
    if show_failures:
        print("\nfailures (op, dtype, kind, reason: count):", file=out)
        for (key, dt, kind, why), n in sorted(result["failures"].items()):
            print(f"  {key} {dt} {kind}: {why} x{n}", file=out)
    public = [n for n in result["missing"] if not n.startswith(INTERNAL_PREFIXES)]
    internal = [n for n in result["missing"] if n.startswith(INTERNAL_PREFIXES)]
    print(f"\nmissing names ({len(public)}): {', '.join(sorted(public))}", file=out)
    print(f"missing internal/CUDA-only names ({len(internal)}): {', '.join(sorted(internal))}", file=out)
    for reason, n in sorted(result.get("skipped", {}).items()):
        print(f"skipped samples ({reason}): {n}", file=out)
    print(f"\nops: {len(result['per_op'])}", file=out)
    print(f"forward samples:  {t['fwd_ok']}/{t['fwd']} = {_pct(t['fwd_ok'], t['fwd'])}", file=out)
    print(f"gradient samples: {t['grad_ok']}/{t['grad']} = {_pct(t['grad_ok'], t['grad'])}", file=out)


def select_ops(names: str | None = None, limit: int | None = None, start: int = 0) -> list:
    from torch.testing._internal.common_methods_invocations import op_db

    ops = list(op_db)
    if names:
        wanted = set(names.split(","))
        ops = [o for o in ops if o.name in wanted]
    ops = ops[start:]
    return ops[:limit] if limit else ops


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", help="comma-separated op names (default: all of op_db)")
    parser.add_argument("--limit", type=int, help="run only the first N ops")
    parser.add_argument("--start", type=int, default=0, help="skip the first N ops")
    parser.add_argument("--max-samples", type=int, default=6, help="samples per op, dtype and kind (default 6)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per torchlike sample")
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per op")
    parser.add_argument("--failures", action="store_true", help="list every failing (op, dtype, kind, reason)")
    parser.add_argument("--include-internal", action="store_true",
                        help="count the skip list's ops (aten operators, private functions, CUDA jiterator kernels)")
    args = parser.parse_args(argv)
    ops = select_ops(args.ops, args.limit, args.start)
    result = measure(ops, args.max_samples, args.timeout, verbose=args.verbose, include_internal=args.include_internal)
    report(result, show_failures=args.failures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
