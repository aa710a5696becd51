"""torch.Size: a tuple of ints with torch's repr."""

from __future__ import annotations

import math
from typing import Any, Iterable


class Size(tuple):
    """torch.Size: the shape of a tensor; a tuple subclass."""

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        sizes = tuple(sizes)
        for i, s in enumerate(sizes):
            if type(s) is not int:
                if hasattr(s, "__index__") and not isinstance(s, float):
                    return tuple.__new__(cls, [x.__index__() for x in sizes])
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')")
        return tuple.__new__(cls, sizes)

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(map(str, self))}])"

    __str__ = __repr__

    def __getitem__(self, key: Any) -> Any:
        r = tuple.__getitem__(self, key)
        return Size(r) if isinstance(key, slice) else r

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self) -> int:
        return math.prod(self)

    def __reduce__(self) -> tuple:
        return (Size, (tuple(self),))
