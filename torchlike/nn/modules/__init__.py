"""torch.nn.modules: every layer family, re-exported."""

from ._activation import *  # noqa: F403
from ._adaptive import *  # noqa: F403
from ._attention import *  # noqa: F403
from ._container import *  # noqa: F403
from ._conv import *  # noqa: F403
from ._dropout import *  # noqa: F403
from ._flatten import *  # noqa: F403
from ._lazy import LazyModuleMixin  # noqa: F401
from ._linear import *  # noqa: F403
from ._loss import *  # noqa: F403
from ._module import Module  # noqa: F401
from ._normalization import *  # noqa: F403
from ._padding import *  # noqa: F403
from ._pooling import *  # noqa: F403
from ._rnn import *  # noqa: F403
from ._sparse import *  # noqa: F403
from ._transformer import *  # noqa: F403
from ._vision import *  # noqa: F403


# torch's public module paths (torch.nn.modules.linear, ...); importing them gives the classes those names
from . import activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout  # noqa: E402, F401
from . import flatten, fold, instancenorm, lazy, linear, loss, module, normalization, padding  # noqa: E402, F401
from . import pixelshuffle, pooling, rnn, sparse, transformer, upsampling, utils  # noqa: E402, F401

import types as _types  # noqa: E402

# `from .modules import *` (torchlike.nn) takes the layers, not the path modules above
__all__ = [n for n, v in list(globals().items()) if not n.startswith("_") and not isinstance(v, _types.ModuleType)]
