"""Generic tests of the op table, driven by one sample-input table (no torch).

For every public table op: the function, the Tensor method, the in-place method and ``out=`` agree; the
in-place method returns ``self``; the op gives the same result under ``torchlike.compile``; and for differentiable ops the gradient of ``sum(w * op(x))`` matches
central finite differences in float64. Every public op must have a sample here (or a reason in SKIP).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Callable

import numpy as np
import pytest

import torchlike as tl
from torchlike import _ops
from torchlike._ops.registry import OPS, RANDOM
from torchlike.autograd import engine


@pytest.fixture(autouse=True, scope="module")
def _per_node_backward():
    """Each graph here runs a couple of times: skip the fused-backward compile (same VJPs)."""
    old, engine.FUSE_AFTER = engine.FUSE_AFTER, 10**9
    yield
    engine.FUSE_AFTER = old


_rng = np.random.RandomState(0)


def r(*shape: int, lo: float = -2.0, hi: float = 2.0) -> tl.Tensor:
    """A float64 tensor; values kept 0.1 away from 0 so kinks (abs, sign, relu...) are not sampled."""
    v = _rng.uniform(lo, hi, size=shape)
    v = np.where(np.abs(v) < 0.1, 0.1 + np.abs(v), v)
    return tl.tensor(v)


def pos(*shape: int) -> tl.Tensor:
    return tl.tensor(_rng.uniform(0.5, 2.0, size=shape))


def unit(*shape: int) -> tl.Tensor:
    return tl.tensor(_rng.uniform(-0.8, 0.8, size=shape))


def ints(*shape: int, lo: int = -5, hi: int = 6) -> tl.Tensor:
    return tl.tensor(_rng.randint(lo, hi, size=shape))


def idx(*values: int) -> tl.Tensor:
    return tl.tensor(list(values))


def distinct(*shape: int) -> tl.Tensor:
    """float64 values without ties (selection ops have a kink at ties)."""
    n = int(np.prod(shape))
    return tl.tensor((_rng.permutation(n) * 0.37 - n * 0.1).reshape(shape))


def spd(n: int) -> tl.Tensor:
    a = _rng.uniform(-1, 1, size=(n, n))
    return tl.tensor(a @ a.T + n * np.eye(n))


def lower(n: int) -> tl.Tensor:
    return tl.tensor(np.tril(_rng.uniform(-1, 1, size=(n, n))) + 2 * np.eye(n))


X = (3, 4)
UNARY_ANY = "neg abs sign sgn square exp exp2 expm1 sin cos tan atan sinh cosh tanh asinh sigmoid erf erfc floor ceil " \
            "round trunc frac deg2rad rad2deg nan_to_num sinc i0 signbit isnan isinf isfinite isposinf isneginf isreal " \
            "logical_not positive"  # fmt: skip
UNARY_POS = "sqrt rsqrt log log2 log10 log1p reciprocal lgamma digamma"
UNARY_UNIT = "asin acos atanh erfinv"

SAMPLES: dict[str, Callable[[], tuple]] = {n: (lambda: ((r(*X),), {})) for n in UNARY_ANY.split()}
SAMPLES.update({n: (lambda: ((pos(*X),), {})) for n in UNARY_POS.split()})
SAMPLES.update({n: (lambda: ((unit(*X),), {})) for n in UNARY_UNIT.split()})
SAMPLES.update({
    "acosh": lambda: ((pos(*X) + 1.2,), {}),
    "logit": lambda: ((tl.tensor(_rng.uniform(0.1, 0.9, size=X)),), {"eps": 0.05}),
    "bitwise_not": lambda: ((ints(*X),), {}),
    "round": lambda: ((r(*X),), {"decimals": 1}),
    # binary
    **{n: (lambda: ((r(*X), r(*X)), {})) for n in
       "add sub mul atan2 maximum minimum fmax fmin copysign logaddexp logaddexp2 nextafter eq ne lt le gt ge".split()},  # fmt: skip
    "add": lambda: ((r(*X), r(4)), {"alpha": 2.5}),
    "sub": lambda: ((r(*X), 1.5), {"alpha": -2}),
    "rsub": lambda: ((r(*X), r(*X)), {"alpha": 3}),
    "div": lambda: ((r(*X), r(*X)), {"rounding_mode": None}),
    "floor_divide": lambda: ((ints(*X), ints(*X, lo=1)), {}),
    "remainder": lambda: ((r(*X), r(*X)), {}),
    "fmod": lambda: ((r(*X), 1.3), {}),
    "pow": lambda: ((pos(*X), r(*X)), {}),
    "float_power": lambda: ((pos(*X), 2.5), {}),
    "hypot": lambda: ((r(*X), r(*X)), {}),
    "xlogy": lambda: ((r(*X), pos(*X)), {}),
    "heaviside": lambda: ((r(*X), r(*X)), {}),
    "gcd": lambda: ((ints(*X), ints(*X)), {}),
    "lcm": lambda: ((ints(*X), ints(*X)), {}),
    **{n: (lambda: ((r(*X) > 0, r(*X) > 0), {})) for n in ("logical_and", "logical_or", "logical_xor")},
    **{n: (lambda: ((ints(*X), ints(*X)), {})) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    **{n: (lambda: ((ints(*X), ints(*X, lo=0, hi=4)), {})) for n in ("bitwise_left_shift", "bitwise_right_shift")},
    # ternary and selection
    "clamp": lambda: ((r(*X), r(*X) - 0.75, r(*X) + 3), {}),  # (torch refuses a tensor bound beside a number)
    "clamp_min": lambda: ((r(*X), 0.05), {}),
    "clamp_max": lambda: ((r(*X), r(4)), {}),
    "lerp": lambda: ((r(*X), r(*X), unit(*X)), {}),
    "addcmul": lambda: ((r(*X), r(*X), r(*X)), {"value": 0.5}),
    "addcdiv": lambda: ((r(*X), r(*X), pos(*X)), {"value": -2}),
    "masked_fill": lambda: ((r(*X), r(*X) > 0, 2.5), {}),
    # reductions
    **{n: (lambda: ((r(*X), 1), {})) for n in ("sum", "nansum", "mean", "nanmean", "logsumexp", "count_nonzero",
                                                "cumsum", "cumprod", "logcumsumexp", "all", "any")},  # fmt: skip
    "prod": lambda: ((r(*X), 0), {"keepdim": True}),
    "hash_tensor": lambda: ((r(*X), 1), {"keepdim": True}),
    **{n: (lambda: ((distinct(*X), 1), {"keepdim": True})) for n in ("amax", "amin", "argmax", "argmin", "mode",
                                                                    "cummax", "cummin")},  # fmt: skip
    "cummax": lambda: ((distinct(*X), 1), {}),
    "cummin": lambda: ((distinct(*X), 0), {}),
    "aminmax": lambda: ((distinct(*X),), {"dim": 0}),
    "dist": lambda: ((r(*X), r(4)), {"p": 3}),
    # sorting
    "sort": lambda: ((distinct(*X),), {"dim": 0, "descending": True}),
    "argsort": lambda: ((distinct(*X), 1), {}),
    "msort": lambda: ((distinct(*X),), {}),
    "kthvalue": lambda: ((distinct(*X), 2, 0), {}),
    # other families
    "addbmm": lambda: ((r(3, 5), r(2, 3, 4), r(2, 4, 5)), {"beta": 0.5}),
    "addmm": lambda: ((r(3, 5), r(3, 4), r(4, 5)), {"alpha": 2}),
    "addmv": lambda: ((r(3), r(3, 4), r(4)), {}),
    "addr": lambda: ((r(3, 4), r(3), r(4)), {}),
    "baddbmm": lambda: ((r(2, 3, 5), r(2, 3, 4), r(2, 4, 5)), {}),
    "bmm": lambda: ((r(2, 3, 4), r(2, 4, 5)), {}),
    "dot": lambda: ((r(4), r(4)), {}),
    "vdot": lambda: ((r(4), r(4)), {}),
    "inner": lambda: ((r(3, 4), r(5, 4)), {}),
    "matmul": lambda: ((r(3, 4), r(4, 2)), {}),
    "mm": lambda: ((r(3, 4), r(4, 2)), {}),
    "mv": lambda: ((r(3, 4), r(4)), {}),
    "outer": lambda: ((r(3), r(4)), {}),
    "kron": lambda: ((r(2, 2), r(2, 3)), {}),
    "cdist": lambda: ((r(3, 4), r(5, 4)), {}),
    "bilinear": lambda: ((r(2, 3), r(2, 4), r(5, 3, 4), r(5)), {}),
    "cat": lambda: (([r(2, 3), r(1, 3)],), {}),
    "stack": lambda: (([r(2, 3), r(2, 3)], 1), {}),
    "clone": lambda: ((r(*X),), {}),
    "complex": lambda: ((r(*X), r(*X)), {}),
    "polar": lambda: ((pos(*X), r(*X)), {}),
    "celu": lambda: ((r(*X),), {"alpha": 0.5}),
    "selu": lambda: ((r(*X),), {}),
    "relu": lambda: ((r(*X),), {}),
    "hardshrink": lambda: ((r(*X),), {"lambd": 0.05}),
    "threshold": lambda: ((r(*X), 0.05, 2.0), {}),
    "elu": lambda: ((r(*X),), {"alpha": 0.7}),
    "gelu": lambda: ((r(*X),), {"approximate": "tanh"}),
    "glu": lambda: ((r(3, 4),), {"dim": 1}),
    "hardsigmoid": lambda: ((r(*X),), {}),
    "hardswish": lambda: ((r(*X),), {}),
    "hardtanh": lambda: ((r(*X),), {"min_val": -0.5, "max_val": 1.5}),
    "leaky_relu": lambda: ((r(*X),), {"negative_slope": 0.2}),
    "logsigmoid": lambda: ((r(*X),), {}),
    "mish": lambda: ((r(*X),), {}),
    "silu": lambda: ((r(*X),), {}),
    "softplus": lambda: ((r(*X),), {"beta": 2.0, "threshold": 3.0}),
    "softshrink": lambda: ((r(*X),), {"lambd": 0.05}),
    "softsign": lambda: ((r(*X),), {}),
    "tanhshrink": lambda: ((r(*X),), {}),
    "prelu": lambda: ((r(*X), tl.tensor([0.25], dtype=tl.float64)), {}),
    "softmax": lambda: ((r(*X), 1), {}),
    "log_softmax": lambda: ((r(*X), 0), {}),
    "channel_shuffle": lambda: ((r(1, 4, 2, 2), 2), {}),
    "pixel_shuffle": lambda: ((r(1, 4, 2, 2), 2), {}),
    "pixel_unshuffle": lambda: ((r(1, 1, 4, 4), 2), {}),
    "cholesky_inverse": lambda: ((lower(3),), {}),
    "cholesky_solve": lambda: ((r(3, 2), lower(3)), {}),
    "logdet": lambda: ((spd(3),), {}),
    "matrix_exp": lambda: ((unit(3, 3),), {}),
    "cosine_similarity": lambda: ((r(*X), r(*X)), {"dim": 1}),
    "pairwise_distance": lambda: ((r(*X), r(*X)), {}),
    "pdist": lambda: ((r(4, 3),), {}),
    "diag": lambda: ((r(3, 4), 1), {}),
    "diag_embed": lambda: ((r(2, 3),), {"offset": -1}),
    "diagflat": lambda: ((r(3),), {}),
    "diagonal_scatter": lambda: ((r(3, 3), r(3)), {}),
    "select_scatter": lambda: ((r(3, 4), r(4), 0, 1), {}),
    "slice_scatter": lambda: ((r(4, 3), r(2, 3)), {"start": 0, "end": 4, "step": 2}),
    "narrow_copy": lambda: ((r(*X), 1, 1, 2), {}),
    "trace": lambda: ((r(3, 3),), {}),
    "tril": lambda: ((r(*X),), {"diagonal": -1}),
    "triu": lambda: ((r(*X), 1), {}),
    "take": lambda: ((r(*X), idx(0, 5, 11, 5)), {}),
    "fill": lambda: ((r(*X), 2.5), {}),
    "embedding": lambda: ((r(5, 3), idx(0, 4, 4, 1)), {}),
    "gather": lambda: ((r(*X), 1, tl.tensor([[0, 3], [1, 1], [2, 0]])), {}),
    "index_add": lambda: ((r(*X), 0, idx(2, 0), r(2, 4)), {"alpha": 2}),
    "index_copy": lambda: ((r(*X), 1, idx(3, 0), r(3, 2)), {}),
    "index_fill": lambda: ((r(*X), 1, idx(1, 2), -1.5), {}),
    "index_reduce": lambda: ((r(*X), 0, idx(2, 2), pos(2, 4), "amax"), {}),
    "index_select": lambda: ((r(*X), 0, idx(2, 0, 2)), {}),
    "put": lambda: ((r(*X), idx(1, 7), r(2)), {}),
    "scatter_add": lambda: ((r(*X), 1, tl.tensor([[0, 3], [1, 1], [2, 0]]), r(3, 2)), {}),
    "scatter_reduce": lambda: ((r(*X), 0, tl.tensor([[0, 2, 1, 0]]), r(1, 4), "sum"), {}),
    "histc": lambda: ((r(*X), 5, -2.0, 2.0), {}),
    "grid_sampler": lambda: ((r(1, 1, 3, 3), unit(1, 2, 2, 2), 0, 0, False), {}),
    "geqrf": lambda: ((r(4, 3),), {}),
    "orgqr": lambda: ((r(4, 3), r(3)), {}),
    "igamma": lambda: ((pos(*X), pos(*X)), {}),
    "igammac": lambda: ((pos(*X), pos(*X)), {}),
    "polygamma": lambda: ((2, pos(*X)), {}),
    "mvlgamma": lambda: ((pos(*X) + 2,), {"p": 3}),
    "angle": lambda: ((r(*X),), {}),
    "conj_physical": lambda: ((r(*X),), {}),
    "as_strided_scatter": lambda: ((r(*X), r(2, 2), (2, 2), (4, 1), 1), {}),
    "cond": lambda: ((spd(3),), {}),
    "corrcoef": lambda: ((r(*X),), {}),
    "cov": lambda: ((r(*X),), {"correction": 0}),
    "diff": lambda: ((r(*X),), {"n": 2}),
    "frexp": lambda: ((r(*X),), {}),
    "isin": lambda: ((ints(*X), ints(3)), {}),
    "ldexp": lambda: ((r(*X), ints(*X, lo=-2, hi=3).double()), {}),
    "native_group_norm": lambda: ((r(2, 4, 3), pos(4), r(4), 2, 4, 3, 2, 1e-5), {}),
    "nonzero_static": lambda: ((ints(*X),), {"size": 5}),
    "ormqr": lambda: ((r(4, 3), r(3), r(4, 2)), {}),
    "renorm": lambda: ((r(*X), 2.0, 0, 1.5), {}),
    "triangular_solve": lambda: ((r(3, 2), lower(3) + 3 * tl.eye(3, dtype=tl.float64)), {"upper": False}),
})  # fmt: skip

# Public ops whose generic check would not mean anything, with the reason.
SKIP = {
    "rsub": "not a Tensor method in torch; covered as add's twin",
}
# Ops whose finite-difference check does not apply at any sample (piecewise constant, integer or complex
# results, random draws; cholesky_inverse: torch's gradient is that of (L L^H)^-1 in the whole input, while
# its value reads only the lower triangle) -- they still go through the function/method/in-place/out= checks.
NO_FD = {"sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "signbit", "histc", "complex", "polar", "heaviside",
         "floor_divide", "nextafter", "fill",
         "geqrf", "igamma", "igammac", "angle",
         "cholesky_inverse", "frexp"}  # fmt: skip  (torch has no derivative for these / igamma's first input)


def _public_ops() -> list:
    return sorted(n for n, op in OPS.items() if not n.startswith("_") and n == op.name)


def _function(name: str) -> Callable:
    """A public op's function, from the first namespace the table exposes it in (``F.silu`` for silu)."""
    space, (public, *_) = next(iter(OPS[name].exposed.items()))
    return getattr(tl.Tensor, public) if space == "Tensor" else _ops.names(space)[public]


