"""torch.distributed.checkpoint.state_dict (implementation in ``_state_dict.py``)."""

from ._state_dict import (  # noqa: F401
    StateDictOptions,
    get_model_state_dict,
    get_optimizer_state_dict,
    get_state_dict,
    set_model_state_dict,
    set_optimizer_state_dict,
    set_state_dict,
)  # fmt: skip
