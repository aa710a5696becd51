"""Shared by tests/ and compat_tests/: the test suite never writes into the user's compilation cache.

The persistent cache (torchlike/_cache.py) goes to a temporary folder for the session, so
subprocesses the tests start (examples, workers) share it and it is removed afterwards.

Under ``ATEN_CPU_CAPABILITY`` (torch told to use other CPU kernels than the machine's best), real
torch's inductor gets a cache folder of its own for that capability: its on-disk kernel cache does not
key on the capability, and a kernel built for the machine's ISA reused under another one gave garbage
(``torch.compile``'d losses of inf/nan in compat_tests/scripts/compile/compile_model.py).
"""

import atexit
import os
import shutil
import tempfile

if "TORCHLIKE_CACHE_DIR" not in os.environ:
    _dir = tempfile.mkdtemp(prefix="torchlike-test-cache-")
    os.environ["TORCHLIKE_CACHE_DIR"] = _dir
    atexit.register(shutil.rmtree, _dir, True)

if os.environ.get("ATEN_CPU_CAPABILITY") and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _user = os.environ.get("USER") or str(os.getuid())
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(
        tempfile.gettempdir(), f"torchinductor_{_user}_{os.environ['ATEN_CPU_CAPABILITY'].lower()}"
    )


_SLOW_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "slow_tests.txt")


def pytest_collection_modifyitems(config, items):  # noqa: ANN001, ANN201
    """Mark the tests tests/slow_tests.txt lists as slow (measured there), so -m "not slow" is the fast loop."""
    import pytest

    with open(_SLOW_LIST) as f:
        measured = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    for item in items:
        if item.nodeid in measured:
            item.add_marker(pytest.mark.slow)
        if item.nodeid.split("::")[0] in LAZY_PASS_FILES:
            item.add_marker(pytest.mark.lazy)


# The tests the lazy pass (README's second command: -m lazy) runs, the files where lazy mode changes what runs:
# whole scripts, examples and training loops (graphs, flushes, replay), autograd, views, in-place writes,
# indexing through pending values, and torchlike.compile's dispatch inside lazy mode. The per-op cases
# (pointwise, reductions, linear algebra, nn functions in many dtypes) run in the eager pass only: lazy mode
# runs the same op bodies, fused, and the scripts above cover the fusion; process-level tests (workers,
# distributed, caches) set their own mode.
LAZY_PASS_FILES = frozenset((
    "compat_tests/test_scripts.py",
    "compat_tests/test_examples.py",
    "compat_tests/test_replay_torch.py",
    "compat_tests/test_nn_training.py",
    "compat_tests/test_autograd_nodes_torch.py",
    "compat_tests/test_autograd_torch.py",
    "compat_tests/test_graph_shapes.py",
    "compat_tests/test_inplace_activations.py",
    "compat_tests/test_views_aliasing.py",
    "compat_tests/test_ops_indexing.py",
    "tests/test_lazy.py",
    "tests/test_replay.py",
    "tests/test_autograd.py",
    "tests/test_views.py",
    "tests/test_compile_dispatch.py",
    "tests/test_docs_examples.py",
))


def pytest_sessionstart(session):  # noqa: ANN001, ANN201
    """torchlike's "has compiled 32 times" warning counts an op's kernels over the whole process, so it
    would surface in whichever test of a worker compiles the 32nd kernel and break that test's comparison
    of warnings with torch's; the tests of that warning set their own threshold."""
    from torchlike._core import kernel_cache

    kernel_cache.WARN_AFTER = 10**9
