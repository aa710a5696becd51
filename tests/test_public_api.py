"""Every public name of the previous version still exists: names may be added, never removed.

The snapshot (tests/public_api_2235a2c.txt) lists ``dir()`` of the public namespaces at commit
2235a2c, before the op-spec and layering refactor (issue 23). tests/public_api.txt (written by
tests/record_public_api.py) records every public name with its kind and signature, before the
declaration refactor of issue 36: none may be lost or changed."""

from __future__ import annotations

import importlib
import importlib.util
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


def _recorder():
    spec = importlib.util.spec_from_file_location("record_public_api", os.path.join(os.path.dirname(SNAPSHOT), "record_public_api.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_public_name_lost_or_changed():
    """Every name of tests/public_api.txt (namespace, name, kind and signature) is still there, unchanged.
    A deliberate change (a signature made torch's) is recorded with ``python tests/record_public_api.py``."""
    recorder = _recorder()
    now = recorder.surface()
    lost = [f"{s} {n}" for (s, n) in recorder.read() if (s, n) not in now]
    changed = [f"{s} {n}: recorded {d!r}, now {now[(s, n)]!r}" for (s, n), d in recorder.read().items()
               if (s, n) in now and now[(s, n)] != d]  # fmt: skip
    assert not lost, f"public names lost: {lost}"
    assert not changed, "public signatures changed:\n" + "\n".join(changed)


def test_narrow_copy_is_one_op():
    """torch.narrow_copy and Tensor.narrow_copy are the one table op (a composite twin once shadowed it)."""
    from torchlike._ops import registry

    op = registry.OPS["narrow_copy"]
    assert torchlike.narrow_copy._op is op and torchlike.Tensor.narrow_copy._op is op
    x = torchlike.arange(12.0).reshape(3, 4)
    assert torchlike.narrow_copy(x, 1, 1, 2).tolist() == x.narrow_copy(1, 1, 2).tolist() == [[1, 2], [5, 6], [9, 10]]
    out = torchlike.empty(2, 4)
    assert torchlike.narrow_copy(x, 0, 1, 2, out=out) is out and out.tolist() == x[1:].tolist()
    with pytest.raises(RuntimeError, match=r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)\."):
        torchlike.narrow_copy(x, 0, 2, 2)
