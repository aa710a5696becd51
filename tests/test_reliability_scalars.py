"""Python-float hyper-parameters reach kernels as traced arguments: a loop over 50 distinct values compiles
nothing after the first call (issue 22). Values are compared with torch in compat_tests/test_reliability.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torchlike
import torchlike.nn.functional as F
from torchlike._core import lazy

_X = np.random.RandomState(0).uniform(-2, 2, (4, 5)).astype(np.float32)
_Y = np.random.RandomState(1).uniform(-2, 2, (4, 5)).astype(np.float32)


def _signs():
    return torchlike.tensor(np.where(_Y > 0, 1.0, -1.0).astype(np.float32))


# name -> f(x, y, v): one op with the changing value v in (0.3, 0.8) (never a special norm order or a default)
CASES = {
    "norm": lambda x, y, v: x.norm(1 + v),
    "norm_dim": lambda x, y, v: x.norm(2 + v, dim=1),
    "norm_negative": lambda x, y, v: x.norm(-v),
    "vector_norm": lambda x, y, v: torchlike.linalg.vector_norm(x, 3 * v, dim=0),
    "dist": lambda x, y, v: torchlike.dist(x, y, 1 + v),
    "cdist": lambda x, y, v: torchlike.cdist(x, y, 1 + v),
    "pdist": lambda x, y, v: torchlike.pdist(x, 1 + v),
    "renorm": lambda x, y, v: torchlike.renorm(x, 1 + v, 0, 2 * v),
    "clamp": lambda x, y, v: x.clamp(-v, v),
    "clip_min": lambda x, y, v: torchlike.clip(x, min=v),
    "threshold": lambda x, y, v: F.threshold(x, v, -v),
    "softshrink": lambda x, y, v: F.softshrink(x, v),
    "layer_norm": lambda x, y, v: F.layer_norm(x, (5,), eps=v),
    "group_norm": lambda x, y, v: F.group_norm(x.reshape(2, 2, 5), 2, eps=v),
    "instance_norm": lambda x, y, v: F.instance_norm(x.reshape(1, 4, 5), eps=v),
    "batch_norm": lambda x, y, v: F.batch_norm(x, None, None, training=True, eps=v),
    "smooth_l1_loss": lambda x, y, v: F.smooth_l1_loss(x, y, beta=v),
    "huber_loss": lambda x, y, v: F.huber_loss(x, y, delta=v),
    "cross_entropy": lambda x, y, v: F.cross_entropy(x, torchlike.tensor([1, 0, 3, 2]), label_smoothing=v),
    "poisson_nll_loss": lambda x, y, v: F.poisson_nll_loss(x.abs(), y.abs(), log_input=False, eps=v),
    "gaussian_nll_loss": lambda x, y, v: F.gaussian_nll_loss(x, y, x.abs() * 0.1, eps=v),
    "cosine_embedding_loss": lambda x, y, v: F.cosine_embedding_loss(x, y, torchlike.tensor([1, -1, 1, -1]), v - 1),
    "margin_ranking_loss": lambda x, y, v: F.margin_ranking_loss(x, y, _signs(), margin=v),
    "hinge_embedding_loss": lambda x, y, v: F.hinge_embedding_loss(x, _signs(), margin=v),
    "multi_margin_loss": lambda x, y, v: F.multi_margin_loss(x, torchlike.tensor([1, 0, 3, 2]), margin=v),
    "triplet_margin_loss": lambda x, y, v: F.triplet_margin_loss(x, y, x.flip(0), margin=v, p=1 + v, eps=v / 10),
    "pairwise_distance": lambda x, y, v: F.pairwise_distance(x, y, p=1 + v, eps=v / 10),
    "cosine_similarity": lambda x, y, v: F.cosine_similarity(x * 0.05, y, eps=v),
    "normalize": lambda x, y, v: F.normalize(x, p=1 + v, eps=v),
}


def _compiles() -> int:
    return torchlike.compile_stats()["compiles"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_fifty_values_compile_once(name):
    """Forward and backward: both kernels take the value as an argument."""
    f = CASES[name]
    x = torchlike.tensor(_X, requires_grad=True)
    y = torchlike.tensor(_Y)

    def step(v):
        out = f(x, y, v).sum()
        out.backward()
        return out.item()

    results, compiled = _run_fifty(step)
    assert compiled == 0, f"{name}: new values compiled {compiled} programs"
    assert all(math.isfinite(r) for r in results)
    assert len(set(results)) > 1  # the value reached the kernel


def _run_fifty(step):
    """``step(v)`` for 50 distinct values: (results, programs compiled after the warm-up)."""
    values = [0.301 + i / 100 for i in range(50)]  # never a default (0.5), which is baked
    # warm-up: a recurring backward, and in lazy mode a recurring graph, compiles as one program on its 2nd
    # and 3rd runs (with the same value each time too)
    results = []
    for v in values[:4]:
        results.append(step(v))
        lazy._join_compiles()  # background compiles land before the next run
    before = _compiles()
    results += [step(v) for v in values[4:]]
    return results, _compiles() - before


def test_special_norm_orders_stay_exact():
    """0, 1, 2 and inf are baked (each its own program); their values are exact reductions."""
    x = torchlike.tensor(_X)
    a = np.abs(_X.astype(np.float64))
    assert x.norm(0).item() == np.count_nonzero(_X)
    assert x.norm(1).item() == pytest.approx(a.sum(), rel=1e-6)
    assert x.norm(2).item() == pytest.approx(np.sqrt((a * a).sum()), rel=1e-6)
    assert x.norm(math.inf).item() == a.max().astype(np.float32)
    assert x.norm(-math.inf).item() == a.min().astype(np.float32)
    assert x.norm(3.5).item() == pytest.approx((a**3.5).sum() ** (1 / 3.5), rel=1e-5)


def test_label_smoothing_zero_keeps_the_plain_program():
    """label_smoothing=0.0 (the default) is baked: cross_entropy then has torch's nll backward node."""
    x = torchlike.tensor(_X, requires_grad=True)
    t = torchlike.tensor([1, 0, 3, 2])
    assert F.cross_entropy(x, t).grad_fn.name() == "NllLossBackward0"
    assert F.cross_entropy(x, t, label_smoothing=0.1).grad_fn.name() == "AddBackward0"


def test_embedding_max_norm_and_norm_type_are_traced():
    idx = torchlike.tensor([0, 2, 3])

    def step(v):
        w = torchlike.tensor(_X * 3)
        return F.embedding(idx, w, max_norm=v, norm_type=1 + v).sum().item()

    results, compiled = _run_fifty(step)
    assert compiled == 0
    assert len(set(results)) == len(results)
