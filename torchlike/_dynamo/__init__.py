"""torch._dynamo: the config and reset that scripts touch."""

from .._compile import reset  # noqa: F401
from .._compile._runtime import config  # noqa: F401
from .._compile._runtime import Unsupported as _Unsupported


class exc:
    Unsupported = _Unsupported


def mark_dynamic(t, index, min=None, max=None):  # noqa: A002 - torch's names
    """Accepted: torchlike specialises on shapes and recompiles for new ones."""


def mark_static(t, index=None):
    pass
