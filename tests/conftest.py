"""Unit tests run torchlike alone (never real torch)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def pytest_terminal_summary(terminalreporter):
    """Say how many docs code blocks tests/test_docs.py ran (counted from the reports, so with -n too)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs"))
    from doc_blocks import summary

    line = summary(terminalreporter.stats, "test_doc_block", "ran under torchlike")
    if line:
        terminalreporter.write_line(line)
