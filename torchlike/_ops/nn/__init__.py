"""torch.nn.functional's implementation, one file per family: ``<family>.py`` holds the table kernels (``defop``)
and the functions torch also has at top level; ``<family>_functional.py`` holds torch's argument handling around
them for ``nn.functional`` only. Importing this package registers them all; ``torchlike.nn.functional`` and the
top-level namespace are generated from the table (``torchlike._ops.names``)."""

from . import activation, dropout, layers, loss, native, rnn, vision  # noqa: F401  (kernels first)
from . import activation_functional, attention, layers_functional, loss_functional, vision_functional  # noqa: F401
