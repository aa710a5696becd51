"""The op table: each torch operation is declared once, as a pure JAX function.

``@defop`` takes a function whose parameters carry torch's names and whose annotations say
how each one is passed (the parameter kinds below). From it the table derives the op's function in each namespace
it lists (``torchlike.<name>``, ``Tensor.<name>``, ``nn.functional.<name>``, ``linalg``, ``special``,
``fft``: the installer ``torchlike._ops.names`` generates them), its in-place forms and ``out=``; type
promotion; autocast; and, through the tape (``_core.graph``), the backward (``jax.vjp`` of the same function).

Eager calls run a ``jax.jit`` of the body specialised on the static arguments and the
compute dtype (the kernel cache); JAX's own cache then keys on shapes. Tensor arguments,
Python scalars that meet tensors, and ``Scalar``-annotated numbers are dynamic arguments, so
``x + i`` or ``p.add_(g, alpha=-lr)`` in a loop compile once.
"""

from __future__ import annotations

import builtins
import copy
import inspect
from typing import Any, Callable

import jax
import numpy as np

from .._core import device as _device
from .._core import dtype as D
from .._core import cold_kernels, lazy
from .._core import tensor as T
from .._core.dtype import RANK_DIM0, RANK_DIMMED, RANK_SCALAR
from .._core import kernel_cache
from .._core.kernel_cache import LRU
from .._core.tensor import Tensor
from .._core import grad_mode, graph
from .._core import views as _views

# --- parameter kinds (used as annotations in op bodies) ----------------------------------------


class TensorArg:
    """A tensor that takes part in type promotion; the body gets it cast to the compute dtype."""


class TensorOrScalar:
    """A tensor or a Python number (a torch "wrapped number", lowest priority in promotion)."""


class TensorOrStatic:
    """A tensor, or a Python number: baked into the kernel where the op's ``bake(value)`` says the value
    changes the program (``pow``'s exponent: x**2 must be x*x), passed dynamically otherwise."""


class Scalar:
    """A Python number passed dynamically and cast to the compute dtype (``alpha``, ``value``)."""


class ScalarOrStatic:
    """A Python number passed dynamically and uncast (the body casts it), except where the op's
    ``bake(value)`` says the value changes the program (a norm's order 0, 1, 2, inf): then it is baked in."""


class OptScalar:
    """A Python number passed dynamically and uncast (the body casts it), or None: a None is passed as is, so
    the kernel traces it apart (``logit``'s eps, ``scaled_dot_product_attention``'s scale)."""


class RawTensor:
    """A tensor passed as is: no promotion, no cast (indices, masks)."""


class TensorList:
    """A sequence of tensors promoted together (``cat``, ``stack``)."""


class OptTensor:
    """``Tensor | None``, promoted when present."""


class OptRawTensor:
    """``Tensor | None``, passed as is."""


class OptTensorOrScalar:
    """``Tensor | Number | None`` (``clamp``'s bounds), promoted when present."""


# The kind of each dynamic parameter, named after its annotation class; ``call`` and ``kernel_function``
# branch on these (module constants, so comparisons stay identity checks of interned strings).
TENSOR = "tensor"
TENSOR_OR_SCALAR = "tensor_or_scalar"
TENSOR_OR_STATIC = "tensor_or_static"
SCALAR = "scalar"
SCALAR_OR_STATIC = "scalar_or_static"
OPT_SCALAR = "opt_scalar"
RAW_TENSOR = "raw_tensor"
TENSOR_LIST = "tensor_list"
OPT_TENSOR = "opt_tensor"
OPT_RAW_TENSOR = "opt_raw_tensor"
OPT_TENSOR_OR_SCALAR = "opt_tensor_or_scalar"

_DYN = {
    "TensorArg": TENSOR,
    "TensorOrScalar": TENSOR_OR_SCALAR,
    "TensorOrStatic": TENSOR_OR_STATIC,
    "Scalar": SCALAR,
    "ScalarOrStatic": SCALAR_OR_STATIC,
    "OptScalar": OPT_SCALAR,
    "RawTensor": RAW_TENSOR,
    "TensorList": TENSOR_LIST,
    "OptTensor": OPT_TENSOR,
    "OptRawTensor": OPT_RAW_TENSOR,
    "OptTensorOrScalar": OPT_TENSOR_OR_SCALAR,
}
# kinds whose tensors take part in type promotion
_PROMOTED = frozenset((TENSOR, TENSOR_OR_SCALAR, TENSOR_OR_STATIC, TENSOR_LIST, OPT_TENSOR, OPT_TENSOR_OR_SCALAR))
# kinds that accept no Python number
_TENSOR_ONLY = frozenset((TENSOR, RAW_TENSOR, OPT_TENSOR, OPT_RAW_TENSOR))
# kinds that accept None
_OPTIONAL = frozenset((OPT_TENSOR, OPT_RAW_TENSOR, OPT_TENSOR_OR_SCALAR, OPT_SCALAR))
# kinds where a Python number is a torch Scalar argument, without an edge in the backward node's
# next_functions (pow's exponent, clamp's bounds, a norm's order); a number where torch's schema has a
# Tensor (add's other) is a wrapped number: an empty edge
_SCALAR_NO_EDGE = frozenset((SCALAR, SCALAR_OR_STATIC, TENSOR_OR_STATIC, OPT_TENSOR_OR_SCALAR, OPT_SCALAR))
# kinds cast to the compute dtype inside the kernel
_CAST = frozenset((TENSOR, TENSOR_OR_SCALAR, TENSOR_OR_STATIC, SCALAR, TENSOR_LIST, OPT_TENSOR, OPT_TENSOR_OR_SCALAR))

# --- the table ---------------------------------------------------------------------------------


class OpDef:
    __slots__ = (
        "name", "fn", "params", "dyn_names", "static_names", "kinds", "promote", "method", "inplace",
        "out", "grad_name", "differentiable", "saves", "dtypes", "autocast", "kernels", "wrapper", "returns",
        "check", "kind_seq", "number_edges", "edge_skip", "scalar_defaults", "out_dtype", "exposed", "inplace_in", "inplace_arg",
        "inplace_grad_name", "inplace_saves", "__dict__",
    )  # fmt: skip
    keep_numbers = False  # its backward nodes keep the call's numbers (``Node.numbers``: pow's baked exponent)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


OPS: dict[str, OpDef] = {}


class _NoDefault:
    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


_NO_DEFAULT = _NoDefault()

# Set by torchlike.amp while an autocast region is active: (op, device_type, cdt, promo, static) ->
# (dtype to cast eligible inputs to, compute dtype) or None.
autocast: Callable | None = None


