"""Backward with ``create_graph=True``: every VJP is itself run as a recorded op, so the gradients
it produces have history and can be differentiated again (gradient penalties, Hessians)."""

from __future__ import annotations

from typing import Any, Callable

import jax

from .._core import lazy
from .._core import tensor as T
from .._core.graph import AccumulateGrad, _node_vjp
from .._core.kernel_cache import LRU
from .._core.tensor import Tensor
from . import _node_hooks, anomaly_mode
from ._reach import _reaches, _shaped, drop_undefined, undefined_when

_vjp_fns: LRU = LRU()


def _vjp_fn(kernel: Any, diff: tuple) -> Any:
    key = (kernel, diff)
    f = _vjp_fns.get(key)
    if f is None:

        def vjp(args: Any, cts: Any) -> tuple:
            return tuple(_node_vjp(kernel, diff, args, cts))

        # named after the op: compile counts (and their warning) are per name, and every '<lambda>' was one
        op = getattr(kernel, "__name__", "node")
        vjp.__name__ = f"{op}_vjp"
        missing = _NO_SECOND_DERIVATIVE.get(op)
        f = _vjp_fns[key] = jax.jit(vjp if missing is None else _underivable(vjp, *missing))
    return f


# torch has no derivative for these ops' backward functions: differentiating their gradient raises
_NO_SECOND_DERIVATIVE: dict[str, tuple[type, str]] = {
    "hardsigmoid": (RuntimeError, "derivative for aten::hardsigmoid_backward is not implemented"),
    "_multi_margin_loss": (RuntimeError, "derivative for aten::multi_margin_loss_backward is not implemented"),
    "_multilabel_margin_loss": (RuntimeError,
                                "derivative for aten::multilabel_margin_loss_backward is not implemented"),
    "cdist": (NotImplementedError, "the derivative for '_cdist_backward' is not implemented."),
}  # fmt: skip


def _underivable(fn: Callable, error: type, message: str) -> Callable:
    """``fn``, whose own backward raises torch's error."""
    g = jax.custom_vjp(fn)

    def bwd(res: Any, ct: Any) -> Any:
        raise error(message)

    g.defvjp(lambda *args: (g(*args), None), bwd)
    g.__name__ = fn.__name__
    return g


def _primal(node: Any, k: int, device: Any) -> Tensor:
    """The input at the k-th differentiable position of ``node`` as a Tensor wired to its producer."""
    pos, j = node.diff[k]
    arr = node.args[pos] if j is None else node.args[pos][j]
    src, nr = node.edges[k]
    if isinstance(src, AccumulateGrad):
        return src.variable
    t = T.make(arr, device)
    t._node = src
    t._out_nr = nr
    t._rg = True
    t._node_v = t._vc.v
    return t