def _inplace_forms(name: str) -> list:
    """Every in-place entry point the table generates for op ``name``: ``Tensor.x_``, ``torch.x_``,
    ``F.x_`` and ``F.x(..., inplace=True)``."""
    op = OPS[name]
    if not op.inplace:
        return []
    stem = (name if op.inplace is True else op.inplace) + "_"
    forms = [(space, _ops.names(space)[stem]) for space in op.inplace_in]
    if op.inplace_arg:
        functional = _ops.names("nn.functional")[op.exposed["nn.functional"][0]]
        forms.append(("inplace=True", lambda x, *a, **k: functional(x, *a, **k, inplace=True)))
    return forms


def _values(t: Any) -> Any:
    if isinstance(t, tl.Tensor):
        return (str(t.dtype), tuple(t.shape), np.asarray(t.detach().numpy()))
    if isinstance(t, (tuple, list)):
        return type(t).__name__, [_values(v) for v in t]
    return t


def _same(a: Any, b: Any, what: str) -> None:
    va, vb = _values(a), _values(b)
    _assert_same(va, vb, what)


def _assert_same(a: Any, b: Any, what: str, close: bool = False) -> None:
    """Equal values, dtypes and shapes; with ``close``, floats to 1e-12 (a compiled program may contract a
    multiply and an add into one FMA where the op-by-op run rounds twice)."""
    if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
        assert a[:2] == b[:2], f"{what}: {a[:2]} != {b[:2]}"
        if close and a[2].dtype.kind in "fc":
            np.testing.assert_allclose(a[2], b[2], rtol=1e-12, atol=1e-12, err_msg=what)
        else:
            np.testing.assert_array_equal(a[2], b[2], err_msg=what)
    elif isinstance(a, tuple) and len(a) == 2 and isinstance(a[1], list):
        assert len(a[1]) == len(b[1]), what
        for x, y in zip(a[1], b[1]):
            _assert_same(x, y, what, close)
    else:
        assert a == b, f"{what}: {a!r} != {b!r}"


