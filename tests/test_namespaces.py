"""The op table's installer (``torchlike._ops.names``) generates the public namespaces (no torch here).

Checks that each generated module holds the installer's names, that ``defop(namespaces=...)`` puts an
op where it says, and that ``nn.functional``'s ``inplace=True`` runs the table's in-place path (torch's
in-place checks, the version counter, writing through views).
"""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn.functional as F
from torchlike import _ops
from torchlike._ops import registry

GENERATED = {"nn.functional": "torchlike.nn.functional", "linalg": "torchlike.linalg", "special": "torchlike.special",
             "fft": "torchlike.fft"}  # fmt: skip


@pytest.mark.parametrize("space", sorted(GENERATED))
def test_generated_module_is_the_installers(space):
    module = importlib.import_module(GENERATED[space])
    generated = _ops.names(space)
    assert module.__all__ and set(module.__all__) == {n for n in generated if not n.startswith("_")}
    assert all(getattr(module, n) is generated[n] for n in module.__all__)


def test_an_op_appears_where_its_namespaces_say():
    silu = registry.OPS["silu"]
    assert set(silu.exposed) == {"nn.functional"}
    assert not hasattr(tl, "silu") and not hasattr(tl.Tensor, "silu")
    assert F.silu._op is silu and F.silu.__module__ == "torchlike.nn.functional"
    assert tl.special.expit is tl.sigmoid and tl.special.psi is tl.digamma is tl.special.digamma
    assert tl.linalg.householder_product is tl.orgqr and tl.fft.rfft.__module__ == "torchlike.fft"
    # relu: torch.relu(input) has no inplace=; F.relu(input, inplace=False) has no out=
    assert list(inspect.signature(tl.relu).parameters) == ["input"]
    assert list(inspect.signature(F.relu).parameters) == ["input", "inplace"]
    assert list(inspect.signature(F.tanh).parameters) == ["input"]
    assert "out" in inspect.signature(tl.tanh).parameters
    assert list(inspect.signature(F.hardtanh).parameters) == ["input", "min_val", "max_val", "inplace"]


def test_unknown_namespace_is_an_error():
    with pytest.raises(ValueError, match="unknown namespace 'nn'"):
        registry.defop("_test_bad_space", namespaces=("nn",))(lambda input: input)
    with pytest.raises(TypeError, match="list 'Tensor' in namespaces= instead of passing method="):
        registry.defop("_test_bad_space", namespaces=("torch",), method=False)(lambda input: input)
    assert "_test_bad_space" not in registry.OPS


def test_a_name_declared_by_an_op_and_by_expose_is_an_error():
    registry.defop("_test_twice", namespaces=("fft:test_twice",))(lambda input: input)
    registry.expose("fft", "test_twice")(lambda input: input)
    try:
        with pytest.raises(TypeError, match="fft.test_twice is declared twice"):
            _ops.names.__wrapped__("fft")
    finally:
        del registry.OPS["_test_twice"], registry.EXPOSED["fft"]["test_twice"]


