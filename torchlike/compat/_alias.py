"""The `torch` import alias: `import torch...` resolves to the matching `torchlike...` module object."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import threading
import types

from ._names import _EXTRA, _TORCH, _TORCHLIKE, _under, torch_name, torchlike_name

_lock = threading.Lock()
_finder: _AliasFinder | None = None
_saved: dict[str, types.ModuleType] = {}  # modules under torch's names before install(), restored after


def _is_aliased(name: str) -> bool:
    return _under(name, _TORCH) or any(_under(name, theirs) for theirs in _EXTRA)


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system the already-imported torchlike module instead of a new one."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        # A throwaway placeholder: the import system writes `__spec__` etc. into what this returns,
        # and torchlike's own module must keep its own.
        return types.ModuleType(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system returns whatever sys.modules holds under the name after exec_module.
        sys.modules[module.__name__] = self.module
        _rename_classes(self.module)


_renamed: list[tuple[type, str]] = []  # classes whose __module__ install() changed, with the old name


def _rename_classes(module: types.ModuleType) -> None:
    """Under the alias, classes of torchlike's public modules name torch's module, so `type(x)` and
    reprs read `<class 'torch.nn.modules.linear.Linear'>` as under torch."""
    name = getattr(module, "__name__", "") or ""
    if not name.startswith(_TORCHLIKE + ".") or any(p.startswith("_") for p in name.split(".")):
        return
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == name:
            _renamed.append((value, name))
            value.__module__ = torch_name(name)


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not _is_aliased(fullname):
            return None
        real_name = torchlike_name(fullname)
        try:
            module = importlib.import_module(real_name)
        except ModuleNotFoundError as e:
            if e.name != real_name:
                raise  # something torchlike itself imports is missing: show that error
            raise ModuleNotFoundError(
                f"No module named '{fullname}' (torchlike does not provide {fullname} yet)", name=fullname
            ) from None
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_package)


def install() -> None:
    """Make `import torch` (and every `torch.x.y`) resolve to torchlike in this process.

    Takes precedence over a real torch installation, including one already imported: its modules
    are set aside and put back by `uninstall()`. Calling it twice is harmless.
    """
    global _finder
    with _lock:
        if _finder is not None:
            return
        import torchlike

        for name in [n for n in sys.modules if _is_aliased(n)]:
            module = sys.modules.pop(name)
            if not (getattr(module, "__name__", "") or "").startswith(_TORCHLIKE):
                _saved[name] = module
        _finder = _AliasFinder()
        sys.meta_path.insert(0, _finder)
        sys.modules[_TORCH] = torchlike
        # Submodules torchlike has already imported are aliased now, so `sys.modules` agrees
        # with attribute access (`torch.nn is sys.modules['torch.nn']`).
        for name, module in list(sys.modules.items()):
            if name.startswith(_TORCHLIKE + "."):
                sys.modules[torch_name(name)] = module
                _rename_classes(module)
        # `type(t)` reads <class 'torch.Tensor'> as under torch (`torch` now resolves to torchlike).
        torchlike.Tensor.__module__ = _TORCH


def uninstall() -> None:
    """Undo `install()`: drop the alias and restore whatever `torch` modules were there before."""
    global _finder
    with _lock:
        if _finder is None:
            return
        if _finder in sys.meta_path:
            sys.meta_path.remove(_finder)
        import torchlike

        torchlike.Tensor.__module__ = "torchlike"
        for cls, name in _renamed:
            cls.__module__ = name
        _renamed.clear()
        _finder = None
        for name in [n for n in sys.modules if _is_aliased(n)]:
            module = sys.modules[name]
            if (getattr(module, "__name__", "") or "").startswith(_TORCHLIKE):
                del sys.modules[name]
        sys.modules.update(_saved)
        _saved.clear()


def is_installed() -> bool:
    """Whether `install()` is in effect in this process."""
    return _finder is not None