def test_every_public_op_has_a_sample():
    missing = [n for n in _public_ops() if n not in SAMPLES and n not in SKIP]
    assert not missing, f"add samples to tests/test_ops_table.py for: {missing}"


CHECKED = [n for n in _public_ops() if n in SAMPLES]


@pytest.mark.parametrize("name", CHECKED)
def test_function_method_inplace_out_agree(name):
    op = OPS[name]
    args, kwargs = SAMPLES[name]()
    fn = _function(name)
    expected = fn(*args, **kwargs)

    if op.method and isinstance(args[0], tl.Tensor):
        method = getattr(args[0], name if op.method is True else op.method)
        _same(method(*args[1:], **kwargs), expected, "method")

    for form, inplace in _inplace_forms(name) if isinstance(expected, tl.Tensor) else ():
        x = args[0].clone()
        before = x._version
        ret = inplace(x, *args[1:], **kwargs)
        assert ret is x, f"in-place ({form}) must return self"
        assert x._version > before, f"in-place ({form}) must bump the version counter"
        if expected.shape == x.shape and expected.dtype == x.dtype:
            _same(x, expected, f"in-place ({form})")

    if op.out:
        if isinstance(expected, tl.Tensor):
            out = tl.empty(0, dtype=expected.dtype)
            ret = fn(*args, **kwargs, out=out)
            assert ret is out
            _same(out, expected, "out=")
        else:
            outs = tuple(tl.empty(0, dtype=e.dtype) for e in expected)
            ret = fn(*args, **kwargs, out=outs)
            assert all(a is b for a, b in zip(ret, outs))
            _same(list(outs), list(expected), "out=")