def defop(
    name: str | None = None,
    *,
    promote: str | None = "default",
    method: bool | None = None,
    inplace: bool | str = False,
    out: bool = False,
    grad_name: str | Callable | None = None,
    differentiable: bool = True,
    saves: tuple = ("*",),
    dtypes: str | None = None,
    autocast: str | None = None,
    returns: type | None = None,
    aliases: tuple = (),
    check: Callable | None = None,
    out_dtype: str | None = None,
    bake: Callable | None = None,
    namespaces: tuple | None = None,
    inplace_in: tuple = ("Tensor",),
    inplace_arg: bool = False,
    inplace_grad_name: str | None = None,
    inplace_saves: tuple | None = None,
    nondiff: tuple = (),
    scalar: tuple = (),
    optional_edges: tuple = (),
    pad: Callable | None = None,
) -> Callable:
    """Declare an op. See the module docstring.

    namespaces: where the op's function appears, among ``SPACES``; ``"space:name"`` names it there
        (``"special:expit"``; a namespace may be listed under several names). Default: ``torchlike`` for a public name, plus ``Tensor`` when ``method``.
        ``torchlike.nn.functional`` gets the function without ``out=``.
    inplace: the op has an in-place variant ``name_`` (a string renames its stem), appearing in the
        namespaces ``inplace_in`` (``Tensor.relu_``, ``torch.relu_``, ``F.relu_``).
    inplace_arg: the ``nn.functional`` function takes torch's ``inplace=False`` and, when true, runs the
        in-place variant (torch's in-place checks, the version counter, writing through views). Implies
        ``inplace``.

    promote: None (no casts), 'default' (torch's result type), 'float' (result type, integral -> default
        float), or a callable of the static args returning one of those.
    method: with the default ``namespaces``, whether ``Tensor.name`` exists too (default True); an op that
        lists its ``namespaces`` names ``Tensor`` there instead.
    inplace: ``Tensor.name_`` (a string renames its stem); see ``inplace_in``.
    grad_name: torch's backward node name (default ``<CamelName>Backward0``) or a callable of the
        static kwargs returning it.
    inplace_grad_name, inplace_saves: the in-place variant's ``grad_name`` and ``saves`` where torch
        declares its backward apart (``elu_`` gives ``EluBackward1``, which saves the result); default:
        the op's own.
    nondiff: the parameters torch's derivative table leaves out (``where``'s condition, indices, masks): never
        differentiated, and absent from the node's ``next_functions``.
    optional_edges: optional tensor parameters whose None is an empty edge in ``next_functions`` (torch's
        ``Tensor?`` inputs: layer_norm's weight and bias).
    scalar: the parameters where torch's schema takes a Scalar when a number is passed (``pow``'s base,
        ``masked_fill``'s value): a number there has no entry in ``next_functions`` (a tensor keeps its own).
    pad: how a call on sizes off the size classes may run padded (``_core/buckets.py``): ``pad(static, shapes)``
        gives, per dynamic argument, None or ``{axis: fill}``, where padding those axes with ``fill`` leaves the
        leading block of every result the exact call's (rows of a row-independent op, a contraction with
        zeros, a softmax's own axis with -inf).
    saves: the parameter names torch saves for backward ("result" for the output), used only to
        reproduce torch's in-place version errors; ("*",) means every tensor input.
    dtypes: the dtype categories torch implements the op for ('int' for integral+bool, 'float',
        'nocomplex'); others raise torch's "not implemented for" error.
    out_dtype: what an ``out=`` tensor's dtype means beyond torch's usual "the result must cast to it":
        'compute' (the op computes in it, as torch's sum/prod/cumsum do; an explicit ``dtype=`` must equal
        it; an op without ``dtype=`` needs a floating ``out``), 'compute_float' (the same, only for a
        floating ``out``: mean), or 'exact' (the result's dtype must equal it: norms).
    """

    def deco(fn: Callable) -> Callable:
        op = OpDef()
        op.name = name or fn.__name__
        for key in (op.name, *aliases):
            _refuse_twice(OPS, key, "op", fn)
        op.fn = fn
        sig = inspect.signature(fn)
        op.params = list(sig.parameters.values())
        op.kinds = {}
        for p in op.params:
            ann = p.annotation if isinstance(p.annotation, str) else getattr(p.annotation, "__name__", "")
            op.kinds[p.name] = _DYN.get(ann.rsplit(".", 1)[-1])
        op.dyn_names = tuple(n for n, k in op.kinds.items() if k is not None)
        op.kind_seq = tuple(op.kinds[n] for n in op.dyn_names)
        for n in (*nondiff, *scalar, *optional_edges):
            if n not in op.dyn_names:
                raise TypeError(f"op {op.name}: nondiff/scalar name {n!r} is no tensor or number parameter")
        op.number_edges = tuple(k not in _SCALAR_NO_EDGE and n not in scalar and n not in nondiff
                                for n, k in zip(op.dyn_names, op.kind_seq))  # fmt: skip
        op.edge_skip = tuple(n in nondiff for n in op.dyn_names) if nondiff else None
        # where a None is an empty edge: optional_edges always; an optional tensor-or-number (clamp's bounds) when
        # one of those is a tensor (torch's clamp.Tensor overload)
        op.none_if_tensor = OPT_TENSOR_OR_SCALAR in op.kind_seq
        op.none_edges = (tuple(k == OPT_TENSOR_OR_SCALAR or n in optional_edges for n, k in zip(op.dyn_names, op.kind_seq))
                         if op.none_if_tensor or optional_edges else None)  # fmt: skip
        params = {p.name: p for p in op.params}
        op.scalar_defaults = tuple(
            params[n].default if op.kinds[n] == SCALAR and params[n].default is not params[n].empty else _NO_DEFAULT
            for n in op.dyn_names
        )
        op.static_names = tuple(n for n, k in op.kinds.items() if k is None)
        op.promote = promote
        op.exposed = _exposed(op.name, namespaces, method)
        op.method = "Tensor" in op.exposed
        op.inplace = inplace or inplace_arg
        op.inplace_in = tuple(inplace_in) if inplace else ()
        op.inplace_arg = inplace_arg
        op.inplace_grad_name = inplace_grad_name
        op.inplace_saves = inplace_saves
        op.out = out
        op.grad_name = grad_name or (_camel(op.name) + "Backward0")
        op.differentiable = differentiable
        op.saves = saves
        op.dtypes = dtypes
        if autocast is not None:  # an ignored argument would silently change nothing
            raise TypeError(f"op {op.name}: declare its autocast category in amp/_policy.py, not defop(autocast=)")
        op.autocast = None
        op.returns = returns
        op.kernels = LRU()
        op.plans = {}  # call plans (``_plan_key``): what ``call`` derived for a recurring argument signature
        home = next(iter(op.exposed), "torch")  # where pickle and reprs find the function
        op.wrapper = _generate_wrapper(op, sig, with_out=out, name=op.exposed[home][0] if op.exposed else None,
                                       module="torchlike" if home in ("torch", "Tensor") else f"torchlike.{home}")  # fmt: skip
        OPS[op.name] = op
        op.check = check
        op.out_dtype = out_dtype
        op.bake = bake
        op.pad = pad
        for alias in aliases:
            OPS[alias] = op
        return op.wrapper

    return deco


def inplace_spec(op: OpDef) -> OpDef:
    """The spec the in-place variant of ``op`` runs: ``op`` itself, or where it declares
    ``inplace_grad_name``/``inplace_saves``, a copy recording those (sharing its kernels)."""
    if op.inplace_grad_name is None and op.inplace_saves is None:
        return op
    spec = copy.copy(op)
    spec.plans = {}  # (a plan's prepared autograd record names the node)
    spec.grad_name = op.inplace_grad_name or op.grad_name
    spec.saves = op.saves if op.inplace_saves is None else op.inplace_saves
    spec.wrapper = _generate_wrapper(spec, inspect.signature(op.fn), with_out=False, name=op.wrapper.__name__,
                                     module=op.wrapper.__module__)  # fmt: skip
    return spec


SPACES = ("torch", "Tensor", "nn.functional", "linalg", "special", "fft")


def _refuse_twice(table: dict, name: str, what: str, fn: Callable) -> None:
    """A second declaration of a name would silently replace the first: raise instead."""
    if name in table:
        first = table[name]
        where = getattr(getattr(first, "fn", first), "__module__", "?")
        raise TypeError(f"{what} {name} is declared twice: in {where} and in {getattr(fn, '__module__', '?')}")


def _exposed(name: str, namespaces: tuple | None, method: bool | None) -> dict[str, tuple]:
    """``{namespace: public names}`` of an op's function (see ``defop``'s ``namespaces``)."""
    if namespaces is not None and method is not None:
        raise TypeError(f"op {name}: list 'Tensor' in namespaces= instead of passing method=")
    if namespaces is None:
        method = True if method is None else method
        if name.startswith("_"):
            return {}
        return {"torch": (name,), "Tensor": (name,)} if method else {"torch": (name,)}
    exposed: dict[str, tuple] = {}
    for entry in namespaces:
        space, _, public = entry.partition(":")
        if space not in SPACES:
            raise ValueError(f"op {name}: unknown namespace {space!r} (one of {SPACES})")
        exposed[space] = exposed.get(space, ()) + (public or name,)
    return exposed


# Functions that are not table ops (they normalise arguments or combine kernels) but belong to a namespace:
# ``{namespace: {name: function}}``, filled by ``expose``; the installer merges them with the table's.
EXPOSED: dict[str, dict[str, Callable]] = {space: {} for space in SPACES}


def expose(space: str, name: str | None = None) -> Callable:
    """Decorator: put a hand-written function in namespace ``space`` (one of ``SPACES``) under ``name``
    (default: its own). The function keeps torch's signature; use it only where a table entry cannot say
    what the function does."""

    def deco(fn: Callable) -> Callable:
        _refuse_twice(EXPOSED[space], name or fn.__name__, f"{space} function", fn)
        EXPOSED[space][name or fn.__name__] = fn
        return fn

    return deco


