"""torch's sharing-strategy settings. torchlike shares CPU tensors one way whatever the strategy
(named memory-mapped blocks, closest to torch's ``file_system``); the setting is kept for scripts
that read it back."""

from __future__ import annotations

import sys

_all = {"file_system"} if sys.platform in ("darwin", "win32") else {"file_descriptor", "file_system"}
_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    global _strategy
    if new_strategy not in _all:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all}")
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    return _strategy


def get_all_sharing_strategies() -> set[str]:
    return _all
