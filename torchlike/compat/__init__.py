"""Running torch scripts on torchlike: the `torch` import alias, run-both-and-compare, API coverage.

Command line: ``python -m torchlike run|compare|coverage|env`` (see docs/compat_tools.md).
"""

from torchlike.compat._alias import install, is_installed, uninstall
from torchlike.compat._names import missing_attribute_error
from torchlike.compat._compare import CompareResult, RunResult, compare_script, find_scripts
from torchlike.compat._coverage import NameUse, lookup, scan, torch_names
from torchlike.compat._lines import Divergence, first_divergence, lines_match
from torchlike.compat._run import run_module, run_script

__all__ = [
    "CompareResult",
    "Divergence",
    "NameUse",
    "RunResult",
    "compare_script",
    "find_scripts",
    "first_divergence",
    "install",
    "is_installed",
    "lines_match",
    "lookup",
    "missing_attribute_error",
    "run_module",
    "run_script",
    "scan",
    "torch_names",
    "uninstall",
]