# --- random ops -------------------------------------------------------------------------------------


class RandomDef:
    """A random op's entry (see ``defrandom``); ``static`` keywords become attributes (``sampler``, ``fill``)."""

    def __repr__(self) -> str:
        return f"<random op {self.name}>"


RANDOM: dict[str, RandomDef] = {}


def defrandom(body: Callable | None = None, *, name: str | None = None, namespaces: tuple = ("torch",),
              **static: Any) -> Callable:  # fmt: skip
    """Declare a random op. It is not a ``defop``: it draws from a generator's stream (torch's MT19937 on the
    host, a JAX key stream elsewhere), so it is no pure kernel; the installer reads ``RANDOM`` beside ``OPS``.

    The decorated function has torch's signature, which the op's public function keeps. With ``body`` (the
    one body a family of random ops shares), the function checks and normalises the arguments and returns
    what the body needs; the generated function runs
    ``body(entry, <the public arguments body names after entry>, <what the function returned>)``, passing
    None for an argument the op lacks (``rand_like`` has no ``out=``). Without ``body`` the function is the op.

    name: the public name (default: the function's), so families can share one normaliser.
    namespaces: where the op appears, among ``SPACES`` (``"space:name"`` renames it there). Its ``Tensor``
        form has no ``out=``: torch's random methods take none.
    static: what the body reads from the entry (``sampler="uniform"``, ``fill=uniform_``).
    """

    def deco(fn: Callable) -> Callable:
        entry = RandomDef()
        entry.name = name or fn.__name__
        _refuse_twice(RANDOM, entry.name, "random op", fn)
        entry.fn, entry.body = fn, body
        entry.__dict__.update(static)
        entry.exposed = _exposed(entry.name, namespaces, None)
        sig = inspect.signature(fn)
        if body is None:
            entry.wrapper = fn
        else:
            passed = list(inspect.signature(body).parameters)[1:-1]
            call = f"_body(_entry, {''.join(f'{p if p in sig.parameters else None}, ' for p in passed)}_fn({{}}))"
            entry.wrapper = _forwarding_function(entry.name, sig, call, {"_body": body, "_entry": entry, "_fn": fn},
                                                 fn.__module__)  # fmt: skip
            entry.wrapper.__annotations__["return"] = "Tensor"  # fn returns what the body needs
            _pointing_at(entry.wrapper, fn)
        entry.wrapper.__doc__ = fn.__doc__
        entry.method = entry.wrapper
        if "Tensor" in entry.exposed and "out" in sig.parameters:
            entry.method = _forwarding_function(entry.name, sig, "_fn({})", {"_fn": entry.wrapper}, fn.__module__,
                                                drop="out")  # fmt: skip
            _pointing_at(entry.method, fn)
        RANDOM[entry.name] = entry
        return entry.wrapper

    return deco


def _parameter_text(params: list) -> tuple:
    """The source text of a generated function's parameter list (``["x", "*", "dim=_d_dim"]``) and the
    defaults it names (``{"_d_dim": None}``), for ``exec``: the generated wrappers keep torch's signatures and
    bind their arguments in C."""
    parts, defaults, star = [], {}, False
    for p in params:
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, star = "*" + p.name, True
        elif p.kind is p.KEYWORD_ONLY and not star:
            parts.append("*")
            star = True
        if p.default is not p.empty:
            defaults[f"_d_{p.name}"] = p.default
            text += f"=_d_{p.name}"
        parts.append(text)
    return parts, defaults


def _forwarding_function(name: str, sig: inspect.Signature, call: str, ns: dict, module: str,
                         drop: str | None = None) -> Callable:  # fmt: skip
    """A function ``name`` with signature ``sig`` (less parameter ``drop``) returning ``call`` formatted with
    its arguments forwarded (positional ones by position, keyword-only ones by name). Generated, so argument
    binding stays in C."""
    params = [p for p in sig.parameters.values() if p.name != drop]
    if any(p.kind not in (p.VAR_POSITIONAL, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params):
        raise TypeError(f"random op {name}: positional-only and **kwargs parameters are not supported")
    parts, defaults = _parameter_text(params)
    forward = [f"*{p.name}" if p.kind is p.VAR_POSITIONAL else f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY
               else p.name for p in params]  # fmt: skip
    src = f"def {name}({', '.join(parts)}):\n    return {call.format(', '.join(forward))}\n"
    ns = {**ns, **defaults}
    exec(src, ns)
    fn = ns[name]
    fn.__module__ = module
    fn.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()
                          if p.annotation is not p.empty and p.name != drop}  # fmt: skip
    if sig.return_annotation is not sig.empty:
        fn.__annotations__["return"] = sig.return_annotation
    return fn


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))


def _generate_wrapper(op: OpDef, sig: inspect.Signature, with_out: bool, inplace: Callable | None = None,
                      name: str | None = None, module: str = "torchlike") -> Callable:
    """A Python function with torch's exact signature that forwards to ``call``.

    Generating it keeps argument binding in C (no inspect.bind per call). With ``inplace`` (the op's
    in-place function), the wrapper takes torch's ``inplace=False`` after the positional parameters and
    calls it when true (``nn.functional``'s form).
    """
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        raise TypeError(f"op {op.name}: *args are not supported in op bodies")
    parts, defaults = _parameter_text(params)
    seen_kwonly = "*" in parts
    first_inplace = ""
    if inplace is not None:
        if "inplace" in sig.parameters:
            raise TypeError(f"op {op.name}: a parameter named 'inplace' clashes with inplace_arg")
        at = parts.index("*") if seen_kwonly else len(parts)
        parts.insert(at, "inplace=False")
        rest = ", ".join(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}" for p in params[1:])
        first_inplace = f"    if inplace:\n        return _inplace({params[0].name}, {rest})\n"
    if with_out:
        if not seen_kwonly:
            parts.append("*")
        parts.append("out=None")
    fname = name or op.name
    dyn = ", ".join(op.dyn_names) + ("," if len(op.dyn_names) == 1 else "")
    static = ", ".join(op.static_names) + ("," if len(op.static_names) == 1 else "")
    src = (
        f"def {fname}({', '.join(parts)}):\n"
        + first_inplace
        + f"    return _call(_op, ({dyn}), ({static}), {'out' if with_out else 'None'})\n"
    )
    ns: dict[str, Any] = {"_call": call, "_op": op, "_inplace": inplace, **defaults}
    exec(src, ns)
    wrapper = _pointing_at(ns[fname], op.fn)
    wrapper.__doc__ = op.fn.__doc__
    wrapper.__module__ = module
    wrapper.__qualname__ = fname
    wrapper._op = op
    return wrapper


def _pointing_at(generated: Callable, spec: Callable) -> Callable:
    """A generated function made followable: ``__wrapped__`` is the spec entry it was generated from, and its
    code object names the entry's file and first line, so "go to definition", ``inspect.getsource`` and
    tracebacks land on the entry. Its own signature (torch's, with ``out=``) stays what ``inspect`` reports."""
    signature = inspect.signature(generated)
    code = spec.__code__
    generated.__code__ = generated.__code__.replace(co_filename=code.co_filename, co_firstlineno=code.co_firstlineno)
    generated.__signature__ = signature
    generated.__wrapped__ = spec
    return generated


# --- dispatch ---------------------------------------------------------------------------------

_SCALAR_TYPES = (builtins.bool, builtins.int, builtins.float, builtins.complex)



def _category_error(op: OpDef, dt: D.dtype) -> None:
    allowed = op.dtypes
    if allowed is None:
        return
    bad = (
        (allowed == "int" and (dt.is_floating_point or dt.is_complex))
        or (allowed == "float" and not (dt.is_floating_point or dt.is_complex))
        or (allowed == "nocomplex" and dt.is_complex)
        or (allowed == "nobool" and dt is D.bool)
        or (allowed == "real_float" and not dt.is_floating_point)
    )
    if bad:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for \'{D.cpp_name(dt)}\'')


_scalar_cache: LRU = LRU(kernels=False)


