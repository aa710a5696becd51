"""The persistent compilation cache: XLA programs compiled by one process are loaded by the next.

Every eager kernel, lazy program and compiled step is an XLA executable. JAX's persistent
compilation cache stores them on disk keyed by the program, the backend and the JAX/XLA
versions, so a second run of a script skips compiling. torchlike turns it on at import:

- the folder is ``$TORCHLIKE_CACHE_DIR``, else ``$XDG_CACHE_HOME/torchlike/jax``, else
  ``~/.cache/torchlike/jax``;
- ``TORCHLIKE_CACHE=0`` turns it off (as does setting JAX's own ``jax_compilation_cache_dir``,
  which is then left alone).

Entries are written to a temporary file and renamed into place, so a reader in another process
never sees half an entry; an entry that cannot be read (truncated, corrupt) is a miss and is
replaced by the freshly compiled program.
"""

from __future__ import annotations

import os
import tempfile

import jax

_SUFFIX = "-cache"  # JAX's own file naming, so JAX's cache tools read the folder too


def cache_dir() -> str | None:
    """The folder the cache lives in, or None when it is switched off."""
    if os.environ.get("TORCHLIKE_CACHE", "1").strip().lower() in ("0", "false", "off", "no"):
        return None
    path = os.environ.get("TORCHLIKE_CACHE_DIR")
    if not path:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "torchlike", "jax")
    return path


class _Store:
    """JAX's cache interface (``get``/``put`` of compressed bytes by key) over one folder."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _file(self, key: str) -> str:
        return os.path.join(self.path, key + _SUFFIX)

    def get(self, key: str) -> bytes | None:
        try:
            with open(self._file(key), "rb") as f:
                data = f.read()
        except OSError:
            return None
        try:
            from jax._src import compilation_cache

            compilation_cache.decompress_executable(data)
        except Exception:  # noqa: BLE001 - any unreadable entry is a miss; put() replaces it
            return None
        return data

    def put(self, key: str, value: bytes) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.path)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(value)
            os.replace(tmp, self._file(key))  # atomic: readers see the old entry or the whole new one
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def configure() -> str | None:
    """Point JAX's persistent compilation cache at torchlike's folder; returns the folder used."""
    if jax.config.jax_compilation_cache_dir:  # the user configured JAX's cache themselves
        return jax.config.jax_compilation_cache_dir
    path = cache_dir()
    if path is None:
        return None
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)  # entries are code the process will run: owner only
    except OSError:  # NOTE: an unwritable home only costs the cache, never the import
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    # Cache everything: torchlike's eager kernels each compile in milliseconds, but there are many.
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    try:
        from jax._src import compilation_cache
        from jax._src.compilation_cache_interface import CacheInterface
    except ImportError:  # another JAX layout: JAX's own (non-atomic) file store serves the folder
        return path
    if getattr(compilation_cache, "_cache", False) is None:  # not yet initialised by JAX
        compilation_cache._cache = type("TorchlikeCache", (_Store, CacheInterface), {})(path)
        compilation_cache._cache_initialized = True
    return path
