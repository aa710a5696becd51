"""torch.nn."""

from . import functional, init, parameter, utils  # noqa: F401
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from .modules._module import (  # noqa: F401
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from . import parallel  # noqa: E402,F401
from .parallel import DataParallel  # noqa: E402,F401
