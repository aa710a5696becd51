"""torch's CPU generator stream: an mt19937 (numpy's MT19937 engine, seeded as torch's
``init_genrand``) with torch's bookkeeping and state layout, and the raw draws the samplers read."""

from __future__ import annotations

import functools
import os
import struct
import sys
from typing import Any

import numpy as np

_N = 624
_DEFAULT_SEED = 67280421310721  # c10::detail::default_rng_seed_val
_STATE_SIZE = 5056  # sizeof(CPUGeneratorImplState)
_U64 = (1 << 64) - 1
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1


class Generator:
    """torch.Generator(device='cpu'): an mt19937 stream plus torch's cached normal samples."""

    def __init__(self, device: Any = "cpu") -> None:
        if str(device) != "cpu":
            raise RuntimeError(f"torchlike's numpy Generator only supports device 'cpu', got '{device}'")
        self.device = "cpu"
        self._mt = np.random.MT19937()
        self._set_seed(_DEFAULT_SEED)

    def __repr__(self) -> str:
        return f"<torchlike.Generator object at {id(self):#x}>"

    # --- seeding -----------------------------------------------------------------

    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": _init_genrand(seed & 0xFFFFFFFF), "pos": _N}}
        self._pending = np.empty(0, np.uint64)  # words of a torch state whose `next` lags numpy's pos
        self._next_at_end = 0  # torch's `next` while numpy's pos is 624 (0 right after seeding)
        self._next_double_normal: float | None = None
        self._next_float_normal: float | None = None

    def manual_seed(self, seed: int) -> Generator:
        if isinstance(seed, bool) or not isinstance(seed, int):
            if isinstance(seed, np.integer):
                raise TypeError("an integer is required")
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not _I64_MIN <= seed <= _U64:
            raise ValueError("Overflow when unpacking long long")
        self._set_seed(seed & _U64)  # torch: negative seeds wrap to uint64
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little")
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> None:
        raise RuntimeError("CPU Generator does not use offset")

    def clone_state(self) -> Generator:
        g = Generator()
        g.set_state(self.get_state())
        return g

    # --- state bytes (torch's CPUGeneratorImplState) ---------------------------------

    def get_state(self) -> np.ndarray:
        st = self._mt.state["state"]
        key, pos = st["key"], int(st["pos"])
        if len(self._pending):
            left, nxt = len(self._pending) + 1, self._pending_next
        else:
            left, nxt = _N + 1 - pos, (pos if pos < _N else self._next_at_end)
        out = np.zeros(_STATE_SIZE, np.uint8)
        struct.pack_into("<QiiQ", out, 0, self._seed, left, 1, nxt)
        out[24 : 24 + 8 * _N] = key.astype("<u8").view(np.uint8)
        y, f = self._next_double_normal, self._next_float_normal
        struct.pack_into("<dddi", out, 5016, 0.0, 0.0 if y is None else y, 0.0, y is not None)
        struct.pack_into("<f?", out, 5048, 0.0 if f is None else f, f is not None)
        return out

    def set_state(self, new_state: np.ndarray) -> Generator:
        if not isinstance(new_state, np.ndarray) or new_state.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.size != _STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} but found the input RNG state "
                f"size to be {new_state.size}"
            )
        buf = np.ascontiguousarray(new_state).reshape(-1)
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", buf, 0)
        nxt &= 0xFFFFFFFF  # torch: static_cast<uint32_t>(legacy next)
        if not (seeded != 0 and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        if left > 1 and nxt + left - 1 > _N:
            raise NotImplementedError(
                f"mt19937 state with left={left}, next={nxt} makes torch read past its 624-word array "
                "(undefined behaviour); such a state cannot be reproduced"
            )
        key = buf[24 : 24 + 8 * _N].view("<u8").astype(np.uint32)  # torch: 64-bit slots copied into 32 bits
        normal_y, normal_valid = struct.unpack_from("<d", buf, 5024)[0], struct.unpack_from("<i", buf, 5040)[0]
        normal_f, normal_f_valid = struct.unpack_from("<f?", buf, 5048)
        self._seed = seed
        self._pending = np.empty(0, np.uint64)
        self._next_at_end = nxt
        if left == 1:
            pos = _N
        elif nxt + left - 1 == _N:
            pos = nxt
        else:  # consistent in torch but not expressible as numpy's single position
            self._pending = _temper(key[nxt : nxt + left - 1])
            self._pending_next = nxt
            pos = _N
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self._next_double_normal = float(normal_y) if normal_valid else None
        self._next_float_normal = float(np.float32(normal_f)) if normal_f_valid else None
        return self

    # --- raw words -------------------------------------------------------------------

    def _words(self, n: int) -> np.ndarray:
        """The next n 32-bit outputs (as uint64, for wrap-free arithmetic)."""
        if n <= 0:
            return np.empty(0, np.uint64)
        if len(self._pending):
            k = min(n, len(self._pending))
            head, self._pending = self._pending[:k], self._pending[k:]
            self._pending_next += k
            if not len(self._pending):
                self._next_at_end = self._pending_next
            return np.concatenate([head, self._words(n - k)]) if n > k else head
        self._next_at_end = _N
        return self._mt.random_raw(n)

    def _words64(self, n: int) -> np.ndarray:
        """torch's random64(): two words, the first one high."""
        w = self._words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]


@functools.lru_cache(maxsize=8)
def _init_genrand(seed: int) -> np.ndarray:
    """mt19937's init_genrand on the low 32 bits of the seed (torch's mt19937 constructor)."""
    key = [seed & 0xFFFFFFFF]
    for i in range(1, _N):
        prev = key[-1]
        key.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    out = np.array(key, np.uint32)
    out.flags.writeable = False
    return out


def _temper(y: np.ndarray) -> np.ndarray:
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(0xFFFFFFFF)


_LOW_HALF = slice(0, None, 2) if sys.byteorder == "little" else slice(1, None, 2)


def _u24(gen: Generator, n: int) -> np.ndarray:
    """uniform_real_distribution<float>(0, 1): 24 random bits of one word."""
    x = (gen._words(n).view(np.uint32)[_LOW_HALF] & np.uint32(0xFFFFFF)).astype(np.float32)
    x *= np.float32(2.0**-24)
    return x


def _u53(gen: Generator, n: int) -> np.ndarray:
    """uniform_real_distribution<double>(0, 1): 53 random bits of random64()."""
    return (gen._words64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0**-53
