"""Build the same module under torch and torchlike from the same seed and compare everything.

    check_module(lambda nn: nn.Conv2d(3, 4, 3), [np_x])

checks: repr, state_dict keys/dtypes, initial parameters bit for bit (same seed, torch's CPU stream),
forward output, input and parameter gradients (train mode), then the same in eval mode.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import torch
from _harness import _np, assert_same

import torchlike

# torch's intra-op threads fight JAX and other test processes for this machine's cores: one is fastest
torch.set_num_threads(1)


def _libs() -> tuple:
    return ((torch, torch.nn), (torchlike, torchlike.nn))


_MODE_DEPENDENT = ("Dropout", "BatchNorm", "InstanceNorm", "RReLU")


def build_both(ctor: Callable, seed: int = 0, dtype: str | None = None) -> tuple:
    mods = []
    for lib, nn in _libs():
        lib.manual_seed(seed)
        m = ctor(nn)
        if dtype == "float64":
            m = m.double()
        mods.append(m)
    return tuple(mods)


def assert_same_params(ref: Any, got: Any, exact: bool = True) -> None:
    rs, gs = ref.state_dict(), got.state_dict()
    assert list(rs.keys()) == list(gs.keys()), (
        f"state_dict keys {list(gs.keys())} != torch's {list(rs.keys())}"
    )
    for k in rs:
        tol = (0, 0) if exact else (None, None)
        assert_same(rs[k], gs[k], *tol, path=f"state_dict[{k}]")
    assert [n for n, _ in ref.named_parameters()] == [n for n, _ in got.named_parameters()]
    assert [n for n, _ in ref.named_buffers()] == [n for n, _ in got.named_buffers()]


def _inputs(lib: Any, arrays: Sequence[Any], dtype: str | None, grad: bool) -> list:
    out = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            t = lib.tensor(a)
            if dtype and t.dtype.is_floating_point:
                t = t.to(getattr(lib, dtype))
            if grad and t.dtype.is_floating_point:
                t.requires_grad_(True)
            out.append(t)
        else:
            out.append(a)
    return out


def _flat_outputs(out: Any) -> list:
    if isinstance(out, (torch.Tensor, torchlike.Tensor)):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat_outputs(o)]
    if hasattr(out, "_fields"):
        return [t for o in out for t in _flat_outputs(o)]
    return []


def run_module(
    m: Any, lib: Any, arrays: Sequence[Any], dtype: str | None, grad: bool, call: Callable | None
) -> tuple:
    args = _inputs(lib, arrays, dtype, grad)
    out = call(m, *args) if call is not None else m(*args)
    grads = None
    if grad:
        outs = [o for o in _flat_outputs(out) if o.dtype.is_floating_point and o.requires_grad]
        if outs:
            rng = np.random.RandomState(1)
            total = None
            for o in outs:
                w = lib.tensor(rng.uniform(0.5, 1.5, size=tuple(o.shape)), dtype=o.dtype)
                term = (o * w).sum()
                total = term if total is None else total + term
            total.backward()
        grads = [a.grad for a in args if isinstance(a, (torch.Tensor, torchlike.Tensor)) and a.requires_grad]
        grads += [p.grad for p in m.parameters()]
    return out, grads


def check_module(ctor: Callable, inputs: Sequence[Any], *, dtype: str | None = None, modes: Sequence[str] = ("train", "eval"),
                 rtol: float | None = None, atol: float | None = None, call: Callable | None = None,
                 grad: bool = True, exact_init: bool = True, seed: int = 0, repr_: bool = True) -> tuple:  # fmt: skip
    """Compare construction, forward and backward of ``ctor(nn)`` between torch and torchlike."""
    ref, got = build_both(ctor, seed, dtype)
    if repr_:
        assert repr(got) == repr(ref), f"repr differs:\n torch:\n{ref!r}\n torchlike:\n{got!r}"
    assert_same_params(ref, got, exact_init)
    mode_dependent = any(
        any(k in type(m).__name__ for k in _MODE_DEPENDENT) or getattr(m, "dropout", 0) for m in ref.modules()
    )
    for mode in modes:
        # layers that behave the same in eval: compare the eval forward only (saves a backward compile)
        mode_grad = grad and (mode == "train" or mode_dependent)
        ref.train(mode == "train")
        got.train(mode == "train")
        for lib_, m in ((torch, ref), (torchlike, got)):
            m.zero_grad()
        torch.manual_seed(seed + 1)
        torchlike.manual_seed(seed + 1)
        r_out, r_g = run_module(ref, torch, inputs, dtype, mode_grad, call)
        torch_state = torch.get_rng_state()
        g_out, g_g = run_module(got, torchlike, inputs, dtype, mode_grad, call)
        assert_same(r_out, g_out, rtol, atol, path=f"{mode} output")
        if r_g is not None:
            assert len(r_g) == len(g_g)
            for i, (a, b) in enumerate(zip(r_g, g_g)):
                if a is None:
                    assert b is None, f"{mode} grad[{i}]: torch None, torchlike has one"
                    continue
                assert b is not None, f"{mode} grad[{i}]: torchlike gave no gradient"
                assert_same(a, b, rtol, atol, path=f"{mode} grad[{i}]")
        # the module drew as many random numbers as torch's (dropout masks...)
        assert np.array_equal(np.asarray(torchlike.get_rng_state()), torch_state.numpy()), (
            f"{mode}: RNG state differs"
        )
        assert_same_params(ref, got, exact=False)
    return ref, got


def rand(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return np.random.RandomState(seed).uniform(low, high, size=shape).astype(np.float32)


def both(fn: Callable) -> tuple:
    """``fn(lib)`` under torch and torchlike."""
    return fn(torch), fn(torchlike)


__all__ = ["check_module", "build_both", "assert_same_params", "rand", "both", "_np"]
