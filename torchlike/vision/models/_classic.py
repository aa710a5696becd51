"""VGG, AlexNet and SqueezeNet (torchvision's module names, construction order and init)."""

from __future__ import annotations

from typing import Any

from ... import nn
from ..._core.tensor import Tensor
from ._api import WeightsEnum, build, handle_legacy_interface, weights


class VGG(nn.Module):
    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:  # fmt: skip
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )  # fmt: skip
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x)).flatten(1)
        return self.classifier(x)


def make_layers(cfg: list, batch_norm: bool = False) -> nn.Sequential:
    layers: list = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            conv2d = nn.Conv2d(in_channels, v, kernel_size=3, padding=1)
            layers += [conv2d, nn.BatchNorm2d(v), nn.ReLU(inplace=True)] if batch_norm else [conv2d, nn.ReLU(True)]
            in_channels = v
    return nn.Sequential(*layers)


cfgs = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
}


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("vgg11-8a719046.pth")


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("vgg11_bn-6002323d.pth")


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("vgg16-397923af.pth")


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("vgg16_bn-6c64b313.pth")


def _vgg(cfg: str, batch_norm: bool, enum: type, w: Any, progress: bool, kwargs: dict) -> VGG:
    w = handle_legacy_interface(kwargs, enum) or w
    if enum.verify(w) is not None:
        kwargs.setdefault("init_weights", False)
    return build(lambda **kw: VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kw), enum, w, progress, kwargs)


def vgg11(*, weights: VGG11_Weights | None = None, progress: bool = True, **kwargs: Any) -> VGG:
    return _vgg("A", False, VGG11_Weights, weights, progress, kwargs)


def vgg11_bn(*, weights: VGG11_BN_Weights | None = None, progress: bool = True, **kwargs: Any) -> VGG:
    return _vgg("A", True, VGG11_BN_Weights, weights, progress, kwargs)


def vgg16(*, weights: VGG16_Weights | None = None, progress: bool = True, **kwargs: Any) -> VGG:
    return _vgg("D", False, VGG16_Weights, weights, progress, kwargs)


def vgg16_bn(*, weights: VGG16_BN_Weights | None = None, progress: bool = True, **kwargs: Any) -> VGG:
    return _vgg("D", True, VGG16_BN_Weights, weights, progress, kwargs)


class AlexNet(nn.Module):
    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )  # fmt: skip
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )  # fmt: skip

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x)).flatten(1)
        return self.classifier(x)


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("alexnet-owt-7be5be79.pth")


def alexnet(*, weights: AlexNet_Weights | None = None, progress: bool = True, **kwargs: Any) -> AlexNet:
    return build(AlexNet, AlexNet_Weights, weights, progress, kwargs)


class Fire(nn.Module):
    def __init__(self, inplanes: int, squeeze_planes: int, expand1x1_planes: int, expand3x3_planes: int) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        import torchlike

        x = self.squeeze_activation(self.squeeze(x))
        return torchlike.cat(
            [self.expand1x1_activation(self.expand1x1(x)), self.expand3x3_activation(self.expand3x3(x))], 1
        )


def _pool() -> nn.MaxPool2d:
    return nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)


class SqueezeNet(nn.Module):
    def __init__(self, version: str = "1_0", num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.num_classes = num_classes
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), _pool(),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                _pool(), Fire(512, 64, 256, 256),
            )  # fmt: skip
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), _pool(),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), _pool(),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), _pool(),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256),
            )  # fmt: skip
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1))
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x)).flatten(1)


class SqueezeNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("squeezenet1_0-b66bff10.pth")


class SqueezeNet1_1_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("squeezenet1_1-b8a52dc0.pth")


def squeezenet1_0(*, weights: SqueezeNet1_0_Weights | None = None, progress: bool = True,
                  **kwargs: Any) -> SqueezeNet:  # fmt: skip
    return build(lambda **kw: SqueezeNet("1_0", **kw), SqueezeNet1_0_Weights, weights, progress, kwargs)


def squeezenet1_1(*, weights: SqueezeNet1_1_Weights | None = None, progress: bool = True,
                  **kwargs: Any) -> SqueezeNet:  # fmt: skip
    return build(lambda **kw: SqueezeNet("1_1", **kw), SqueezeNet1_1_Weights, weights, progress, kwargs)
