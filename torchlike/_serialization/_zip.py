"""torch's checkpoint container: the zip archive that PyTorch's C++ PyTorchStreamWriter/Reader (miniz) use.

The writer reproduces miniz's layout byte for byte where it matters to readers: every record is
stored uncompressed under ``<archive_name>/``, its data starts on a 64-byte boundary (padding in
an ``FB`` local extra field), sizes and CRC follow the data in a data descriptor, and the archive
always ends with ZIP64 end records. torch's mmap loader computes record offsets from exactly this
layout, so matching it matters beyond cosmetics. The reader uses Python's zipfile (which also
checks each record's CRC-32; torch does not) and raises torch's reader errors.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from typing import IO, Any

_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF
_FLAG_UTF8 = 0x0800
_FLAG_DESCRIPTOR = 0x0008
PRODUCED_VERSION = 3  # torch's kMinProducedFileFormatVersion: plain torch.save never raises it
SERIALIZATION_ID = ".data/serialization_id"


def archive_name_for(path: str) -> str:
    """torch's archive folder for a file name: the base name without its last extension."""
    start = max(path.rfind("/"), path.rfind("\\")) + 1
    base = path[start:]
    dot = base.rfind(".")
    return base[:dot] if dot > 0 else base


def _hash_combine(seed: int, value: int) -> int:
    # c10::hash_combine on 64-bit size_t
    return (seed ^ ((value + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & _U64)) & _U64


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def _std_hash(data: bytes) -> int:
    """libstdc++'s std::hash<std::string> (_Hash_bytes, 64-bit, seed 0xc70f6907)."""
    mul = 0xC6A4A7935BD1E995
    n = len(data)
    aligned = n & ~7
    h = (0xC70F6907 ^ (n * mul)) & _U64
    for i in range(0, aligned, 8):
        h ^= (_shift_mix((int.from_bytes(data[i : i + 8], "little") * mul) & _U64) * mul) & _U64
        h = (h * mul) & _U64
    if n & 7:
        h = ((h ^ int.from_bytes(data[aligned:], "little")) * mul) & _U64
    return _shift_mix((_shift_mix(h) * mul) & _U64)


# Bucket counts a libstdc++ unordered_set grows through (its prime rehash policy, load factor 1).
_BUCKETS = (13, 29, 59, 127, 257, 541, 1109, 2357, 5087, 10273, 20753, 42043, 85229, 172933, 351061, 712697,
            1447153, 2938679, 5967347, 12117689, 24607243)  # fmt: skip


class _StdStringSet:
    """The iteration order of a libstdc++ ``std::unordered_set<std::string>`` after these inserts.

    torch's serialization id hashes record names in the order its writer's ``files_written_``
    set iterates, so reproducing the id means replaying that container: nodes sit in one singly
    linked list; a node joining an empty bucket goes to the front of the list, otherwise right
    after its bucket's "before" node; a rehash replays the list in order into the new buckets.
    """

    def __init__(self, names: list[str]) -> None:
        self._next: dict[str, str | None] = {}
        self._head: str | None = None
        self._code = {n: _std_hash(n.encode("utf-8")) for n in names}
        self._nbuckets = 1
        self._before: dict[int, str | None] = {}  # bucket -> node before its first node (None: list head)
        for count, name in enumerate(names):
            if count + 1 > (self._nbuckets if count else 0):  # the set is full: grow, as libstdc++ does
                self._rehash(self._grown())
            self._insert(name)

    def _grown(self) -> int:
        n = self._nbuckets
        if n == 1:
            return _BUCKETS[0]
        if n in _BUCKETS[:-1]:
            return _BUCKETS[_BUCKETS.index(n) + 1]
        return 2 * n + 1  # past 24 million records the id is only approximately torch's

    def _front(self, node: str, bucket: int) -> None:
        old = self._head
        self._next[node] = old
        self._head = node
        if old is not None:
            self._before[self._code[old] % self._nbuckets] = node
        self._before[bucket] = None

    def _insert(self, node: str) -> None:
        bucket = self._code[node] % self._nbuckets
        if bucket not in self._before:
            self._front(node, bucket)
            return
        prev = self._before[bucket]
        if prev is None:
            self._next[node], self._head = self._head, node
        else:
            self._next[node], self._next[prev] = self._next[prev], node

    def _rehash(self, nbuckets: int) -> None:
        nodes = self.iteration_order()
        self._nbuckets, self._before, self._head, self._next = nbuckets, {}, None, {}
        first_bucket = 0
        for node in nodes:
            bucket = self._code[node] % nbuckets
            if bucket not in self._before:
                self._next[node], self._head = self._head, node
                if self._next[node] is not None:
                    self._before[first_bucket] = node
                self._before[bucket] = None
                first_bucket = bucket
            else:
                self._insert(node)

    def iteration_order(self) -> list[str]:
        out, node = [], self._head
        while node is not None:
            out.append(node)
            node = self._next[node]
        return out


def _zip64_extra(fields: list[int]) -> bytes:
    return struct.pack("<HH", 1, 8 * len(fields)) + b"".join(struct.pack("<Q", v) for v in fields)


class PyTorchFileWriter:
    """Writes records into a torch checkpoint archive on a binary stream (miniz's layout)."""

    def __init__(self, stream: IO[bytes], archive_name: str, alignment: int = 64) -> None:
        if not archive_name:
            raise RuntimeError(f"invalid file name: {archive_name}")
        self._out = stream
        self._prefix = archive_name + "/"
        self._align = alignment
        self._pos = 0
        self._central: list[bytes] = []
        self._written: list[str] = []
        self._crc_hash = 0
        self.serialization_id = ""

    def _write(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):  # raw streams may take part of a write
            n = self._out.write(view[done:])
            if n is None:  # buffered streams write everything or raise
                break
            if n <= 0:
                raise RuntimeError("PytorchStreamWriter failed writing file: the stream accepted no bytes.")
            done += n
        self._pos += len(view)

    def write_record(self, name: str, data: Any, size: int) -> None:
        """Store ``size`` bytes of ``data`` (bytes or a buffer) as ``<archive>/<name>``."""
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        self._written.append(name)
        full = (self._prefix + name).encode("utf-8")
        cursor = self._pos
        big_size, big_ofs = size >= _U32, cursor >= _U32
        zip64 = ([size, size] if big_size else []) + ([cursor] if big_ofs else [])
        local_z64 = _zip64_extra(zip64) if zip64 else b""
        start = cursor + 30 + len(full) + len(local_z64) + 4
        pad = -start % self._align
        extra = local_z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad
        flags = _FLAG_UTF8 | (_FLAG_DESCRIPTOR if size else 0)
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, flags, 0, 0, 0, 0, 0, 0, len(full), len(extra))
        self._write(header + full + extra)
        crc = 0
        if size:
            view = memoryview(data).cast("B")
            if len(view) != size:
                raise RuntimeError(f"PytorchStreamWriter failed writing file {name}: size mismatch")
            crc = zlib.crc32(view)
            self._write(view)
            if zip64:
                self._write(struct.pack("<IIQQ", 0x08074B50, crc, size, size))
            else:
                self._write(struct.pack("<IIII", 0x08074B50, crc, size, size))
            self._crc_hash = _hash_combine(self._crc_hash, crc)
        cd_extra = _zip64_extra(zip64) if zip64 else b""
        s32, o32 = min(size, _U32), min(cursor, _U32)
        entry = struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, flags, 0, 0, 0, crc, s32, s32,
            len(full), len(cd_extra), 0, 0, 0, 0, o32,
        )  # fmt: skip
        self._central.append(entry + full + cd_extra)

    def write_end_of_file(self) -> None:
        """Add torch's version and serialization-id records, then the central directory."""
        if "version" not in self._written and ".data/version" not in self._written:
            version = f"{PRODUCED_VERSION}\n".encode()
            self.write_record("version", version, len(version))
        if "byteorder" not in self._written:
            self.write_record("byteorder", b"little", 6)
        names = 0
        for n in _StdStringSet(self._written).iteration_order():
            names = _hash_combine(names, _std_hash(n.encode("utf-8")))
        self.serialization_id = f"{names:020d}{self._crc_hash:020d}"
        sid = self.serialization_id.encode()
        self.write_record(SERIALIZATION_ID, sid, len(sid))
        cd_offset = self._pos
        cd = b"".join(self._central)
        self._write(cd)
        n = len(self._central)
        eocd64_offset = self._pos
        self._write(
            struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x002D, 0, 0, n, n, len(cd), cd_offset)
        )
        self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64_offset, 1))
        n16 = min(n, 0xFFFF)
        self._write(
            struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n16, n16, min(len(cd), _U32), min(cd_offset, _U32), 0)
        )