def _scalar_array(v: Any, device: Any) -> Any:
    """A cached 0-d device array for a Python number (keyed so that -0.0, True and 1 stay apart)."""
    key = (type(v), v, device) if v else (type(v), v, repr(v), device)  # repr only for zeros' signs
    arr = _scalar_cache.get(key)
    if arr is None:
        host = _number_array(v)
        if host is None:
            return v
        arr = jax.device_put(host, None if device is None or device.type == "cpu" else _jax_device(device))
        _scalar_cache[key] = arr
    return arr


def _number_array(v: Any) -> np.ndarray | None:
    """A Python number as the 0-d array kernels take for it (int64, float64, complex128, bool), or None."""
    try:
        host = np.asarray(v)
    except OverflowError:
        return None
    dt = host.dtype
    return host if dt == np.int64 or dt == np.float64 or dt == np.complex128 or dt == np.bool_ else None


def _jax_device(device: Any) -> Any:
    from .._core import device as _device

    return _device.jax_device(device)


def _is_traced_scalar(x: Any) -> bool:
    """A 0-d JAX value standing for a Python number (a compiled program's lifted hyper-parameter)."""
    return isinstance(x, jax.core.Tracer) and x.ndim == 0


def _to_scalar(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    return x


# (promote mode, ((dtype, rank), ...)) -> compute dtype. A plain dict, cleared when it grows past
# _PROMO_LIMIT: the combinations a program meets are few, and an LRU's bookkeeping costs per op.
_promo_cache: dict = {}
_PROMO_LIMIT = 4096
_Cold = cold_kernels.ColdKernel
_JaxArray: type | None = None  # JAX's concrete array class, found by _host_on
_host: bool | None = None  # small ops run on the host (ColdKernel.host): a CPU-only process, unless switched off


def _host_on() -> bool:
    global _host, _JaxArray
    _host = cold_kernels.host_enabled()
    _JaxArray = cold_kernels._array_type()
    return _host


def _promote_key(op: OpDef, promo: tuple) -> D.dtype:
    """torch's result type of the promoted arguments (cached by their (dtype, rank) pairs)."""
    dims = tuple(d for d, r in promo if r == RANK_DIMMED)
    zeros = tuple(d for d, r in promo if r == RANK_DIM0)
    scalars = tuple(d for d, r in promo if r == RANK_SCALAR)
    cdt = D.result_type_from(dims, zeros, scalars)
    return D.get_default_dtype() if cdt is None else cdt


def _arg_error(op: OpDef, i: int, a: Any, kind: str) -> TypeError:
    name = op.dyn_names[i]
    if kind in _TENSOR_ONLY:
        return TypeError(f"{op.name}(): argument '{name}' (position {i + 1}) must be Tensor, not {type(a).__name__}")
    return TypeError(f"{op.name}(): argument '{name}' must be Number, not {type(a).__name__}")


def call(op: OpDef, dyn: tuple, static: tuple, out: Tensor | None) -> Any:
    """Run ``op`` eagerly on tensors: promote, run the cached kernel, wrap, record for autograd.

    An eager call whose argument signature recurs runs its cached call plan (``_run_plan``); the full path
    below keeps the plan of a call it runs (one frame either way: warnings' stack levels count on it)."""
    plan_key = None
    if out is None and not lazy._on and autocast is None and T.hook is None:
        arrays = []
        plan_key = _plan_key(op, dyn, static, arrays)
        if plan_key is not None:
            try:
                plan = op.plans.get(plan_key)
            except TypeError:  # a list among the static arguments: not planned
                plan = plan_key = None
            if plan is not None and plan.default is D._default_float:
                if op.check is not None:  # (here: warnings it gives count their stack levels from this frame)
                    op.check(plan.cdt, dyn, static)
                result = _run_plan(plan, op, dyn, static, arrays)
                if result is not _MISS:
                    return result
    if lazy._on and out is None:
        g = lazy._graph
        if g.expect is not None and T.hook is None:
            result = _replay(op, dyn, static, g)
            if result is not _MISS:
                return result
    out_cdt = None
    static_in = static
    if out is not None and op.out_dtype is not None and isinstance(out, Tensor):
        static, out_cdt = _dtype_from_out(op, static, out)
    arrays = []
    tensors = []  # (position, tensor) of tensor arguments, for autograd
    promo = []
    device = None
    baked = None
    scalars = None
    any_rg = False
    i = 0
    for kind, a in zip(op.kind_seq, dyn):
        if isinstance(a, Tensor):
            buf = a._buf
            dev = buf.device
            if device is None:
                device = dev
            elif dev is not device and device != dev:
                device = _merge_device(device, dev, a, tensors)
            if a._view is None and buf.np is None and T.hook is None:
                arr = buf.array
                if type(arr) is _LazyArray and arr.graph is None:  # computed by an earlier flush
                    arr = buf.array = arr.value
                arrays.append(arr)
            else:
                arrays.append(a._peek())
            tensors.append((i, a))
            any_rg = any_rg or a._rg
            if kind in _PROMOTED:
                promo.append((a._dtype, RANK_DIMMED if a._shape else RANK_DIM0))
        elif kind == TENSOR_LIST:
            items = []
            for t in a:
                if not isinstance(t, Tensor):
                    raise TypeError(f"expected Tensor as element {len(items)} in argument 0, but got {type(t).__name__}")
                dev = t._buf.device
                if device is None:
                    device = dev
                elif dev is not device and device != dev:
                    device = _merge_device(device, dev, t)
                items.append(t._peek())
                any_rg = any_rg or t._rg
                promo.append((t._dtype, RANK_DIMMED if t._shape else RANK_DIM0))
            arrays.append(items)
            tensors.append((i, a))
        elif a is None:
            if kind not in _OPTIONAL:
                raise TypeError(f"{op.name}(): argument '{op.dyn_names[i]}' must be Tensor, not NoneType")
            arrays.append(None)
        else:
            if kind in _TENSOR_ONLY:
                raise _arg_error(op, i, a, kind)
            if type(a) not in _SCALAR_TYPES:
                a = _to_scalar(a)
                if not isinstance(a, _SCALAR_TYPES) and not _is_traced_scalar(a):
                    raise _arg_error(op, i, a, kind)
            if kind == TENSOR_OR_SCALAR or kind == OPT_TENSOR_OR_SCALAR:
                promo.append((D.scalar_dtype(a), RANK_SCALAR))
            elif kind == TENSOR_OR_STATIC:
                promo.append((D.scalar_dtype(a), RANK_SCALAR))
                if op.bake is None or op.bake(a):
                    baked = (baked or ()) + ((i, type(a), a),)
                    a = None
            elif kind == SCALAR_OR_STATIC and type(a) in _SCALAR_TYPES and (op.bake is None or op.bake(a)):
                baked = (baked or ()) + ((i, type(a), a),)
                a = None
            elif kind == SCALAR and a == op.scalar_defaults[i] and type(a) is type(op.scalar_defaults[i]):
                # the default (alpha=1) is baked in: one kernel without the extra argument
                baked = (baked or ()) + ((i, type(a), a),)
                a = None
            if a is not None and type(a) in _SCALAR_TYPES:
                scalars = (scalars or []) + [i]
            arrays.append(a)
        i += 1
    if scalars is not None:
        # a Python number costs JAX's dispatch ~2x an array argument: pass a cached 0-d array
        for j in scalars:
            arrays[j] = _scalar_array(arrays[j], device)

    promote = op.promote
    if promote is None:
        cdt = None
    else:
        if type(promote) is not str:
            promote = promote(static)
        pkey = (promote, tuple(promo), D._default_float)  # (an integer division's result is the default dtype)
        cdt = _promo_cache.get(pkey)
        if cdt is None:
            cdt = _promote_key(op, pkey[1])
            if promote != "default" and not (cdt.is_floating_point or cdt.is_complex):
                cdt = D.get_default_dtype()
            if len(_promo_cache) >= _PROMO_LIMIT:
                _promo_cache.clear()
            _promo_cache[pkey] = cdt
        if op.dtypes is not None:
            _category_error(op, cdt)
        if out_cdt is not None:
            cdt = out_cdt
    if op.check is not None:
        op.check(cdt, dyn, static)

    precast = None
    if autocast is not None and device is not None:
        adj = autocast(op, device.type, cdt, promo, static)
        if adj is not None:
            precast, cdt = adj
    key = (static, cdt, baked, precast) if baked or precast else (static, cdt)
    try:
        kernel = op.kernels.get(key)
    except TypeError:  # a list among the static arguments (x.sum([0, 1])): key on tuples
        static = tuple(tuple(s) if isinstance(s, list) else s for s in static)
        key = (static, cdt, baked, precast) if baked or precast else (static, cdt)
        kernel = op.kernels.get(key)
    if kernel is None:
        kernel = _build_kernel(op, static, cdt, baked or (), key, precast)
    try:
        result = None
        if kernel.__class__ is _Cold and not lazy._on and T.hook is None and (_host or (_host is None and _host_on())):
            result = kernel.host(arrays)  # a small op on the host, where NumPy gives the kernel's bits
        if result is None:
            if _host and not lazy._on:
                _onto_device(arrays, dyn)
            result = lazy.call(kernel, arrays) if lazy._on else kernel(*arrays)
    except (ValueError, TypeError) as e:
        if not lazy._on and lazy.has_pending_input(arrays):  # values left pending by lazy mode, now off
            arrays = lazy.concrete_tree(arrays)
            try:
                result = kernel(*arrays)
            except (ValueError, TypeError) as e2:
                result = _kernel_error(kernel, arrays, e2)
        else:
            result = _kernel_error(kernel, arrays, e)

    if device is None:
        device = _default_device_for(result)
    make = T.make
    if type(result) is tuple or type(result) is list:
        outputs = tuple(make(r, device) for r in result)
    else:
        outputs = make(result, device)

    rec = any_rg and op.differentiable and grad_mode._state.enabled
    if rec:
        graph.record(op, kernel, static, arrays, tensors, outputs, dyn)

    if out is None and lazy._on:
        g = lazy._graph
        if g.trace is not None and g.expect is None and T.hook is None:
            g.trace.append(_entry(op, dyn, static_in, static, kernel, cdt, device, outputs, rec, tensors, g))
    if plan_key is not None and not lazy._on:
        _keep_plan(op, plan_key, dyn, arrays, kernel, key, cdt, device, outputs, tensors if rec else None)
    if out is not None:
        return _write_out(op, outputs, out)
    if op.returns is not None:
        return op.returns(*outputs)
    return outputs


# --- call plans ----------------------------------------------------------------------------------
# Eagerly, most calls repeat an earlier call's argument signature: the same op and static arguments, tensors
# of the same classes, dtypes, devices and ranks (0-d or not: promotion tells them apart), the same Python
# number types, and the same values where the kernel may bake a number in. Everything ``_call`` derives
# from that (promotion, checks of the dtype category, the kernel, where baked numbers go, the outputs' dtypes
# and device) is then known: the plan keeps it, and a recurring call costs building its key, reading the
# arrays, the kernel (or its host form), wrapping and, where a tensor requires grad, recording.
# Not planned: out=, lazy mode, autocast, tensor lists, anything unhashable. The op's ``check`` still runs
# every call (it may read values: integer division by zero).

_PLANS = 256  # plans kept per op; past that its table starts again


def _onto_device(arrays: list, dyn: tuple) -> None:
    """Host arrays of tensors about to meet a compiled kernel become JAX arrays, in their buffers too: JAX
    puts a NumPy argument on the device at every call (~3.5 us each), this once (the host path reads a
    JAX CPU array without a copy)."""
    for i, arr in enumerate(arrays):
        c = arr.__class__
        if c is np.ndarray:
            arrays[i] = _device_twin(dyn[i], arr)
        elif c is list:
            arrays[i] = [x if x.__class__ is not np.ndarray else _device_twin(t, x) for t, x in zip(dyn[i], arr)]


def _device_twin(t: Any, arr: np.ndarray) -> Any:
    if not isinstance(t, Tensor):  # a number's host 0-d array (``_host_scalar``): its cached device array
        return _scalar_array(t, None)
    buf = t._buf
    if t._view is None and buf.np is None and buf.array is arr:
        arr = buf.array = cold_kernels.to_jax(arr, copy=False)
    return arr


_host_scalars: dict = {}


def _host_scalar(v: Any) -> Any:
    """``_scalar_array`` for the host path: the same 0-d array (dtype, not weak), as a NumPy array."""
    key = (type(v), v) if v else (type(v), v, repr(v))
    arr = _host_scalars.get(key)
    if arr is None:
        arr = _number_array(v)
        if arr is None:
            return v
        arr.setflags(write=False)
        if len(_host_scalars) >= _PROMO_LIMIT:
            _host_scalars.clear()
        _host_scalars[key] = arr
    return arr


class _Plan:
    __slots__ = ("kernel", "kkey", "cdt", "device", "dtypes", "multi", "actions", "default", "prep", "cold", "numbers",
                 "any_rg")  # fmt: skip


def _plan_key(op: OpDef, dyn: tuple, static: tuple, arrays: list) -> tuple | None:
    """The call's plan key, or None where it is not planned; ``arrays`` gets the kernel's arguments on the way
    (a number as it is: its plan decides what it becomes, see ``_run_plan``)."""
    key = [static]
    for kind, a in zip(op.kind_seq, dyn):
        if isinstance(a, Tensor):
            buf = a._buf
            dev = buf.device  # (its type and index: a device's own hash is a Python call)
            key.append((a.__class__, a._dtype, dev.type, dev.index, not a._shape, a._rg))
            if a._view is None and buf.np is None:
                arr = buf.array
                if arr.__class__ is _LazyArray:
                    if arr.graph is not None:  # pending work of a lazy region now closed: the full path
                        return None
                    arr = buf.array = arr.value
            else:
                arr = a._peek()
            arrays.append(arr)
        elif a is None:
            key.append(None)
            arrays.append(None)
        elif kind is TENSOR_LIST and (a.__class__ is list or a.__class__ is tuple):
            items = []
            arrs = []
            for x in a:
                if not isinstance(x, Tensor):
                    return None
                dev = x._buf.device
                items.append((x.__class__, x._dtype, dev.type, dev.index, not x._shape, x._rg))
                arr = x._peek()
                if arr.__class__ is _LazyArray:
                    return None
                arrs.append(arr)
            key.append((a.__class__, tuple(items)))
            arrays.append(arrs)
        else:
            t = a.__class__
            if t is not float and t is not int and t is not bool and t is not complex:
                return None
            if kind is SCALAR or kind in _BAKEABLE:  # (-0.0 == 0.0: zeros are told apart by their repr)
                key.append((t, a) if a else (t, a, repr(a)))
            else:
                key.append(t)
            arrays.append(a)
    return tuple(key)  # (unhashable when a static argument is a list: the caller's lookup tells)


def _keep_plan(op: OpDef, plan_key: tuple, dyn: tuple, arrays: list, kernel: Callable, kkey: tuple, cdt: Any,
               device: Any, outputs: Any, recorded: list | None) -> None:  # fmt: skip
    actions = []
    for a, arr in zip(dyn, arrays):
        if isinstance(a, Tensor):
            actions.append(0)  # its array
        elif type(arr) is list:
            actions.append(3)  # a list of tensors: their arrays
        elif arr is None:
            actions.append(1)  # None, or a number baked into the kernel
        else:
            actions.append(2)  # a number passed as a cached 0-d array
    plan = _Plan()
    plan.kernel = kernel
    plan.cold = kernel.__class__ is _Cold
    plan.kkey = kkey
    plan.cdt = cdt
    plan.device = device
    plan.multi = type(outputs) is tuple
    plan.dtypes = tuple(o._dtype for o in outputs) if plan.multi else outputs._dtype
    plan.actions = tuple(actions)
    # the numbers among the arguments: (position, baked in (None) or passed as a cached 0-d array)
    plan.numbers = tuple((i, action == 2) for i, (a, action) in enumerate(zip(dyn, actions))
                         if action != 0 and action != 3 and a is not None) or None  # fmt: skip
    # whether a tensor argument requires grad (the key holds that): the call is then recorded where grad mode is on
    rg = [a._rg if action == 0 else action == 3 and any(t._rg for t in a) for a, action in zip(dyn, actions)]
    plan.any_rg = any(rg)
    plan.default = D._default_float
    # how the autograd node is built, where this call recorded one (the key holds which inputs require grad)
    plan.prep = graph.prepare(op, recorded, outputs) if recorded is not None else None
    plans = op.plans
    if len(plans) >= _PLANS:
        plans.clear()
    plans[plan_key] = plan


def _run_plan(plan: _Plan, op: OpDef, dyn: tuple, static: tuple, arrays: list) -> Any:
    """``call``'s plan path: ``arrays`` are ``_plan_key``'s."""
    host = plan.cold and (_host or (_host is None and _host_on()))
    if plan.numbers is not None:
        for i, passed in plan.numbers:
            a = arrays[i]
            arrays[i] = (_host_scalar(a) if host else _scalar_array(a, plan.device)) if passed else None
    # the kernel table's bookkeeping, as its ``get`` does: which executables an eviction drops first
    if kernel_cache._pending:
        kernel_cache._evict()
    used = op.kernels.used
    kkey = plan.kkey
    if kkey not in used:  # the table dropped the kernel: the full path builds it again
        return _MISS
    used[kkey] = kernel_cache._tick()
    kernel = plan.kernel
    try:
        if host:
            result = None if kernel.nohost else kernel.host(arrays)
            if result is None:
                _onto_device(arrays, dyn)
                result = kernel(*arrays)
        else:
            result = kernel(*arrays)
    except Exception:  # noqa: BLE001 - the full path raises it with torch's message
        return _MISS
    make = T.make if T.grad_state.inference else T.make_fresh  # (make tags inference tensors' storage)
    if plan.multi:
        device = plan.device
        outputs = tuple([make(r, device, dt) for r, dt in zip(result, plan.dtypes)])
    else:
        outputs = make(result, plan.device, plan.dtypes)
    if plan.any_rg and op.differentiable and grad_mode._state.enabled:
        if plan.prep is not None:
            graph.record_prepared(plan.prep, op, kernel, static, arrays, outputs, dyn)
        else:
            tensors = [(j, a) for j, (action, a) in enumerate(zip(plan.actions, dyn)) if action == 0 or action == 3]
            graph.record(op, kernel, static, arrays, tensors, outputs, dyn)
    if op.returns is not None:
        return op.returns(*outputs)
    return outputs


# --- guarded replay ----------------------------------------------------------------------------
# A lazy step that recurs is replayed, not recorded again: ``call`` remembers, per graph, an entry for each
# op in call order (``lazy._Graph.trace``). When the same structure runs again, each call compares itself
# with the next expected entry: op, static arguments, per argument its kind, dtype, requires_grad, device
# and array signature (shape, dtype, weak type: the same abstract evaluation), scalars' types (and values
# where the kernel bakes them in), grad mode, the default dtype and autocast. Those decide everything the
# full path would compute (promotion, kernel, output signature, device), so on a match the node is appended
# with the known kernel and signature, and the outputs are wrapped and recorded for autograd as usual. The
# first mismatch switches the graph back to recording; nothing is returned that the full path would not.

_MISS = object()
_PLAIN = frozenset((type(None), builtins.bool, builtins.int, builtins.float, builtins.complex, builtins.str,
                    D.dtype, _device.device))  # fmt: skip
_BAKEABLE = frozenset((SCALAR, SCALAR_OR_STATIC, TENSOR_OR_STATIC))


class _Entry:
    __slots__ = ("op", "static", "kstatic", "args", "want", "kernel", "sig", "cdt", "device", "dtypes", "rec",
                 "default", "ac", "multi", "prep", "n")  # fmt: skip


def _plain(x: Any) -> bool:
    """A static argument whose ``==`` is cheap and exact (no tensors or arrays)."""
    t = type(x)
    if t is tuple or t is list:
        return all(_plain(y) for y in x)
    return t in _PLAIN


def _entry(op: OpDef, dyn: tuple, static_in: tuple, static: tuple, kernel: Callable, cdt: Any, device: Any,
           outputs: Any, rec: bool, tensors: list, g: Any) -> _Entry | None:  # fmt: skip
    """What replaying this call needs, or None where the call is not one replay handles."""
    node = g.key[-1] if g.nodes else None
    if node is None or g.nodes[-1][0] is not kernel or g.nodes[-1][1] is not None:
        return None  # not recorded as one flat node of this graph (run now, or a flush in between)
    outs = outputs if type(outputs) is tuple else (outputs,)
    if len(outs) != len(node[0].out) or any(type(o._buf.array) is not _LazyArray for o in outs):
        return None
    if outs[0]._buf.array.slot != g.nodes[-1][3]:
        return None
    if not _plain(static_in):
        return None
    args = []
    refs = g.nodes[-1][2]
    for i, (kind, a) in enumerate(zip(op.kind_seq, dyn)):
        if isinstance(a, Tensor):
            if type(a._rg) is not bool:
                return None
            args.append((type(a), a._dtype, a._rg, a._buf.device))
        elif a is None:
            args.append(None)
        elif type(a) in _SCALAR_TYPES:
            num = _Number()
            num.type = type(a)
            num.value = a
            num.text = repr(a)
            num.array = None
            # a number the kernel may bake in (alpha=1, a static-able scalar) is guarded by value
            num.exact = kind in _BAKEABLE
            num.baked = refs[i] is None
            if num.baked and not num.exact:
                return None
            if not num.baked:
                if refs[i] >= 0:
                    return None
                num.array = g.leaves[~refs[i]]  # the cached 0-d array ``_scalar_array`` gave for it
            args.append(num)
        else:
            return None
    e = _Entry()
    e.op = op
    e.static = static_in
    e.kstatic = static
    e.args = tuple(args)
    e.n = len(args)
    e.want = g.last_sig
    e.kernel = kernel
    e.sig = node[0]
    e.cdt = cdt
    e.device = device
    e.dtypes = tuple(o._dtype for o in outs)
    e.multi = type(outputs) is tuple
    e.rec = rec
    e.prep = graph.prepare(op, tensors, outputs) if rec else None
    e.default = D._default_float
    e.ac = None if autocast is None else autocast.state_key()
    return e


def _replay(op: OpDef, dyn: tuple, static: tuple, g: Any) -> Any:
    """``call`` for the graph's next expected entry, or ``_MISS`` (then ``call`` runs in full)."""
    pos = g.pos
    exp = g.expect
    if pos >= len(exp):
        lazy.stop_replay(g)
        return _MISS
    e = exp[pos]
    g.pos = pos + 1
    if e is None:  # an op replay does not handle: the full path, and replay goes on after it
        return _MISS
    if e.op is not op or e.static != static or len(dyn) != e.n:
        return _miss(g, pos)
    arrays = []
    any_rg = False
    i = 0
    for want, a in zip(e.args, dyn):
        if want is None:
            if a is not None:
                return _miss(g, pos)
            arrays.append(None)
        elif want.__class__ is tuple:  # a tensor: (class, dtype, requires_grad, device)
            if a.__class__ is not want[0] or a._dtype is not want[1] or a._rg is not want[2]:
                return _miss(g, pos)
            buf = a._buf
            if buf.device is not want[3]:
                return _miss(g, pos)
            if a._view is None and buf.np is None:
                arr = buf.array
                if arr.__class__ is _LazyArray and arr.graph is None:  # computed by an earlier flush
                    arr = buf.array = arr.value
                arrays.append(arr)
            else:
                arrays.append(a._peek())
            if want[2]:
                any_rg = True
        elif a.__class__ is not want.type:
            return _miss(g, pos)
        elif want.baked:
            if a != want.value or (not a and repr(a) != want.text):  # -0.0 is not 0.0
                return _miss(g, pos)
            arrays.append(None)  # baked into the kernel
        elif want.exact and _bakes(op, i, a):
            return _miss(g, pos)
        elif a is want.value:  # the same number object as last time: its cached array
            arrays.append(want.array)
        else:
            arrays.append(_scalar_array(a, e.device))
        i += 1
    if e.default is not D._default_float or (autocast is None) is not (e.ac is None):
        return _miss(g, pos)
    if e.ac is not None and autocast.state_key() != e.ac:
        return _miss(g, pos)
    rec = any_rg and op.differentiable and grad_mode._state.enabled
    if rec is not e.rec:
        return _miss(g, pos)
    if op.check is not None:
        try:
            op.check(e.cdt, dyn, static)
        except Exception:  # the full path raises it, at this op
            return _miss(g, pos)
    outs = lazy.replay(e.kernel, e.sig, e.want, arrays)
    if outs is None:
        return _miss(g, pos)
    make = T.make_fresh
    device = e.device
    if e.multi:
        outputs = tuple([make(z, device, dt) for z, dt in zip(outs, e.dtypes)])
    else:
        outputs = make(outs[0], device, e.dtypes[0])
    if rec:
        if e.prep is not None:
            graph.record_prepared(e.prep, op, e.kernel, e.kstatic, arrays, outputs, dyn)
        else:
            tensors = [(j, a) for j, a in enumerate(dyn) if isinstance(a, Tensor)]
            graph.record(op, e.kernel, e.kstatic, arrays, tensors, outputs, dyn)
    if op.returns is not None:
        return op.returns(*outputs)
    return outputs


def _bakes(op: OpDef, i: int, a: Any) -> bool:
    """Whether ``call`` bakes the number ``a`` at dynamic position ``i`` into the kernel."""
    kind = op.kind_seq[i]
    if kind == SCALAR:
        d = op.scalar_defaults[i]
        return a == d and type(a) is type(d)
    return op.bake is None or op.bake(a)


class _Number:
    """A replay entry's expectation for a Python number argument."""

    __slots__ = ("type", "exact", "baked", "value", "text", "array")


def _miss(g: Any, pos: int) -> Any:
    g.pos = pos
    lazy.stop_replay(g)
    return _MISS


def _kernel_error(kernel: Callable, arrays: list, e: Exception) -> Any:
    """Recover from, or translate into torch's words, a kernel call's error."""
    if "ncompatible devices" in str(e):  # single-device arrays meeting mesh-sharded ones (DataParallel)
        return kernel(*_device.onto_mesh(arrays, e))
    if "ncompatible shapes for broadcasting" in str(e):
        raise _broadcast_error(arrays) or e from None
    raise e


_LazyArray = lazy.LazyArray


def _dtype_from_out(op: OpDef, static: tuple, out: Tensor) -> tuple:
    """``(static, compute dtype or None)`` for an ``out=`` call: see ``defop``'s ``out_dtype``."""
    mode, dt = op.out_dtype, out._dtype
    if mode == "exact":
        return static, None
    is_float = dt.is_floating_point or dt.is_complex
    if op.name.startswith("nan") and not dt.is_floating_point:
        raise NotImplementedError(f"\"nansum_{out.device.type}\" not implemented for '{D.cpp_name(dt)}'")
    if "dtype" not in op.static_names:  # the op computes in its result type: out's, when that is a float
        if not is_float:
            raise RuntimeError(f"{op.name}(): Expected floating point type for result tensor, but got: {D.cpp_name(dt)}")
        return static, dt
    j = op.static_names.index("dtype")
    want = static[j]
    if want is None:
        if mode == "compute_float" and not is_float:  # left to the result-to-out cast check
            return static, None
        return static[:j] + (dt,) + static[j + 1 :], None
    want = D.to_dtype(want)
    if want is not dt:
        if op.name.startswith("nan"):
            raise RuntimeError(
                f"nansum: provided dtype must match dtype of result. Got {D.cpp_name(dt)} and {D.cpp_name(want)}."
            )
        raise RuntimeError(f"Expected out tensor to have dtype {D.c_type(want)}, but got {D.c_type(dt)} instead")
    return static, None


def _broadcast_error(arrays: list) -> RuntimeError | None:
    """torch's message when tensor arguments do not broadcast (JAX raises a ValueError while tracing)."""
    shape: tuple = ()
    for a in arrays:
        if not hasattr(a, "shape") or isinstance(a, list):
            continue
        b = tuple(a.shape)
        n = builtins.max(len(shape), len(b))
        sa, sb = (1,) * (n - len(shape)) + shape, (1,) * (n - len(b)) + b
        for i, (x, y) in enumerate(zip(sa, sb)):
            if x != y and x != 1 and y != 1:
                return RuntimeError(
                    f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton dimension {i}"
                )
        shape = tuple(y if x == 1 else x for x, y in zip(sa, sb))
    return None


def _autocast_cast(a: Any, target: Any) -> Any:
    """autocast's cast of an eligible input: floating point and not float64."""
    if isinstance(a, list):
        return [_autocast_cast(x, target) for x in a]
    dt = getattr(a, "dtype", None)
    if dt is not None and jax.numpy.issubdtype(dt, jax.numpy.floating) and dt != np.float64:
        return a.astype(target)
    return a


# torch's CPU and CUDA kernels compute these ops on float16/bfloat16 in float32 (at::opmath_type) and round
# the result once; a 0-d value (a number or 0-d tensor) in a listed parameter keeps its float32 value where the
# half type would round it (mul/div's iter.original_scalar_value<opmath_t>, the activations' parameters). Other
# ops (add/sub's scalar, comparisons, clamp) read numbers in the half type, as this table's cast does.
OPMATH = {
    "add": (), "sub": (), "rsub": (), "mul": ("other",), "div": ("other",), "elu": ("alpha",), "gelu": (), "silu": (),
    "mish": (), "leaky_relu": ("negative_slope",), "softplus": ("beta", "threshold"), "addcmul": ("value",),
    "addcdiv": ("value",),
}  # fmt: skip
_HALF = (np.dtype(jax.numpy.float16), np.dtype(jax.numpy.bfloat16))
_BITS = {np.dtype(jax.numpy.float16): (5, 10), np.dtype(jax.numpy.bfloat16): (8, 7)}


def round_to(x: Any, np_dt: Any) -> Any:
    """``x`` (float32) rounded to the half type ``np_dt``: a rounding point that holds inside one XLA program.

    A bare convert does not: XLA drops convert(convert(x, bf16), f32) pairs (``xla_allow_excess_precision``,
    and the CPU's YNNPACK reduce fusions even without it), so a rounded result read back in float32 in the
    same program (a backward reading the result, a reduction of it) would see the unrounded value.
    ``reduce_precision`` is kept."""
    bits = _BITS.get(np.dtype(np_dt))
    if bits is not None and x.dtype == np.float32:
        rounded = jax.lax.reduce_precision(x, *bits)
        if bits[0] == 5:
            # NOTE: reduce_precision flushes float16's subnormals (below 6.1e-5) to zero: those keep the plain
            # convert (bfloat16's start where float32's do, and are kept)
            tiny = np.float32(jax.numpy.finfo(np_dt).smallest_normal)
            rounded = jax.numpy.where(jax.numpy.abs(x) < tiny, x, rounded)
        x = rounded
    return x.astype(np_dt)


def _opmath_arg(a: Any, np_dt: Any, unrounded: bool) -> Any:
    """A half-type op's argument in float32: rounded to the half type first unless ``unrounded`` and 0-d."""
    a = jax.numpy.asarray(a)
    if not (unrounded and a.ndim == 0):
        a = a.astype(np_dt)
    return a.astype(np.float32)


def _round_to(result: Any, np_dt: Any) -> Any:
    """float32 results (of an opmath computation) rounded once to the half type."""
    if isinstance(result, (tuple, list)):
        return type(result)(_round_to(r, np_dt) for r in result)
    return round_to(result, np_dt) if getattr(result, "dtype", None) == np.float32 else result


def _build_kernel(op: OpDef, static: tuple, cdt: D.dtype | None, baked: tuple, key: tuple,
                  precast: D.dtype | None = None) -> Callable:
    jitted = cold_kernels.cold(kernel_function(op, static, cdt, baked, precast))
    if op.pad is not None:
        jitted.pad = lambda shapes: op.pad(static, shapes)
        jitted.pad.exact = getattr(op.pad, "exact", False)
    op.kernels[key] = jitted
    return jitted


def kernel_function(op: OpDef, static: tuple, cdt: D.dtype | None, baked: tuple,
                    precast: D.dtype | None = None) -> Callable:
    """The function of arrays a kernel runs: ``op``'s body with its static arguments, casts and baked
    defaults applied (``_build_kernel`` jits and caches it)."""
    fn = op.fn
    names = op.dyn_names
    static_kw = dict(zip(op.static_names, static))
    baked_at = {i: a for i, _, a in baked}
    cast = []
    for n in names:
        k = op.kinds[n]
        cast.append(cdt is not None and k in _CAST)
    np_dt = cdt.np if cdt is not None else None
    target = precast.np if precast is not None else None
    raw = tuple(op.kinds[n] == RAW_TENSOR or op.kinds[n] == OPT_RAW_TENSOR for n in names)
    kinds = op.kind_seq
    unrounded = OPMATH.get(op.name) if np_dt in _HALF else None  # computed in float32, rounded once

    def kernel(*args):
        kw = dict(static_kw)
        for i, (n, c, a) in enumerate(zip(names, cast, args)):
            if i in baked_at:
                a = baked_at[i]
                if c and kinds[i] == SCALAR:  # a baked default is cast like the dynamic value would be
                    a = jax.numpy.asarray(a, np_dt) if unrounded is None else _opmath_arg(a, np_dt, n in unrounded)
            else:
                if target is not None and (raw[i] or c):
                    a = _autocast_cast(a, target)
                if c and a is not None:
                    if unrounded is not None:
                        a = _opmath_arg(a, np_dt, n in unrounded)
                    else:
                        a = [x.astype(np_dt) for x in a] if isinstance(a, list) else jax.numpy.asarray(a, np_dt)
            kw[n] = a
        return fn(**kw) if unrounded is None else _round_to(fn(**kw), np_dt)

    kernel.__name__ = op.name
    return kernel


def _merge_device(current: Any, dev: Any, t: Tensor, seen: list = ()) -> Any:
    if current is None:
        return dev
    if current == dev:
        return current
    # torch lets 0-dim CPU tensors join tensors on another device, in either order
    if not t._shape and dev.type == "cpu":
        return current
    if current.type == "cpu" and all(
        not x._shape for _, x in seen if isinstance(x, Tensor) and x._buf.device.type == "cpu"
    ) and all(isinstance(x, Tensor) for _, x in seen):
        return dev
    raise RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, {current} and {dev}!"
    )


