"""Every public name of the previous version still exists: names may be added, never removed.

The snapshot (tests/public_api_2235a2c.txt) lists ``dir()`` of the public namespaces at commit
2235a2c, before the op-spec and layering refactor (issue 23)."""

from __future__ import annotations

import importlib
import os

import pytest

import torchlike

SNAPSHOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "public_api_2235a2c.txt")


def _snapshot() -> dict[str, list[str]]:
    names: dict[str, list[str]] = {}
    with open(SNAPSHOT, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                space, name = line.split()
                names.setdefault(space, []).append(name)
    return names


@pytest.mark.parametrize("space", sorted(_snapshot()))
def test_no_public_name_removed(space):
    obj = torchlike.Tensor if space == "torchlike.Tensor" else importlib.import_module(space)
    missing = [n for n in _snapshot()[space] if not hasattr(obj, n)]
    assert not missing, f"{space} lost public names: {missing}"
