"""Static API coverage: which `torch.*` names a script uses, and whether torchlike provides them."""

from __future__ import annotations

import ast
import importlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from torchlike.compat._names import torchlike_name


@dataclass
class NameUse:
    """A `torch.*` name, where it is used, and whether torchlike has it."""

    name: str
    uses: list[tuple[str, int]] = field(default_factory=list)  # (file, line)
    provided: bool | None = None  # None: could not tell (see `error`)
    error: str = ""


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` -> ['a', 'b', 'c']; None for anything but a plain attribute chain on a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


def _imports(tree: ast.AST) -> tuple[dict[str, str], list[tuple[str, int]]]:
    """Names bound to torch modules/objects by imports (`import torch.nn as nn`, `from torch import
    optim`), and the imported names themselves as uses."""
    bindings: dict[str, str] = {}
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_torch(alias.name):
                    found.append((alias.name, node.lineno))
                    # `import torch.nn` binds `torch`; `import torch.nn as nn` binds `nn`
                    bindings[alias.asname or "torch"] = alias.name if alias.asname else "torch"
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module and _is_torch(node.module):
            for alias in node.names:
                full = node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                found.append((full, node.lineno))
                if alias.name != "*":
                    bindings[alias.asname or alias.name] = full
    return bindings, found


def torch_names(source: str, filename: str = "<script>") -> list[tuple[str, int]]:
    """Every `torch.*` name used in `source`, with its line, sorted by line.

    Scopes are not tracked: a name bound to torch by an import anywhere counts everywhere, which is
    how scripts use these names. Methods called on tensors are not seen (their type is not static).
    """
    tree = ast.parse(source, filename=filename)
    bindings, found = _imports(tree)
    # Only the outermost node of a chain counts: `torch.nn.functional.relu` contains `torch.nn`.
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or id(node) in inner:
            continue
        parts = _dotted(node)
        if parts is None or parts[0] not in bindings:
            continue
        dunder = next((i for i, p in enumerate(parts) if p.startswith("__")), len(parts))
        found.append((".".join([bindings[parts[0]], *parts[1 : dunder + 1]]), node.lineno))
    return sorted(found, key=lambda x: x[1])


# method names of builtin types: a call like `names.index(x)` says nothing about tensors
_BUILTIN_METHODS = frozenset(n for t in (list, dict, set, str, bytes, tuple, int, float) for n in dir(t))


def tensor_method_names(source: str, filename: str = "<script>") -> list[tuple[str, int]]:
    """`torch.Tensor.<m>` for every call `<expr>.<m>(...)` where `m` is a method of torch.Tensor (the
    shipped list of torch's names) and of no builtin type, with its line, sorted by line.

    The receiver's type is not known statically, so this over-reports: a call on any object with a
    tensor method's name counts. Calls on names bound to torch modules are left to `torch_names`.
    """
    from torchlike.compat._torch_tensor_methods import TORCH_TENSOR_METHODS

    tree = ast.parse(source, filename=filename)
    bindings, _ = _imports(tree)
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        attr = node.func.attr
        if attr not in TORCH_TENSOR_METHODS or attr in _BUILTIN_METHODS:
            continue
        parts = _dotted(node.func.value)
        if parts is not None and parts[0] in bindings:
            continue  # torch.add(...), F.relu(...): a torch name, not a method
        found.append((f"torch.Tensor.{attr}", node.lineno))
    return sorted(found, key=lambda x: x[1])


def lookup(name: str) -> tuple[bool | None, str]:
    """Whether torchlike provides the torch name `name`, importing submodules along the path as
    `import torch.x.y` would. Returns (provided, error); provided is None when the check failed."""
    parts = torchlike_name(name).split(".")
    try:
        obj = importlib.import_module(parts[0])
        for part in parts[1:]:
            if hasattr(obj, part):
                obj = getattr(obj, part)
                continue
            if not hasattr(obj, "__path__"):  # not a package: nothing more to import
                return False, ""
            submodule = f"{obj.__name__}.{part}"
            try:
                obj = importlib.import_module(submodule)
            except ModuleNotFoundError as e:
                if e.name == submodule:
                    return False, ""
                raise
    except Exception as e:  # a broken torchlike module is reported, not fatal
        return None, f"{type(e).__name__}: {e}"
    return True, ""


def scan(paths: Iterable[str | os.PathLike[str]]) -> tuple[dict[str, NameUse], list[str]]:
    """Collect torch names over scripts (directories are searched for `*.py`); returns the names
    and a list of files that could not be parsed."""
    names: dict[str, NameUse] = {}
    errors: list[str] = []
    for file in _files(paths):
        try:
            source = Path(file).read_text(encoding="utf-8")
            found = torch_names(source, str(file)) + tensor_method_names(source, str(file))
        except (OSError, SyntaxError, UnicodeDecodeError) as e:
            errors.append(f"{file}: {type(e).__name__}: {e}")
            continue
        for name, line in found:
            names.setdefault(name, NameUse(name)).uses.append((str(file), line))
    for use in names.values():
        use.provided, use.error = lookup(use.name)
    return dict(sorted(names.items())), errors


def _files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def format_coverage(names: dict[str, NameUse], errors: list[str]) -> str:
    """A terminal report: one row per name, missing ones first, then a summary line."""
    width = max((len(n) for n in names), default=0)
    rows = sorted(names.values(), key=lambda u: (u.provided is not False, u.provided is None, u.name))
    lines = []
    for use in rows:
        status = {True: "ok", False: "MISSING", None: "unknown"}[use.provided]
        where = ", ".join(f"{os.path.basename(f)}:{line}" for f, line in use.uses[:4])
        more = f" (+{len(use.uses) - 4} more)" if len(use.uses) > 4 else ""
        note = f"  [{use.error}]" if use.error else ""
        lines.append(f"{status:8} {use.name:{width}}  {where}{more}{note}")
    lines += [f"could not read {e}" for e in errors]
    lines.append(coverage_summary(names))
    return "\n".join(lines)


def coverage_summary(names: dict[str, NameUse]) -> str:
    provided = sum(u.provided is True for u in names.values())
    missing = sum(u.provided is False for u in names.values())
    unknown = len(names) - provided - missing
    text = f"{len(names)} torch names used: {provided} provided by torchlike, {missing} missing"
    return text + (f", {unknown} unknown" if unknown else "")


def coverage_json(names: dict[str, NameUse], errors: list[str]) -> dict:
    return {
        "names": {
            n: {
                "provided": u.provided,
                "uses": [{"file": f, "line": line} for f, line in u.uses],
                "error": u.error,
            }
            for n, u in names.items()
        },
        "summary": {
            "total": len(names),
            "provided": sum(u.provided is True for u in names.values()),
            "missing": sum(u.provided is False for u in names.values()),
            "unknown": sum(u.provided is None for u in names.values()),
        },
        "errors": errors,
    }