_MINIZ_HINT = (
    ". This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
    "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was transferred "
    "incorrectly, or the file was modified after saving."
)


class PyTorchFileReader:
    """Reads records of a torch checkpoint archive (any zip torch could read: stored or deflated)."""

    def __init__(self, stream: IO[bytes]) -> None:
        try:
            self._zip = zipfile.ZipFile(stream)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, struct.error, ValueError):
            raise RuntimeError(
                "PytorchStreamReader failed reading zip archive: failed finding central directory"
                + _MINIZ_HINT
            ) from None
        if not infos:
            raise RuntimeError("archive does not contain any files")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self._prefix = first[: first.index("/") + 1]
        for info in infos:
            name = info.filename
            if not name.startswith(self._prefix):
                raise RuntimeError(
                    "[enforce fail at inline_container.cc:340] . file in archive is not in a subdirectory "
                    f"{self._prefix}: {name}"
                )
        self._names = {i.filename for i in infos}
        if not (self.has_record("version") or self.has_record(".data/version")):
            raise RuntimeError(
                'Expected hasRecord("version") to be true, but got false.  (Could this error message be improved?  '
                "If so, please report an enhancement request to PyTorch.)"
            )

    def has_record(self, name: str) -> bool:
        return self._prefix + name in self._names

    def get_all_records(self) -> list[str]:
        n = len(self._prefix)
        return [i.filename[n:] for i in self._zip.infolist()]

    def get_record(self, name: str) -> bytes:
        full = self._prefix + name
        if full not in self._names:
            raise RuntimeError(f"file not found: {full}")
        try:
            return self._zip.read(full)
        except zipfile.BadZipFile as e:
            what = "CRC-32 check failed" if "CRC" in str(e) else str(e)
            raise RuntimeError(
                f"PytorchStreamReader failed reading file {name}: {what}" + _MINIZ_HINT
            ) from None
        except (EOFError, OSError, ValueError, struct.error, zlib.error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {e}" + _MINIZ_HINT) from None

    def get_record_offset(self, name: str) -> int | None:
        """Where a stored record's data starts in the file (None when it is compressed)."""
        info = self._zip.getinfo(self._prefix + name)
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        fp = self._zip.fp
        fp.seek(info.header_offset)
        header = fp.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise RuntimeError(
                f"PytorchStreamReader failed reading file {name}: bad local header" + _MINIZ_HINT
            )
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + 30 + name_len + extra_len

    def serialization_id(self) -> str:
        return self.get_record(SERIALIZATION_ID).decode() if self.has_record(SERIALIZATION_ID) else ""

    def close(self) -> None:
        self._zip.close()
