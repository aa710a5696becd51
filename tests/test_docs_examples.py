"""docs/examples.md's printed outputs are what the examples print today (docs/examples_output.py
writes them; this fails when one goes stale). Numbers compare as `python -m torchlike compare` does;
char_transformer's sampled text is left out (a flipped last bit picks another character)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from torchlike.compat import lines_match

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))

import examples_output  # noqa: E402 - docs/ is not a package

pytestmark = pytest.mark.slow  # each runs a whole example

PAGE = Path(examples_output.PAGE).read_text(encoding="utf-8")


def test_every_example_has_a_generated_output() -> None:
    names = {p.stem for p in (Path(examples_output.ROOT) / "examples").glob("*.py")}
    assert set(examples_output.blocks(PAGE)) == names == set(examples_output.EXAMPLES)


def _compared(text: str) -> list[str]:
    lines = text.splitlines()
    return lines[: lines.index("sample:")] if "sample:" in lines else lines


@pytest.mark.timeout(1300)
@pytest.mark.parametrize("name", sorted(examples_output.EXAMPLES))
def test_documented_output_is_current(name: str) -> None:
    if os.environ.get("TORCHLIKE_LAZY") == "1":
        pytest.skip("the page shows the CPU default (eager) and runs it so itself: checked in the eager pass")
    documented = _compared(examples_output.blocks(PAGE)[name])
    fresh = _compared(examples_output.shown(name, examples_output.run(name)))
    assert len(documented) == len(fresh) and all(lines_match(a, b) for a, b in zip(documented, fresh)), (
        f"docs/examples.md's {name} output is stale: run python docs/examples_output.py\n"
        + "\n".join(f"- {a}\n+ {b}" for a, b in zip(documented, fresh) if not lines_match(a, b))
    )
