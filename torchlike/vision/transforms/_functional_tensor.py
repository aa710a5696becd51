"""The tensor side of torchvision.transforms.functional, written with torchlike ops as torchvision writes it
with torch ops (same operations in the same dtypes), so results agree with torchvision's to float rounding.

Images are (..., C, H, W) tensors. Integer images are processed in float32 and rounded back where
torchvision rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ...utils.data import _host
from . import _antialias


def _torch() -> Any:
    import torchlike

    return torchlike


def _F() -> Any:
    from ...nn import functional

    return functional


def _host_np(img: Tensor) -> np.ndarray | None:
    """The values of a CPU tensor without autograd history, for the NumPy fast paths (exact moves and casts
    that cost no JAX call, and run inside DataLoader worker processes); None for other tensors."""
    return _host.host_array(img) if _host.is_host_readable(img) else None


def _is_tensor_a_torch_image(x: Tensor) -> bool:
    return x.ndim >= 2


def _assert_image_tensor(img: Any) -> None:
    if not isinstance(img, Tensor) or not _is_tensor_a_torch_image(img):
        raise TypeError("Tensor is not a torch image.")


def _assert_channels(img: Tensor, permitted: Sequence[int]) -> None:
    c = get_dimensions(img)[0]
    if c not in permitted:
        raise TypeError(f"Input image tensor permitted channel values are {permitted}, but found {c}")


def get_dimensions(img: Tensor) -> list[int]:
    _assert_image_tensor(img)
    channels = 1 if img.ndim == 2 else img.shape[-3]
    height, width = img.shape[-2:]
    return [channels, height, width]


def get_image_size(img: Tensor) -> list[int]:
    _assert_image_tensor(img)
    return [img.shape[-1], img.shape[-2]]


def get_image_num_channels(img: Tensor) -> int:
    _assert_image_tensor(img)
    if img.ndim == 2:
        return 1
    if img.ndim > 2:
        return img.shape[-3]
    raise TypeError(f"Input ndim should be 2 or more. Got {img.ndim}")


def _max_value(dtype: Any) -> float:
    t = _torch()
    if dtype == t.uint8:
        return 255
    if dtype == t.int8:
        return 127
    if dtype == t.int16:
        return 32767
    if dtype == t.uint16:
        return 65535
    if dtype == t.int32:
        return 2147483647
    if dtype == t.int64:
        return 9223372036854775807
    return 1.0


def convert_image_dtype(image: Tensor, dtype: Any) -> Tensor:
    t = _torch()
    if image.dtype == dtype:
        return image
    a = _host_np(image)
    if a is not None and image.dtype == t.uint8 and dtype in (t.float32, t.float64):
        return _host.wrap(a.astype(dtype.np) / dtype.np.type(255), dtype)
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == t.float32 and dtype in (t.int32, t.int64)) or (
            image.dtype == t.float64 and dtype == t.int64
        ):
            raise RuntimeError(f"The cast from {image.dtype} to {dtype} cannot be performed safely.")
        eps = 1e-3
        max_val = float(_max_value(dtype))
        return image.mul(max_val + 1.0 - eps).to(dtype)
    input_max = float(_max_value(image.dtype))
    if dtype.is_floating_point:
        return image.to(dtype) / input_max
    output_max = float(_max_value(dtype))
    if input_max > output_max:
        factor = int((input_max + 1) // (output_max + 1))
        return t.div(image, factor, rounding_mode="floor").to(dtype)
    factor = int((output_max + 1) // (input_max + 1))
    return image.to(dtype) * factor


def vflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    a = _host_np(img)
    if a is not None:
        return _host.wrap(np.ascontiguousarray(a[..., ::-1, :]), img.dtype)
    return img.flip(-2)


def hflip(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    a = _host_np(img)
    if a is not None:
        return _host.wrap(np.ascontiguousarray(a[..., ::-1]), img.dtype)
    return img.flip(-1)


def crop(img: Tensor, top: int, left: int, height: int, width: int) -> Tensor:
    _assert_image_tensor(img)
    _, h, w = get_dimensions(img)
    right = left + width
    bottom = top + height
    if left < 0 or top < 0 or right > w or bottom > h:
        padding_ltrb = [
            max(-left + min(0, right), 0),
            max(-top + min(0, bottom), 0),
            max(right - max(w, left), 0),
            max(bottom - max(h, top), 0),
        ]
        return pad(img[..., max(top, 0) : bottom, max(left, 0) : right], padding_ltrb, fill=0)
    return img[..., top:bottom, left:right]


def rgb_to_grayscale(img: Tensor, num_output_channels: int = 1) -> Tensor:
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img.unbind(dim=-3)
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype)
        l_img = l_img.unsqueeze(dim=-3)
    else:
        l_img = img.clone()
    if num_output_channels == 3:
        return l_img.expand(img.shape)
    return l_img


def _blend(img1: Tensor, img2: Tensor, ratio: float) -> Tensor:
    ratio = float(ratio)
    bound = _max_value(img1.dtype)
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img: Tensor, brightness_factor: float) -> Tensor:
    if brightness_factor < 0:
        raise ValueError(f"brightness_factor ({brightness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    return _blend(img, _torch().zeros_like(img), brightness_factor)


def adjust_contrast(img: Tensor, contrast_factor: float) -> Tensor:
    if contrast_factor < 0:
        raise ValueError(f"contrast_factor ({contrast_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [3, 1])
    c = get_dimensions(img)[0]
    t = _torch()
    dtype = img.dtype if img.is_floating_point() else t.float32
    gray = rgb_to_grayscale(img) if c == 3 else img
    mean = t.mean(gray.to(dtype), dim=(-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img: Tensor, saturation_factor: float) -> Tensor:
    if saturation_factor < 0:
        raise ValueError(f"saturation_factor ({saturation_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def _rgb2hsv(img: Tensor) -> Tensor:
    t = _torch()
    r, g, b = img.unbind(dim=-3)
    maxc = t.max(img, dim=-3).values
    minc = t.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = t.ones_like(maxc)
    s = cr / t.where(eqc, ones, maxc)
    cr_divisor = t.where(eqc, ones, cr)
    rc = (maxc - r) / cr_divisor
    gc = (maxc - g) / cr_divisor
    bc = (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = t.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return t.stack((h, s, maxc), dim=-3)


def _hsv2rgb(img: Tensor) -> Tensor:
    t = _torch()
    h, s, v = img.unbind(dim=-3)
    i = t.floor(h * 6.0)
    f = (h * 6.0) - i
    i = i.to(dtype=t.int32)
    p = t.clamp(v * (1.0 - s), 0.0, 1.0)
    q = t.clamp(v * (1.0 - s * f), 0.0, 1.0)
    tt = t.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    i = i % 6
    mask = i.unsqueeze(dim=-3) == t.arange(6, device=i.device).view(-1, 1, 1)
    a1 = t.stack((v, q, p, p, tt, v), dim=-3)
    a2 = t.stack((tt, v, v, q, p, p), dim=-3)
    a3 = t.stack((p, p, tt, v, v, q), dim=-3)
    a4 = t.stack((a1, a2, a3), dim=-4)
    return t.einsum("...ijk, ...xijk -> ...xjk", mask.to(dtype=img.dtype), a4)


def adjust_hue(img: Tensor, hue_factor: float) -> Tensor:
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor image")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if get_dimensions(img)[0] == 1:
        return img
    t = _torch()
    orig_dtype = img.dtype
    img = convert_image_dtype(img, t.float32)
    h, s, v = _rgb2hsv(img).unbind(dim=-3)
    h = (h + hue_factor) % 1.0
    return convert_image_dtype(_hsv2rgb(t.stack((h, s, v), dim=-3)), orig_dtype)


def adjust_gamma(img: Tensor, gamma: float, gain: float = 1) -> Tensor:
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be a Tensor.")
    _assert_channels(img, [1, 3])
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    t = _torch()
    result = img
    dtype = img.dtype
    if not img.is_floating_point():
        result = convert_image_dtype(result, t.float32)
    result = (gain * result**gamma).clamp(0, 1)
    return convert_image_dtype(result, dtype)


def _cast_squeeze_in(img: Tensor, req_dtypes: list) -> tuple[Tensor, bool, bool, Any]:
    need_squeeze = False
    if img.ndim < 4:
        img = img.unsqueeze(dim=0)
        need_squeeze = True
    out_dtype = img.dtype
    need_cast = out_dtype not in req_dtypes
    if need_cast:
        img = img.to(req_dtypes[0])
    return img, need_cast, need_squeeze, out_dtype


def _cast_squeeze_out(img: Tensor, need_cast: bool, need_squeeze: bool, out_dtype: Any) -> Tensor:
    t = _torch()
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        if out_dtype in (t.uint8, t.int8, t.int16, t.int32, t.int64):
            img = t.round(img)
        img = img.to(out_dtype)
    return img


def _pad_symmetric(img: Tensor, padding: list[int]) -> Tensor:
    t = _torch()
    if padding[0] < 0 or padding[1] < 0 or padding[2] < 0 or padding[3] < 0:
        neg = [-min(x, 0) for x in padding]
        img = img[..., neg[2] : img.shape[-2] - neg[3], neg[0] : img.shape[-1] - neg[1]]
        padding = [max(x, 0) for x in padding]
    h, w = img.shape[-2:]
    x_idx = list(range(padding[0] - 1, -1, -1)) + list(range(w)) + [-(i + 1) for i in range(padding[1])]
    y_idx = list(range(padding[2] - 1, -1, -1)) + list(range(h)) + [-(i + 1) for i in range(padding[3])]
    x_indices = t.tensor(x_idx, device=img.device)
    y_indices = t.tensor(y_idx, device=img.device)
    if img.ndim == 3:
        return img[:, y_indices[:, None], x_indices[None, :]]
    if img.ndim == 4:
        return img[:, :, y_indices[:, None], x_indices[None, :]]
    raise RuntimeError("Symmetric padding of N-D tensors are not supported yet")


def _parse_pad_padding(padding: Any) -> list[int]:
    if isinstance(padding, int):
        return [padding] * 4
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    return [padding[0], padding[2], padding[1], padding[3]]  # ltrb -> torch's (left, right, top, bottom)


def pad(img: Tensor, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> Tensor:
    _assert_image_tensor(img)
    if fill is None:
        fill = 0
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, tuple):
        padding = list(padding)
    if isinstance(padding, list) and len(padding) not in [1, 2, 4]:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    p = _parse_pad_padding(padding)
    a = _host_np(img)
    h, w = img.shape[-2:]
    fits = padding_mode in ("constant", "edge") or (
        max(p[0], p[1]) < w and max(p[2], p[3]) < h
        if padding_mode == "reflect"
        else max(p[0], p[1]) <= w and max(p[2], p[3]) <= h
    )
    if a is not None and min(p) >= 0 and fits:
        widths = [(0, 0)] * (a.ndim - 2) + [(p[2], p[3]), (p[0], p[1])]
        np_mode = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode]
        if np_mode == "constant":  # np.pad's constant mode, without its per-call bookkeeping
            out = np.empty(a.shape[:-2] + (h + p[2] + p[3], w + p[0] + p[1]), a.dtype)
            out[...] = _cast_fill(fill, img.dtype)
            out[..., p[2] : p[2] + h, p[0] : p[0] + w] = a
        else:
            out = np.pad(a, widths, mode=np_mode)
        return _host.wrap(out, img.dtype)
    if padding_mode == "edge":
        padding_mode = "replicate"
    elif padding_mode == "symmetric":
        return _pad_symmetric(img, p)
    need_squeeze = False
    if img.ndim < 4:
        img = img.unsqueeze(dim=0)
        need_squeeze = True
    out_dtype = img.dtype
    t = _torch()
    need_cast = False
    if padding_mode != "constant" and img.dtype not in (t.float32, t.float64):
        need_cast = True
        img = img.to(t.float32)
    F = _F()
    if padding_mode in ("reflect", "replicate"):
        img = F.pad(img, p, mode=padding_mode)
    else:
        img = F.pad(img, p, mode=padding_mode, value=float(fill))
    if need_squeeze:
        img = img.squeeze(dim=0)
    if need_cast:
        img = img.to(out_dtype)
    return img


def _cast_fill(fill: Any, dtype: Any) -> Any:
    """``fill`` as torch's constant pad stores it in ``dtype`` (float then cast, truncating for integers)."""
    value = np.asarray(float(fill), np.float64)
    return value.astype(dtype.np) if not dtype.is_floating_point else value


