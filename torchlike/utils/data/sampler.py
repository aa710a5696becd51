"""torch.utils.data.sampler (public module path; the classes live in ``_sampler``)."""

from ._sampler import *  # noqa: F401,F403
from ._sampler import __all__  # noqa: F401
