"""Stands in for `torch` in child processes of `python -m torchlike run`: installs the alias.

After `install()`, `sys.modules['torch']` is torchlike, and the import system hands that to the
importer instead of this module.
"""

import sys

import torchlike.compat

del sys.modules[__name__]  # so install() does not mistake this stand-in for a real torch to restore later
torchlike.compat.install()