def _resize_antialias_host(a: np.ndarray, size: list[int], mode: str, dtype: Any) -> np.ndarray:
    """``resize`` of a uint8 or float32 array as torchvision does it (uint8 through float32, clamped for bicubic,
    rounded back) with torch's kernel arithmetic: bit for bit, and no JAX call (DataLoader workers)."""
    out = _antialias.resize_host(a.astype(np.float32, copy=False), size, mode)
    if dtype.is_floating_point:
        return out
    if mode == "bicubic":
        out = np.clip(out, 0, 255)
    return np.round(out).astype(np.uint8)


def _resize_antialias(img: Tensor, size: list[int], mode: str) -> Tensor:
    """interpolate(..., antialias=True) for bilinear/bicubic: one matmul per axis with torch's weights (within float32
    rounding of torch's kernel; differentiable, any device)."""
    t = _torch()
    out = img
    h, w = img.shape[-2:]
    if size[1] != w:
        ww = t.tensor(_antialias.weight_matrix(w, size[1], mode), dtype=img.dtype, device=img.device)
        out = t.matmul(out, ww.T)
    if size[0] != h:
        wh = t.tensor(_antialias.weight_matrix(h, size[0], mode), dtype=img.dtype, device=img.device)
        out = t.matmul(wh, out)
    return out


