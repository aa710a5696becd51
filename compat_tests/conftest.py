"""Compat tests import both real torch and torchlike and compare them."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:  # torch's intra-op threads fight JAX and the other test worker for the cores; one is faster here
    import torch

    torch.set_num_threads(1)
except ImportError:
    pass


def pytest_terminal_summary(terminalreporter):
    """Say how many docs code blocks test_docs_torch.py compared (counted from the reports, so with -n too)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs"))
    from doc_blocks import summary

    line = summary(terminalreporter.stats, "test_doc_block_matches_torch", "compared with torch")
    if line:
        terminalreporter.write_line(line)
