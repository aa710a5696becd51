"""Bad inputs to nn layers, losses and functional raise torch's exception types and messages."""

from __future__ import annotations

import warnings

import pytest
from _harness import check_raises


def _F(t):  # noqa: N802, ANN001, ANN202
    return t.nn.functional


CASES = {
    # wrong channels / shapes
    "conv2d-channels": lambda t: t.nn.Conv2d(1, 4, 3)(t.zeros(2, 3, 8, 8)),
    "conv2d-dims": lambda t: t.nn.Conv2d(3, 4, 3)(t.zeros(2, 3)),
    "conv1d-dims": lambda t: _F(t).conv1d(t.zeros(2, 3, 4, 5), t.zeros(4, 3, 3)),
    "conv2d-kernel-too-big": lambda t: t.nn.Conv2d(1, 1, 3)(t.zeros(1, 1, 2, 2)),
    "conv2d-groups-channels": lambda t: _F(t).conv2d(t.zeros(1, 4, 5, 5), t.zeros(6, 2, 3, 3), groups=3),
    "conv2d-dtype": lambda t: _F(t).conv2d(t.zeros(1, 1, 5, 5, dtype=t.float64), t.zeros(1, 1, 3, 3)),
    "conv2d-bias-dtype": lambda t: _F(t).conv2d(
        t.zeros(1, 1, 5, 5), t.zeros(1, 1, 3, 3), t.zeros(1, dtype=t.float64)
    ),
    "conv2d-bias-shape": lambda t: _F(t).conv2d(t.zeros(1, 1, 5, 5), t.zeros(2, 1, 3, 3), t.zeros(3)),
    "conv-transpose-channels": lambda t: t.nn.ConvTranspose2d(3, 4, 3)(t.zeros(2, 5, 6, 6)),
    "conv-same-strided": lambda t: _F(t).conv2d(
        t.zeros(1, 1, 5, 5), t.zeros(1, 1, 3, 3), padding="same", stride=2
    ),
    "conv-bad-padding-string": lambda t: _F(t).conv2d(
        t.zeros(1, 1, 5, 5), t.zeros(1, 1, 3, 3), padding="foo"
    ),
    "conv-negative-padding": lambda t: _F(t).conv2d(t.zeros(1, 1, 5, 5), t.zeros(1, 1, 3, 3), padding=-1),
    "conv-zero-stride": lambda t: _F(t).conv2d(t.zeros(1, 1, 5, 5), t.zeros(1, 1, 3, 3), stride=0),
    "Conv2d-ctor-groups": lambda t: t.nn.Conv2d(3, 4, 3, groups=2),
    "Conv2d-ctor-padding": lambda t: t.nn.Conv2d(3, 4, 3, padding="full"),
    "Conv2d-ctor-mode": lambda t: t.nn.Conv2d(3, 4, 3, padding_mode="mirror"),
    "linear-shapes": lambda t: t.nn.Linear(4, 5)(t.zeros(2, 3)),
    "linear-shapes-3d": lambda t: _F(t).linear(t.zeros(2, 2, 3), t.zeros(4, 5)),
    "linear-dtype": lambda t: _F(t).linear(t.zeros(2, 3), t.zeros(4, 3, dtype=t.float64)),
    "linear-bias-dtype": lambda t: _F(t).linear(t.zeros(2, 3), t.zeros(4, 3), t.zeros(4, dtype=t.float64)),
    "linear-bias-shape": lambda t: _F(t).linear(t.zeros(2, 3), t.zeros(4, 3), t.zeros(3)),
    "linear-0d": lambda t: _F(t).linear(t.tensor(1.0), t.zeros(3, 1)),
    "maxpool-too-small": lambda t: t.nn.MaxPool2d(3)(t.zeros(1, 1, 2, 2)),
    "maxpool-pad": lambda t: _F(t).max_pool2d(t.zeros(1, 1, 8, 8), 2, padding=2),
    "maxpool-dims": lambda t: _F(t).max_pool2d(t.zeros(8, 8), 2),
    "avgpool-too-small": lambda t: _F(t).avg_pool2d(t.zeros(1, 1, 2, 2), 3),
    "adaptive-dims": lambda t: _F(t).adaptive_avg_pool2d(t.zeros(8), 2),
    "batchnorm-one-value": lambda t: t.nn.BatchNorm1d(3)(t.zeros(1, 3)),
    "batchnorm-channels": lambda t: t.nn.BatchNorm1d(3)(t.zeros(2, 4)),
    "batchnorm-dims": lambda t: t.nn.BatchNorm2d(3)(t.zeros(2, 3)),
    "layernorm-shape": lambda t: t.nn.LayerNorm(4)(t.zeros(2, 3)),
    "groupnorm-groups": lambda t: _F(t).group_norm(t.zeros(2, 3, 4), 2),
    "groupnorm-ctor": lambda t: t.nn.GroupNorm(2, 3),
    "instancenorm-affine-features": lambda t: t.nn.InstanceNorm1d(4, affine=True)(t.zeros(2, 3, 5)),
    "embedding-dtype": lambda t: t.nn.Embedding(5, 3)(t.zeros(2)),
    "embedding-range": lambda t: t.nn.Embedding(5, 3)(t.tensor([5])),
    "embedding-negative": lambda t: _F(t).embedding(t.tensor([-1]), t.zeros(5, 3)),
    "embedding-padding-idx": lambda t: t.nn.Embedding(5, 3, padding_idx=5),
    "embedding-bag-2d-offsets": lambda t: t.nn.EmbeddingBag(5, 2)(t.tensor([[1, 2]]), t.tensor([0])),
    "embedding-bag-mode": lambda t: _F(t).embedding_bag(
        t.tensor([1, 2]), t.zeros(5, 2), t.tensor([0]), mode="min"
    ),
    "dropout-p": lambda t: t.nn.Dropout(1.5),
    "dropout-functional-p": lambda t: _F(t).dropout(t.zeros(2), -0.1),
    "softmax-dim": lambda t: _F(t).softmax(t.zeros(2, 3), 2),
    "softmax-int": lambda t: _F(t).softmax(t.tensor([1, 2]), 0),
    "glu-odd": lambda t: _F(t).glu(t.zeros(2, 3)),
    "gelu-approx": lambda t: _F(t).gelu(t.zeros(2), approximate="x"),
    "gelu-int": lambda t: _F(t).gelu(t.tensor([1, 2])),
    "silu-int": lambda t: _F(t).silu(t.tensor([1, 2])),
    "prelu-channels": lambda t: _F(t).prelu(t.zeros(2, 4), t.zeros(3)),
    "softshrink-lambda": lambda t: _F(t).softshrink(t.zeros(2), -1.0),
    "hardtanh-bounds": lambda t: t.nn.Hardtanh(2.0, 1.0),
    "pad-odd": lambda t: _F(t).pad(t.zeros(2, 3), (1,)),
    "pad-too-long": lambda t: _F(t).pad(t.zeros(2, 3), (1, 1, 1, 1, 1, 1)),
    "pad-reflect-too-big": lambda t: _F(t).pad(t.zeros(1, 1, 2, 2), (3, 3, 3, 3), mode="reflect"),
    "pad-mode": lambda t: _F(t).pad(t.zeros(1, 1, 2, 2), (1, 1), mode="foo"),
    "pad-size-for-mode": lambda t: _F(t).pad(t.zeros(1, 1, 2, 2), (3, 3), mode="circular"),
    "pixel-shuffle": lambda t: _F(t).pixel_shuffle(t.zeros(1, 3, 2, 2), 2),
    "pixel-unshuffle": lambda t: _F(t).pixel_unshuffle(t.zeros(1, 1, 3, 3), 2),
    "interpolate-both": lambda t: _F(t).interpolate(t.zeros(1, 1, 4), size=2, scale_factor=2.0),
    "interpolate-none": lambda t: _F(t).interpolate(t.zeros(1, 1, 4)),
    "interpolate-align-nearest": lambda t: _F(t).interpolate(t.zeros(1, 1, 4), size=2, align_corners=True),
    "interpolate-mode-dims": lambda t: _F(t).interpolate(t.zeros(1, 1, 4), size=2, mode="bilinear"),
    "one-hot-float": lambda t: _F(t).one_hot(t.tensor([1.0])),
    "one-hot-range": lambda t: _F(t).one_hot(t.tensor([3]), 2),
    "one-hot-negative": lambda t: _F(t).one_hot(t.tensor([-1])),
    # losses: wrong target dtypes / shapes / values
    "nll-target-float": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.zeros(2)),
    "nll-target-int32": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.zeros(2, dtype=t.int32)),
    "nll-batch": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.zeros(3, dtype=t.long)),
    "nll-out-of-bounds": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.tensor([0, 5])),
    "nll-weight-size": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.tensor([0, 1]), weight=t.ones(2)),
    "nll-multi-target": lambda t: _F(t).nll_loss(t.zeros(2, 3), t.zeros(2, 3, dtype=t.long)),
    "cross-entropy-target-float-shape": lambda t: _F(t).cross_entropy(t.zeros(2, 3), t.zeros(2, 4)),
    "cross-entropy-out-of-bounds": lambda t: t.nn.CrossEntropyLoss()(t.zeros(2, 3), t.tensor([3, 0])),
    "cross-entropy-smoothing": lambda t: _F(t).cross_entropy(
        t.zeros(2, 3), t.tensor([0, 1]), label_smoothing=1.5
    ),
    "bce-size": lambda t: _F(t).binary_cross_entropy(t.zeros(2), t.zeros(2, 1)),
    "bce-range": lambda t: _F(t).binary_cross_entropy(t.tensor([1.5]), t.tensor([1.0])),
    "bce-logits-size": lambda t: _F(t).binary_cross_entropy_with_logits(t.zeros(2), t.zeros(3)),
    "mse-int": lambda t: _F(t).mse_loss(t.tensor([1, 2]), t.tensor([1, 2])),
    "reduction-name": lambda t: t.nn.MSELoss(reduction="avg")(t.zeros(2), t.zeros(2)),
    "gaussian-var-negative": lambda t: _F(t).gaussian_nll_loss(t.zeros(2), t.zeros(2), t.tensor([-1.0, 1.0])),
    "gaussian-var-size": lambda t: _F(t).gaussian_nll_loss(t.zeros(2, 3), t.zeros(2, 3), t.ones(3, 2)),
    "margin-ranking-dims": lambda t: _F(t).margin_ranking_loss(t.zeros(3), t.zeros(3), t.zeros(3, 1)),
    "triplet-dims": lambda t: _F(t).triplet_margin_loss(t.zeros(2, 3), t.zeros(2, 3), t.zeros(3)),
    "multi-margin-p": lambda t: _F(t).multi_margin_loss(t.zeros(2, 3), t.tensor([0, 1]), p=3),
    # state dicts
    "state-dict-size": lambda t: t.nn.Linear(2, 3).load_state_dict(t.nn.Linear(2, 4).state_dict()),
    "state-dict-missing": lambda t: t.nn.Sequential(t.nn.Linear(2, 2), t.nn.BatchNorm1d(2)).load_state_dict(
        {"0.weight": t.zeros(2, 2)}
    ),
    "state-dict-unexpected": lambda t: t.nn.Linear(2, 2).load_state_dict(
        {"weight": t.zeros(2, 2), "bias": t.zeros(2), "extra": t.zeros(1)}
    ),
    "state-dict-type": lambda t: t.nn.Linear(2, 2).load_state_dict(None),
}


