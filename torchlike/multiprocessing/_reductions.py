"""How tensors cross process boundaries: multiprocessing's pickler moves a CPU tensor into shared
memory and sends the block's name, so the receiving process gets a tensor over the same memory (a
view keeps its offset and strides; a Parameter stays a Parameter). Registered with
``ForkingPickler``, which pickles Process arguments, Queue items and Pool tasks."""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

from .._core import shared_memory
from .._core import storage as _storage
from .._core.tensor import Tensor
from ..nn.parameter import Buffer, Parameter


def _rebuild(cls: type, block: tuple, geometry: tuple | None, requires_grad: bool) -> Tensor:
    t = shared_memory.attach(*block)
    if geometry is not None:
        size, stride, offset = geometry
        t = _storage._view_of(t, t._dtype, offset, size, stride)
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    if cls is Buffer:
        return Buffer(t)
    return t.requires_grad_(requires_grad) if requires_grad else t


def reduce_tensor(t: Tensor) -> tuple:
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(
            "Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue)."
        )
    if t.device.type != "cpu":
        raise RuntimeError(
            "torchlike.multiprocessing: sending a CUDA tensor to another process is not supported (torch shares it "
            "through CUDA IPC); move it to the CPU first"
        )
    shared_memory.share(t)
    whole = t._view is None
    geometry = None if whole else (tuple(t.shape), tuple(t.stride()), t.storage_offset())
    return _rebuild, (type(t), shared_memory.block_of(t), geometry, t.requires_grad)


def init_reductions() -> None:
    for cls in (Tensor, Parameter, Buffer):
        ForkingPickler.register(cls, reduce_tensor)
