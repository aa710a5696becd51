"""Rooms import downward only (CONTRIBUTING.md, "Where code goes"): parse every module's imports, at module
level and inside functions, and fail on an import that reaches a higher room, on a circle between rooms, or on a circle
between the modules of one room. The rooms and their order are torchlike/_layers.py."""

from __future__ import annotations

import ast
import functools
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "torchlike")


def _load_layers():
    """torchlike/_layers.py, read as a file: the test parses the package and never imports it."""
    spec = importlib.util.spec_from_file_location("_torchlike_layers", os.path.join(PKG, "_layers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LAYERS = _load_layers()

ROOMS, FACADE_CLIENT_RANK = _LAYERS.ROOMS, _LAYERS.FACADE_CLIENT_RANK


@functools.cache
def _modules() -> dict[str, str]:
    mods = {}
    for d, _, files in os.walk(PKG):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(d, f)
                name = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                mods[name.removesuffix(".__init__")] = path
    return mods


def _targets(mod: str, path: str, node: ast.AST, mods: dict) -> list[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = mod.split(".")
            if not path.endswith("__init__.py"):
                base = base[:-1]
            base = base[: len(base) - node.level + 1]
            pkg = ".".join(base + ([node.module] if node.module else []))
        else:
            pkg = node.module
        names = [f"{pkg}.{a.name}" if f"{pkg}.{a.name}" in mods else pkg for a in node.names]
    out = []
    for n in names:
        if n.split(".")[0] != "torchlike":
            continue
        while n not in mods and "." in n:
            n = n.rsplit(".", 1)[0]
        out.append(n)
    return out


@functools.cache
def _edges() -> list[tuple[str, str, int]]:
    mods = _modules()
    edges = []
    for mod, path in sorted(mods.items()):
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        reexport = path.endswith("__init__.py")
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for t in _targets(mod, path, node, mods):
                    if t != mod and not (reexport and t.startswith(mod + ".") and mod != "torchlike"):
                        edges.append((mod, t, node.lineno))
    return edges


_PREFIXES = {p: (ps if isinstance(ps, str) else ps[0], r) for ps, r, _ in ROOMS for p in ([ps] if isinstance(ps, str) else ps)}


def _room(mod: str) -> tuple[str, int]:
    """(room name, rank) of a module."""
    best = max((p for p in _PREFIXES if mod == p or mod.startswith(p + ".")), key=len, default=None)
    if best is None:
        raise AssertionError(f"{mod} belongs to no room: add its package to ROOMS with a reason")
    return _PREFIXES[best]


def _room_edges() -> list[tuple[str, str, str, str, int]]:
    out = []
    for a, b, line in _edges():
        (ra, ka), (rb, _) = _room(a), _room(b)
        if ra == rb or (rb == "torchlike" and ka == FACADE_CLIENT_RANK):
            continue
        out.append((a, b, ra, rb, line))
    return out


def _cycles(graph: dict[str, set]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def test_every_module_has_a_room():
    for mod in _modules():
        _room(mod)


def test_no_upward_import():
    bad = []
    for a, b, ra, rb, line in _room_edges():
        if _room(b)[1] > _room(a)[1]:
            bad.append(f"{a}:{line} imports {b} ({ra} rank {_room(a)[1]} -> {rb} rank {_room(b)[1]})")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_circle_between_rooms():
    graph: dict[str, set] = {}
    for _, _, ra, rb, _ in _room_edges():
        graph.setdefault(ra, set()).add(rb)
    assert not _cycles(graph), f"import circles between rooms: {_cycles(graph)}"


@pytest.mark.parametrize("room", sorted({_PREFIXES[p][0] for p in _PREFIXES}))
def test_no_circle_inside(room):
    """The modules of one room import each other in one direction (the op families share helpers through
    ``_ops/_common.py``; a base class shared by two modules sits in a third)."""
    graph: dict[str, set] = {}
    packages = {m for m, path in _modules().items() if path.endswith("__init__.py")}  # re-exports, not rooms
    for a, b, _ in _edges():
        if _room(a)[0] == room and _room(b)[0] == room and b not in packages:
            graph.setdefault(a, set()).add(b)
    assert not _cycles(graph), f"import circles inside {room}: {_cycles(graph)}"


def test_the_layer_table_names_real_modules():
    """Every prefix of torchlike/_layers.py is a module or package of the tree (a stale entry hides nothing)."""
    mods = _modules()
    stale = [p for p in _PREFIXES if p not in mods and not any(m.startswith(p + ".") for m in mods)]
    assert not stale, f"rooms naming no module: {stale}"
