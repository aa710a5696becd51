"""torchlike.vision.models against real torchvision (fixtures made by compat_tests/vision/make_fixtures.py):
state_dict layout, init under manual_seed(0) bit for bit, logits with the same (formula-set) weights within
1e-4, and a checkpoint written by real torch.save of a torchvision model."""

from __future__ import annotations

import math
import os
import pickle
import sys

import numpy as np
import pytest

import torchlike
import torchlike.vision as tv

HERE = os.path.join(os.path.dirname(__file__), "vision")
sys.path.insert(0, HERE)
import cases  # noqa: E402  (the case table shared with make_fixtures.py)
from test_vision_transforms_torch import NOT_GENERATED  # noqa: E402

FIXTURES = os.path.join(HERE, "fixtures")
MODELS_PKL = os.path.join(FIXTURES, "models.pkl")
FAST = {"resnet18", "squeezenet1_1"}  # the rest build/compile for 10-70 s each on CPU


def _ref(name):
    if not os.path.exists(MODELS_PKL):
        pytest.skip(NOT_GENERATED)
    with open(MODELS_PKL, "rb") as f:
        data = pickle.load(f)
    ref = dict(data["models"][name])
    ref["torch"] = data["meta"]["torch"]
    return ref


def _as_of(text: str, torch_version: str) -> str:
    """A torchlike repr as the fixture's torch prints it: norm layers print ``bias=`` only from torch 2.13 on
    (the fixtures come from the GPU machine's torch 2.11; torchlike follows 2.13, the test dependency)."""
    major, minor = (int(x) for x in torch_version.split(".")[:2])
    if (major, minor) < (2, 13):
        text = text.replace("affine=True, bias=True", "affine=True")
    return text


def _params(names):
    return [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in names]


# torchvision inits these with trunc_normal_ in an order not reproduced yet: their first draws differ
INIT_DIFFERS = {"convnext_tiny", "vit_b_16"}


def _model_params(names):
    return [pytest.param(n, marks=[pytest.mark.slow, pytest.mark.xfail(
        strict=True, reason="known: seeded init differs from torchvision's (trunc_normal_ order)")])
        if n in INIT_DIFFERS else p for n, p in zip(names, _params(names))]


@pytest.mark.parametrize("name", _model_params(sorted(cases.MODELS)))
def test_model_matches_torchvision(name):
    ref = _ref(name)
    torchlike.manual_seed(0)
    model = getattr(tv.models, name)()
    assert _as_of(repr(model), ref["torch"]) == ref["repr"]
    summary = cases.init_summary(torchlike, model)
    assert list(summary) == list(ref["summary"]), "state_dict keys (and their order) differ from torchvision's"
    for key, (shape, dtype, total, first) in ref["summary"].items():
        g_shape, g_dtype, g_total, g_first = summary[key]
        assert (g_shape, g_dtype) == (shape, dtype), key
        assert g_first == first, f"{key}: init differs from torchvision's under manual_seed(0)"
        assert math.isclose(g_total, total, rel_tol=1e-12, abs_tol=1e-12), key
    cases.set_deterministic_weights(torchlike, model)
    model.eval()
    with torchlike.no_grad():
        logits = model(cases.model_input(torchlike, cases.MODELS[name])).double().numpy()
    # float32 convolutions summed in another order (XLA vs torch's CPU kernels) through 30-100 layers: within 1e-4
    # of the logits' scale
    np.testing.assert_allclose(logits, ref["logits"], rtol=1e-4, atol=1e-4 * max(1.0, np.abs(ref["logits"]).max()))


def test_checkpoint_saved_by_real_torchvision_loads():
    path = os.path.join(FIXTURES, "squeezenet_c3.pth")
    if not os.path.exists(path):
        pytest.skip(NOT_GENERATED)
    model = tv.models.squeezenet1_1(num_classes=3)
    model.load_state_dict(torchlike.load(path, weights_only=True))
    model.eval()
    with torchlike.no_grad():
        logits = model(cases.model_input(torchlike, 64)).numpy()
    np.testing.assert_allclose(logits, np.load(os.path.join(FIXTURES, "squeezenet_c3_logits.npy")), rtol=1e-4,
                               atol=1e-4)  # fmt: skip
