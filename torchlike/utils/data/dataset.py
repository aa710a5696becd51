"""torch.utils.data.dataset (public module path; the classes live in ``_dataset``)."""

from ._dataset import *  # noqa: F401,F403
from ._dataset import __all__  # noqa: F401
