"""Every Python code block of README.md and docs/*.md runs under torchlike (docs/doc_blocks.py has the
rules: `no-run` blocks are shown only; blocks importing `torch` run through the import alias).

compat_tests/test_docs_torch.py runs the blocks that are plain torch code under real torch as well
and compares their output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))

import doc_blocks  # noqa: E402 - docs/ is not a package
from doc_blocks import missing_optional, python_blocks, read_blocks, run_block  # noqa: E402 - as above

BLOCKS = python_blocks()


def test_docs_have_code_blocks() -> None:
    files = {b.path for b in BLOCKS if b.runs}
    assert "README.md" in files and len(files) > 5, files


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block, tmp_path: Path) -> None:
    if not block.runs:
        pytest.skip("marked no-run")
    try:
        run_block(block, tmp_path, alias=block.plain_torch)
    except Exception as e:
        package = missing_optional(e)
        if package is None:
            raise
        pytest.skip(f"needs {package}, which is not installed")


_PAGE = """# A page

```python
import torch
print(torch.ones(1))
```

````python no-run
```python
nested fence: shown, never run
```
````

~~~py
import torchlike
~~~

```python
from torchvision import transforms
```

```bash
echo not python
```
"""


def test_read_blocks_rules(tmp_path: Path) -> None:
    (tmp_path / "page.md").write_text(_PAGE)
    blocks = read_blocks(tmp_path / "page.md", tmp_path)
    assert [(b.id, b.language, b.runs, b.plain_torch) for b in blocks] == [
        ("page.md:4", "python", True, True),
        ("page.md:9", "python", False, False),
        ("page.md:15", "py", True, False),
        ("page.md:19", "python", True, True),
        ("page.md:23", "bash", False, False),
    ]
    assert blocks[1].code == "```python\nnested fence: shown, never run\n```\n"
    assert run_block(blocks[0], tmp_path, alias=True) == "tensor([1.])\n"


def test_missing_optional_packages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doc_blocks.importlib.util, "find_spec", lambda name: None)
    assert missing_optional(ModuleNotFoundError("No module named 'PIL'", name="PIL.Image")) == "Pillow"
    assert missing_optional(ModuleNotFoundError("No module named 'scipy'", name="scipy")) is None
    assert missing_optional(ValueError("PIL")) is None
    monkeypatch.setattr(doc_blocks.importlib.util, "find_spec", lambda name: object())  # installed: a real error
    assert missing_optional(ModuleNotFoundError("No module named 'PIL.x'", name="PIL")) is None


def test_every_page_is_linked() -> None:
    """Each docs page is reachable from the docs index, the README and the mkdocs nav."""
    root = Path(__file__).resolve().parents[1]
    index = (root / "docs" / "index.md").read_text()
    readme = (root / "README.md").read_text()
    nav = (root / "mkdocs.yml").read_text()
    for page in sorted((root / "docs").glob("*.md")):
        if page.name == "index.md":
            continue
        assert f"({page.name}" in index, f"docs/index.md does not link {page.name}"
        assert f"(docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
        assert f": {page.name}" in nav, f"mkdocs.yml's nav lacks {page.name}"
