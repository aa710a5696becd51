"""torchlike.vision.models against real torchvision (fixtures made by compat_tests/vision/make_fixtures.py):
state_dict layout, init under manual_seed(0) bit for bit, logits with the same (formula-set) weights within
1e-4, and a checkpoint written by real torch.save of a torchvision model."""

from __future__ import annotations

import math
import os
import pickle
import sys
from statistics import NormalDist

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


def _older_than(torch_version: str, major_minor: tuple) -> bool:
    return tuple(int(x) for x in torch_version.split(".")[:2]) < major_minor


def _as_of(text: str, torch_version: str) -> str:
    """A torchlike repr as the fixture's torch prints it: norm layers print ``bias=`` only from torch 2.13 on
    (the fixtures come from the GPU machine's torch 2.11; torchlike follows 2.13, the test dependency)."""
    if _older_than(torch_version, (2, 13)):
        text = text.replace("affine=True, bias=True", "affine=True")
    return text


def _params(names):
    return [n if n in FAST else pytest.param(n, marks=pytest.mark.slow) for n in names]


# torchvision inits these with nn.init.trunc_normal_, which torch 2.12 rewrote (pytorch#174997): up to 2.11 it
# was one uniform_ draw mapped through erfinv_ (inverse CDF), from 2.12 a rejection sampler drawing more numbers.
# torchlike follows 2.13; against fixtures from an older torch the 2.11 formula stands in (_trunc_normal_211).
# Values pass through float32 erfinv (or log) whose last-bit rounding is torch's compiled CPU kernel's (libm erff,
# FMA contraction), so these two models' values are compared within a few float32 ulps, not bit for bit.
TRUNC_NORMAL = {"convnext_tiny", "vit_b_16"}


def _trunc_normal_211(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """torch <= 2.11's nn.init.trunc_normal_: uniform_ on [2l-1, 2u-1], erfinv_, scale, shift, clamp_."""
    with torchlike.no_grad():
        lo, hi = NormalDist().cdf((a - mean) / std), NormalDist().cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


@pytest.mark.parametrize("name", _params(sorted(cases.MODELS)))
def test_model_matches_torchvision(name, monkeypatch):
    ref = _ref(name)
    if name in TRUNC_NORMAL and _older_than(ref["torch"], (2, 12)):
        monkeypatch.setattr(torchlike.nn.init, "trunc_normal_", _trunc_normal_211)
    torchlike.manual_seed(0)
    model = getattr(tv.models, name)()
    assert _as_of(repr(model), ref["torch"]) == ref["repr"]
    summary = cases.init_summary(torchlike, model)
    assert list(summary) == list(ref["summary"]), "state_dict keys (and their order) differ from torchvision's"
    for key, (shape, dtype, total, first) in ref["summary"].items():
        g_shape, g_dtype, g_total, g_first = summary[key]
        assert (g_shape, g_dtype) == (shape, dtype), key
        if name in TRUNC_NORMAL:
            # a draw out of order gives unrelated values; erfinv's rounding moves them by an ulp or two
            np.testing.assert_allclose(g_first, first, rtol=1e-6, atol=1e-9, err_msg=key)
            assert math.isclose(g_total, total, rel_tol=1e-6, abs_tol=1e-4), key
            continue
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
