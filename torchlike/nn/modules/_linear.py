"""Identity, Linear, Bilinear."""

from __future__ import annotations

import math
from typing import Any

from ..._core.tensor import Tensor
from ..._ops import creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from ._lazy import LazyModuleMixin
from ._module import Module

__all__ = ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear", "LazyLinear"]


class Identity(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """torch.nn.Linear: y = x W^T + b, one op (AddmmBackward0 for 2-D inputs)."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(creation.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    pass


class Bilinear(Module):
    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            creation.empty((out_features, in1_features, in2_features), device=device, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class LazyLinear(LazyModuleMixin, Linear):
    """torch.nn.LazyLinear: a Linear whose in_features is the first input's last dim."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
