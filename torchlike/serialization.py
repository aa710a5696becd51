"""torch.save / torch.load, in torch's own checkpoint format (torch.serialization).

Files are torch's zip checkpoints: ``data.pkl`` (a protocol-2 pickle whose tensors point at
storages through persistent ids ``('storage', <torch.FloatStorage>, key, location, numel)``),
one ``data/<key>`` record per storage, and torch's ``.format_version``, ``.storage_alignment``,
``byteorder``, ``version`` and ``.data/serialization_id`` records. The pickle names torch's
globals (``torch._utils._rebuild_tensor_v2``, ``torch.Size``, ``torch.float32``...), so real
torch loads what torchlike saves and vice versa; on load those names map back to torchlike.

Differences from torch: every record's CRC-32 is checked on load (torch reads corrupted tensor
data silently); saving to a regular file writes a temporary file and renames it over the target, so an
interrupted save leaves the previous file intact (a hard-linked file's other names keep the old
contents: see ``_atomic_write``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import pickle
import socket
import stat
import tempfile
import warnings
from typing import IO, Any, Callable, Union

from ._core import dtype as D
from ._core import tensor as T
from ._core.storage import UntypedStorage, tensor_on
from ._core.tensor import Tensor
from ._serialization import _zip
from ._serialization._loader import _load_file, _Loader, default_restore_location, location_tag
from ._serialization._names import (
    _rebuild_from_type_v2,
    _set_obj_state,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from ._serialization._pickler import (
    _obj_state,
    _pickle_with_storages,
    _tensor_reduce,
    _write_legacy,
    _write_zip,
)

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals",
           "default_restore_location", "location_tag", "DEFAULT_PROTOCOL"]  # fmt: skip

FileLike = Union[str, os.PathLike, IO[bytes]]
DEFAULT_PROTOCOL = 2
UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` from `False` "
    "to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, but it can "
    "result in arbitrary code execution. Do it only if you got the file from a trusted source."
)


_OPEN_FAILED = "[enforce fail at inline_container.cc:747] . open file failed with strerror: "  # torch's text


def _temp_prefix(target: str) -> str:
    """Temporary files of a save of ``target`` are ``.<name>.<host>.<pid>.<random>.tmp`` beside it."""
    host = "".join(c if c.isalnum() or c == "-" else "_" for c in socket.gethostname()) or "host"
    return f".{os.path.basename(target)}.{host}."


def _remove_stale_temps(target: str, prefix: str) -> None:
    """Remove temporary files that saves of ``target`` on this host left when their process died."""
    parent = os.path.dirname(target) or "."
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid = name[len(prefix):].split(".", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(parent, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. another user's process
        return True
    return True


def _write_through(target: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write into an existing non-regular file (FIFO, device) as torch does: open it and write."""
    try:
        fh = open(target, "wb")
    except OSError as e:
        raise RuntimeError(_OPEN_FAILED + (e.strerror or str(e))) from e
    with fh:
        write(fh)


