"""torch's restricted unpickler for ``load(weights_only=True)``: it interprets pickle opcodes itself.

Only allowlisted globals can be named, and only allowlisted callables can be called, so a hostile
checkpoint cannot run code. Everything else is a ``pickle.UnpicklingError`` with torch's text.
Compared with torch's, the data-only opcodes of protocols 3-5 are also understood (they build
plain values and call nothing).

With ``scan=True`` nothing is resolved or called at all: globals and calls become inert
placeholders. torch's legacy format stores tensor data after the pickle, so its loader scans the
pickle once this way to learn which storages to read before unpickling for real.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import pickle
from collections import Counter, OrderedDict
from struct import unpack
from sys import maxsize
from typing import IO, Any, Callable

UnpicklingError = pickle.UnpicklingError
_BLOCKLISTED_MODULES = ("sys", "os", "posix", "nt")


class Inert:
    """A placeholder for a global, or the result of a call, while scanning."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _unsupported_global(full_path: str) -> UnpicklingError:
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins") :]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full_path}])` or the `torch.serialization.safe_globals("
        f"[{full_path}])` context manager to allowlist this global if you trust this class/function."
    )


class Unpickler:
    """``Unpickler(file, allowed=..., persistent_load=...).load()``.

    ``allowed`` maps torch's dotted names (``"torch._utils._rebuild_tensor_v2"``) to the torchlike
    objects they stand for; ``build`` decides how BUILD applies a state to an instance of an
    allowed type (raising for others).
    """

    def __init__(
        self, file: IO[bytes], *, allowed: dict[str, Any], persistent_load: Callable[[Any], Any],
        build: Callable[[Any, Any], None], new_parameter: Any = None, encoding: str = "utf-8", scan: bool = False,
    ) -> None:  # fmt: skip
        self._file = file
        self._allowed = allowed
        self._allowed_ids = {id(v) for v in allowed.values()}
        self.persistent_load = persistent_load
        self._build = build
        self._parameter = new_parameter
        self.encoding = encoding
        self._scan = scan
        self.memo: dict[int, Any] = {}

    def _read(self, n: int) -> bytes:
        data = self._file.read(n)
        if len(data) != n:
            raise UnpicklingError("pickle data was truncated")
        return data

    def _readline(self) -> bytes:
        line = self._file.readline()
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated")
        return line[:-1]

    def _global(self, module: str, name: str) -> Any:
        full_path = f"{module}.{name}"
        if self._scan:
            return Inert(full_path)
        if module in _BLOCKLISTED_MODULES:
            raise UnpicklingError(
                f"Trying to load unsupported GLOBAL {full_path} whose module {module} is blocked."
            )
        if full_path in self._allowed:
            return self._allowed[full_path]
        raise _unsupported_global(full_path)

    def _pop_mark(self) -> list:
        items = self.stack
        if not self.metastack:
            raise UnpicklingError("could not find MARK")
        self.stack = self.metastack.pop()
        return items

    def _target(self, kinds: tuple, opcode: str, what: str) -> Any:
        if not self.stack:
            raise UnpicklingError("unpickling stack underflow")
        target = self.stack[-1]
        if type(target) not in kinds and not isinstance(target, Inert):
            raise UnpicklingError(f"Can only {opcode} for {what}, but got {type(target)}")
        return target

    def _call(self, func: Any, args: tuple) -> Any:
        if self._scan or isinstance(func, Inert):
            return Inert("call")
        if id(func) not in self._allowed_ids:
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise UnpicklingError(msg)
        if not isinstance(args, tuple):
            raise UnpicklingError(f"REDUCE arguments must be a tuple, got {type(args)}")
        return func(*args)

    def load(self) -> Any:
        self.stack: list = []
        self.metastack: list = []
        try:
            return self._run()
        except IndexError:
            raise UnpicklingError("unpickling stack underflow") from None
        except KeyError as e:
            raise UnpicklingError(f"Memo value not found at index {e.args[0]}") from None

    def _run(self) -> Any:
        read, st = self._read, None
        while True:
            key = self._file.read(1)
            if not key:
                raise EOFError
            op = key[0]
            st = self.stack
            if op == 0x80:  # PROTO
                read(1)
            elif op == 0x95:  # FRAME: framing only matters for streaming readers
                read(8)
            elif op == 0x2E:  # STOP
                return st.pop()
            elif op == 0x28:  # MARK
                self.metastack.append(st)
                self.stack = []
            elif op == 0x30:  # POP
                if st:
                    st.pop()
                else:
                    self._pop_mark()
            elif op == 0x31:  # POP_MARK
                self._pop_mark()
            elif op == 0x32:  # DUP
                st.append(st[-1])
            # --- constants and numbers
            elif op == 0x4E:  # NONE
                st.append(None)
            elif op == 0x88:  # NEWTRUE
                st.append(True)
            elif op == 0x89:  # NEWFALSE
                st.append(False)
            elif op == 0x4A:  # BININT
                st.append(unpack("<i", read(4))[0])
            elif op == 0x4B:  # BININT1
                st.append(read(1)[0])
            elif op == 0x4D:  # BININT2
                st.append(unpack("<H", read(2))[0])
            elif op == 0x8A:  # LONG1
                st.append(pickle.decode_long(read(read(1)[0])))
            elif op == 0x8B:  # LONG4
                n = unpack("<i", read(4))[0]
                if n < 0:
                    raise UnpicklingError("LONG pickle has negative byte count")
                st.append(pickle.decode_long(read(n)))
            elif op == 0x47:  # BINFLOAT
                st.append(unpack(">d", read(8))[0])
            # --- strings and bytes
            elif op in (0x58, 0x8C, 0x8D):  # BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
                n = (
                    read(1)[0]
                    if op == 0x8C
                    else unpack("<I" if op == 0x58 else "<Q", read(4 if op == 0x58 else 8))[0]
                )
                if n > maxsize:
                    raise UnpicklingError("String is too long")
                st.append(str(read(n), "utf-8", "surrogatepass"))
            elif op in (0x55, 0x54):  # SHORT_BINSTRING, BINSTRING (Python 2 str)
                n = read(1)[0] if op == 0x55 else unpack("<i", read(4))[0]
                if n < 0:
                    raise UnpicklingError("BINSTRING pickle has negative byte count")
                data = read(n)
                st.append(data if self.encoding == "bytes" else data.decode(self.encoding, "strict"))
            elif op in (0x43, 0x42, 0x8E):  # SHORT_BINBYTES, BINBYTES, BINBYTES8
                n = (
                    read(1)[0]
                    if op == 0x43
                    else unpack("<I" if op == 0x42 else "<Q", read(4 if op == 0x42 else 8))[0]
                )
                st.append(read(n))
            elif op == 0x96:  # BYTEARRAY8
                st.append(bytearray(read(unpack("<Q", read(8))[0])))
            # --- containers
            elif op == 0x29:  # EMPTY_TUPLE
                st.append(())
            elif op == 0x74:  # TUPLE
                items = self._pop_mark()
                self.stack.append(tuple(items))
            elif op == 0x85:  # TUPLE1
                st[-1] = (st[-1],)
            elif op == 0x86:  # TUPLE2
                st[-2:] = [(st[-2], st[-1])]
            elif op == 0x87:  # TUPLE3
                st[-3:] = [(st[-3], st[-2], st[-1])]
            elif op == 0x5D:  # EMPTY_LIST
                st.append([])
            elif op == 0x6C:  # LIST
                items = self._pop_mark()
                self.stack.append(list(items))
            elif op == 0x61:  # APPEND
                item = st.pop()
                target = self._target((list,), "append", "lists")
                if type(target) is list:
                    target.append(item)
            elif op == 0x65:  # APPENDS
                items = self._pop_mark()
                target = self._target((list,), "extend", "lists")
                if type(target) is list:
                    target.extend(items)
            elif op == 0x7D:  # EMPTY_DICT
                st.append({})
            elif op == 0x64:  # DICT
                items = self._pop_mark()
                self.stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
            elif op == 0x73:  # SETITEM
                v, k = st.pop(), st.pop()
                target = self._target(_DICTS, "SETITEM", _DICTS_TEXT)
                if not isinstance(target, Inert):
                    target[k] = v
            elif op == 0x75:  # SETITEMS
                items = self._pop_mark()
                target = self._target(_DICTS, "SETITEMS", _DICTS_TEXT)
                if not isinstance(target, Inert):
                    for i in range(0, len(items), 2):
                        target[items[i]] = items[i + 1]
            elif op == 0x8F:  # EMPTY_SET
                st.append(set())
            elif op == 0x90:  # ADDITEMS
                items = self._pop_mark()
                target = self._target((set,), "ADDITEMS", "sets")
                if type(target) is set:
                    target.update(items)
            elif op == 0x91:  # FROZENSET
                items = self._pop_mark()
                self.stack.append(frozenset(items))
            # --- memo
            elif op in (0x68, 0x6A):  # BINGET, LONG_BINGET
                st.append(self.memo[read(1)[0] if op == 0x68 else unpack("<I", read(4))[0]])
            elif op in (0x71, 0x72):  # BINPUT, LONG_BINPUT
                self.memo[read(1)[0] if op == 0x71 else unpack("<I", read(4))[0]] = st[-1]
            elif op == 0x94:  # MEMOIZE
                self.memo[len(self.memo)] = st[-1]
            # --- the risky ones
            elif op == 0x63:  # GLOBAL
                module = self._readline().decode("utf-8")
                name = self._readline().decode("utf-8")
                if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names, as protocol 2 writes them
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
                st.append(self._global(module, name))
            elif op == 0x93:  # STACK_GLOBAL
                name, module = st.pop(), st.pop()
                if type(name) is not str or type(module) is not str:
                    raise UnpicklingError("STACK_GLOBAL requires str")
                st.append(self._global(module, name))
            elif op == 0x52:  # REDUCE
                args = st.pop()
                st[-1] = self._call(st[-1], args)
            elif op == 0x81:  # NEWOBJ
                args, cls = st.pop(), st.pop()
                st.append(self._new(cls, args))
            elif op == 0x62:  # BUILD
                state = st.pop()
                if not self._scan and not isinstance(st[-1], Inert):
                    self._build(st[-1], state)
            elif op == 0x51:  # BINPERSID
                pid = st.pop()
                if type(pid) is not tuple and type(pid) is not int:
                    raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
                if type(pid) is tuple and len(pid) > 0 and pid[0] != "storage" and pid[0] != b"storage":
                    raise UnpicklingError(
                        f"Only persistent_load of storage is allowed, but got {type(pid[0])}"
                    )
                st.append(self.persistent_load(pid))
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    def _new(self, cls: Any, args: Any) -> Any:
        if self._scan or isinstance(cls, Inert):
            return Inert("new")
        if self._parameter is not None and cls is self._parameter():
            return cls(*args)
        if not isinstance(cls, type) or id(cls) not in self._allowed_ids:
            raise UnpicklingError(
                f"Can only create new object for nn.Parameter or classes allowlisted via `add_safe_globals` but got {cls}"
            )
        return cls.__new__(cls, *args)


_DICTS = (dict, OrderedDict, Counter)
_DICTS_TEXT = "dict, collections.OrderedDict, collections.Counter"

# The non-torch globals torch allows by default (values for ``allowed``).
BASE_GLOBALS = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "_codecs.encode": codecs.encode,  # bytes in protocol 2
    "builtins.bytearray": bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
}
