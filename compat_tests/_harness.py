"""Run the same code under real torch and torchlike and compare (tinygrad's helper_test_op, generalised).

    check(lambda t, x, y: t.add(x, y, alpha=2), [np_x, np_y])

``fn(lib, *tensors)`` is called once with ``lib = torch`` and once with ``lib = torchlike``; the
inputs are made from the given numpy arrays (floats get requires_grad when ``grad=True``). Outputs
(tensors, numbers, tuples/lists of them) are compared for values, dtypes and shapes; then the sum
of each float output times a fixed random weight is backpropagated and the input gradients compared.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np
import pytest
import torch

import torchlike

FLOAT_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2), "float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10),
             "complex64": (1e-5, 1e-5), "complex128": (1e-10, 1e-10)}  # fmt: skip


def to_lib(lib: Any, value: Any, requires_grad: bool = False, dtype: str | None = None) -> Any:
    """A tensor of ``lib`` from a numpy array (or pass other values through)."""
    if isinstance(value, np.ndarray):
        t = lib.tensor(value) if dtype is None else lib.tensor(value, dtype=getattr(lib, dtype))
        if requires_grad and t.dtype.is_floating_point:
            t.requires_grad_(True)
        return t
    return value


def _np(x: Any) -> Any:
    if isinstance(x, (torch.Tensor, torchlike.Tensor)):
        x = x.detach()
        if str(x.dtype).endswith("bfloat16"):
            x = x.float()
        return x.cpu().numpy() if isinstance(x, torch.Tensor) else x.numpy()
    return x


def assert_same(ref: Any, got: Any, rtol: float | None = None, atol: float | None = None, path: str = "out") -> None:
    """Recursively compare a torch result with a torchlike result."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(got, torchlike.Tensor), f"{path}: expected a Tensor, got {type(got).__name__}"
        assert str(got.dtype) == str(ref.dtype), f"{path}: dtype {got.dtype} != torch's {ref.dtype}"
        assert tuple(got.shape) == tuple(ref.shape), f"{path}: shape {tuple(got.shape)} != torch's {tuple(ref.shape)}"
        name = str(ref.dtype).replace("torch.", "")
        r, a = FLOAT_TOL.get(name, (0, 0))
        r, a = (rtol if rtol is not None else r), (atol if atol is not None else a)
        e, g = _np(ref), _np(got)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=r, atol=a, equal_nan=True, err_msg=path)
        else:
            np.testing.assert_array_equal(g, e, err_msg=path)
        return
    if isinstance(ref, (tuple, list)):
        assert isinstance(got, (tuple, list)), f"{path}: expected a sequence, got {type(got).__name__}"
        assert len(got) == len(ref), f"{path}: length {len(got)} != torch's {len(ref)}"
        if hasattr(ref, "_fields") or type(ref).__module__ == "torch.return_types":
            assert type(got).__name__ == type(ref).__name__, f"{path}: {type(got).__name__} != {type(ref).__name__}"
        for i, (r_, g_) in enumerate(zip(ref, got)):
            assert_same(r_, g_, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(ref, float) and isinstance(got, float):
        assert math.isclose(got, ref, rel_tol=rtol or 1e-6, abs_tol=atol or 1e-6) or (math.isnan(ref) and math.isnan(got)), (
            f"{path}: {got} != {ref}"
        )
        return
    if isinstance(ref, (torch.dtype,)):
        assert str(got) == str(ref), f"{path}: {got} != {ref}"
        return
    if isinstance(ref, torch.Size):
        assert tuple(got) == tuple(ref), f"{path}: {got} != {ref}"
        return
    assert got == ref, f"{path}: {got!r} != torch's {ref!r}"


def _float_outputs(out: Any) -> list:
    if isinstance(out, (torch.Tensor, torchlike.Tensor)):
        return [out] if out.dtype.is_floating_point and out.requires_grad else []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _float_outputs(o)]
    return []


def run_both(fn: Callable, inputs: Sequence[Any], grad: bool = False, dtype: str | None = None) -> tuple:
    results = []
    for lib in (torch, torchlike):
        args = [to_lib(lib, x, grad, dtype) for x in inputs]
        out = fn(lib, *args)
        grads = None
        if grad:
            outs = _float_outputs(out)
            if outs:
                rng = np.random.RandomState(0)
                total = None
                for o in outs:
                    w = lib.tensor(rng.uniform(0.5, 1.5, size=tuple(o.shape)), dtype=o.dtype)
                    term = (o * w).sum()
                    total = term if total is None else total + term
                total.backward()
                grads = [a.grad if isinstance(a, (torch.Tensor, torchlike.Tensor)) and a.requires_grad else None
                         for a in args]  # fmt: skip
        results.append((out, grads))
    return results


def check(fn: Callable, inputs: Sequence[Any], *, grad: bool = True, rtol: float | None = None,
          atol: float | None = None, dtype: str | None = None) -> None:
    """Assert ``fn`` gives the same outputs (and input gradients when ``grad``) under torch and torchlike."""
    (ref, ref_g), (got, got_g) = run_both(fn, inputs, grad, dtype)
    assert_same(ref, got, rtol, atol)
    if grad and ref_g is not None:
        for i, (r, g) in enumerate(zip(ref_g, got_g or [None] * len(ref_g))):
            if r is None:
                assert g is None, f"grad[{i}]: torch gives None, torchlike gives a tensor"
                continue
            assert g is not None, f"grad[{i}]: torchlike gave no gradient"
            assert_same(r, g, rtol, atol, f"grad[{i}]")


def check_raises(fn: Callable, inputs: Sequence[Any] = (), *, match_message: bool = True,
                 dtype: str | None = None) -> None:
    """Assert torch and torchlike raise the same exception type (and, by default, the same message)."""
    caught = []
    for lib in (torch, torchlike):
        args = [to_lib(lib, x, False, dtype) for x in inputs]
        try:
            fn(lib, *args)
        except Exception as e:  # noqa: BLE001 - the point is to compare whatever is raised
            caught.append(e)
        else:
            caught.append(None)
    ref, got = caught
    assert ref is not None, "torch did not raise"
    assert got is not None, f"torchlike did not raise (torch raised {type(ref).__name__}: {ref})"
    assert type(got).__name__ == type(ref).__name__ or isinstance(got, type(ref)), (
        f"torchlike raised {type(got).__name__}: {got}; torch raised {type(ref).__name__}: {ref}"
    )
    if match_message:
        r = str(ref).split("\n")[0]
        g = str(got).split("\n")[0]
        assert g == r, f"message differs:\n torch:     {r}\n torchlike: {g}"


def compare(fn: Callable, inputs: Sequence[Any], *, grad: bool = True, match_message: bool = True, **kw: Any) -> None:
    """``check`` when torch succeeds, ``check_raises`` when it raises."""
    dtype = kw.get("dtype")
    try:
        fn(torch, *[to_lib(torch, x, False, dtype) for x in inputs])
    except Exception:  # noqa: BLE001 - torch's behaviour decides which comparison runs
        check_raises(fn, inputs, match_message=match_message, dtype=dtype)
        return
    check(fn, inputs, grad=grad, **kw)


@pytest.fixture(autouse=True, scope="module")
def per_node_backward() -> Any:
    """For modules whose graphs each run once or twice: skip the fused backward compile the engine does
    for graphs seen twice (it would double the compile count; the per-node path runs the same VJPs).
    Autouse where imported: a test module opts in by importing it."""
    from torchlike.autograd import engine

    old, engine.FUSE_AFTER = engine.FUSE_AFTER, 10**9
    yield
    engine.FUSE_AFTER = old
