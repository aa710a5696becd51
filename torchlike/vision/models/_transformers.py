"""ViT-B/16 and ConvNeXt-Tiny (torchvision's module names, construction order and init)."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any

from ... import nn
from ..._core.tensor import Tensor
from ..ops._misc import MLP, Conv2dNormActivation, Permute, StochasticDepth
from ._api import WeightsEnum, _ovewrite_named_param, build, handle_legacy_interface, weights


def _torch() -> Any:
    import torchlike

    return torchlike


class MLPBlock(MLP):
    _version = 2

    def __init__(self, in_dim: int, mlp_dim: int, dropout: float) -> None:
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None, dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    def __init__(self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float, attention_dropout: float,
                 norm_layer: Callable = partial(nn.LayerNorm, eps=1e-6)) -> None:  # fmt: skip
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 3:
            raise AssertionError(f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    def __init__(self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int, mlp_dim: int,
                 dropout: float, attention_dropout: float,
                 norm_layer: Callable = partial(nn.LayerNorm, eps=1e-6)) -> None:  # fmt: skip
        super().__init__()
        self.pos_embedding = nn.Parameter(_torch().empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers: OrderedDict = OrderedDict()
        for i in range(num_layers):
            layers[f"encoder_layer_{i}"] = EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                                                        norm_layer)  # fmt: skip
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 3:
            raise AssertionError(f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    def __init__(self, image_size: int, patch_size: int, num_layers: int, num_heads: int, hidden_dim: int,
                 mlp_dim: int, dropout: float = 0.0, attention_dropout: float = 0.0, num_classes: int = 1000,
                 representation_size: int | None = None,
                 norm_layer: Callable = partial(nn.LayerNorm, eps=1e-6)) -> None:  # fmt: skip
        super().__init__()
        if image_size % patch_size != 0:
            raise AssertionError("Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer
        self.conv_proj = nn.Conv2d(in_channels=3, out_channels=hidden_dim, kernel_size=patch_size, stride=patch_size)
        seq_length = (image_size // patch_size) ** 2
        self.class_token = nn.Parameter(_torch().zeros(1, 1, hidden_dim))
        seq_length += 1
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout, attention_dropout,
                               norm_layer)  # fmt: skip
        self.seq_length = seq_length
        heads_layers: OrderedDict = OrderedDict()
        if representation_size is None:
            heads_layers["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads_layers["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads_layers["act"] = nn.Tanh()
            heads_layers["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads_layers)
        fan_in = self.conv_proj.in_channels * self.conv_proj.kernel_size[0] * self.conv_proj.kernel_size[1]
        nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        if self.conv_proj.bias is not None:
            nn.init.zeros_(self.conv_proj.bias)
        if hasattr(self.heads, "pre_logits") and isinstance(self.heads.pre_logits, nn.Linear):
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / self.heads.pre_logits.in_features))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x: Tensor) -> Tensor:
        n, c, h, w = x.shape
        p = self.patch_size
        if h != self.image_size:
            raise AssertionError(f"Wrong image height! Expected {self.image_size} but got {h}!")
        if w != self.image_size:
            raise AssertionError(f"Wrong image width! Expected {self.image_size} but got {w}!")
        x = self.conv_proj(x)
        return x.reshape(n, self.hidden_dim, (h // p) * (w // p)).permute(0, 2, 1)

    def forward(self, x: Tensor) -> Tensor:
        x = self._process_input(x)
        batch_class_token = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(_torch().cat([batch_class_token, x], dim=1))
        return self.heads(x[:, 0])


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("vit_b_16-c867db91.pth")


def vit_b_16(*, weights: ViT_B_16_Weights | None = None, progress: bool = True, **kwargs: Any) -> VisionTransformer:
    weights = handle_legacy_interface(kwargs, ViT_B_16_Weights) or weights
    if ViT_B_16_Weights.verify(weights) is not None:
        _ovewrite_named_param(kwargs, "image_size", 224)
    image_size = kwargs.pop("image_size", 224)
    return build(lambda **kw: VisionTransformer(image_size, 16, 12, 12, 768, 3072, **kw), ViT_B_16_Weights, weights,
                 progress, kwargs)  # fmt: skip


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x: Tensor) -> Tensor:
        x = x.permute(0, 2, 3, 1)
        x = nn.functional.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim: int, layer_scale: float, stochastic_depth_prob: float,
                 norm_layer: Callable | None = None) -> None:  # fmt: skip
        super().__init__()
        if norm_layer is None:
            norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),
            norm_layer(dim),
            nn.Linear(in_features=dim, out_features=4 * dim, bias=True),
            nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(_torch().ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input: Tensor) -> Tensor:
        result = self.stochastic_depth(self.layer_scale * self.block(input))
        result += input
        return result


class CNBlockConfig:
    def __init__(self, input_channels: int, out_channels: int | None, num_layers: int) -> None:
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers


class ConvNeXt(nn.Module):
    def __init__(self, block_setting: list[CNBlockConfig], stochastic_depth_prob: float = 0.0,
                 layer_scale: float = 1e-6, num_classes: int = 1000, block: Callable | None = None,
                 norm_layer: Callable | None = None, **kwargs: Any) -> None:  # fmt: skip
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        layers: list = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4, stride=4, padding=0,
                                             norm_layer=norm_layer, activation_layer=None, bias=True)]  # fmt: skip
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage: list = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(norm_layer(cnf.input_channels),
                                            nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))  # fmt: skip
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        last_out = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(last_out), nn.Flatten(1), nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.avgpool(self.features(x)))


class ConvNeXt_Tiny_Weights(WeightsEnum):
    IMAGENET1K_V1 = DEFAULT = weights("convnext_tiny-983f1562.pth", resize=236)


def convnext_tiny(*, weights: ConvNeXt_Tiny_Weights | None = None, progress: bool = True, **kwargs: Any) -> ConvNeXt:
    setting = [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 9),
               CNBlockConfig(768, None, 3)]  # fmt: skip
    sd = kwargs.pop("stochastic_depth_prob", 0.1)
    return build(lambda **kw: ConvNeXt(setting, sd, **kw), ConvNeXt_Tiny_Weights, weights, progress, kwargs)
