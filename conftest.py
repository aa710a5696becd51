"""Shared by tests/ and compat_tests/: the test suite never writes into the user's compilation cache.

The persistent cache (torchlike/_cache.py) goes to a temporary folder for the session, so
subprocesses the tests start (examples, workers) share it and it is removed afterwards.
"""

import atexit
import os
import shutil
import tempfile

if "TORCHLIKE_CACHE_DIR" not in os.environ:
    _dir = tempfile.mkdtemp(prefix="torchlike-test-cache-")
    os.environ["TORCHLIKE_CACHE_DIR"] = _dir
    atexit.register(shutil.rmtree, _dir, True)
