"""Matrix products: matmul, mm, bmm, mv, dot (the rest of torch.linalg lives in torchlike.linalg)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from .._core import dtype as D
from .registry import RawTensor, defop

_CROSS = (("input", "other"), ("other", "input"))
_CROSS2 = (("input", "mat2"), ("mat2", "input"))

_CPP_TYPE = {
    D.float32: "float", D.float64: "double", D.int64: "long int", D.int32: "int", D.int16: "short int",
    D.int8: "signed char", D.uint8: "unsigned char", D.bool: "bool", D.float16: "c10::Half",
    D.bfloat16: "c10::BFloat16", D.complex64: "c10::complex<float>", D.complex128: "c10::complex<double>",
}  # fmt: skip


def _same_dtype(a: Any, b: Any, what: str) -> None:
    if a.dtype != b.dtype:
        da, db = D.from_numpy_dtype(a.dtype), D.from_numpy_dtype(b.dtype)
        if what == "dot":
            raise RuntimeError(
                f"dot : expected both vectors to have same dtype, but found {D.cpp_name(da)} and {D.cpp_name(db)}"
            )
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP_TYPE[da]} != {_CPP_TYPE[db]}")


def _matmul_name(static: tuple, dyn: tuple) -> str:
    a, b = dyn[0].dim(), dyn[1].dim()
    if a == 1 and b == 1:
        return "DotBackward0"
    if a == 2 and b == 1:
        return "MvBackward0"
    if a == 1 and b == 2:
        return "SqueezeBackward4"
    if a == 2 and b == 2:
        return "MmBackward0"
    if a <= 2 < b:
        return "CloneBackward0"
    return "UnsafeViewBackward0"


def _check_matmul(a: Any, b: Any) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    _same_dtype(a, b, "dot" if a.ndim == 1 and b.ndim == 1 else "mm")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        if a.ndim == 1 and b.ndim == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have the same "
                f"number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively"
            )
        if a.ndim <= 2 and b.ndim <= 2:
            ra = a.shape if a.ndim == 2 else (1,) + a.shape
            rb = b.shape if b.ndim == 2 else b.shape + (1,)
            if a.ndim == 2 and b.ndim == 1:
                raise RuntimeError(
                    f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({b.shape[0]})"
                )
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({ra[0]}x{ra[1]} and {rb[0]}x{rb[1]})")
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0] if a.ndim > 2 else 1}, "
            f"{k_a}] but got: [{b.shape[0] if b.ndim > 2 else 1}, {k_b}]."
        )


@defop(promote=None, out=True, grad_name=_matmul_name, autocast="lower", saves=_CROSS)
def matmul(input: RawTensor, other: RawTensor) -> Any:
    _check_matmul(input, other)
    return jnp.matmul(input, other)


@defop(promote=None, out=True, grad_name="MmBackward0", autocast="lower", saves=_CROSS2)
def mm(input: RawTensor, mat2: RawTensor) -> Any:
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_matmul(input, mat2)
    return jnp.matmul(input, mat2)


@defop(promote=None, out=True, grad_name="BmmBackward0", autocast="lower", saves=_CROSS2)
def bmm(input: RawTensor, mat2: RawTensor) -> Any:
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype(input, mat2, "mm")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{input.shape[0]}, {input.shape[2]}] "
            f"but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return jnp.matmul(input, mat2)


@defop(promote=None, out=True, grad_name="MvBackward0", autocast="lower")
def mv(input: RawTensor, vec: RawTensor) -> Any:
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_matmul(input, vec)
    return jnp.matmul(input, vec)


@defop(promote=None, out=True, grad_name="DotBackward0")
def dot(input: RawTensor, tensor: RawTensor) -> Any:
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    _check_matmul(input, tensor)
    return jnp.dot(input, tensor)