def resize(img: Tensor, size: list[int], interpolation: str = "bilinear", antialias: bool | None = True) -> Tensor:
    _assert_image_tensor(img)
    if isinstance(size, tuple):
        size = list(size)
    if antialias is None:
        antialias = False
    if antialias and interpolation not in ["bilinear", "bicubic"]:
        antialias = False
    t = _torch()
    a = _host_np(img)
    if antialias and a is not None and img.dtype in (t.uint8, t.float32):
        return _host.wrap(_resize_antialias_host(a, size, interpolation, img.dtype), img.dtype)
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [t.float32, t.float64])
    if antialias:
        img = _resize_antialias(img, size, interpolation)
    else:
        align_corners = False if interpolation in ["bilinear", "bicubic"] else None
        img = _F().interpolate(img, size=size, mode=interpolation, align_corners=align_corners)
    if interpolation == "bicubic" and out_dtype == t.uint8:
        img = img.clamp(min=0, max=255)
    return _cast_squeeze_out(img, need_cast=need_cast, need_squeeze=need_squeeze, out_dtype=out_dtype)


def _apply_grid_transform(img: Tensor, grid: Tensor, mode: str, fill: Any) -> Tensor:
    t = _torch()
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [grid.dtype])
    if img.shape[0] > 1:
        grid = grid.expand(img.shape[0], grid.shape[1], grid.shape[2], grid.shape[3])
    if fill is not None:
        mask = t.ones((img.shape[0], 1, img.shape[2], img.shape[3]), dtype=img.dtype, device=img.device)
        img = t.cat((img, mask), dim=1)
    img = _F().grid_sample(img, grid, mode=mode, padding_mode="zeros", align_corners=False)
    if fill is not None:
        mask = img[:, -1:, :, :]
        img = img[:, :-1, :, :]
        mask = mask.expand_as(img)
        fill_list, len_fill = (fill, len(fill)) if isinstance(fill, (tuple, list)) else ([float(fill)], 1)
        fill_img = t.tensor(fill_list, dtype=img.dtype, device=img.device).view(1, len_fill, 1, 1).expand_as(img)
        if mode == "nearest":
            img = t.where(mask < 0.5, fill_img, img)
        else:
            img = img * mask + (1.0 - mask) * fill_img
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def _gen_affine_grid(theta: Tensor, w: int, h: int, ow: int, oh: int) -> Tensor:
    t = _torch()
    d = 0.5
    x_grid = t.linspace(-ow * 0.5 + d, ow * 0.5 + d - 1, steps=ow, device=theta.device, dtype=theta.dtype)
    y_grid = t.linspace(-oh * 0.5 + d, oh * 0.5 + d - 1, steps=oh, device=theta.device, dtype=theta.dtype)
    base_grid = t.stack(
        (x_grid.expand(oh, ow), y_grid.unsqueeze(-1).expand(oh, ow), t.ones((oh, ow), dtype=theta.dtype)), dim=-1
    ).unsqueeze(0)
    rescaled_theta = theta.transpose(1, 2) / t.tensor([0.5 * w, 0.5 * h], dtype=theta.dtype, device=theta.device)
    output_grid = base_grid.view(1, oh * ow, 3).bmm(rescaled_theta)
    return output_grid.view(1, oh, ow, 2)


