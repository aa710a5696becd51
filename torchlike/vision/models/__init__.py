"""torchvision.models: classification models with torchvision's module names, state_dict keys, init and
``weights=`` enums (loaded from a local file or the TORCH_HOME hub cache; never downloaded)."""

from ._registry import get_model, get_model_builder, get_model_weights, get_weight, list_models
from ._resnet import (
    BasicBlock,
    Bottleneck,
    ResNet,
    ResNet101_Weights,
    ResNet18_Weights,
    ResNet34_Weights,
    ResNet50_Weights,
    resnet101,
    resnet18,
    resnet34,
    resnet50,
)
from ._classic import (
    AlexNet,
    AlexNet_Weights,
    SqueezeNet,
    SqueezeNet1_0_Weights,
    SqueezeNet1_1_Weights,
    VGG,
    VGG11_BN_Weights,
    VGG11_Weights,
    VGG16_BN_Weights,
    VGG16_Weights,
    alexnet,
    squeezenet1_0,
    squeezenet1_1,
    vgg11,
    vgg11_bn,
    vgg16,
    vgg16_bn,
)
from ._mobile import (
    EfficientNet,
    EfficientNet_B0_Weights,
    MobileNetV2,
    MobileNetV3,
    MobileNet_V2_Weights,
    MobileNet_V3_Large_Weights,
    MobileNet_V3_Small_Weights,
    efficientnet_b0,
    mobilenet_v2,
    mobilenet_v3_large,
    mobilenet_v3_small,
)
from ._densenet import (
    DenseNet,
    DenseNet121_Weights,
    densenet121,
)
from ._transformers import (
    ConvNeXt,
    ConvNeXt_Tiny_Weights,
    ViT_B_16_Weights,
    VisionTransformer,
    convnext_tiny,
    vit_b_16,
)
from ._api import (
    Weights,
    WeightsEnum,
)

__all__ = ["get_model", "get_model_builder", "get_model_weights", "get_weight", "list_models", "ResNet", "BasicBlock", "Bottleneck", "resnet18", "resnet34", "resnet50", "resnet101", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights", "VGG", "vgg11", "vgg11_bn", "vgg16", "vgg16_bn", "VGG11_Weights", "VGG11_BN_Weights", "VGG16_Weights", "VGG16_BN_Weights", "AlexNet", "alexnet", "AlexNet_Weights", "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "MobileNetV2", "MobileNetV3", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small", "MobileNet_V2_Weights", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights", "EfficientNet", "efficientnet_b0", "EfficientNet_B0_Weights", "DenseNet", "densenet121", "DenseNet121_Weights", "VisionTransformer", "vit_b_16", "ViT_B_16_Weights", "ConvNeXt", "convnext_tiny", "ConvNeXt_Tiny_Weights", "Weights", "WeightsEnum"]  # fmt: skip
