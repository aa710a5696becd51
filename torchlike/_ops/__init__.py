"""The op table and its families, and the installer that generates the public namespaces from them
(``names``); importing this package attaches the Tensor methods."""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable

import importlib
import pkgutil

from .._core.tensor import Tensor

from . import creation, indexing, linalg, pointwise, reduction, return_types, shape, views  # noqa: F401
from ._common import commit, inplace_variant  # noqa: F401  (commit: families import it from here)
from . import _methods
from .registry import EXPOSED, OPS, RANDOM, VIEWS, _generate_wrapper, inplace_spec

# Every module of this package is an op family; importing them all fills the table.
FAMILIES = [
    importlib.import_module(f"{__name__}.{m.name}")
    for m in pkgutil.iter_modules(__path__)
    if m.name not in ("registry",)
]


# How each public name of each namespace came to be, filled by ``names``: ``{space: {name: (kind, defining module)}}``;
# docs/namespaces.md is generated from it.
ROUTES: dict[str, dict[str, tuple[str, str]]] = {}


def _said(route: tuple) -> str:
    kind, where = route
    return f"{kind} in {where if isinstance(where, str) else where.__module__}"


@functools.cache
def names(space: str) -> dict[str, Any]:
    """The contents of namespace ``space`` (one of ``registry.SPACES``), generated from the table: the ops
    exposed there (``defop(namespaces=...)``), their in-place variants (``inplace_in``), the random ops
    (``defrandom``), the views (``defview``), the hand-written functions registered with ``registry.expose``
    and, for ``Tensor``, the method table ``_methods.TENSOR_METHODS``. Every public namespace module asks this for its names."""
    found: dict[str, Any] = {}
    routes: dict[str, tuple[str, str]] = {}

    def put(public: str, fn: Any, kind: str, where: Any) -> None:
        # one name, one object: the same function reached twice is fine, two functions under one name are not
        if public in found and found[public] is not fn:
            raise TypeError(f"{space}.{public} is declared twice: by {_said(routes[public])} and by {_said((kind, where))}")
        found[public] = fn
        routes.setdefault(public, (kind, where if isinstance(where, str) else where.__module__))

    for n, fn in EXPOSED[space].items():
        put(n, fn, "composite (@expose)", fn)
    for key, op in OPS.items():
        alias = key != op.name
        if alias and not key.startswith("_") and space in op.exposed:
            put(key, _function_for(op, space, op.exposed[space][0]), "table op alias", op.fn)
        for public in op.exposed.get(space, ()) if not alias else ():
            put(public, _function_for(op, space, public), "table op", op.fn)
        if space in op.inplace_in:
            stem = (key if op.inplace is True or alias else op.inplace) + "_"
            # torch.abs_(x) is x.abs_(): where the method table has its own in-place form (torch's quirks), it is the op's
            special = _methods.TENSOR_METHODS.get(stem)
            put(stem, special or inplace_fn(op), "table op, in place", special or op.fn)
    for entry in RANDOM.values():
        for public in entry.exposed.get(space, ()):
            put(public, entry.method if space == "Tensor" else entry.wrapper, "random op", entry.fn)
    for n, fn in VIEWS.items():
        if (space == "torch" and fn._function) or (space == "Tensor" and fn._method):
            put(n, fn, "view op", fn.__wrapped__)
    if space == "Tensor":
        for n, fn in _methods.TENSOR_METHODS.items():
            put(n, fn, "method table", _methods.__name__)
    ROUTES[space] = routes
    return found


def _function_for(op: Any, space: str, public: str) -> Callable:
    """An op's function in ``space``: its wrapper, or for ``nn.functional`` one without ``out=`` and with
    ``inplace=`` when the op declares ``inplace_arg``."""
    if space != "nn.functional" or not (op.inplace_arg or op.out):
        return op.wrapper
    return _generate_wrapper(op, inspect.signature(op.fn), False, inplace=inplace_fn(op) if op.inplace_arg else None,
                             name=public, module="torchlike.nn.functional")  # fmt: skip


@functools.cache
def namespace() -> types.SimpleNamespace:
    """``names("torch")`` as attributes: how the rooms above call ops by their torch names
    (``_ops.namespace().stack``) without importing the top-level ``torchlike`` that imports them."""
    return types.SimpleNamespace(**names("torch"))


def inplace_fn(op: Any) -> Callable:
    """The in-place variant of table op ``op`` (``Tensor.relu_``, ``torch.relu_``, ``F.relu(inplace=True)``),
    made once per op."""
    fn = op.__dict__.get("inplace_fn")
    if fn is None:
        stem = op.name if op.inplace is True else op.inplace
        fn = op.inplace_fn = inplace_variant(inplace_spec(op).wrapper, stem + "_", op.__dict__.get("zero_grad"))
    return fn


def _install() -> None:
    for name, fn in names("Tensor").items():
        setattr(Tensor, name, fn)
    for name, fn in _methods.TENSOR_PROPERTIES.items():
        setattr(Tensor, name, property(fn))
    for name, fn in _methods.operators().items():
        setattr(Tensor, name, fn)


_install()
