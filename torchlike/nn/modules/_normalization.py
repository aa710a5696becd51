"""BatchNorm1d/2d/3d, InstanceNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from ..._core import dtype as D
from ..._core.tensor import Tensor
from ..._ops import creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from ._lazy import LazyModuleMixin
from ._module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "LazyBatchNorm1d",
           "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d",
           "LazyInstanceNorm3d"]  # fmt: skip


def _register_affine(module: Module, affine: bool, bias: bool, shape: Any, device: Any, dtype: Any) -> None:
    """The per-channel weight (ones) and optional bias (zeros) every norm layer registers, in torch's order."""
    def make(wanted: bool) -> Parameter | None:
        return Parameter(creation.empty(shape, device=device, dtype=dtype)) if wanted else None

    module.register_parameter("weight", make(affine))
    module.register_parameter("bias", make(affine and bias))


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class _NormBase(Module):
    _version = 2
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _register_affine(self, affine, bias, num_features, device, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", creation.zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", creation.ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", creation.tensor(0, dtype=D.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            "{num_features}, eps={eps}, momentum={momentum}, affine={affine}, bias={use_bias}, "
            "track_running_stats={track_running_stats}".format(
                **self.__dict__, use_bias=self.bias is not None
            )
        )

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:  # fmt: skip
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = (
                    self.num_batches_tracked
                    if self.num_batches_tracked is not None
                    else creation.tensor(0, dtype=D.int64)
                )
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)  # fmt: skip


class _BatchNorm(_NormBase):
    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = True if self.training else (self.running_mean is None and self.running_var is None)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_stats else None, self.running_var if use_stats else None,
                            self.weight, self.bias, bn_training, factor, self.eps)  # fmt: skip


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Single-process SyncBatchNorm: without torch.distributed it is BatchNorm, as in torch."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group: Any = None, device: Any = None, dtype: Any = None,
                 *, bias: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _no_batch_dim = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)  # fmt: skip

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:  # fmt: skip
        version = local_metadata.get("version", None)
        if version is None and not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = self.__class__.__name__
                error_msgs.append(
                    "Unexpected running stats buffer(s) {names} for {klass} with track_running_stats=False. If "
                    "state_dict is a checkpoint saved before 0.4.0, this may be expected because {klass} does not "
                    "track running stats by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in {klass} to enable "
                    "them. See the documentation of {klass} for details.".format(
                        names=" and ".join(f'"{k}"' for k in keys), klass=klass
                    )
                )
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)  # fmt: skip

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), but "
                    f"got: {input.size(feature_dim)}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by not "
                "passing in num_features, which is not used because affine=False",
                stacklevel=2,
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    _no_batch_dim = 2

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class InstanceNorm2d(_InstanceNorm):
    _no_batch_dim = 3

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (3, 4):
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class InstanceNorm3d(_InstanceNorm):
    _no_batch_dim = 4

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in (4, 5):
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """BatchNorm/InstanceNorm whose num_features is the first input's dim 1."""

    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:  # fmt: skip
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = creation.tensor(0, dtype=D.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        for name in ("weight", "bias", "running_mean", "running_var"):
            t = getattr(self, name)
            if t is not None:
                t.materialize((self.num_features,))
        self.reset_parameters()


def _lazy_norm(name: str, base: type, becomes: type) -> type:
    return type(name, (_LazyNormBase, base), {"cls_to_become": becomes, "__module__": __name__,
                                              "_check_input_dim": becomes._check_input_dim,
                                              "_no_batch_dim": getattr(becomes, "_no_batch_dim", None)})  # fmt: skip


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", _BatchNorm, BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", _BatchNorm, BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", _BatchNorm, BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", _InstanceNorm, InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", _InstanceNorm, InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", _InstanceNorm, InstanceNorm3d)


def _shape(normalized_shape: Any) -> tuple:
    if isinstance(normalized_shape, numbers.Integral):
        return (int(normalized_shape),)
    return tuple(normalized_shape)


class LayerNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, elementwise_affine, bias, self.normalized_shape, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, bias={use_bias}".format(
                **self.__dict__, use_bias=self.bias is not None
            )
        )


class GroupNorm(Module):
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None, *, bias: bool = True) -> None:  # fmt: skip
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _register_affine(self, affine, bias, num_channels, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None
        )


class RMSNorm(Module):
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(creation.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(
            **self.__dict__
        )


class LocalResponseNorm(Module):
    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