@pytest.mark.parametrize("form", ["F(inplace=True)", "F.name_", "torch.name_", "Tensor.name_"])
def test_functional_inplace_runs_the_tables_inplace_path(form):
    run = {
        "F(inplace=True)": lambda t: F.relu(t, inplace=True),
        "F.name_": F.relu_,
        "torch.name_": tl.relu_,
        "Tensor.name_": lambda t: t.relu_(),
    }[form]
    base = tl.tensor([[-1.0, 2.0], [3.0, -4.0]])
    row = base[1]
    before = base._version
    assert run(row) is row
    assert base._version > before  # the view and its base share the version counter
    np.testing.assert_array_equal(base.numpy(), [[-1.0, 2.0], [3.0, 0.0]])  # written through the view

    leaf = tl.tensor([1.0, -1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        run(leaf)


def test_functional_inplace_keeps_autograd_right():
    x = tl.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = x * 1
    out = F.hardtanh(y, -0.5, 1.0, inplace=True)
    assert out is y and type(out.grad_fn).__name__ == "HardtanhBackward0"
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 1.0, 0.0)
    z = tl.tensor([-1.0, 1.0])
    assert F.silu(z, inplace=False) is not z and F.silu(z, inplace=True) is z


@pytest.mark.parametrize("route", ["defop", "defop alias", "expose", "defrandom", "defview"])
def test_a_second_declaration_of_a_name_is_an_error(route):
    """The table keeps one entry per name: a second one raises instead of replacing the first."""
    declare = {
        "defop": lambda: registry.defop("add")(lambda input: input),
        "defop alias": lambda: registry.defop("_test_alias", aliases=("mul",))(lambda input: input),
        "expose": lambda: registry.expose("nn.functional", "softmax")(lambda input: input),
        "defrandom": lambda: registry.defrandom(name="rand")(lambda size: size),
        "defview": lambda: registry.defview("narrow")(lambda input: input),
    }[route]
    before = (dict(registry.OPS), dict(registry.EXPOSED["nn.functional"]), dict(registry.RANDOM), dict(registry.VIEWS))
    with pytest.raises(TypeError, match="is declared twice"):
        declare()
    assert (registry.OPS, registry.EXPOSED["nn.functional"], registry.RANDOM, registry.VIEWS) == before


def test_two_functions_under_one_public_name_is_an_error():
    """A family's ``__all__`` and a table op may not both put a name in a namespace (narrow_copy once had two)."""
    registry.defop("_test_clash", namespaces=("torch:narrow",))(lambda input: input)
    try:
        with pytest.raises(TypeError, match="torch.narrow is declared twice: by .*view op in torchlike._ops.views"):
            _ops.names.__wrapped__("torch")
    finally:
        del registry.OPS["_test_clash"]


def test_the_name_index_is_current():
    """docs/namespaces.md (every public name, its defining module and route) is what docs/generate.py writes now."""
    import os
    import sys

    docs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
    sys.path.insert(0, docs)
    try:
        import generate
    finally:
        sys.path.remove(docs)
    with open(os.path.join(docs, "namespaces.md"), encoding="utf-8") as f:
        assert f.read() == generate.namespaces_index(), "docs/namespaces.md is stale: run python docs/generate.py"


def test_every_generated_name_has_one_route():
    """The installer records one route (kind, defining module) for each name it generates, in every namespace."""
    for space in registry.SPACES:
        generated = _ops.names(space)
        assert set(_ops.ROUTES[space]) == set(generated)
        assert all(kind and module.startswith("torchlike") for kind, module in _ops.ROUTES[space].values())


def test_generated_functions_lead_to_their_spec_entry():
    """"Go to definition" on a generated function lands on the table entry it was generated from:
    ``__wrapped__`` is the entry, and the code object names the entry's file and line (getsource, tracebacks)."""
    assert tl.add.__wrapped__ is registry.OPS["add"].fn
    assert inspect.getsource(tl.add).startswith("@defop(") and "def add(input" in inspect.getsource(tl.add)
    assert list(inspect.signature(tl.add).parameters) == ["input", "other", "alpha", "out"]  # still torch's
    for space in registry.SPACES:
        for name, fn in _ops.names(space).items():
            op = getattr(fn, "_op", None)
            if op is not None:
                assert fn.__wrapped__ is op.fn, f"{space}.{name}"
                assert inspect.getsourcelines(fn)[1] == inspect.getsourcelines(op.fn)[1], f"{space}.{name}"
    for entry in registry.RANDOM.values():
        assert inspect.getsourcefile(entry.wrapper) == inspect.getsourcefile(entry.fn), entry.name
        assert inspect.getsourcelines(entry.method)[1] == inspect.getsourcelines(entry.fn)[1], entry.name


def test_nondiff_and_scalar_name_real_parameters():
    """``defop(nondiff=, scalar=)`` name tensor or number parameters; a misspelt one raises at declaration."""
    with pytest.raises(TypeError, match="nondiff/scalar name 'indx' is no tensor or number parameter"):
        registry.defop("_test_nondiff", nondiff=("indx",))(lambda input: input)
    assert "_test_nondiff" not in registry.OPS
    gather = registry.OPS["gather"]
    assert gather.edge_skip == (False, True) and registry.OPS["pow"].number_edges == (False, False)
