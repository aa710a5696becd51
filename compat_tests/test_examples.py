"""Every example runs unmodified under real torch too, with the same printed output (reduced steps)."""

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
}


def test_every_example_is_covered():
    assert sorted(ARGS) == sorted(p.name for p in EXAMPLES.glob("*.py"))


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", sorted(ARGS))
def test_example_matches_torch(name):
    result = compare_script(str(EXAMPLES / name), ARGS[name], timeout=500)
    assert result.ok, str(result)
