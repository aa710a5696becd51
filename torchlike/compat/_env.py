"""`python -m torchlike env`: what a bug report needs, as `python -m torch.utils.collect_env` for torch."""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import platform
import sys

# Optional packages torchlike uses when present: distribution name -> what needs it.
OPTIONAL = {
    "Pillow": "torchvision-style transforms on PIL images",
    "tensorboard": "torch.utils.tensorboard.SummaryWriter",
    "matplotlib": "the examples' plots",
    "tqdm": "the examples' progress bars",
}


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _home_as_tilde(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path == home or path.startswith(home + os.sep) else path


def _cache_folder() -> str:
    """The persistent compile cache this process uses (what `torchlike._cache.configure` set up at
    import, or the user's own `jax_compilation_cache_dir`), with its size; or why there is none."""
    import jax

    from torchlike import _cache

    path = jax.config.jax_compilation_cache_dir
    if not path:
        if _cache.cache_dir() is None:
            return f"off (TORCHLIKE_CACHE={os.environ.get('TORCHLIKE_CACHE', '')})"
        return f"off ({_home_as_tilde(_cache.cache_dir() or '')} could not be created)"
    files = size = 0
    try:
        for entry in os.scandir(path):
            if entry.is_file():
                files += 1
                size += entry.stat().st_size
    except OSError:
        return f"{_home_as_tilde(path)} (not readable)"
    return f"{_home_as_tilde(path)} ({files} files, {size / 2**20:.1f} MB)"


def _lazy_mode() -> str:
    """`torchlike.lazy.enabled()` where that module exists, with the `TORCHLIKE_LAZY` setting."""
    value = os.environ.get("TORCHLIKE_LAZY")
    setting = f"TORCHLIKE_LAZY={value}" if value is not None else "TORCHLIKE_LAZY not set"
    try:
        lazy = importlib.import_module("torchlike.lazy")
    except ModuleNotFoundError as e:
        if e.name != "torchlike.lazy":
            return f"unknown: importing torchlike.lazy failed ({e}); {setting}"
        return f"off: this torchlike has no lazy mode ({setting})"
    except Exception as e:  # a report must not fail on what it reports
        return f"unknown: importing torchlike.lazy failed ({type(e).__name__}: {e}); {setting}"
    return f"{'on' if lazy.enabled() else 'off'} (torchlike.lazy.enabled(); {setting})"


def collect_env() -> dict[str, object]:
    """Versions, JAX's backend and devices, torchlike's settings and the optional extras installed."""
    import jax
    import numpy

    import torchlike

    return {
        "torchlike": torchlike.__version__,
        "Python": sys.version.replace("\n", " "),
        "platform": platform.platform(),
        "JAX": jax.__version__,
        "jaxlib": _version("jaxlib") or "not installed",
        "NumPy": numpy.__version__,
        "optax": _version("optax") or "not installed",
        "JAX backend": jax.default_backend(),
        "JAX devices": [str(d) for d in jax.devices()],
        "CUDA available (torchlike.cuda.is_available())": torchlike.cuda.is_available(),
        "lazy mode": _lazy_mode(),
        "cache folder": _cache_folder(),
        "optional extras": {name: _version(name) or f"not installed ({use})" for name, use in OPTIONAL.items()},
    }


def format_env(info: dict[str, object]) -> str:
    lines = []
    for key, value in info.items():
        if isinstance(value, dict):
            lines.append(f"{key}:")
            lines += [f"  {k}: {v}" for k, v in value.items()]
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(map(str, value))}")
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines)
