"""The public surface of torchlike: every public name of the namespaces below, with its kind and signature.

    python tests/record_public_api.py        # rewrites tests/public_api.txt

tests/test_public_api.py compares the running code against the recorded file: a recorded name that is
gone, or whose signature changed, fails; a new name passes (record it by running this script). Run it
in a fresh process, so that only what ``import torchlike`` loads is recorded."""

from __future__ import annotations

import __future__
import importlib
import inspect
import os
import re
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "tests", "public_api.txt")

SPACES = (
    "torchlike", "torchlike.Tensor", "torchlike.nn", "torchlike.nn.functional", "torchlike.nn.init", "torchlike.linalg",
    "torchlike.special", "torchlike.fft", "torchlike.masked", "torchlike.optim", "torchlike.optim.lr_scheduler",
    "torchlike.autograd", "torchlike.autograd.graph", "torchlike.autograd.grad_mode", "torchlike.autograd.function",
    "torchlike.random", "torchlike.amp", "torchlike.cuda", "torchlike.func", "torchlike.nn.utils",
    "torchlike.utils.data", "torchlike.distributions",
)  # fmt: skip

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_MODULE_FILE = re.compile(r" from '[^']*'>")  # a module default's repr names its file: machine-specific


def _space(space: str) -> object:
    if space == "torchlike.Tensor":
        import torchlike

        return torchlike.Tensor
    return importlib.import_module(space)


def _describe(obj: object, owner: object = None, name: str = "") -> str:
    """'kind signature' of a public object: what a user relies on when calling it."""
    if isinstance(obj, types.ModuleType):
        return "module"
    if owner is not None and isinstance(inspect.getattr_static(owner, name, None), property):
        return "property"
    kind = "class" if isinstance(obj, type) else "function" if callable(obj) else type(obj).__name__
    if not callable(obj):
        return kind
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        sig = "(?)"
    return f"{kind} {_MODULE_FILE.sub('>', _ADDRESS.sub('', sig))}"


def surface() -> dict[tuple[str, str], str]:
    """``{(namespace, name): 'kind signature'}`` of every public name; for ``Tensor`` also its operators."""
    out = {}
    for space in SPACES:
        obj = _space(space)
        for name in dir(obj):
            public = not name.startswith("_") or (space == "torchlike.Tensor" and name.startswith("__")
                                                  and name in vars(obj) and name not in vars(object))  # fmt: skip
            value = getattr(obj, name, None)
            if not public or isinstance(value, __future__._Feature):
                continue
            out[(space, name)] = _describe(value, obj if isinstance(obj, type) else None, name)
    return out


def read(path: str = RECORD) -> dict[tuple[str, str], str]:
    recorded = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                space, name, desc = line.rstrip("\n").split(" ", 2)
                recorded[(space, name)] = desc
    return recorded


def main() -> None:
    sys.path.insert(0, ROOT)
    lines = [f"{space} {name} {desc}\n" for (space, name), desc in sorted(surface().items())]
    with open(RECORD, "w", encoding="utf-8") as f:
        f.write("# The public surface (tests/test_public_api.py): '<namespace> <name> <kind> <signature>'. "
                "Regenerate with: python tests/record_public_api.py\n")  # fmt: skip
        f.writelines(lines)
    print(f"wrote {len(lines)} names to {os.path.relpath(RECORD, ROOT)}")


if __name__ == "__main__":
    main()
