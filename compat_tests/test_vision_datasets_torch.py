"""torchlike.vision.datasets against real torchvision on the same fake files (fixtures made by
compat_tests/vision/make_fixtures.py)."""

from __future__ import annotations

import os
import pickle
import sys

import pytest

import torchlike
import torchlike.vision as tv

HERE = os.path.join(os.path.dirname(__file__), "vision")
sys.path.insert(0, HERE)
import cases  # noqa: E402  (the case table shared with make_fixtures.py)
from test_vision_transforms_torch import NOT_GENERATED, assert_plain_equal  # noqa: E402

FIXTURE = os.path.join(HERE, "fixtures", "datasets.pkl")

pytestmark = pytest.mark.skipif(not os.path.exists(FIXTURE), reason=NOT_GENERATED)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("vision_data"))
    cases.build_dataset_files(root)
    return cases.dataset_results(torchlike, tv, root)


@pytest.mark.parametrize("name", ["mnist", "cifar", "folder", "fake"])
def test_dataset_matches_torchvision(results, name):
    with open(FIXTURE, "rb") as f:
        ref = pickle.load(f)["results"]
    assert_plain_equal(ref[name], results[name], name)
