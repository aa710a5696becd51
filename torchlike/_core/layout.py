"""torch.layout and torch.memory_format singletons (torchlike tensors are always strided)."""

from __future__ import annotations


class layout:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name


class memory_format:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