@pytest.mark.parametrize("name", CHECKED)
def test_compiled_matches_eager(name):
    """Every table op gives the same result inside ``torchlike.compile`` (traced into one program) as eagerly."""
    args, kwargs = SAMPLES[name]()
    fn = _function(name)
    expected = fn(*args, **kwargs)
    tensors = [i for i, a in enumerate(args) if isinstance(a, tl.Tensor)]

    def body(*ts: tl.Tensor) -> Any:
        call = list(args)
        for i, t in zip(tensors, ts):
            call[i] = t
        return fn(*call, **kwargs)

    got = tl.compile(body, fullgraph=True)(*(args[i] for i in tensors))  # traced whole: no eager fallback
    _assert_same(_values(got), _values(expected), "compiled", close=True)


def _float_inputs(args: tuple) -> list:
    found = []
    for i, a in enumerate(args):
        if isinstance(a, tl.Tensor) and a.dtype == tl.float64:
            found.append((i, None))
        elif isinstance(a, list):
            found.extend((i, j) for j, t in enumerate(a) if isinstance(t, tl.Tensor) and t.dtype == tl.float64)
    return found


def _get(args: list, slot: tuple) -> tl.Tensor:
    i, j = slot
    return args[i] if j is None else args[i][j]


def _set(args: list, slot: tuple, value: tl.Tensor) -> None:
    i, j = slot
    if j is None:
        args[i] = value
    else:
        args[i] = list(args[i])
        args[i][j] = value


