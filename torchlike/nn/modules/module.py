"""torch.nn.modules.module."""

from ._module import (  # noqa: F401  (importable here, as in torch)
    Module,
    _IncompatibleKeys,
    _WrappedHook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from ._paths import set_module

__all__ = [
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
    "Module",
]

set_module(__name__, globals())
