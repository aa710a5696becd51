"""torchvision.utils: make_grid and save_image."""

from __future__ import annotations

import math
from typing import Any

from .._core.tensor import Tensor


def _torch() -> Any:
    import torchlike

    return torchlike


def make_grid(tensor: Tensor | list[Tensor], nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: tuple[int, int] | None = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Tensor:  # fmt: skip
    """Tile a (B, C, H, W) batch (or list of images) into one (C, H', W') image, ``nrow`` images per row."""
    t = _torch()
    with t.no_grad():
        if not isinstance(tensor, Tensor):
            if isinstance(tensor, list):
                for item in tensor:
                    if not isinstance(item, Tensor):
                        raise TypeError(f"tensor or list of tensors expected, got a list containing {type(item)}")
            else:
                raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
        if isinstance(tensor, list):
            tensor = t.stack(tensor, dim=0)
        if tensor.dim() == 2:
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 3:
            if tensor.size(0) == 1:
                tensor = t.cat((tensor, tensor, tensor), 0)
            tensor = tensor.unsqueeze(0)
        if tensor.dim() == 4 and tensor.size(1) == 1:
            tensor = t.cat((tensor, tensor, tensor), 1)
        if normalize is True:
            tensor = tensor.clone()
            if value_range is not None and not isinstance(value_range, tuple):
                raise TypeError("value_range has to be a tuple (min, max) if specified. min and max are numbers")

            def norm_ip(img: Tensor, low: float, high: float) -> None:
                img.clamp_(min=low, max=high)
                img.sub_(low).div_(max(high - low, 1e-5))

            def norm_range(img: Tensor) -> None:
                if value_range is not None:
                    norm_ip(img, value_range[0], value_range[1])
                else:
                    norm_ip(img, float(img.min()), float(img.max()))

            if scale_each is True:
                for img in tensor:
                    norm_range(img)
            else:
                norm_range(tensor)
        if tensor.size(0) == 1:
            return tensor.squeeze(0)
        nmaps = tensor.size(0)
        xmaps = min(nrow, nmaps)
        ymaps = int(math.ceil(float(nmaps) / xmaps))
        height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
        num_channels = tensor.size(1)
        grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding), pad_value)
        k = 0
        for y in range(ymaps):
            for x in range(xmaps):
                if k >= nmaps:
                    break
                grid.narrow(1, y * height + padding, height - padding).narrow(
                    2, x * width + padding, width - padding
                ).copy_(tensor[k])
                k = k + 1
        return grid


def save_image(tensor: Tensor | list[Tensor], fp: Any, format: str | None = None, **kwargs: Any) -> None:
    """``make_grid(tensor, **kwargs)`` saved as an 8-bit image (values in [0, 1], rounded to the nearest level)."""
    from PIL import Image

    t = _torch()
    with t.no_grad():
        grid = make_grid(tensor, **kwargs)
        ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", t.uint8).numpy()
    Image.fromarray(ndarr).save(fp, format=format)
