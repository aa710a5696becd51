"""Complex numbers: real/imag/view_as_real/view_as_complex/conj as views sharing memory (writable, as
torch's), resolve_conj, conj_physical, angle.

torch's ``conj()`` is lazy: a view with the conjugate bit set. Here it is a view whose read step
conjugates; a tensor's conjugate bit is the parity of the conj steps in its view chain, which is what
torch's bit gives after views of views.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp

from .._core import dtype as D
from .._core.tensor import Tensor
from . import registry
from .registry import TensorArg, defop, expose


def _view(input: Tensor, kind: str, shape: tuple, stride: tuple, offset: int, dtype: D.dtype, name: str) -> Tensor:
    out = registry.make_view_of(input, (kind, (), (), tuple(shape), tuple(stride), offset), name)
    out._dtype = dtype
    return out


@expose("torch")
def real(input: Tensor) -> Tensor:
    """torch.real / Tensor.real: the real parts as a float view (the tensor itself when it is real)."""
    if not input._dtype.is_complex:
        return input
    sh, st, off = input._geometry()
    return _view(input, "real", sh, [2 * s for s in st], 2 * off, input._dtype.to_real(), "SelectBackward0")


@expose("torch")
def imag(input: Tensor) -> Tensor:
    if not input._dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    sh, st, off = input._geometry()
    return _view(input, "imag", sh, [2 * s for s in st], 2 * off + 1, input._dtype.to_real(), "SelectBackward0")


@expose("torch")
def view_as_real(input: Tensor) -> Tensor:
    if not input._dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate tensor so you can "
            "view it as real, use self.resolve_conj(); however, be warned that the resulting tensor will NOT alias "
            "the original."
        )
    sh, st, off = input._geometry()
    return _view(input, "as_real", sh + (2,), [2 * s for s in st] + [1], 2 * off, input._dtype.to_real(),
                 "ViewAsRealBackward0")  # fmt: skip


@expose("torch")
def view_as_complex(input: Tensor) -> Tensor:
    dt = input._dtype
    if dt not in (D.float32, D.float64, D.float16):
        raise RuntimeError(
            f"view_as_complex is only supported for half, float and double tensors, but got a tensor of scalar type: "
            f"{D.cpp_name(dt)}"
        )
    if dt is D.float16:
        raise NotImplementedError("torchlike: complex32 (view_as_complex of a float16 tensor) is not supported")
    sh, st, off = input._geometry()
    if not sh or sh[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if off % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view(input, "as_complex", sh[:-1], [s // 2 for s in st[:-1]], off // 2, dt.to_complex(),
                 "ViewAsComplexBackward0")  # fmt: skip


@expose("torch")
def conj(input: Tensor) -> Tensor:
    """The lazily conjugated view of a complex tensor (is_conj() True); a real tensor itself."""
    if not input._dtype.is_complex:
        return input
    sh, st, off = input._geometry()
    return _view(input, "conj", sh, st, off, input._dtype, "ConjBackward0")


@expose("torch")
def is_conj(input: Tensor) -> bool:
    view = input._view
    return view is not None and sum(kind == "conj" for kind, _ in view.steps) % 2 == 1


@expose("torch")
def resolve_conj(input: Tensor) -> Tensor:
    return input.clone() if is_conj(input) else input


@defop(inplace_in=("Tensor", "torch"), promote=None, inplace=True, out=True, inplace_grad_name="ConjPhysicalBackward1")
def conj_physical(input: TensorArg) -> Any:
    """A conjugated copy (not a view)."""
    return jnp.conj(input)


@defop(promote="float", out=True)
def angle(input: TensorArg) -> Any:
    """The argument of complex values; for real ones 0 or pi by sign (NaN stays NaN)."""
    if jnp.iscomplexobj(input):
        return jnp.angle(input)
    return jnp.where(jnp.isnan(input), input, jnp.where(input < 0, math.pi, 0.0).astype(input.dtype))


def _set_real(self: Tensor, value: Any) -> None:
    real(self).copy_(value)


def _set_imag(self: Tensor, value: Any) -> None:
    imag(self).copy_(value)


Tensor.real = property(real, _set_real)
Tensor.imag = property(imag, _set_imag)
