"""torchlike.vision.models alone: parameter counts equal the ones torchvision documents for its models,
state_dict keys, the weights enums and loading from a local file or the TORCH_HOME hub cache."""

from __future__ import annotations

import os

import numpy as np
import pytest

import torchlike
from torchlike.vision import models

# torchvision's documented parameter counts (the num_params of each model's weights meta)
NUM_PARAMS = {
    "resnet18": 11689512, "squeezenet1_1": 1235496, "squeezenet1_0": 1248424, "mobilenet_v3_small": 2542856,
    "resnet34": 21797672, "resnet50": 25557032, "resnet101": 44549160, "mobilenet_v2": 3504872,
    "mobilenet_v3_large": 5483032, "densenet121": 7978856, "efficientnet_b0": 5288548, "vit_b_16": 86567656,
    "convnext_tiny": 28589128, "alexnet": 61100840, "vgg11": 132863336, "vgg11_bn": 132868840, "vgg16": 138357544,
    "vgg16_bn": 138365992,
}  # fmt: skip
FAST = ["resnet18", "squeezenet1_1"]


def _count(name):
    model = getattr(models, name)()
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", FAST)
def test_parameter_counts(name):
    assert _count(name) == NUM_PARAMS[name]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(NUM_PARAMS) - set(FAST)))
def test_parameter_counts_all(name):
    assert _count(name) == NUM_PARAMS[name]


def test_resnet18_layout_and_forward():
    torchlike.manual_seed(0)
    model = models.resnet18(num_classes=10)
    sd = model.state_dict()
    assert len(sd) == 122 and list(sd)[:3] == ["conv1.weight", "bn1.weight", "bn1.bias"]
    assert tuple(sd["layer2.0.downsample.0.weight"].shape) == (128, 64, 1, 1)
    assert sd["layer1.0.bn1.num_batches_tracked"].dtype == torchlike.int64
    assert tuple(sd["fc.weight"].shape) == (10, 512)
    model.eval()
    with torchlike.no_grad():
        assert tuple(model(torchlike.zeros(2, 3, 32, 32)).shape) == (2, 10)


def test_weights_enums():
    w = models.ResNet50_Weights.DEFAULT
    assert w is models.ResNet50_Weights.IMAGENET1K_V2 and repr(w) == "ResNet50_Weights.IMAGENET1K_V2"
    assert w.url == "https://download.pytorch.org/models/resnet50-11ad3fa6.pth"
    assert models.ResNet18_Weights.verify("IMAGENET1K_V1") is models.ResNet18_Weights.IMAGENET1K_V1
    with pytest.raises(TypeError, match="Invalid Weight class provided; expected ResNet18_Weights"):
        models.resnet18(weights=models.ResNet50_Weights.DEFAULT)
    x = np.random.default_rng(0).integers(0, 256, (3, 40, 50), dtype=np.uint8)
    out = w.transforms()(torchlike.tensor(x))
    assert tuple(out.shape) == (3, 224, 224) and out.dtype == torchlike.float32


def test_weights_load_from_torch_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.raises(RuntimeError, match="needs squeezenet1_1-b8a52dc0.pth. Download https://download.pytorch.org"):
        models.squeezenet1_1(weights="DEFAULT")
    torchlike.manual_seed(1)
    src = models.squeezenet1_1()
    os.makedirs(tmp_path / "hub" / "checkpoints")
    torchlike.save(src.state_dict(), str(tmp_path / "hub" / "checkpoints" / "squeezenet1_1-b8a52dc0.pth"))
    loaded = models.squeezenet1_1(weights=models.SqueezeNet1_1_Weights.IMAGENET1K_V1)
    for (k, a), (k2, b) in zip(src.state_dict().items(), loaded.state_dict().items()):
        assert k == k2 and torchlike.equal(a, b)
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 1000 but got 5"):
        models.squeezenet1_1(weights="DEFAULT", num_classes=5)


def test_densenet_legacy_checkpoint_keys():
    from torchlike.vision.models._densenet import _fix_legacy_keys

    fixed = _fix_legacy_keys({"features.denseblock1.denselayer1.norm.1.weight": 1, "classifier.bias": 2})
    assert list(fixed) == ["features.denseblock1.denselayer1.norm1.weight", "classifier.bias"]


def test_registry_and_module_paths():
    assert "resnet18" in models.list_models() and models.list_models(include="vgg1[16]") == ["vgg11", "vgg16"]
    assert models.get_model_weights("resnet50") is models.ResNet50_Weights
    assert models.get_weight("ResNet50_Weights.IMAGENET1K_V1") is models.ResNet50_Weights.IMAGENET1K_V1
    with pytest.raises(ValueError, match="Unknown model nope"):
        models.get_model("nope")
    from torchlike.vision.models.mobilenetv3 import InvertedResidual
    from torchlike.vision.models.resnet import BasicBlock

    assert BasicBlock is models._resnet.BasicBlock and InvertedResidual is models._mobile.InvertedResidualV3
