"""torch.nn.modules.dropout."""

from ._dropout import (
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    _DropoutNd,  # noqa: F401  (importable here, as in torch)
)
from ._paths import set_module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]

set_module(__name__, globals())
