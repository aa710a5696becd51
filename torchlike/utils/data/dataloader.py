"""torch.utils.data.dataloader (public module path; the classes live in ``_dataloader``)."""

from ._dataloader import *  # noqa: F401,F403
from ._dataloader import __all__  # noqa: F401
from ._fetch import _DatasetKind  # noqa: F401