def run(prog: Any, grads: list, on_leaf: Any = None, leaves_ready: Any = None) -> tuple:
    """The backward of ``prog`` from ``grads`` as recorded ops; ``on_leaf(j, g)`` takes a leaf's gradient as
    soon as the nodes that feed it (``leaves_ready``) have run."""
    nodes = prog.nodes
    device = grads[0]._buf.device
    slots: list[dict] = [dict() for _ in nodes]
    leaf: list = [None] * len(prog.leaves)
    wanted: dict = {}

    def send(target: tuple, g: Tensor) -> None:
        if target[0] == "l":
            leaf[target[1]] = g if leaf[target[1]] is None else leaf[target[1]] + g
        else:
            slot = slots[target[1]]
            slot[target[2]] = g if target[2] not in slot else slot[target[2]] + g

    for tgt, g in zip(prog.roots, grads):
        send(tgt, g)
    step = anomaly_mode.reporting(_step, nodes) if anomaly_mode._enabled else _step
    live, runs = prog.live, prog.runs
    captured = {t[1] for t in prog.wanted or () if t is not None and t[0] == "n"}
    ready = leaves_ready(prog.entries, len(leaf)) if on_leaf is not None else None
    for i, node in enumerate(nodes):
        if ready is not None:
            for j in ready.get(i - 1, ()):
                on_leaf(j, leaf[j])
        slot = slots[i]
        run = runs is None or runs[i]
        if not run and i not in captured:
            continue  # torch: a node no input is reached from is not run (nor its hooks)
        for nr, hooks in (node.pre_hooks or {}).items():
            if nr in slot:
                for hook in hooks:
                    r = hook(slot[nr])
                    if r is not None:
                        slot[nr] = r
        for nr, ref in (node.retained or {}).items():
            t = ref()
            if t is not None and nr in slot:
                t._grad = slot[nr] if t._grad is None else t._grad + slot[nr]
        if prog.wanted is not None:
            for w, tgt in enumerate(prog.wanted):
                if tgt is not None and tgt[0] == "n" and tgt[1] == i:
                    wanted[w] = slot.get(tgt[2])
        if node.prehooks_node and run:
            outs = _node_hooks.call_hooks(node.prehooks_node, tuple(slot.get(k) for k in range(len(node.out_meta))))
            slot = {k: o for k, o in enumerate(outs) if o is not None}
        if not slot or not run:
            continue
        n_out = max(slot) + 1
        cts = tuple(slot.get(k) for k in range(n_out))
        for tgt, g in zip(prog.entries[i][2], step(i, node, cts, device, None if live is None else live[i])):
            if g is not None:
                send(tgt, g)
        slots[i] = None
    if ready is not None:
        for j in ready.get(len(nodes) - 1, ()):
            on_leaf(j, leaf[j])
    if prog.wanted is not None:
        for w, tgt in enumerate(prog.wanted):
            if tgt is not None and tgt[0] == "l":
                wanted[w] = leaf[tgt[1]]
    return leaf, wanted


def _step(i: int, node: Any, cts: tuple, device: Any, live: tuple | None = None) -> Any:
    """The gradients ``node`` passes on (aligned with ``node.diff``), computed as recorded ops; ``live``: which of
    its edges lead to the backward's inputs (``engine._needed``)."""
    from .._ops import registry

    if node.kernel is None:  # a custom autograd.Function
        from .function import run_backward

        outs = run_backward(node, cts, device, create_graph=True)
    else:
        args = list(node.args)
        for k, (pos, j) in enumerate(node.diff):
            p = _primal(node, k, device)
            if j is None:
                args[pos] = p
            else:
                args[pos] = list(args[pos])
                args[pos][j] = p
        name = type(node).__name__
        formula = _FORMULAS.get(name)
        outs = formula(node, args, cts, device) if formula is not None and _formula_applies(node, args, cts) else None
        if outs is None:
            op = _op_of(node)
            first = "recorded_vjp" not in node.__dict__
            rec_name = "ConvolutionBackwardBackward0" if first and op in _INPUT_ONLY_THROUGH_WEIGHT else name
            outs = registry.apply_pure(rec_name, _vjp_fn(node.kernel, node.diff), [args, cts], device)
            _drop_constant_history(node, args, cts, outs)
            _reads_its_inputs(outs, op, len(jax.tree_util.tree_leaves(args, is_leaf=_is_tensor)))
            if rec_name != name:
                _input_and_weight_through_each_other(node, outs)
        outs = drop_undefined(node, node.diff, outs, cts)
    if node.hooks:
        outs = _node_hooks.run(node, list(outs), cts, device, args if node.kernel is not None else [], live)
    if anomaly_mode.checking:
        anomaly_mode.check_grads(node, outs)
    return outs


def _reads_its_inputs(outs: Any, op: str | None, n_inputs: int) -> None:
    """A recorded VJP's gradient reads its inputs' values: like torch's saved tensors, they are freed
    by a backward through it, and a second backward raises."""
    for o in outs:
        if isinstance(o, Tensor) and o._node is not None:
            o._node.needs_saved = True
            o._node.recorded_vjp = op  # the op whose gradient it is (see _SECOND_ORDER)
            o._node.vjp_inputs = n_inputs  # its first arguments are that op's: the cotangents follow


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor)


def _op_of(node: Any) -> str | None:
    """The table op whose kernel ``node`` runs (its kernel carries the op's name); for a recorded VJP, that op's."""
    return node.__dict__["recorded_vjp"] if "recorded_vjp" in node.__dict__ else getattr(node.kernel, "__name__", None)


