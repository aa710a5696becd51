"""DenseNet-121 (torchvision's module names, construction order and init)."""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from ... import nn
from ..._core.tensor import Tensor
from ._api import WeightsEnum, build, weights


def _cat(tensors: list[Tensor]) -> Tensor:
    import torchlike

    return torchlike.cat(tensors, 1)


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features: int, growth_rate: int, bn_size: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs: list[Tensor]) -> Tensor:
        return self.conv1(self.relu1(self.norm1(_cat(inputs))))

    def forward(self, input: Any) -> Tensor:
        prev_features = [input] if isinstance(input, Tensor) else input
        new_features = self.conv2(self.relu2(self.norm2(self.bn_function(prev_features))))
        if self.drop_rate > 0:
            new_features = nn.functional.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    _version = 2

    def __init__(self, num_layers: int, num_input_features: int, bn_size: int, growth_rate: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:  # fmt: skip
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate, bn_size=bn_size,
                                drop_rate=drop_rate, memory_efficient=memory_efficient)  # fmt: skip
            self.add_module("denselayer%d" % (i + 1), layer)

    def forward(self, init_features: Tensor) -> Tensor:
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return _cat(features)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features: int, num_output_features: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    def __init__(self, growth_rate: int = 32, block_config: tuple = (6, 12, 24, 16), num_init_features: int = 64,
                 bn_size: int = 4, drop_rate: float = 0, num_classes: int = 1000,
                 memory_efficient: bool = False) -> None:  # fmt: skip
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))  # fmt: skip
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers=num_layers, num_input_features=num_features, bn_size=bn_size,
                                growth_rate=growth_rate, drop_rate=drop_rate, memory_efficient=memory_efficient)  # fmt: skip
            self.features.add_module("denseblock%d" % (i + 1), block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = _Transition(num_input_features=num_features, num_output_features=num_features // 2)
                self.features.add_module("transition%d" % (i + 1), trans)
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        out = nn.functional.relu(self.features(x), inplace=True)
        out = nn.functional.adaptive_avg_pool2d(out, (1, 1)).flatten(1)
        return self.classifier(out)


_LEGACY_KEY = re.compile(
    r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$"
)


def _fix_legacy_keys(state_dict: dict) -> dict:
    """The published checkpoints name layers ``norm.1``; the modules are ``norm1`` (torchvision renames too)."""
    out = OrderedDict()
    for key, value in state_dict.items():
        m = _LEGACY_KEY.match(key)
        out[m.group(1) + m.group(2) if m else key] = value
    return out


class DenseNet121_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("densenet121-a639ec97.pth")


def densenet121(*, weights: DenseNet121_Weights | None = None, progress: bool = True, **kwargs: Any) -> DenseNet:
    return build(lambda **kw: DenseNet(32, (6, 12, 24, 16), 64, **kw), DenseNet121_Weights, weights, progress, kwargs,
                 fix_state_dict=_fix_legacy_keys)  # fmt: skip