def _objective(name: str, args: list, kwargs: dict, weights: list | None) -> tuple:
    out = _function(name)(*args, **kwargs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if o.dtype == tl.float64]
    if weights is None:
        weights = [tl.tensor(_rng.uniform(0.5, 1.5, size=tuple(o.shape))) for o in outs]
    total = sum(((o * w).sum() for o, w in zip(outs, weights)), tl.tensor(0.0, dtype=tl.float64))
    return total, weights


FD = [n for n in CHECKED if OPS[n].differentiable and n not in NO_FD]


@pytest.mark.parametrize("name", FD)
def test_gradient_matches_finite_differences(name):
    args, kwargs = SAMPLES[name]()
    args = list(args)
    slots = _float_inputs(tuple(args))
    if not slots:
        pytest.skip("no float inputs")
    for slot in slots:
        _set(args, slot, _get(args, slot).detach().requires_grad_(True))
    total, weights = _objective(name, args, kwargs, None)
    if not total.requires_grad:
        pytest.skip("no float output")
    total.backward()
    eps = 1e-6
    for slot in slots:
        leaf = _get(args, slot)
        base = leaf.detach().numpy().copy()
        numeric = np.zeros_like(base)
        with tl.no_grad():
            for k in np.ndindex(base.shape):
                vals = []
                for step in (eps, -eps):
                    probe = base.copy()
                    probe[k] += step
                    trial = list(args)
                    _set(trial, slot, tl.tensor(probe))
                    vals.append(_objective(name, trial, kwargs, weights)[0].item())
                numeric[k] = (vals[0] - vals[1]) / (2 * eps)
        grad = leaf.grad.numpy() if leaf.grad is not None else np.zeros_like(base)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6, err_msg=f"{name} input {slot}")


