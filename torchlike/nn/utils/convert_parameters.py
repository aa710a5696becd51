"""parameters_to_vector and vector_to_parameters."""

from __future__ import annotations

from typing import Iterable

from ..._core.tensor import Tensor
from ..._ops import shape as S

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param: Tensor, old: int | None) -> int:
    idx = param.get_device() if param.is_cuda else -1
    if old is not None and idx != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return idx


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return S.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    if not isinstance(vec, Tensor):
        from ..._public import typename

        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer : pointer + n].view_as(param).data
        pointer += n
