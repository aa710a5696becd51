"""Rooms import downward only (STYLE rule 4): parse every module's imports, at module level and
inside functions, and fail on an import that reaches a higher room or on a circle between rooms."""

from __future__ import annotations

import ast
import functools
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "torchlike")

# (module prefix or prefixes, rank, why it sits there). A module belongs to the room of its longest matching prefix;
# it may import its own room and lower ranks only. Rooms of equal rank may import each other, but no
# circle may form between rooms.
ROOMS = [
    ("torchlike._precision", 0, "the matmul-precision flag: imports only jax"),
    ("torchlike._weights_only_unpickler", 0, "a restricted unpickler: imports only the stdlib"),
    ("torchlike.compat._names", 0, "torch <-> torchlike module names: imports only the stdlib"),
    ("torchlike._core", 0, "dtype, device, storage, Tensor, generator, printing: what everything stands on"),
    ("torchlike.autograd", 1, "grad modes and the tape: ops record onto it, so it sits below them"),
    ("torchlike._ops", 2, "the op table and its families: tensors in, tensors out, recorded on the tape"),
    ("torchlike.utils.dlpack", 2, "DLPack exchange over _core tensors (creation re-exports from_dlpack)"),
    ("torchlike.autograd._tensor", 3, "attaches Tensor.backward, grad_fn and hooks, over the engine"),
    (("torchlike.autograd.engine", "torchlike.autograd._higher"), 3,
     "backward runs the tape's vjps (create_graph replays them through the op table)"),
    ("torchlike.autograd.functional", 3, "jacobian/hessian/vjp are composed from ops"),
    ("torchlike._public", 3, "small top-level helpers written with ops"),
    ("torchlike.random", 3, "torch.random: seeding and generator state over the op table's RNG"),
    ("torchlike.linalg", 3, "a namespace re-exporting ops"),
    ("torchlike.special", 3, "a namespace re-exporting ops"),
    ("torchlike.fft", 3, "a namespace re-exporting ops"),
    ("torchlike.distributed", 3, "process groups and collectives over tensors"),
    ("torchlike.sparse", 3, "sparse COO tensors and their product, written with ops"),
    ("torchlike.amp", 3, "the autocast policy and GradScaler: read by ops' callers, built from ops"),
    ("torchlike.cuda", 4, "device queries; cuda.amp re-exports amp"),
    ("torchlike.cpu", 4, "cpu.amp re-exports amp"),
    ("torchlike.backends", 4, "backend flags, reading cuda's device queries"),
    ("torchlike.nn", 5, "modules and functional: built from ops, autocast, collectives"),
    ("torchlike.distributed.fsdp", 6, "FSDP wraps nn.Modules and shards their parameters"),
    ("torchlike.distributed.checkpoint", 7, "state dicts of modules, DDP and FSDP, saved and loaded"),
    ("torchlike.optim", 6, "optimizers step nn.Parameters (swa_utils averages Modules)"),
    ("torchlike.utils", 6, "data loading, checkpointing, tensorboard: use nn and amp"),
    ("torchlike.jit", 6, "script/trace stand-ins over nn.Module"),
    ("torchlike._serialization", 7, "torch's file format: pickles tensors and nn.Parameters"),
    ("torchlike.serialization", 7, "save/load, over _serialization"),
    ("torchlike._compile", 7, "torchlike.compile lifts nn/optim/amp state into one jax.jit program"),
    ("torchlike.func", 7, "torch.func transforms over modules and ops"),
    ("torchlike._dynamo", 8, "torch._dynamo stand-ins over _compile"),
    ("torchlike.compiler", 8, "torch.compiler stand-ins over _compile"),
    ("torchlike.distributions", 9, "a client of the public namespace, written as user code is"),
    ("torchlike.autograd.gradcheck", 9, "torch.autograd.gradcheck: numerical checks written against the public API"),
    ("torchlike.nn.utils.prune", 9, "torch.nn.utils.prune: reparametrises Modules through the public API"),
    ("torchlike.masked", 9, "torch.masked: masked reductions composed from public ops, as user code is"),
    ("torchlike.testing", 9, "a client of the public namespace"),
    ("torchlike.vision", 9, "a client of the public namespace"),
    ("torchlike.compat", 9, "run-both-and-compare tools: clients of the public namespace"),
    ("torchlike.__main__", 10, "the command line"),
    ("torchlike", 10, "the public namespace: re-exports every room"),
]
# A package's __init__ re-exports its own modules, whatever their rooms (STYLE rule 5): those imports
# are not counted. Rooms at rank 9 are written against the public API (`import torchlike`), as a user's code is; their
# imports of the top-level namespace are neither upward imports nor circles.
FACADE_CLIENT_RANK = 9


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


@pytest.mark.parametrize("room", ["torchlike._ops"])
def test_no_circle_inside(room):
    """The op families share helpers through a common module instead of importing each other."""
    graph: dict[str, set] = {}
    for a, b, _ in _edges():
        if _room(a)[0] == room and _room(b)[0] == room and b != room:
            graph.setdefault(a, set()).add(b)
    assert not _cycles(graph), f"import circles inside {room}: {_cycles(graph)}"