def test_aliases_are_the_same_op():
    for alias, op in OPS.items():
        if alias == op.name or alias.startswith("_"):
            continue
        assert getattr(tl, alias)._op is op, alias
        if op.method:
            assert hasattr(tl.Tensor, alias), alias
        if op.inplace:
            assert hasattr(tl.Tensor, alias + "_"), alias


# --- random entries (registry.RANDOM) ------------------------------------------------------------------
# They draw from a generator, so they have no SAMPLES here; compat_tests/test_random_ops.py compares each
# entry's seeded draws at its default parameters with torch's, in every namespace it declares.

FILL_ARGS = {"geometric_": (0.3,)}  # the in-place samplers' required arguments


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_entry_is_reachable_in_its_namespaces(name):
    entry = RANDOM[name]
    assert entry.exposed, name
    for space, publics in entry.exposed.items():
        home = {"torch": tl, "Tensor": tl.Tensor}.get(space) or importlib.import_module(f"torchlike.{space}")
        for public in publics:
            fn = _ops.names(space)[public]
            assert fn is (entry.method if space == "Tensor" else entry.wrapper), (space, public)
            assert getattr(home, public) is fn, (space, public)
    for space, home in (("torch", tl), ("Tensor", tl.Tensor)):
        if space not in entry.exposed:
            assert not hasattr(home, name), (space, name)
    if "Tensor" in entry.exposed:  # torch's random methods take no out=
        assert "out" not in inspect.signature(entry.method).parameters


SAMPLERS = sorted(n for n, entry in RANDOM.items() if hasattr(entry, "sampler"))


@pytest.mark.parametrize("name", SAMPLERS)
def test_random_sampler_writes_in_place(name):
    tl.manual_seed(0)
    base = tl.zeros(4, 3)
    view = base[1:]
    before = base._version
    assert getattr(view, name)(*FILL_ARGS.get(name, ())) is view
    assert base._version > before  # the view and its base share the version counter
    values = base.numpy()
    assert (values[0] == 0).all() and (values[1:] != 0).any()  # written through the view, nowhere else
    leaf = tl.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        getattr(leaf, name)(*FILL_ARGS.get(name, ()))
