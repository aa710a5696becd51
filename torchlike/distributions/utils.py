"""torch.distributions.utils: parameter broadcasting, probs <-> logits, lazy properties."""

from __future__ import annotations

from functools import update_wrapper
from typing import Any, Callable, Sequence

import torchlike

from .._core.tensor import Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]  # fmt: skip

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant
_Number = (int, float, bool)


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Broadcast tensors together; numbers become tensors of the first tensor's dtype (else the default)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, "
            "torch.Tensor or objects implementing __torch_function__."
        )
    if not all(isinstance(v, Tensor) for v in values):
        options: dict[str, Any] = {"dtype": torchlike.get_default_dtype()}
        for v in values:
            if isinstance(v, Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = tuple(v if isinstance(v, Tensor) else torchlike.tensor(v, **options) for v in values)
    return torchlike.broadcast_tensors(*values)


def _standard_normal(shape: Sequence[int], dtype: Any, device: Any) -> Tensor:
    # torch: empty(shape).normal_(), so draws follow the generator exactly as torch's do
    return torchlike.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def _init_probs_or_logits(d: Any, probs: Any, logits: Any, total_count: Any = None) -> bool:
    """Set ``d.probs`` or ``d.logits`` (and ``d._param``) from exactly one of them, as torch's
    Bernoulli-like constructors do; whether the given one was a Python number. The count families
    (Binomial, NegativeBinomial) pass ``total_count``: broadcast with it and cast to its dtype."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    if total_count is None:
        (t,) = broadcast_all(value)
    else:
        count, t = broadcast_all(total_count, value)
        d.total_count = count.type_as(t)
    setattr(d, name, t)
    d._param = t
    return isinstance(value, _Number)


def _expand_probs_or_logits(d: Any, new: Any, batch_shape: Any) -> None:
    """``expand``: whichever of probs/logits ``d`` holds, expanded onto ``new``."""
    for name in ("probs", "logits"):
        if name in d.__dict__:
            t = getattr(d, name).expand(batch_shape)
            setattr(new, name, t)
            new._param = t


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return torchlike.sigmoid(logits)
    return torchlike.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp to ``[eps, 1 - eps]`` with ``eps`` the dtype's machine epsilon."""
    eps = torchlike.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torchlike.log(ps_clamped) - torchlike.log1p(-ps_clamped)
    return torchlike.log(ps_clamped)


class lazy_property:
    """A non-data descriptor computing the value once (with grad enabled) and caching it on the instance."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torchlike.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Looks like a property to documentation tools and like a lazy_property to argument validation."""

    def __init__(self, wrapped: Callable) -> None:
        property.__init__(self, wrapped)


class _BinaryProbsOrLogits:
    """``probs`` and ``logits`` of a two-outcome family, each computed from the other on first use (the
    constructor sets one, ``_init_probs_or_logits``)."""

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


def _tril_mask(n: int, diag: int, device: Any) -> Tensor:
    arange = torchlike.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular elements of (a batch of) square matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """Inverse of tril_matrix_to_vec: (a batch of) vectors to lower-triangular matrices."""
    # positive root of D**2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 len = 0
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > torchlike.finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + torchlike.Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
