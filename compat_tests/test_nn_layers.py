"""Every nn layer under torch and torchlike: same seed -> same parameters (bit for bit), same forward,
same input/parameter gradients, in train and eval mode; reprs and state_dict keys identical."""

from __future__ import annotations

import numpy as np
import pytest
from _nn_harness import check_module, rand

X2 = rand(3, 4)
IMG = rand(2, 3, 6, 6, seed=1)
SEQ = rand(2, 3, 7, seed=2)
VOL = rand(1, 2, 4, 4, 4, seed=3)

# id -> (constructor, inputs, options)
CASES = {
    "Linear": (lambda nn: nn.Linear(4, 5), [X2], {}),
    "Linear-nobias": (lambda nn: nn.Linear(4, 5, bias=False), [X2], {}),
    "Linear-3d": (lambda nn: nn.Linear(7, 2), [SEQ], {}),
    "Bilinear": (lambda nn: nn.Bilinear(4, 4, 3), [X2, rand(3, 4, seed=5)], {}),
    "Identity": (lambda nn: nn.Identity(3, foo=1), [X2], {}),
    "Conv1d": (lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), [SEQ], {}),
    "Conv1d-same": (lambda nn: nn.Conv1d(3, 2, 4, padding="same", dilation=2), [SEQ], {}),
    "Conv2d": (lambda nn: nn.Conv2d(3, 4, 3), [IMG], {}),
    "Conv2d-groups": (
        lambda nn: nn.Conv2d(3, 6, (3, 2), stride=(2, 1), padding=(1, 0), groups=3, bias=False),
        [IMG],
        {},
    ),
    "Conv2d-reflect": (lambda nn: nn.Conv2d(3, 2, 3, padding=1, padding_mode="reflect"), [IMG], {}),
    "Conv2d-circular": (
        lambda nn: nn.Conv2d(3, 2, 3, padding=2, padding_mode="circular", dilation=2),
        [IMG],
        {},
    ),
    "Conv2d-unbatched": (lambda nn: nn.Conv2d(3, 2, 2), [IMG[0]], {}),
    "Conv3d": (lambda nn: nn.Conv3d(2, 3, 2, padding=1), [VOL], {}),
    "ConvTranspose1d": (lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=2, output_padding=1), [SEQ], {}),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, groups=1), [IMG], {}),
    "ConvTranspose2d-groups": (lambda nn: nn.ConvTranspose2d(3, 6, 2, groups=3, dilation=2), [IMG], {}),
    "MaxPool1d": (lambda nn: nn.MaxPool1d(3, stride=2, padding=1), [SEQ], {}),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(2), [IMG], {}),
    "MaxPool2d-ceil": (lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [IMG], {}),
    "MaxPool2d-indices": (lambda nn: nn.MaxPool2d(2, stride=1, dilation=2, return_indices=True), [IMG], {}),
    "MaxPool3d": (lambda nn: nn.MaxPool3d(2), [VOL], {}),
    "AvgPool1d": (lambda nn: nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), [SEQ], {}),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True), [IMG], {}),
    "AvgPool2d-divisor": (lambda nn: nn.AvgPool2d(2, divisor_override=3), [IMG], {}),
    "AvgPool3d": (lambda nn: nn.AvgPool3d(2, stride=1), [VOL], {}),
    "AdaptiveAvgPool1d": (lambda nn: nn.AdaptiveAvgPool1d(3), [SEQ], {}),
    "AdaptiveAvgPool2d": (lambda nn: nn.AdaptiveAvgPool2d((4, None)), [IMG], {}),
    "AdaptiveAvgPool2d-1": (lambda nn: nn.AdaptiveAvgPool2d(1), [IMG], {}),
    "AdaptiveMaxPool1d": (lambda nn: nn.AdaptiveMaxPool1d(4), [SEQ], {}),
    "AdaptiveMaxPool2d": (lambda nn: nn.AdaptiveMaxPool2d((4, 5), return_indices=True), [IMG], {}),
    "LPPool2d": (lambda nn: nn.LPPool2d(2, 2), [np.abs(IMG) + 0.1], {}),
    "BatchNorm1d": (lambda nn: nn.BatchNorm1d(4), [X2], {}),
    "BatchNorm1d-3d": (lambda nn: nn.BatchNorm1d(3, momentum=None), [SEQ], {}),
    "BatchNorm2d": (lambda nn: nn.BatchNorm2d(3, momentum=0.3), [IMG], {}),
    "BatchNorm2d-noaffine": (
        lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
        [IMG],
        {},
    ),
    "BatchNorm3d": (lambda nn: nn.BatchNorm3d(2), [VOL], {}),
    "LayerNorm": (lambda nn: nn.LayerNorm([6, 6]), [IMG], {}),
    "LayerNorm-nobias": (lambda nn: nn.LayerNorm(7, bias=False, eps=1e-3), [SEQ], {}),
    "GroupNorm": (lambda nn: nn.GroupNorm(1, 3), [IMG], {}),
    "InstanceNorm1d": (lambda nn: nn.InstanceNorm1d(3, affine=True), [SEQ], {}),
    "InstanceNorm2d": (lambda nn: nn.InstanceNorm2d(3, track_running_stats=True), [IMG], {}),
    "RMSNorm": (lambda nn: nn.RMSNorm(7), [SEQ], {}),
    "LocalResponseNorm": (lambda nn: nn.LocalResponseNorm(2), [IMG], {}),
    "Dropout": (lambda nn: nn.Dropout(0.4), [IMG], {}),
    "Dropout-p1": (lambda nn: nn.Dropout(1.0), [X2], {}),
    "Dropout1d": (lambda nn: nn.Dropout1d(0.5), [SEQ], {}),
    "Dropout2d": (lambda nn: nn.Dropout2d(0.5), [IMG], {}),
    "Dropout3d": (lambda nn: nn.Dropout3d(0.5), [VOL], {}),
    "AlphaDropout": (lambda nn: nn.AlphaDropout(0.3), [X2], {}),
    "FeatureAlphaDropout": (lambda nn: nn.FeatureAlphaDropout(0.3), [IMG], {}),
    "Flatten": (lambda nn: nn.Flatten(), [IMG], {}),
    "Unflatten": (lambda nn: nn.Unflatten(1, (2, 2)), [X2], {}),
    "Upsample-nearest": (lambda nn: nn.Upsample(scale_factor=2), [IMG], {}),
    "Upsample-nearest-size": (lambda nn: nn.Upsample(size=(5, 9)), [IMG], {}),
    "Upsample-bilinear": (lambda nn: nn.Upsample(scale_factor=1.7, mode="bilinear"), [IMG], {}),
    "Upsample-bilinear-ac": (lambda nn: nn.UpsamplingBilinear2d(size=(4, 9)), [IMG], {}),
    "Upsample-bicubic": (lambda nn: nn.Upsample(size=(9, 5), mode="bicubic"), [IMG], {}),
    "Upsample-linear": (
        lambda nn: nn.Upsample(scale_factor=1.5, mode="linear", align_corners=True),
        [SEQ],
        {},
    ),
    "Upsample-trilinear": (lambda nn: nn.Upsample(scale_factor=2, mode="trilinear"), [VOL], {}),
    "PixelShuffle": (lambda nn: nn.PixelShuffle(2), [rand(1, 8, 2, 3)], {}),
    "PixelUnshuffle": (lambda nn: nn.PixelUnshuffle(2), [IMG], {}),
    "ZeroPad2d": (lambda nn: nn.ZeroPad2d((1, 2, 0, 1)), [IMG], {}),
    "ConstantPad1d": (lambda nn: nn.ConstantPad1d(2, 3.5), [SEQ], {}),
    "ConstantPad2d-neg": (lambda nn: nn.ConstantPad2d((-1, 1, 2, -2), 0.5), [IMG], {}),
    "ReflectionPad2d": (lambda nn: nn.ReflectionPad2d(2), [IMG], {}),
    "ReplicationPad1d": (lambda nn: nn.ReplicationPad1d((3, 1)), [SEQ], {}),
    "CircularPad2d": (lambda nn: nn.CircularPad2d(1), [IMG], {}),
    "Fold": (lambda nn: nn.Fold((4, 5), 2), [rand(2, 12, 12)], {}),
    "Unfold": (lambda nn: nn.Unfold(2, padding=1, stride=2), [IMG], {}),
    "CosineSimilarity": (lambda nn: nn.CosineSimilarity(), [X2, rand(3, 4, seed=9)], {}),
    "PairwiseDistance": (lambda nn: nn.PairwiseDistance(p=3, keepdim=True), [X2, rand(3, 4, seed=9)], {}),
    "Embedding": (lambda nn: nn.Embedding(10, 3, padding_idx=1), [np.array([[1, 2, 2], [9, 0, 1]])], {}),
    "Embedding-maxnorm": (
        lambda nn: nn.Embedding(6, 3, max_norm=1.0, scale_grad_by_freq=True),
        [np.array([0, 3, 3])],
        {},
    ),
    "EmbeddingBag-mean": (lambda nn: nn.EmbeddingBag(10, 3), [np.array([[1, 2], [4, 4]])], {}),
    "EmbeddingBag-sum-offsets": (
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=0),
        [np.array([1, 0, 4, 5, 9]), np.array([0, 2])],
        {},
    ),
    "EmbeddingBag-max": (
        lambda nn: nn.EmbeddingBag(10, 3, mode="max"),
        [np.array([1, 2, 4, 5]), np.array([0, 1])],
        {},
    ),
    "PReLU": (lambda nn: nn.PReLU(3), [IMG], {}),
    "Sequential": (
        lambda nn: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 2)),
        [X2],
        {},
    ),
}

# float64 runs for a representative subset (each dtype is another set of compiles)
F64 = ["Linear", "Conv2d", "ConvTranspose2d", "MaxPool2d-ceil", "AvgPool2d", "BatchNorm2d", "LayerNorm", "GroupNorm",
       "Embedding", "Dropout", "Upsample-bilinear", "AdaptiveAvgPool2d"]  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_layer_float32(name: str) -> None:
    ctor, inputs, opts = CASES[name]
    check_module(ctor, inputs, **opts)


@pytest.mark.parametrize("name", F64)
def test_layer_float64(name: str) -> None:
    ctor, inputs, opts = CASES[name]
    check_module(ctor, inputs, dtype="float64", **opts)