# --- which gradients depend on what requires grad ------------------------------------------------------------
# The recorded VJP is one node over all of its inputs; torch's backward formula records only the ops it runs, so
# the input gradient of a linear map (``g @ w.T``) does not require grad when ``g`` and ``w`` do not. The VJP's
# jaxpr says which of its outputs are computed from inputs that require grad; the others lose their history.

_dependence: LRU = LRU(kernels=False)

# torch's formulas for these select the gradient through a mask or indices of the input (no edge to the input):
# their gradients depend only on what requires grad through floating-point values
_MASK_FORMULAS = frozenset((
    "ClampBackward0", "ClampBackward1", "ClampMinBackward0", "ClampMaxBackward0", "MaxBackward0", "MaxBackward1",
    "MinBackward0",
    "MinBackward1", "AmaxBackward0", "AminBackward0", "MaximumBackward0", "MinimumBackward0", "FmaxBackward0",
    "FminBackward0", "SortBackward0", "TopkBackward0", "KthvalueBackward0", "ModeBackward0", "MedianBackward0",
    "MedianBackward1", "NanmedianBackward0", "NanmedianBackward1", "CummaxBackward0", "CumminBackward0",
))  # fmt: skip
# torch's formulas for these are one backward op over the input (nll_loss_backward(grad, self, ...)), so their
# gradients require grad whenever the input does; so do the VJPs of these VJPs (relu's threshold_backward reads
# its result, pow's backward reads self.pow(exponent - 1) even where that is self ** 0)
_READ_INPUT_FORMULAS = frozenset(("NllLossBackward0", "NllLoss2DBackward0", "AvgPool2DBackward0", "AvgPool3DBackward0",
                                  "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool3DBackward0", "ConvolutionBackward0",
                                  "ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0",
                                  "ReplicationPad1DBackward0", "ReplicationPad2DBackward0",
                                  "ReplicationPad3DBackward0"))  # fmt: skip
_SECOND_ORDER_READS = frozenset(("PowBackward0", "ReluBackward0"))
# The same, by op, for ops whose node name other ops share: avg_pool1d's and adaptive_avg_pool1d's node is their
# squeeze (torch's avg_pool2d_backward under it reads the input; adaptive pooling to size 1 is torch's mean, which
# does not); torch's composite hinge_embedding_loss and margin_ranking_loss select through clamp_min and where.
_READ_INPUT_OPS = frozenset(("_avg_pool", "_adaptive_avg_pool"))
_MASK_OPS = frozenset(("_hinge_embedding_loss", "_margin_ranking_loss"))
# torch's double-backward formulas of these ops read the op's inputs only through masks or indices (hardswish:
# where(-3 < self < 3, grad * grad_output / 3, 0); smooth_l1/huber: the same inside the threshold; max_pool: a
# gather by its indices; avg_pool: zeros; prelu: where(self >= 0, ...)): per op, whether that holds for the
# gradient of the op's inputs and for that of the incoming gradient (hardswish_backward(grad, self) reads self's
# value; max_pool's gathers by indices), and how many of its leading inputs it holds for (all: None).
_SECOND_ORDER: dict[str, tuple[bool, bool, int | None]] = {
    "hardswish": (True, False, None), "_smooth_l1_loss": (True, False, None), "_huber_loss": (True, False, None),
    "_max_pool": (True, True, None), "_adaptive_max_pool": (True, True, None), "_avg_pool": (True, True, None),
    "_adaptive_avg_pool": (True, True, None), "_hinge_embedding_loss": (True, True, None),
    "_margin_ranking_loss": (True, True, None), "prelu": (True, True, 1),
}  # fmt: skip
# torch's convolution double backward gives the input a gradient only through the weight's gradient (ggW): with a
# weight that needs none, the recorded VJP keeps no edge to the input (its gradient is None, where JAX's is zeros)
_INPUT_ONLY_THROUGH_WEIGHT = frozenset(("_convolution",))