@pytest.mark.parametrize("name", list(CASES))
def test_error(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(CASES[name])


def test_state_dict_error_full_text() -> None:
    def text(t):  # noqa: ANN001, ANN202
        m = t.nn.Sequential(t.nn.Linear(2, 2), t.nn.BatchNorm1d(2))
        sd = m.state_dict()
        sd["0.weight"] = t.zeros(3, 2)
        del sd["1.num_batches_tracked"]
        sd["2.bias"] = t.zeros(1)
        try:
            m.load_state_dict(sd)
        except RuntimeError as e:
            return str(e)
        return None

    import torch

    import torchlike

    assert text(torchlike) == text(torch)


# Under the old set literals, compiled from source (a fresh clone), seeds 3 and 7 printed another order.
@pytest.mark.parametrize("seed", ["3", "7"])
def test_set_in_message_prints_in_torchs_order(seed: str) -> None:
    """torch's Conv messages print a Python set, whose order depends on the hash seed (and on how
    the set was built): under a fixed PYTHONHASHSEED torchlike prints torch's order."""
    import os
    import subprocess
    import sys

    code = (
        "import torch, torchlike\n"
        "for t in (torch, torchlike):\n"
        "    for kw in ({'padding_mode': 'mirror'}, {'padding': 'full'}):\n"
        "        try:\n"
        "            t.nn.Conv2d(3, 4, 3, **kw)\n"
        "        except ValueError as e:\n"
        "            print(e)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p))  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120).stdout
    lines = out.splitlines()
    assert len(lines) == 4 and lines[:2] == lines[2:] and "one of {" in lines[0], out
