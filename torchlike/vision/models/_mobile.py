"""MobileNetV2, MobileNetV3 (small, large) and EfficientNet-B0 (torchvision's module names, construction order
and init)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from functools import partial
from typing import Any

from ... import nn
from ..._core.tensor import Tensor
from ..ops._misc import Conv2dNormActivation, SqueezeExcitation, StochasticDepth
from ..transforms._functional import InterpolationMode
from ._api import WeightsEnum, build, weights


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _init_mobile(model: nn.Module, linear: Callable) -> None:
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            linear(m)
            nn.init.zeros_(m.bias)


def _normal_001(m: nn.Linear) -> None:
    nn.init.normal_(m.weight, 0, 0.01)


class InvertedResidualV2(nn.Module):
    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int, norm_layer: Callable | None = None) -> None:
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers: list = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6))  # fmt: skip
        layers.extend([
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim, norm_layer=norm_layer,
                                 activation_layer=nn.ReLU6),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ])  # fmt: skip
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x: Tensor) -> Tensor:
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


# torch: torchvision names both blocks InvertedResidual (each in its own module); model reprs show the name
InvertedResidualV2.__name__ = InvertedResidualV2.__qualname__ = "InvertedResidual"


class MobileNetV2(nn.Module):
    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, inverted_residual_setting: Any = None,
                 round_nearest: int = 8, block: Callable | None = None, norm_layer: Callable | None = None,
                 dropout: float = 0.2) -> None:  # fmt: skip
        super().__init__()
        block = block or InvertedResidualV2
        norm_layer = norm_layer or nn.BatchNorm2d
        input_channel = 32
        last_channel = 1280
        if inverted_residual_setting is None:
            inverted_residual_setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1],
                                         [6, 160, 3, 2], [6, 320, 1, 1]]  # fmt: skip
        if len(inverted_residual_setting) == 0 or len(inverted_residual_setting[0]) != 4:
            raise ValueError(
                f"inverted_residual_setting should be non-empty or a 4-element list, got {inverted_residual_setting}"
            )
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features: list = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6)]  # fmt: skip
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t,
                                      norm_layer=norm_layer))  # fmt: skip
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1, norm_layer=norm_layer,
                                             activation_layer=nn.ReLU6))  # fmt: skip
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))
        _init_mobile(self, _normal_001)

    def forward(self, x: Tensor) -> Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1)).flatten(1)
        return self.classifier(x)


class InvertedResidualConfig:
    def __init__(self, input_channels: int, kernel: int, expanded_channels: int, out_channels: int, use_se: bool,
                 activation: str, stride: int, dilation: int, width_mult: float) -> None:  # fmt: skip
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels: int, width_mult: float) -> int:
        return _make_divisible(channels * width_mult, 8)


class InvertedResidualV3(nn.Module):
    def __init__(self, cnf: InvertedResidualConfig, norm_layer: Callable,
                 se_layer: Callable = partial(SqueezeExcitation, scale_activation=nn.Hardsigmoid)) -> None:  # fmt: skip
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers: list = []
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))  # fmt: skip
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=stride, dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation_layer))  # fmt: skip
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))  # fmt: skip
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


InvertedResidualV3.__name__ = InvertedResidualV3.__qualname__ = "InvertedResidual"


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting: list[InvertedResidualConfig], last_channel: int,
                 num_classes: int = 1000, block: Callable | None = None, norm_layer: Callable | None = None,
                 dropout: float = 0.2, **kwargs: Any) -> None:  # fmt: skip
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        block = block or InvertedResidualV3
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers: list = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                             activation_layer=nn.Hardswish)]  # fmt: skip
        for cnf in inverted_residual_setting:
            layers.append(block(cnf, norm_layer))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))  # fmt: skip
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(last_out, last_channel), nn.Hardswish(inplace=True), nn.Dropout(p=dropout, inplace=True),
            nn.Linear(last_channel, num_classes),
        )  # fmt: skip
        _init_mobile(self, _normal_001)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


_V3 = {
    "mobilenet_v3_large": (
        [
            (16, 3, 16, 16, False, "RE", 1),
            (16, 3, 64, 24, False, "RE", 2),
            (24, 3, 72, 24, False, "RE", 1),
            (24, 5, 72, 40, True, "RE", 2),
            (40, 5, 120, 40, True, "RE", 1),
            (40, 5, 120, 40, True, "RE", 1),
            (40, 3, 240, 80, False, "HS", 2),
            (80, 3, 200, 80, False, "HS", 1),
            (80, 3, 184, 80, False, "HS", 1),
            (80, 3, 184, 80, False, "HS", 1),
            (80, 3, 480, 112, True, "HS", 1),
            (112, 3, 672, 112, True, "HS", 1),
            (112, 5, 672, 160, True, "HS", 2),
            (160, 5, 960, 160, True, "HS", 1),
            (160, 5, 960, 160, True, "HS", 1),
        ],
        1280,
    ),
    "mobilenet_v3_small": (
        [
            (16, 3, 16, 16, True, "RE", 2),
            (16, 3, 72, 24, False, "RE", 2),
            (24, 3, 88, 24, False, "RE", 1),
            (24, 5, 96, 40, True, "HS", 2),
            (40, 5, 240, 40, True, "HS", 1),
            (40, 5, 240, 40, True, "HS", 1),
            (40, 5, 120, 48, True, "HS", 1),
            (48, 5, 144, 48, True, "HS", 1),
            (48, 5, 288, 96, True, "HS", 2),
            (96, 5, 576, 96, True, "HS", 1),
            (96, 5, 576, 96, True, "HS", 1),
        ],
        1024,
    ),
}  # fmt: skip  (input, kernel, expanded, out, SE, activation, stride) per block; last channel


def _mobilenet_v3_conf(arch: str, width_mult: float = 1.0, reduced_tail: bool = False,
                       dilated: bool = False) -> tuple[list[InvertedResidualConfig], int]:  # fmt: skip
    rows, last = _V3[arch]
    div = 2 if reduced_tail else 1
    dilation = 2 if dilated else 1
    tail = 3  # the last three blocks (C4 on) take reduced_tail and dilation
    setting = []
    for k, (i, kern, e, o, se, act, s) in enumerate(rows):
        in_tail = k >= len(rows) - tail
        if in_tail:
            i = i if k == len(rows) - tail else i // div
            e = e if k == len(rows) - tail else e // div
            o = o // div
        setting.append(InvertedResidualConfig(i, kern, e, o, se, act, s, dilation if in_tail else 1, width_mult))
    return setting, InvertedResidualConfig.adjust_channels(last // div, width_mult)


class MobileNet_V2_Weights(WeightsEnum):
    IMAGENET1K_V1 = weights("mobilenet_v2-b0353104.pth")
    IMAGENET1K_V2 = DEFAULT = weights("mobilenet_v2-7ebf99e0.pth", resize=232)


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = weights("mobilenet_v3_large-8738ca79.pth")
    IMAGENET1K_V2 = DEFAULT = weights("mobilenet_v3_large-5c1a4163.pth", resize=232)


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("mobilenet_v3_small-047dcff4.pth")


def mobilenet_v2(*, weights: MobileNet_V2_Weights | None = None, progress: bool = True,
                 **kwargs: Any) -> MobileNetV2:  # fmt: skip
    return build(MobileNetV2, MobileNet_V2_Weights, weights, progress, kwargs)


def _v3(arch: str, enum: type, w: Any, progress: bool, kwargs: dict) -> MobileNetV3:
    conf_keys = ("width_mult", "reduced_tail", "dilated")
    setting, last_channel = _mobilenet_v3_conf(arch, **{k: kwargs.pop(k) for k in conf_keys if k in kwargs})
    return build(lambda **kw: MobileNetV3(setting, last_channel, **kw), enum, w, progress, kwargs)


def mobilenet_v3_large(*, weights: MobileNet_V3_Large_Weights | None = None, progress: bool = True,
                       **kwargs: Any) -> MobileNetV3:  # fmt: skip
    return _v3("mobilenet_v3_large", MobileNet_V3_Large_Weights, weights, progress, kwargs)


def mobilenet_v3_small(*, weights: MobileNet_V3_Small_Weights | None = None, progress: bool = True,
                       **kwargs: Any) -> MobileNetV3:  # fmt: skip
    return _v3("mobilenet_v3_small", MobileNet_V3_Small_Weights, weights, progress, kwargs)


class MBConvConfig:
    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int, out_channels: int,
                 num_layers: int, width_mult: float = 1.0, depth_mult: float = 1.0) -> None:  # fmt: skip
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = MBConv

    @staticmethod
    def adjust_channels(channels: int, width_mult: float, min_value: int | None = None) -> int:
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer: Callable,
                 se_layer: Callable = SqueezeExcitation) -> None:  # fmt: skip
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers: list = []
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))  # fmt: skip
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU))  # fmt: skip
        layers.append(se_layer(expanded, max(1, cnf.input_channels // 4), activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))  # fmt: skip
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting: list[MBConvConfig], dropout: float,
                 stochastic_depth_prob: float = 0.2, num_classes: int = 1000, norm_layer: Callable | None = None,
                 last_channel: int | None = None) -> None:  # fmt: skip
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        norm_layer = norm_layer or nn.BatchNorm2d
        layers: list = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3,
                                             stride=2, norm_layer=norm_layer, activation_layer=nn.SiLU)]  # fmt: skip
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage: list = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))  # fmt: skip
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(last_out, num_classes))

        def linear_init(m: nn.Linear) -> None:
            init_range = 1.0 / math.sqrt(m.out_features)
            nn.init.uniform_(m.weight, -init_range, init_range)

        _init_mobile(self, linear_init)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


class EfficientNet_B0_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("efficientnet_b0_rwightman-7f5810bc.pth", resize=256,
                                      interpolation=InterpolationMode.BICUBIC)  # fmt: skip


def efficientnet_b0(*, weights: EfficientNet_B0_Weights | None = None, progress: bool = True,
                    **kwargs: Any) -> EfficientNet:  # fmt: skip
    setting = [MBConvConfig(*row) for row in [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2),
                                              (6, 3, 2, 40, 80, 3), (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4),
                                              (6, 3, 1, 192, 320, 1)]]  # fmt: skip
    dropout = kwargs.pop("dropout", 0.2)
    return build(lambda **kw: EfficientNet(setting, dropout, **kw), EfficientNet_B0_Weights, weights, progress, kwargs)
