"""Unit tests run torchlike alone (never real torch).

JAX runs with strict dtype promotion here (as equinox's tests do): every dtype must be decided by
torchlike's own promotion code, so a JAX op that mixes dtypes inside torchlike raises instead of
promoting by JAX's rules."""

import os
import sys

import jax

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
jax.config.update("jax_numpy_dtype_promotion", "strict")
