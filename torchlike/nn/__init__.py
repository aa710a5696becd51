"""torch.nn."""

from . import (  # noqa: F401
    functional,
    init,
    parallel,  # noqa: E402,F401
    parameter,
    utils,
)
from .modules import *  # noqa: F403
from .modules import Module  # noqa: F401
from .modules._module import (  # noqa: F401
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from .parallel import DataParallel  # noqa: E402,F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)
