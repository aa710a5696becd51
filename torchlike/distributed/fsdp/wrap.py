"""torch.distributed.fsdp.wrap: the auto-wrap policies FSDP's ``auto_wrap_policy=`` takes."""

from __future__ import annotations

from typing import Any, Iterable

from ...nn.modules._attention import MultiheadAttention
from ...nn.modules._container import ModuleDict, ModuleList
from ...nn.modules._module import Module

__all__ = ["ModuleWrapPolicy", "always_wrap_policy", "lambda_auto_wrap_policy", "size_based_auto_wrap_policy",
           "transformer_auto_wrap_policy"]  # fmt: skip


def _module_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int, module_classes: Iterable[type]) -> bool:
    if recurse:
        return True
    return isinstance(module, tuple(module_classes))


def always_wrap_policy(*args: Any, **kwargs: Any) -> bool:
    """Wrap every module."""
    return True


class ModuleWrapPolicy:
    """Wrap every module that is an instance of one of ``module_classes``."""

    def __init__(self, module_classes: Iterable[type]) -> None:
        self._module_classes = set(module_classes)
        self._module_classes_str = str(self._module_classes)

    def __call__(self, module: Module, recurse: bool, *args: Any, **kwargs: Any) -> bool:
        return _module_wrap_policy(module, recurse, -1, self._module_classes)

    def __repr__(self) -> str:
        return f"{object.__repr__(self)}({self._module_classes_str})"


def transformer_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int,
                                 transformer_layer_cls: Iterable[type]) -> bool:  # fmt: skip
    """Wrap every instance of ``transformer_layer_cls`` (bind it with ``functools.partial``)."""
    return _module_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls)


def lambda_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int, lambda_fn: Any) -> bool:
    """Wrap the modules for which ``lambda_fn(module)`` is true."""
    if recurse:
        return True
    return lambda_fn(module)


def size_based_auto_wrap_policy(module: Module, recurse: bool, nonwrapped_numel: int, min_num_params: int = int(1e8),
                                force_leaf_modules: set | None = None,
                                exclude_wrap_modules: set | None = None) -> bool:  # fmt: skip
    """Wrap a module once the parameters not yet wrapped below it reach ``min_num_params``."""
    force_leaf = size_based_auto_wrap_policy.FORCE_LEAF_MODULES if force_leaf_modules is None else force_leaf_modules
    exclude = size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES if exclude_wrap_modules is None else exclude_wrap_modules
    is_large = nonwrapped_numel >= min_num_params
    if recurse:
        return is_large and not isinstance(module, tuple(force_leaf or ()))
    return is_large and not isinstance(module, tuple(exclude or ()))


size_based_auto_wrap_policy.EXCLUDE_WRAP_MODULES = {ModuleList, ModuleDict}  # type: ignore[attr-defined]
size_based_auto_wrap_policy.FORCE_LEAF_MODULES = {MultiheadAttention}  # type: ignore[attr-defined]
