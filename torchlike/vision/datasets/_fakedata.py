"""FakeData: random images made under ``manual_seed(index + random_offset)``, as torchvision makes them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._vision import VisionDataset


class FakeData(VisionDataset):
    def __init__(self, size: int = 1000, image_size: tuple[int, int, int] = (3, 224, 224), num_classes: int = 10,
                 transform: Callable | None = None, target_transform: Callable | None = None,
                 random_offset: int = 0) -> None:  # fmt: skip
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        import torchlike

        from ..transforms import ToPILImage

        if index >= len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        rng_state = torchlike.get_rng_state()
        torchlike.manual_seed(index + self.random_offset)
        img = torchlike.randn(*self.image_size)
        target = torchlike.randint(0, self.num_classes, size=(1,), dtype=torchlike.long)[0]
        torchlike.set_rng_state(rng_state)
        img, target = self._apply_transforms(ToPILImage()(img), target)
        return img, target.item()

    def __len__(self) -> int:
        return self.size
