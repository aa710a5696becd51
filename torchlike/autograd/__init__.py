"""torch.autograd: backward, grad, grad modes, custom Functions, functional transforms."""

import sys as _sys

from .._core import grad_mode, graph
from . import _tensor  # noqa: F401 -- attaches Tensor.backward, grad_fn and the hook methods
from . import functional, profiler
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
                           set_detect_anomaly)  # fmt: skip
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .._core.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (the functions shadow the module, as in torch)

# torch.autograd.graph and torch.autograd.grad_mode are the tape and the grad modes, which sit in _core below the
# op table; they are importable under torch's paths as the same module objects.
_sys.modules[__name__ + ".graph"], _sys.modules[__name__ + ".grad_mode"] = graph, grad_mode

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "Function",
           "FunctionCtx", "once_differentiable", "functional", "graph", "Variable", "detect_anomaly",
           "set_detect_anomaly", "gradcheck", "gradgradcheck"]  # fmt: skip


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from .._core.tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """torch.autograd.Variable (deprecated in torch): ``Variable(t)`` returns the tensor itself."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if requires_grad:
            data.requires_grad_(True)
        return data


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
