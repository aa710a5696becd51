"""torch.nn.functional: pad, interpolate, grid_sample, affine_grid, unfold/fold, pixel shuffle, distances."""

from __future__ import annotations

import warnings
from typing import Any

from ..._core.tensor import Tensor, _wrap_dim
from . import loss as L
from . import layers as N
from . import vision as V
from ..registry import expose


@expose("nn.functional")
def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    _wrap_dim(int(dim), input.dim())  # torch's IndexError for a dim out of range (a 0-dim input takes 0 and -1)
    result = L._normalize(input, float(p), int(dim), float(eps))
    if out is not None:
        from ..registry import copy_to_out

        copy_to_out(result, out)
        return out
    return result


def _is_integer(x: Any) -> bool:
    return isinstance(x, int) or (isinstance(x, Tensor) and not x.is_floating_point() and x.dim() == 0)


@expose("nn.functional")
def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:  # fmt: skip
    """torch.nn.functional.interpolate (antialias and lanczos are not supported)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
                "trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor in "
                    "(N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], but got "
                    f"size with types {[type(x) for x in size]}"
                )
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size)] * dim
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but got input with "
                    f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                    "provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias:
        raise NotImplementedError("torchlike: interpolate(antialias=True) is not supported")
    if output_size is None:
        output_size = [int(input.size(i + 2) * s) for i, s in enumerate(scale_factors)]
    scales = tuple(scale_factors) if scale_factors is not None else (None,) * dim
    if mode != "area" and 1 <= dim <= 3:
        _check_output_size(tuple(input.shape[2:]), output_size)
    expected = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
    if mode in ("nearest", "nearest-exact") and input.dim() in (3, 4, 5):
        return V._upsample(input, tuple(output_size), mode, False, scales)
    if mode == "area" and input.dim() in (3, 4, 5):
        return N._adaptive_avg_pool(input, tuple(output_size))
    if mode in expected and input.dim() == expected[mode]:
        return V._upsample(input, tuple(output_size), mode, bool(align_corners), scales)
    if mode in expected and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {expected[mode]}D input")
    raise NotImplementedError(
        f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.dim()}D) for the modes: nearest | linear "
        f"| bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
    )


def _check_output_size(in_size: tuple, out_size: list) -> None:
    """torch's upsample_*_shape_check: every input and output spatial size is positive."""
    if all(n > 0 for n in in_size) and all(n > 0 for n in out_size):
        return
    names = "DHW"[3 - len(in_size):]
    inp = ", ".join(f"{c}: {n}" for c, n in zip(names, in_size))
    out = ", ".join(f"{c}: {n}" for c, n in zip(names, out_size))
    sep = " and" if len(in_size) == 1 else ""
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({inp}){sep} output ({out})")


@expose("nn.functional")
def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:  # fmt: skip
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


@expose("nn.functional")
def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


@expose("nn.functional")
def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


@expose("nn.functional")
def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:  # fmt: skip
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
            f"'{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
            "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
            "details.",
            stacklevel=2,
        )
        align_corners = False
    m = {"bilinear": 0, "nearest": 1, "bicubic": 2}[mode]
    pm = {"zeros": 0, "border": 1, "reflection": 2}[padding_mode]
    return V.grid_sampler(input, grid, m, pm, bool(align_corners))


@expose("nn.functional")
def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """torch.nn.functional.affine_grid for 2-D transforms (size N x C x H x W)."""
    from .. import creation

    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
            "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
            "details.",
            stacklevel=2,
        )
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) != 4:
        raise NotImplementedError("torchlike: affine_grid supports 4-D sizes (2-D transforms) only")
    if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
        raise ValueError(
            f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
        )
    n, _, h, w = size

    def lin(steps: int) -> Tensor:
        if steps <= 1:
            return creation.zeros(steps, dtype=theta.dtype)
        t = creation.linspace(-1, 1, steps, dtype=theta.dtype)
        return t if align_corners else t * ((steps - 1) / steps)

    xs = lin(w).view(1, w).expand(h, w)
    ys = lin(h).view(h, 1).expand(h, w)
    ones = creation.ones(h, w, dtype=theta.dtype)
    from .. import shape as S

    base = S.stack([xs, ys, ones], dim=-1).view(1, h * w, 3)
    grid = base.expand(n, h * w, 3).bmm(theta.transpose(1, 2))
    return grid.view(n, h, w, 2)


def _pair(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x, x)


@expose("nn.functional")
def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:
    if input.dim() not in (3, 4):
        raise NotImplementedError(
            f"Input Error: Only 3D or 4D input Tensors are supported (got {input.dim()}D)"
        )
    return V._im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


@expose("nn.functional")
def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Tensor:  # fmt: skip
    if input.dim() not in (2, 3):
        raise NotImplementedError(
            f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported (got {input.dim()}D)"
        )
    k = _pair(kernel_size)
    if input.shape[-2] % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
            f"input.size(1)={input.shape[-2]} and kernel_size=({k[0]}, {k[1]})"
        )
    return V._col2im(input, _pair(output_size), k, _pair(dilation), _pair(padding), _pair(stride))
