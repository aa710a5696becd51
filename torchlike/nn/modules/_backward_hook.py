"""Module full backward hooks (torch.utils.hooks.BackwardHook).

As torch does, the module's tensor inputs and outputs pass through an identity node
(``BackwardHookFunctionBackward``); a pre-hook on the outputs' node sees grad_output, one on the
inputs' node sees grad_input and calls the user hooks, which may replace grad_input.
"""

from __future__ import annotations

from typing import Any

import jax

from ..._core.tensor import Tensor
from ..._ops import registry
from ...autograd import grad_mode

_identity = jax.jit(lambda *xs: tuple(xs))


class BackwardHook:
    def __init__(self, module: Any, full: bool | None) -> None:
        self.module = module
        self.grad_outputs: tuple | None = None
        self.n_inputs = 0
        self.inputs_hooked = False

    def _identity(self, args: tuple) -> tuple[tuple, Any]:
        """``args`` with its tensors replaced by identity-node outputs, and that node."""
        pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in pos]
        if not (grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        outs = registry.apply_pure("BackwardHookFunctionBackward", _identity, tensors)
        new = list(args)
        for i, o in zip(pos, outs):
            new[i] = o
        node = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
        return tuple(new), node

    def setup_input_hook(self, args: tuple) -> tuple:
        self.n_inputs = len(args)
        new, node = self._identity(args)
        if node is not None:
            self.inputs_hooked = True
            node.register_prehook(self._on_grad_input)
        return new

    def setup_output_hook(self, result: Any) -> Any:
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if not isinstance(outs, tuple):
            return result
        new, node = self._identity(outs)
        if node is not None:
            node.register_prehook(self._on_grad_output)
        return new[0] if single else new

    def _on_grad_output(self, grad_output: tuple) -> Any:
        for hook in self.module._backward_pre_hooks.values():
            res = hook(self.module, grad_output)
            if res is not None:
                grad_output = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        self.grad_outputs = grad_output
        if not self.inputs_hooked:
            grad_inputs = (None,) * self.n_inputs
            for hook in self.module._backward_hooks.values():
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not all(r is None for r in res):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should always return None or "
                        "None for all gradients."
                    )
        return grad_output

    def _on_grad_input(self, grad_input: tuple) -> Any:
        for hook in self.module._backward_hooks.values():
            res = hook(self.module, grad_input, self.grad_outputs)
            if res is None:
                continue
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(grad_input):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(res)}, but expected "
                    f"{len(grad_input)}"
                )
            grad_input = res
        return grad_input
