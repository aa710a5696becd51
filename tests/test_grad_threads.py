"""Gradient accumulation into ``.grad`` is atomic across threads, as torch's is (issue 34)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import torchlike as torch

THREADS, PASSES = 4, 50


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh())


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def _hammer(model, x, passes):
    barrier = threading.Barrier(THREADS)
    errors = []

    def work():
        try:
            barrier.wait()
            for _ in range(passes):
                model(x).sum().backward()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.timeout(300)
def test_four_threads_accumulate_every_backward():
    x = torch.randn(5, 8)
    model = _model()
    model(x).sum().backward()
    single = _grads(model)
    expected = [np.zeros_like(g) for g in single]
    for _ in range(THREADS * PASSES):  # torch's sums: the same additions in the same (any) order
        expected = [e + g for e, g in zip(expected, single)]
    for run in range(20):
        model.zero_grad(set_to_none=run % 2 == 0)
        _hammer(model, x, PASSES)
        for got, want in zip(_grads(model), expected):
            np.testing.assert_array_equal(got, want, err_msg=f"run {run}")
