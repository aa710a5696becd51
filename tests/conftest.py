"""Unit tests run torchlike alone (never real torch).

Each test here runs with JAX's strict dtype promotion (as equinox's tests do): every dtype must be
decided by torchlike's own promotion code, so a JAX op that mixes dtypes inside torchlike raises
instead of promoting by JAX's rules. It is a per-test context, not a global flag, so compat_tests
collected in the same session keep JAX's standard rules."""

import os
import sys

import jax
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def _strict_dtype_promotion():
    with jax.numpy_dtype_promotion("strict"):
        yield