def _default_device_for(result: Any) -> Any:
    from .._core import device as _device

    return _device.CPU


def _write_out(op: OpDef, outputs: Any, out: Any) -> Any:
    if isinstance(outputs, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(outputs):
            raise TypeError(f"{op.name}(): argument 'out' must be tuple of Tensors")
        for o, r in zip(out, outputs):
            copy_to_out(r, o)
        returns = op.__dict__.get("returns_out") or op.returns  # torch: max(x, 1, out=...) is a max_out
        return returns(*out) if returns is not None else tuple(out)
    if op.out_dtype == "exact" and isinstance(out, Tensor) and outputs._dtype is not out._dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {D.c_type(outputs._dtype)}, but got {D.c_type(out._dtype)} instead"
        )
    copy_to_out(outputs, out)
    return out


def copy_to_out(result: Tensor, out: Tensor) -> None:
    """Write ``result`` into an ``out=`` tensor as torch does (cast check, resize, autograd rules)."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if not D.can_cast(result._dtype, out._dtype):
        raise RuntimeError(
            f"result type {D.cpp_name(result._dtype)} can't be cast to the desired output type {D.cpp_name(out._dtype)}"
        )
    if grad_mode._state.enabled and (result._rg or out._rg):
        raise RuntimeError(
            "add(): functions with out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad."
        )
    arr = result._peek()
    if result._shape != out._shape:
        if out.numel() != 0:
            import warnings

            warnings.warn(
                f"An output with one or more elements was resized since it had shape {list(out._shape)}, which does "
                f"not match the required output shape {list(result._shape)}. This behavior is deprecated, and in a "
                "future PyTorch release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                UserWarning,
                stacklevel=4,
            )
        out._resize_to(arr.astype(out._dtype.np))
        return
    out._assign(arr)



# --- view ops -------------------------------------------------------------------------------------


def defview(name: str | None = None, *, method: bool = True, function: bool = True,
            grad_name: str | Callable | None = None) -> Callable:  # fmt: skip
    """Declare a view op. The body maps (tensor, args) to ``(kind, static, dyn, shape, stride, offset)``
    -- one view step and its torch geometry -- or returns a Tensor when torch copies instead.

    method/function: expose ``Tensor.name`` / ``torchlike.name`` (``Tensor.expand`` has no function twin)."""

    def deco(fn: Callable) -> Callable:
        op_name = name or fn.__name__
        _refuse_twice(VIEWS, op_name, "view", fn)
        gname = grad_name or (_camel(op_name) + "Backward0")

        def wrapper(input: Tensor, *args: Any, **kwargs: Any) -> Any:
            spec = fn(input, *args, **kwargs)
            if isinstance(spec, Tensor) or spec is input:
                return spec
            return make_view_of(input, spec, gname, args, kwargs)

        wrapper.__name__ = wrapper.__qualname__ = op_name
        wrapper.__doc__ = fn.__doc__
        wrapper.__wrapped__ = fn
        wrapper.__signature__ = inspect.signature(fn)
        wrapper._method, wrapper._function = method, function
        VIEWS[op_name] = wrapper
        return wrapper

    return deco


VIEWS: dict[str, Callable] = {}


def make_view_of(input: Tensor, spec: tuple, gname: Any, args: tuple = (), kwargs: Any = None) -> Tensor:
    kind, static, dyn, shape, stride, offset = spec
    view = input._view
    if view is None:
        new = _views.View(((kind, static),), dyn, shape, stride, offset)
    else:
        new = view.then(kind, static, dyn, shape, stride, offset)
    out = T.make_view(input, new)
    if "_multi_view" in input.__dict__:  # torch: a view of a multi-output view inherits its in-place ban
        name = gname if isinstance(gname, str) else gname(args, kwargs or {})
        out._multi_view = (name.removesuffix("Backward0"), 0)
    if input._rg and grad_mode._state.enabled:
        name = gname if isinstance(gname, str) else gname(args, kwargs or {})
        graph.record_view(input, out, _views.read_kernel(((kind, static),)), dyn, name)
    return out


# --- running arbitrary pure functions on tensors --------------------------------------------------


class _FnOp:
    """The op-like record ``graph.record`` needs for a function run through ``apply_pure``."""

    __slots__ = ("grad_name", "saves", "dyn_names")

    def __init__(self, name: str) -> None:
        self.grad_name = name
        self.saves = ()
        self.dyn_names = ()


_fn_ops: dict[str, _FnOp] = {}
_flat_kernels: LRU = LRU(kernels=False)


def apply_pure(name: str, kernel: Callable, args: Any, device: Any = None) -> Any:
    """Run ``kernel(*args)`` where ``args`` is a pytree holding Tensors; record ``name`` for autograd.

    ``kernel`` should be a cached (jitted) function so that repeated calls reuse it.
    """
    leaves, treedef = jax.tree_util.tree_flatten(args, is_leaf=lambda x: isinstance(x, Tensor))
    arrays = []
    tensors = []
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            if device is None:
                device = leaf._buf.device
            arrays.append(leaf._peek())
            tensors.append((i, leaf))
        else:
            arrays.append(leaf)
    key = (kernel, treedef)
    flat = _flat_kernels.get(key)
    if flat is None:
        flat = _flat_kernels[key] = _flattened(kernel, treedef)
    result = lazy.call(flat, arrays)
    if device is None:
        from .._core import device as _device

        device = _device.CPU
    single = not isinstance(result, (tuple, list))
    outs = tuple(None if r is None else T.make(r, device) for r in ((result,) if single else result))
    present = tuple(o for o in outs if o is not None)
    if grad_mode._state.enabled and any(t._rg for _, t in tensors) and present:
        op = _fn_ops.get(name)
        if op is None:
            op = _fn_ops[name] = _FnOp(name)
        graph.record(op, _present_outputs(flat, [o is not None for o in outs]), (), arrays, tensors, present,
                     tuple(leaves))
    return outs[0] if single else outs


def _flattened(kernel: Callable, treedef: Any) -> Callable:
    def flat(*xs: Any) -> Any:
        return kernel(*jax.tree_util.tree_unflatten(treedef, xs))

    flat.__name__ = getattr(kernel, "__name__", "flat")  # compile counts and their warning go by name
    return flat


_present_cache: LRU = LRU(kernels=False)


def _present_outputs(fn: Callable, mask: list) -> Callable:
    """``fn`` with its None outputs dropped (nodes have array outputs only); cached."""
    if all(mask):
        return fn
    key = (fn, tuple(mask))
    k = _present_cache.get(key)
    if k is None:
        k = _present_cache[key] = lambda *xs: tuple(r for r, m in zip(fn(*xs), mask) if m)
    return k
