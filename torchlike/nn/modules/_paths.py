"""torch's public module paths for the layer classes (``torch.nn.modules.linear.Linear``)."""

from __future__ import annotations

from typing import Any

_PRIVATE = __name__.rsplit(".", 1)[0] + "._"


def set_module(module_name: str, namespace: dict[str, Any]) -> None:
    """Give the classes a public module re-exports from a private file that module's name as their
    ``__module__``: what reprs show, and what pickles (and torch) find them under."""
    for value in list(namespace.values()):
        if isinstance(value, type) and value.__module__.startswith(_PRIVATE):
            value.__module__ = module_name
