"""torch.autograd: backward, grad, grad modes."""

from .engine import backward, grad
from .grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]