def _input_and_weight_through_each_other(node: Any, outs: Any) -> None:
    """torch's convolution double backward: the input's gradient is defined only where the weight's gradient
    gets one (ggW), the weight's only where the input's does (ggI)."""
    rec = next((o._node for o in outs if isinstance(o, Tensor) and o._node is not None), None)
    out_of = {pos: k for k, (pos, _) in enumerate(node.diff)}  # the recorded VJP's output per op input
    if rec is not None and 0 in out_of and 1 in out_of:  # (the op's input and weight are its first arguments)
        undefined_when[rec] = ((0, out_of[1]), (1, out_of[0]))


def _drop_constant_history(node: Any, args: list, cts: tuple, outs: Any) -> None:
    """Drop the history (or edges) that torch's formula would not record from the recorded VJP's outputs."""
    name = type(node).__name__
    recorded = "recorded_vjp" in node.__dict__
    op = _op_of(node)
    if not recorded and op in _INPUT_ONLY_THROUGH_WEIGHT and all(pos != 1 for pos, _ in node.diff):
        for o in outs:
            if isinstance(o, Tensor) and o._node is not None:
                _forget_input(o._node, 0)
    if not recorded and (name in _READ_INPUT_FORMULAS or (
            name == "SqueezeBackward1" and op in _READ_INPUT_OPS and node.out_meta[0][0][-1] != 1)):  # fmt: skip
        return
    if name in _SECOND_ORDER_READS and recorded:
        return
    leaves, treedef = jax.tree_util.tree_flatten([args, cts], is_leaf=lambda x: isinstance(x, Tensor))
    marks = tuple(isinstance(x, Tensor) and x._rg for x in leaves)
    deps = _dependence_of(node, leaves, treedef, marks, not recorded and op in _MASK_OPS)
    rule = _SECOND_ORDER.get(op) if recorded else None
    if rule is not None:
        # the recorded VJP's arguments are the op's arguments, then its cotangents: the op's own count as constants
        n = node.vjp_inputs
        k = n if rule[2] is None else rule[2]
        masked = _dependence_of(node, leaves, treedef, (False,) * k + marks[k:], False)
        deps = tuple(m if rule[0 if pos < n else 1] else d for (pos, _), d, m in zip(node.diff, deps, masked))
    for o, dep in zip(outs, deps):
        if isinstance(o, Tensor) and not dep:
            o._node = None
            o._rg = False
    rec = next((o._node for o in outs if isinstance(o, Tensor) and o._node is not None), None)
    if not recorded and rec is not None:
        # an input none of the gradients is computed from gets no gradient through them: torch's formula does not
        # take it (None where JAX's VJP would give zeros: a view's backward, a linear map's)
        n = len(jax.tree_util.tree_leaves(args, is_leaf=_is_tensor))
        for pos in [p for p, _ in rec.diff if p < n]:
            only = tuple(i == pos for i in range(len(leaves)))
            if not any(_dependence_of(node, leaves, treedef, only, False)):
                _forget_input(rec, pos)


def _forget_input(node: Any, pos: int) -> None:
    """Drop ``node``'s edge to its argument at flat position ``pos`` (its gradient there is never defined)."""
    slots = [i for i, (f, _) in enumerate(node.input_edges) if f is not None]
    keep = [k for k, (p, _) in enumerate(node.diff) if p != pos]
    if len(keep) == len(node.diff) or len(slots) != len(node.diff):
        return
    gone = {slots[k] for k in range(len(node.diff)) if k not in keep}
    node.diff = tuple(node.diff[k] for k in keep)
    node.edges = tuple(node.edges[k] for k in keep)
    node.input_edges = tuple((None, 0) if i in gone else e for i, e in enumerate(node.input_edges))


def _dependence_of(node: Any, leaves: list, treedef: Any, marks: tuple, floats_only: bool) -> tuple:
    sig = tuple(_shaped(x) or type(x) for x in leaves)
    key = (node.kernel, node.diff, treedef, sig, marks, floats_only)
    deps = _dependence.get(key)
    if deps is None:
        deps = _dependence[key] = _output_dependence(node, leaves, treedef, marks, floats_only)
    return deps


