"""Conv1d/2d/3d and ConvTranspose1d/2d/3d."""

from __future__ import annotations

import marshal
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

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]  # fmt: skip


def _ntuple(x: Any, n: int) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,) * n


def _reverse_repeat_tuple(t: tuple, n: int) -> tuple:
    return tuple(x for x in reversed(t) for _ in range(n))


def _literal_set(*items: str) -> set[str]:
    """The set torch's code gets from the literal ``{items...}``, iterated in the same order.

    Where two hashes collide, a set's iteration order depends on the order of insertion, so the
    order a message prints changes with PYTHONHASHSEED. CPython 3.11 compiles a literal of three
    or more constants into a frozenset constant, which the bytecode cache stores sorted by
    marshalled bytes; torch's module, loaded from its cache, inserts the items in that order
    (a two-item literal, in source order). Inserting them in the same order here prints the same
    message as torch under any hash seed.
    """
    ordered = sorted(items, key=marshal.dumps) if len(items) > 2 else items
    return set(frozenset(ordered))


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]  # fmt: skip

    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: tuple, padding: Any,
                 dilation: tuple, transposed: bool, output_padding: tuple, groups: int, bias: bool,
                 padding_mode: str, device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_strings = _literal_set("same", "valid")
        if isinstance(padding, str):
            if padding not in valid_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_modes = _literal_set("zeros", "reflect", "replicate", "circular")
        if padding_mode not in valid_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i] = total // 2
                    rev[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = list(_reverse_repeat_tuple(self.padding, 2))
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(creation.empty(shape + tuple(kernel_size), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(creation.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with no_grad():
            init.kaiming_uniform_(self.weight, a=math.sqrt(5))
            if self.bias is not None:
                fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
                bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _n = 2
    _fn: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        n = self._n
        padding_ = padding if isinstance(padding, str) else _ntuple(padding, n)
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n), padding_,
                         _ntuple(dilation, n), False, _ntuple(0, n), groups, bias, padding_mode, device, dtype)  # fmt: skip

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return fn(padded, weight, bias, self.stride, _ntuple(0, self._n), self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _n = 1
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    _n = 2
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _n = 3
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _n = 2
    _fn: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        n = self._n
        super().__init__(in_channels, out_channels, _ntuple(kernel_size, n), _ntuple(stride, n), _ntuple(padding, n),
                         _ntuple(dilation, n), True, _ntuple(output_padding, n), groups, bias, padding_mode,
                         device, dtype)  # fmt: skip

    def _output_padding(self, input: Tensor, output_size: Any, stride: Any, padding: Any, kernel_size: Any,
                        num_spatial_dims: int, dilation: Any = None) -> list:  # fmt: skip
        if output_size is None:
            return list(self.output_padding)
        has_batch = input.dim() == num_spatial_dims + 2
        non_spatial = 2 if has_batch else 1
        output_size = list(output_size)
        if len(output_size) == non_spatial + num_spatial_dims:
            output_size = output_size[non_spatial:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have "
                f"{num_spatial_dims} or {non_spatial + num_spatial_dims} elements (got {len(output_size)})"
            )
        mins, maxs = [], []
        for d in range(num_spatial_dims):
            size = ((input.size(d + non_spatial) - 1) * stride[d] - 2 * padding[d]
                    + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)  # fmt: skip
            mins.append(size)
            maxs.append(size + stride[d] - 1)
        for size, lo, hi in zip(output_size, mins, maxs):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {mins} to {maxs} (for an "
                    f"input of {input.size()[2:]})"
                )
        return [output_size[d] - mins[d] for d in range(num_spatial_dims)]

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {self.__class__.__name__}")
        opad = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, self._n,
                                    self.dilation)  # fmt: skip
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, opad, self.groups,
                              self.dilation)  # fmt: skip


class ConvTranspose1d(_ConvTransposeNd):
    _n = 1
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _n = 2
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _n = 3
    _fn = staticmethod(F.conv_transpose3d)


class _LazyConvXdMixin(LazyModuleMixin):
    """Conv/ConvTranspose whose in_channels is the first input's channel dim."""

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
        else:
            self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        no_batch = self._n + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(
                f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to {self.__class__.__name__}, "
                f"but got input of size: {input.shape}"
            )
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _get_num_spatial_dims(self) -> int:
        return self._n

    def _make_lazy(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device, dtype)
        self._make_lazy(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation, padding_mode,
                         device, dtype)  # fmt: skip
        self._make_lazy(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
