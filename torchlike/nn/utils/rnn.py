"""torch.nn.utils.rnn: PackedSequence and packing/padding helpers."""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

import numpy as np

from ..._core import dtype as D
from ..._core.tensor import Tensor
from ..._ops import creation
from ..._ops.nn import rnn as R

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]  # fmt: skip


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    def __new__(cls, data: Any, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:  # fmt: skip
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                    "manually. They should be instantiated by functions like pack_sequence and "
                    "pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
                )
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda")

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu")

    def double(self) -> PackedSequence:
        return self.to(dtype=D.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=D.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=D.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=D.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=D.int32)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    p = np.asarray(permutation._data())
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=p.dtype)
    return creation.tensor(out, device=permutation.device)


def _host_ints(x: Any) -> np.ndarray:
    if isinstance(x, Tensor):
        return np.asarray(x._data()).astype(np.int64).reshape(-1)
    return np.asarray(list(x), np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:  # fmt: skip
    lens = _host_ints(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = creation.tensor(order, device=input.device)
        input = input[:, sorted_indices] if not batch_first else input[sorted_indices]
    elif lens.size > 1 and (np.diff(lens) > 0).any():
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
            "you do not need ONNX exportability."
        )
    if lens.size and lens.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if batch_first:
        input = input.transpose(0, 1)
    t_max, b = input.shape[0], input.shape[1]
    if lens.size and lens[0] > t_max:
        raise RuntimeError(
            f"Expected length of input at dim 0 ({t_max}) to be at least the largest length ({lens[0]})"
        )
    batch_sizes = np.array([(lens > t).sum() for t in range(int(lens.max()) if lens.size else 0)], np.int64)
    index = np.concatenate([t * b + np.arange(n) for t, n in enumerate(batch_sizes)]) if batch_sizes.size else \
        np.zeros(0, np.int64)  # fmt: skip
    data = R._pack_rows(input, creation.tensor(index, device=input.device))
    return PackedSequence(data, creation.tensor(batch_sizes), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    bs = _host_ints(sequence.batch_sizes)
    max_len = bs.size
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_len}"
            )
        max_len = total_length
    b = int(bs[0]) if bs.size else 0
    index = np.full((max_len, b), -1, np.int64)
    offset = 0
    for t, n in enumerate(bs):
        index[t, :n] = offset + np.arange(n)
        offset += n
    lengths = (index >= 0).sum(0).astype(np.int64)
    padded = R._unpack_rows(sequence.data, creation.tensor(index.reshape(-1), device=sequence.data.device),
                            (max_len, b), _padding(padding_value, sequence.data))  # fmt: skip
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths_t = creation.tensor(lengths)
    if sequence.unsorted_indices is not None:
        u = sequence.unsorted_indices
        padded = padded[u] if batch_first else padded[:, u]
        lengths_t = creation.tensor(lengths[_host_ints(u)])
    return padded, lengths_t


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:  # fmt: skip
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            f"pad_sequence: Expected iterable for input sequences, but got arg of type: {type(sequences)}"
        )
    sequences = list(sequences)
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    return R._pad_sequence(sequences, bool(batch_first), _padding(padding_value, sequences[0]), padding_side)


def _padding(value: Any, like: Any) -> float:
    """``value`` as the float torch converts it from, checked to fit ``like``'s dtype as torch checks it."""
    value = float(value)
    if isinstance(like, Tensor) and D.overflows(value, like.dtype):
        raise D.overflow_error(like.dtype)
    return value


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list:
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(n)] for seq, n in zip(padded_sequences, _host_ints(lengths))]


def pack_sequence(sequences: list, enforce_sorted: bool = True) -> PackedSequence:
    lengths = creation.tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
