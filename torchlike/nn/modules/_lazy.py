"""LazyModuleMixin: modules whose parameter shapes come from their first input (torch.nn.LazyLinear...)."""

from __future__ import annotations

import itertools
from typing import Any

from ...autograd import grad_mode
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Holds UninitializedParameters until the first forward, which materializes them from the input's
    shape, runs ``reset_parameters`` (so the generator is drawn from then, as in torch) and turns the
    module into ``cls_to_become``. Loading a state dict into a lazy module materializes it too."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                        missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:  # fmt: skip
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                value = state_dict[key]
                if not is_lazy(value):
                    with grad_mode.no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy forward pass to "
            "correctly initialize the modules"
        )
