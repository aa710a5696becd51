"""list_models, get_model, get_model_builder, get_model_weights and get_weight over the models here."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import Any

from . import _classic, _densenet, _mobile, _resnet, _transformers

_MODELS: dict[str, tuple[Callable, type]] = {
    "resnet18": (_resnet.resnet18, _resnet.ResNet18_Weights),
    "resnet34": (_resnet.resnet34, _resnet.ResNet34_Weights),
    "resnet50": (_resnet.resnet50, _resnet.ResNet50_Weights),
    "resnet101": (_resnet.resnet101, _resnet.ResNet101_Weights),
    "vgg11": (_classic.vgg11, _classic.VGG11_Weights),
    "vgg11_bn": (_classic.vgg11_bn, _classic.VGG11_BN_Weights),
    "vgg16": (_classic.vgg16, _classic.VGG16_Weights),
    "vgg16_bn": (_classic.vgg16_bn, _classic.VGG16_BN_Weights),
    "alexnet": (_classic.alexnet, _classic.AlexNet_Weights),
    "squeezenet1_0": (_classic.squeezenet1_0, _classic.SqueezeNet1_0_Weights),
    "squeezenet1_1": (_classic.squeezenet1_1, _classic.SqueezeNet1_1_Weights),
    "mobilenet_v2": (_mobile.mobilenet_v2, _mobile.MobileNet_V2_Weights),
    "mobilenet_v3_large": (_mobile.mobilenet_v3_large, _mobile.MobileNet_V3_Large_Weights),
    "mobilenet_v3_small": (_mobile.mobilenet_v3_small, _mobile.MobileNet_V3_Small_Weights),
    "efficientnet_b0": (_mobile.efficientnet_b0, _mobile.EfficientNet_B0_Weights),
    "densenet121": (_densenet.densenet121, _densenet.DenseNet121_Weights),
    "vit_b_16": (_transformers.vit_b_16, _transformers.ViT_B_16_Weights),
    "convnext_tiny": (_transformers.convnext_tiny, _transformers.ConvNeXt_Tiny_Weights),
}


def list_models(module: Any = None, include: Any = None, exclude: Any = None) -> list[str]:
    """Names of the models provided (all classification models), filtered by fnmatch patterns."""
    models = set(_MODELS)
    if include:
        patterns = [include] if isinstance(include, str) else include
        models = {m for m in models if any(fnmatch.fnmatch(m, p) for p in patterns)}
    if exclude:
        patterns = [exclude] if isinstance(exclude, str) else exclude
        models = {m for m in models if not any(fnmatch.fnmatch(m, p) for p in patterns)}
    return sorted(models)


def get_model_builder(name: str) -> Callable:
    name = name.lower()
    if name not in _MODELS:
        raise ValueError(f"Unknown model {name}")
    return _MODELS[name][0]


def get_model(name: str, **config: Any) -> Any:
    return get_model_builder(name)(**config)


def get_model_weights(name: Any) -> type:
    if callable(name):
        name = name.__name__
    if name.lower() not in _MODELS:
        raise ValueError(f"Unknown model {name}")
    return _MODELS[name.lower()][1]


def get_weight(name: str) -> Any:
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    for _, enum in _MODELS.values():
        if enum.__name__ == enum_name:
            return enum[value_name]
    raise ValueError(f"The weight enum '{enum_name}' for the specific method couldn't be retrieved.")
