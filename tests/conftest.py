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


def pytest_terminal_summary(terminalreporter):
    """Say how many docs code blocks tests/test_docs.py ran (counted from the reports, so with -n too)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs"))
    from doc_blocks import summary

    line = summary(terminalreporter.stats, "test_doc_block", "ran under torchlike")
    if line:
        terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _strict_dtype_promotion():
    with jax.numpy_dtype_promotion("strict"):
        yield