def _atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write a new file next to ``path`` and rename it over ``path`` only once it is complete.

    A symlink is followed and its target replaced. A FIFO or device file is written through, as torch
    does. A regular file with other hard links is replaced too (a rename is the only safe way to never
    leave a half-written checkpoint), so its other names keep the previous contents; a warning says so.
    Temporary files of saves to the same target whose process has died (killed mid-save) are removed.
    """
    target = os.path.realpath(path) if os.path.islink(path) else path
    parent = os.path.dirname(target)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(target):
        raise RuntimeError(_OPEN_FAILED + os.strerror(errno.EISDIR))
    try:
        st = os.stat(target)
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_through(target, write)
        return
    if st is not None and st.st_nlink > 1:
        warnings.warn(
            f"torchlike.save: {path} has {st.st_nlink} hard links; it is replaced atomically, so its other names "
            "keep the previous contents (torch overwrites the file in place).",
            UserWarning,
            stacklevel=3,
        )
    prefix = _temp_prefix(target)
    _remove_stale_temps(target, prefix)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", suffix=".tmp", dir=parent or ".")
    except OSError as e:
        raise RuntimeError(_OPEN_FAILED + (e.strerror or str(e))) from e
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        if os.path.exists(target):
            mode = os.stat(target).st_mode & 0o7777
        else:
            umask = os.umask(0o022)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def save(obj: object, f: FileLike, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False) -> None:  # fmt: skip
    """torch.save: write ``obj`` to ``f`` (a path or a binary file object) in torch's checkpoint format.

    A path is written atomically (temporary file, then rename). ``pickle_module`` must be the
    standard ``pickle``: torch's global names are written by a pure-Python pickler.
    """
    if pickle_module is not pickle:
        raise NotImplementedError("torchlike.save supports only the standard pickle module")
    is_path = isinstance(f, (str, os.PathLike))
    if not is_path and not hasattr(f, "write"):
        raise AttributeError(
            "expected 'f' to be string, path, or a file-like object with a 'write' attribute"
        )
    legacy = not _use_new_zipfile_serialization
    data, storages = _pickle_with_storages(obj, pickle_protocol, legacy)

    def write(stream: IO[bytes], archive: str) -> None:
        if legacy:
            _write_legacy(stream, data, storages, pickle_protocol)
        else:
            _write_zip(stream, archive, data, storages, not _disable_byteorder_record)

    if is_path:
        path = os.fspath(f)
        archive = _zip.archive_name_for(path) if path.isascii() else "archive"
        if not archive:
            raise RuntimeError(f"invalid file name: {path}")
        _atomic_write(path, lambda fh: write(fh, archive))
    else:
        if not callable(getattr(f, "write", None)):
            raise TypeError(f"Buffer of {str(type(f)).strip('<>')} has no callable attribute 'write'")
        write(f, "archive")  # type: ignore[arg-type]
        if hasattr(f, "flush"):
            f.flush()  # type: ignore[union-attr]


# --- loading ---------------------------------------------------------------------------------


def _get_wo_message(message: str) -> str:
    docs = (
        "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
        "weights_only https://pytorch.org/docs/stable/generated/torch.load.html."
    )
    if "was not an allowed global by default." in message:
        out = (
            "Weights only load failed. This file can still be loaded, to do so you have two options, "
            "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
            f"\n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check the "
            "recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
        )
        return out + docs
    out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        out += (
            "Please file an issue with the following so that we can make `weights_only=True` compatible with your "
            "use case: WeightsUnpickler error: "
        )
    return out + "\n\n" + message + docs


def _default_weights_only(weights_only: bool | None, pickle_module: Any) -> bool:
    truthy = ("1", "y", "yes", "true")
    force_wo = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    force_no_wo = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in truthy
    if force_wo and force_no_wo:
        raise RuntimeError(
            "Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but "
            "both were set."
        )
    if force_wo:
        return True
    if weights_only is None:
        if force_no_wo:
            warnings.warn(
                "Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the`weights_only` argument was "
                "not explicitly passed to `torch.load`, forcing weights_only=False.",
                UserWarning,
                stacklevel=3,
            )
            return False
        return pickle_module is None
    return bool(weights_only)


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:  # fmt: skip
    """torch.load: read an object saved by torch.save (torch's or torchlike's) from a path or file object.

    ``weights_only=True`` (the default) allows only tensors, containers, primitives and globals
    added with :func:`add_safe_globals`; nothing in the file can run code. The whole file is
    read (and every record's CRC checked) before the object is returned, so a corrupted file
    raises instead of giving a partial object.
    """
    weights_only = _default_weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    loader = _Loader(map_location, weights_only, pickle_module, pickle_load_args)
    is_path = isinstance(f, (str, os.PathLike))
    with contextlib.ExitStack() as stack:
        if is_path:
            opened: Any = stack.enter_context(open(f, "rb"))
        else:
            opened = f
            try:
                opened.seek(opened.tell())  # type: ignore[union-attr]
            except (io.UnsupportedOperation, AttributeError) as e:
                raise type(e)(
                    f"{e}. You can only torch.load from a file that is seekable. Please pre-load the data into a "
                    "buffer like io.BytesIO and try to load from it instead."
                ) from None
        try:
            return _load_file(opened, loader, f if is_path else None, bool(mmap))
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_get_wo_message(str(e))) from None
            raise


# --- plain pickling and copy.copy of tensors (Tensor.__reduce_ex__) ---------------------------


def _rebuild_plain(storage: UntypedStorage, dtype: D.dtype, offset: int, size: tuple, stride: tuple,
                   requires_grad: bool, state: Any) -> Tensor:  # fmt: skip
    t = tensor_on(storage, dtype, offset, size, stride)
    t.requires_grad = requires_grad
    if state:
        _set_obj_state(t, state)
    return t


def reduce_tensor(tensor: Tensor, proto: int) -> tuple:
    """``Tensor.__reduce_ex__`` for pickle and ``copy.copy``: the storage travels once per pickle.

    As in torch, ``copy.copy(t)`` shares ``t``'s memory, and tensors sharing memory still share
    it after one ``pickle.loads``.
    """
    func, args = _tensor_reduce(tensor)
    ref = args[0]
    source = ref.source
    storage = (
        UntypedStorage._of(tensor)
        if isinstance(source, T.Buffer)
        else UntypedStorage._free(source, ref.device)
    )
    state = _obj_state(tensor)
    if type(tensor) is Tensor:
        return _rebuild_plain, (storage, tensor._dtype, args[1], args[2], args[3], tensor._rg, state)
    plain = (storage, tensor._dtype, args[1], args[2], args[3], tensor._rg, None)
    return _rebuild_from_type_v2, (_rebuild_plain, type(tensor), plain, state or {})


Tensor.__reduce_ex__ = reduce_tensor  # pickling lives here, above _core's Tensor
