"""Issue 22 (reliability), each behaviour compared with torch: per-thread modes, Python scalars as
traced arguments, bounded kernel caches, torch's checks on bad input, and safe saves."""

from __future__ import annotations

import threading

import torch
from _harness import assert_same, check_raises, per_node_backward  # noqa: F401

import torchlike

LIBS = [torch, torchlike]

# --- per-thread state -------------------------------------------------------------------------------


def _modes_seen_by_new_thread(lib):
    """What a fresh thread sees while the main thread has every mode switched."""
    seen = {}

    def probe():
        seen["grad"] = lib.is_grad_enabled()
        seen["inference"] = lib.is_inference_mode_enabled()
        seen["autocast"] = lib.is_autocast_enabled("cpu")
        seen["autocast_dtype"] = str(lib.get_autocast_dtype("cpu"))
        seen["autocast_cache"] = lib.is_autocast_cache_enabled()
        seen["anomaly"] = lib.is_anomaly_enabled()  # torch: global
        seen["default_dtype"] = str(lib.get_default_dtype())  # torch: global
        a = lib.ones(2, 2)
        seen["matmul_dtype"] = str((a @ a).dtype)

    old_dtype = lib.get_default_dtype()
    lib.set_grad_enabled(False)
    lib.set_autocast_enabled("cpu", True)
    lib.set_autocast_dtype("cpu", lib.float16)
    lib.set_autocast_cache_enabled(False)
    lib.set_anomaly_enabled(True)
    lib.set_default_dtype(lib.float64)
    try:
        with lib.inference_mode():
            th = threading.Thread(target=probe)
            th.start()
            th.join()
        seen["main_grad_after"] = lib.is_grad_enabled()
        seen["main_autocast_after"] = lib.is_autocast_enabled("cpu")
    finally:
        lib.set_grad_enabled(True)
        lib.set_autocast_enabled("cpu", False)
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        lib.set_autocast_cache_enabled(True)
        lib.set_anomaly_enabled(False)
        lib.set_default_dtype(old_dtype)
    return seen


def test_new_thread_starts_with_torch_defaults():
    ref = _modes_seen_by_new_thread(torch)
    got = _modes_seen_by_new_thread(torchlike)
    assert got == ref


def _no_grad_in_other_thread(lib):
    """An evaluator thread sits in no_grad (and autocast) while the trainer thread records a graph."""
    entered, done = threading.Event(), threading.Event()

    def evaluator():
        with lib.no_grad(), lib.autocast("cpu", dtype=lib.bfloat16):
            entered.set()
            done.wait(10)

    th = threading.Thread(target=evaluator)
    th.start()
    entered.wait(10)
    try:
        w = lib.ones(3, 3, requires_grad=True)
        y = (w @ w).sum()
        y.backward()
        return y.dtype, w.grad
    finally:
        done.set()
        th.join()


def test_no_grad_and_autocast_in_one_thread_leave_another_alone():
    assert_same(_no_grad_in_other_thread(torch), _no_grad_in_other_thread(torchlike))
