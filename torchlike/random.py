"""torch.random: seeding and generator state."""

from ._ops.random import (  # noqa: F401
    Generator,
    default_generator,
    fork_rng,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
)  # fmt: skip

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng", "Generator",
           "default_generator"]  # fmt: skip
