"""torchvision.ops.misc building blocks and stochastic depth (module names and init as torchvision's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ... import nn
from ..._core.tensor import Tensor


class ConvNormActivation(nn.Sequential):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any = 3, stride: Any = 1,
                 padding: Any = None, groups: int = 1, norm_layer: Callable | None = nn.BatchNorm2d,
                 activation_layer: Callable | None = nn.ReLU, dilation: Any = 1, inplace: bool | None = True,
                 bias: bool | None = None, conv_layer: Callable = nn.Conv2d) -> None:  # fmt: skip
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                n = len(kernel_size) if isinstance(kernel_size, Sequence) else len(dilation)
                ks = kernel_size if isinstance(kernel_size, Sequence) else [kernel_size] * n
                dl = dilation if isinstance(dilation, Sequence) else [dilation] * n
                padding = tuple((ks[i] - 1) // 2 * dl[i] for i in range(n))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                             groups=groups, bias=bias)]  # fmt: skip
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels


class Conv2dNormActivation(ConvNormActivation):
    """Conv2d, then norm_layer, then activation_layer (keys ``0``, ``1``, ``2``)."""


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels: int, squeeze_channels: int, activation: Callable = nn.ReLU,
                 scale_activation: Callable = nn.Sigmoid) -> None:  # fmt: skip
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input: Tensor) -> Tensor:
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input: Tensor) -> Tensor:
        return self._scale(input) * input


class MLP(nn.Sequential):
    def __init__(self, in_channels: int, hidden_channels: list[int], norm_layer: Callable | None = None,
                 activation_layer: Callable | None = nn.ReLU, inplace: bool | None = None, bias: bool = True,
                 dropout: float = 0.0) -> None:  # fmt: skip
        params = {} if inplace is None else {"inplace": inplace}
        layers: list = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
            in_dim = hidden_dim
        layers.append(nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    def __init__(self, dims: list[int]) -> None:
        super().__init__()
        self.dims = dims

    def forward(self, x: Tensor) -> Tensor:
        return x.permute(self.dims)


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Drops whole rows (``mode='row'``) or the batch with probability ``p``, one bernoulli_ draw per row."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if mode not in ["batch", "row"]:
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode}")
    if not training or p == 0.0:
        return input
    import torchlike

    survival_rate = 1.0 - p
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = torchlike.empty(size, dtype=input.dtype, device=input.device).bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class StochasticDepth(nn.Module):
    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p}, mode={self.mode})"