def _assert_grid_transform_inputs(img: Tensor, matrix: Any, interpolation: str, fill: Any,
                                  supported: Sequence[str]) -> None:  # fmt: skip
    if not isinstance(img, Tensor):
        raise TypeError("Input img should be Tensor")
    _assert_image_tensor(img)
    if matrix is not None and not isinstance(matrix, list):
        raise TypeError("Argument matrix should be a list")
    if matrix is not None and len(matrix) != 6:
        raise ValueError("Argument matrix should have 6 float values")
    if fill is not None and not isinstance(fill, (int, float, tuple, list)):
        raise TypeError("Argument fill should be either int, float, tuple or list")
    num_channels = get_dimensions(img)[0]
    if fill is not None and isinstance(fill, (tuple, list)) and len(fill) > 1 and len(fill) != num_channels:
        msg = (
            "The number of elements in 'fill' cannot broadcast to match the number of channels of the image ({} != {})"
        )
        raise ValueError(msg.format(len(fill), num_channels))
    if interpolation not in supported:
        raise ValueError(f"Interpolation mode '{interpolation}' is unsupported with Tensor input")


def affine(img: Tensor, matrix: list[float], interpolation: str = "nearest", fill: Any = None) -> Tensor:
    _assert_grid_transform_inputs(img, matrix, interpolation, fill, ["nearest", "bilinear"])
    t = _torch()
    dtype = img.dtype if img.is_floating_point() else t.float32
    theta = t.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    shape = img.shape
    grid = _gen_affine_grid(theta, w=shape[-1], h=shape[-2], ow=shape[-1], oh=shape[-2])
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _compute_affine_output_size(matrix: list[float], w: int, h: int) -> tuple[int, int]:
    pts = np.array(
        [[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]],
        np.float32,
    )
    theta = np.array(matrix, np.float32).reshape(2, 3)
    new_pts = pts @ theta.T
    mins = new_pts.min(axis=0) + np.array([0.5 * w, 0.5 * h], np.float32)
    maxs = new_pts.max(axis=0) + np.array([0.5 * w, 0.5 * h], np.float32)
    tol = np.float32(1e-4)
    cmax = np.ceil(np.trunc(maxs / tol) * tol)
    cmin = np.floor(np.trunc(mins / tol) * tol)
    size = cmax - cmin
    return int(size[0]), int(size[1])