def _output_dependence(node: Any, leaves: list, treedef: Any, marks: tuple, floats_only: bool = False) -> tuple:
    """Per output of the node's VJP: whether it is computed from an input marked in ``marks``."""
    abstract = [jax.ShapeDtypeStruct(*_shaped(x)) if _shaped(x) else x for x in leaves]

    def vjp(*xs: Any) -> tuple:
        args, cts = jax.tree_util.tree_unflatten(treedef, xs)
        return tuple(_node_vjp(node.kernel, node.diff, args, cts))

    try:
        closed = jax.make_jaxpr(vjp)(*abstract)
    except Exception:  # noqa: BLE001 - a kernel that cannot be traced abstractly keeps every output's history
        return (True,) * len(node.diff)
    jaxpr = closed.jaxpr
    if len(jaxpr.invars) != len(marks):
        return (True,) * len(node.diff)
    return tuple(_reaches(jaxpr, marks, floats_only or type(node).__name__ in _MASK_FORMULAS))


# --- torch's backward formulas, for the most common ops --------------------------------------------------------
# With create_graph, torch records the ops of an op's derivative formula (exp: grad * result, a MulBackward0 over
# the ExpBackward0 node), and scripts print those names. For these ops the gradient is computed with the same ops
# (real, same-shape, same-dtype operands only; the others take the recorded VJP above).


def _formula_applies(node: Any, args: list, cts: tuple) -> bool:
    if len(cts) != 1 or not isinstance(cts[0], Tensor) or "recorded_vjp" in node.__dict__:
        return False
    g = cts[0]
    if not g._dtype.is_floating_point:
        return False
    elementwise = type(node).__name__ != "MmBackward0"
    for pos, j in node.diff:
        a = args[pos] if j is None else args[pos][j]
        if not isinstance(a, Tensor) or a._dtype is not g._dtype or (elementwise and a._shape != g._shape):
            return False
    return True


def _result(node: Any, args: list, device: Any) -> Tensor:
    """The node's output as a tensor wired to the node (torch's saved ``result``)."""
    arrays = [a._peek() if isinstance(a, Tensor) else a for a in args]
    t = T.make(lazy.call(node.kernel, arrays), device)
    t._node, t._out_nr, t._rg, t._node_v = node, 0, True, t._vc.v
    return t


def _ops() -> Any:
    from .._ops import namespace

    return namespace()


def _exp(node: Any, args: list, cts: tuple, device: Any) -> tuple:
    return (_ops().mul(cts[0], _result(node, args, device)),)


def _tanh(node: Any, args: list, cts: tuple, device: Any) -> tuple:
    from .._ops import pointwise

    return (pointwise._tanh_backward(cts[0], _result(node, args, device)),)


def _sigmoid(node: Any, args: list, cts: tuple, device: Any) -> tuple:
    from .._ops import pointwise

    return (pointwise._sigmoid_backward(cts[0], _result(node, args, device)),)


def _pow(node: Any, args: list, cts: tuple, device: Any) -> tuple | None:
    from .._ops import pointwise

    exponent = node.__dict__.get("numbers", (None, None))[1]
    if node.diff != ((0, None),) or exponent is None or exponent == 0:
        return None
    # torch: grad * (exponent * self.pow(exponent - 1))
    return (_ops().mul(cts[0], pointwise._mul_scalar(args[0].pow(exponent - 1), exponent)),)


def _mul(node: Any, args: list, cts: tuple, device: Any) -> tuple | None:
    if not all(isinstance(a, Tensor) for a in args[:2]) or len(args) != 2:
        return None
    mul = _ops().mul
    return tuple(mul(cts[0], args[1 - pos]) for pos, _ in node.diff)  # torch: grad * other, grad * self


def _mm(node: Any, args: list, cts: tuple, device: Any) -> tuple | None:
    a, b = args[:2]
    if len(args) != 2 or not all(isinstance(x, Tensor) and x.dim() == 2 for x in (a, b)):
        return None
    g = cts[0]
    # torch: grad.mm(mat2.t()), mat1.t().mm(grad)
    return tuple(g.mm(b.t()) if pos == 0 else a.t().mm(g) for pos, _ in node.diff)


_FORMULAS = {"ExpBackward0": _exp, "TanhBackward0": _tanh, "SigmoidBackward0": _sigmoid, "PowBackward0": _pow,
             "MulBackward0": _mul, "MmBackward0": _mm}  # fmt: skip
