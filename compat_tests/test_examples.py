"""Every example prints the same under real torch as under torchlike (reduced steps): compare's reference
run maps the examples' `import torchlike` lines to torch (torchlike/compat/_shim_reference)."""

from pathlib import Path

import pytest

from torchlike.compat import compare_script

pytestmark = pytest.mark.slow  # runs every example under torch and torchlike

EXAMPLES = Path(__file__).parent.parent / "examples"
ARGS = {
    "quickstart.py": ["--steps", "60"],
    "regression.py": ["--epochs", "12"],
    "digits_cnn.py": ["--epochs", "1"],
    "char_transformer.py": ["--steps", "4", "--no-compile", "--no-autocast", "--sample-len", "20"],
    "cifar_resnet.py": ["--steps", "3", "--workers", "2"],
}
NEEDS_TORCHVISION = {"cifar_resnet.py"}


def _torchvision_imports() -> bool:
    try:
        import torchvision  # noqa: F401  (the reference run needs real torchvision)
    except Exception:  # its wheels may not load with this torch build
        return False
    return True


def test_every_example_is_covered():
    assert sorted(ARGS) == sorted(p.name for p in EXAMPLES.glob("*.py"))


# examples that write files take --out; the tests write into a scratch folder, not ./runs/
WRITES_FILES = {"regression.py", "digits_cnn.py"}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", sorted(ARGS))
def test_example_matches_torch(name, tmp_path):
    if name in NEEDS_TORCHVISION and not _torchvision_imports():
        pytest.skip("real torchvision cannot be imported here, so the reference run cannot start")
    args = ARGS[name] + (["--out", str(tmp_path)] if name in WRITES_FILES else [])
    result = compare_script(str(EXAMPLES / name), args, timeout=500)
    assert result.ok, str(result)