def rotate(img: Tensor, matrix: list[float], interpolation: str = "nearest", expand: bool = False,
           fill: Any = None) -> Tensor:  # fmt: skip
    _assert_grid_transform_inputs(img, matrix, interpolation, fill, ["nearest", "bilinear"])
    t = _torch()
    w, h = img.shape[-1], img.shape[-2]
    ow, oh = _compute_affine_output_size(matrix, w, h) if expand else (w, h)
    dtype = img.dtype if img.is_floating_point() else t.float32
    theta = t.tensor(matrix, dtype=dtype, device=img.device).reshape(1, 2, 3)
    grid = _gen_affine_grid(theta, w=w, h=h, ow=ow, oh=oh)
    return _apply_grid_transform(img, grid, interpolation, fill=fill)


def _get_gaussian_kernel1d(kernel_size: int, sigma: float, dtype: Any, device: Any) -> Tensor:
    t = _torch()
    ksize_half = (kernel_size - 1) * 0.5
    x = t.linspace(-ksize_half, ksize_half, steps=kernel_size, dtype=dtype, device=device)
    pdf = t.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def _get_gaussian_kernel2d(kernel_size: list[int], sigma: list[float], dtype: Any, device: Any) -> Tensor:
    t = _torch()
    kx = _get_gaussian_kernel1d(kernel_size[0], sigma[0], dtype, device)
    ky = _get_gaussian_kernel1d(kernel_size[1], sigma[1], dtype, device)
    return t.mm(ky[:, None], kx[None, :])


def gaussian_blur(img: Tensor, kernel_size: list[int], sigma: list[float]) -> Tensor:
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor. Got {type(img)}")
    _assert_image_tensor(img)
    t = _torch()
    dtype = img.dtype if img.is_floating_point() else t.float32
    kernel = _get_gaussian_kernel2d(kernel_size, sigma, dtype=dtype, device=img.device)
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    img, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    padding = [kernel_size[0] // 2, kernel_size[0] // 2, kernel_size[1] // 2, kernel_size[1] // 2]
    F = _F()
    img = F.pad(img, padding, mode="reflect")
    img = F.conv2d(img, kernel, groups=img.shape[-3])
    return _cast_squeeze_out(img, need_cast, need_squeeze, out_dtype)


def invert(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    return _max_value(img.dtype) - img


def posterize(img: Tensor, bits: int) -> Tensor:
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    t = _torch()
    if img.dtype != t.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    mask = -int(2 ** (8 - bits))
    return img & mask


def solarize(img: Tensor, threshold: float) -> Tensor:
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    if threshold > _max_value(img.dtype):
        raise TypeError("Threshold should be less than bound of img.")
    inverted_img = invert(img)
    return _torch().where(img >= threshold, inverted_img, img)


def _blurred_degenerate_image(img: Tensor) -> Tensor:
    t = _torch()
    dtype = img.dtype if img.is_floating_point() else t.float32
    kernel = t.ones((3, 3), dtype=dtype, device=img.device)
    kernel[1, 1] = 5.0
    kernel /= kernel.sum()
    kernel = kernel.expand(img.shape[-3], 1, kernel.shape[0], kernel.shape[1])
    result_tmp, need_cast, need_squeeze, out_dtype = _cast_squeeze_in(img, [kernel.dtype])
    result_tmp = _F().conv2d(result_tmp, kernel, groups=result_tmp.shape[-3])
    result_tmp = _cast_squeeze_out(result_tmp, need_cast, need_squeeze, out_dtype)
    result = img.clone()
    result[..., 1:-1, 1:-1] = result_tmp
    return result


def adjust_sharpness(img: Tensor, sharpness_factor: float) -> Tensor:
    if sharpness_factor < 0:
        raise ValueError(f"sharpness_factor ({sharpness_factor}) is not non-negative.")
    _assert_image_tensor(img)
    _assert_channels(img, [1, 3])
    if img.size(-1) <= 2 or img.size(-2) <= 2:
        return img
    return _blend(img, _blurred_degenerate_image(img), sharpness_factor)


def autocontrast(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    if img.ndim < 3:
        raise TypeError(f"Input image tensor should have at least 3 dimensions, but found {img.ndim}")
    _assert_channels(img, [1, 3])
    t = _torch()
    bound = _max_value(img.dtype)
    dtype = img.dtype if img.is_floating_point() else t.float32
    minimum = img.amin(dim=(-2, -1), keepdim=True).to(dtype)
    maximum = img.amax(dim=(-2, -1), keepdim=True).to(dtype)
    scale = bound / (maximum - minimum)
    eq_idxs = t.isfinite(scale).logical_not()
    minimum = t.where(eq_idxs, t.zeros_like(minimum), minimum)
    scale = t.where(eq_idxs, t.ones_like(scale), scale)
    return ((img - minimum) * scale).clamp(0, bound).to(img.dtype)


def _equalize_single_image(img: np.ndarray) -> np.ndarray:
    out = img.copy()
    for c in range(img.shape[0]):
        ch = img[c]
        hist = np.bincount(ch.reshape(-1), minlength=256)
        nonzero = hist[hist != 0]
        step = (nonzero[:-1].sum()) // 255 if nonzero.size else 0
        if step == 0:
            continue
        lut = (np.cumsum(hist) + (step // 2)) // step
        lut = np.concatenate([[0], lut[:-1]]).clip(0, 255)
        out[c] = lut[ch].astype(np.uint8)
    return out


def equalize(img: Tensor) -> Tensor:
    _assert_image_tensor(img)
    t = _torch()
    if not (3 <= img.ndim <= 4):
        raise TypeError(f"Input image tensor should have 3 or 4 dimensions, but found {img.ndim}")
    if img.dtype != t.uint8:
        raise TypeError(f"Only torch.uint8 image tensors are supported, but found {img.dtype}")
    _assert_channels(img, [1, 3])
    arr = img.cpu().numpy()
    out = _equalize_single_image(arr) if arr.ndim == 3 else np.stack([_equalize_single_image(x) for x in arr])
    return t.from_numpy(out).to(img.device)


def erase(img: Tensor, i: int, j: int, h: int, w: int, v: Tensor, inplace: bool = False) -> Tensor:
    _assert_image_tensor(img)
    if not inplace:
        img = img.clone()
    img[..., i : i + h, j : j + w] = v
    return img
