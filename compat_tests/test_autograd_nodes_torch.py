"""Issue 35: the custom-Function node class (BackwardCFunction), as_strided of tensors that require
grad (0-d views of parameters, views of views), and graph node names reached through
autograd.functional / torch.func helpers, torch vs torchlike."""

import numpy as np
import pytest
import torch
from _harness import check

import torchlike

X = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5


def _square_fn(t):
    class Sq(t.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * a * g

    return Sq


def test_custom_function_node_class():
    def f(t, x):
        Sq = _square_fn(t)
        y = Sq.apply(x)
        node = y.grad_fn
        B = t.autograd.function.BackwardCFunction
        return (y, type(node).__name__, isinstance(node, B), issubclass(type(node), B), B.__name__,
                isinstance(node, t.autograd.function.FunctionCtx), isinstance(node, t.autograd.graph.Node),
                type(node)._forward_cls is Sq, type(node).__module__.replace("torchlike", "torch"),
                node.name())  # fmt: skip

    check(f, [X])


@pytest.mark.parametrize("expr", [
    "t.as_strided(x, (), ())", "t.as_strided(x, (), (), 5)", "x.as_strided((), (), 7)",
    "t.as_strided(x[1], (), ())", "t.as_strided(x[1:], (2,), (1,), 1)", "t.as_strided(x.t(), (2, 2), (1, 2))",
    "t.as_strided(x[0], (3, 4), (0, 1))", "t.as_strided(x[:, 1:], (2, 2), (4, 1), 5)", "t.as_strided(x * 2, (), ())",
    "t.as_strided(x.view(12)[2:], (3,), (3,))", "t.as_strided(x[1], (2, 2), (1, 1))",
])  # fmt: skip
def test_as_strided_of_tensors_that_require_grad(expr):
    def f(t, p):
        x = p * 1 if "x *" not in expr else p  # a non-leaf base: its views are views of a graph tensor
        y = eval(expr)
        return y, type(y.grad_fn).__name__

    check(f, [X])


def test_as_strided_zero_dim_view_of_a_parameter():
    def f(t):
        t.manual_seed(0)
        lin = t.nn.Linear(3, 2)
        scale = t.as_strided(lin.weight, (), ())  # how libraries take one parameter entry as a 0-d tensor
        out = (lin(t.ones(1, 3)) * scale).sum()
        out.backward()
        return out, lin.weight.grad, lin.bias.grad, type(scale.grad_fn).__name__

    check(f, [], grad=False)


def _names(t, out):
    node = out.grad_fn
    return type(node).__name__ if node is not None else None


@pytest.mark.parametrize("case", ["vjp", "jvp", "vhp", "hvp"])
def test_functional_create_graph_output_nodes(case):
    """The function's own output keeps the function's node (MmBackward0 for a bias-free linear map)."""

    def f(t, x, w):
        F = t.nn.functional
        if case in ("vjp", "jvp"):
            fn = lambda a: F.linear(a, w)  # noqa: E731
            v = t.ones(2, 4) if case == "vjp" else t.ones(2, 3)
        else:
            fn = lambda a: F.linear(a, w).pow(2).sum()  # noqa: E731
            v = t.ones(2, 3)
        out, res = getattr(t.autograd.functional, case)(fn, x, v, create_graph=True)
        # vjp/jvp of a linear map: res does not depend on the inputs, so it does not require grad
        return out, res, _names(t, out), out.requires_grad, res.requires_grad

    check(f, [X[:2, :3].copy(), np.concatenate([X[:, :3], X[:1, :3]]) + 0.25], grad=False)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (5, 2, 3)])
def test_bias_free_linear_names_through_helpers(shape):
    def f(t):
        t.manual_seed(0)
        F = t.nn.functional
        w = t.randn(4, 3, requires_grad=True)
        x = t.randn(*shape, requires_grad=True)
        lin = t.nn.Linear(3, 4, bias=False)
        outs = [F.linear(x, w), x @ w.T, lin(x), t.func.functional_call(lin, {"weight": w}, (x,)),
                t.func.functional_call(lin, {"weight": w}, (x.detach(),)), F.linear(x, w, None),
                t.func.functional_call(t.nn.Linear(3, 4), {"weight": w, "bias": None}, (x,))]  # fmt: skip
        jac = t.autograd.functional.jacobian(lambda a: F.linear(a, w), x)
        return [_names(t, o) for o in outs] + [jac]

    check(f, [], grad=False)


def test_jacobian_and_hessian_create_graph_run():
    def f(t, x):
        x.requires_grad_()
        fn = lambda a: (a.sin() * a).sum()  # noqa: E731
        j = t.autograd.functional.jacobian(fn, x, create_graph=True)
        h = t.autograd.functional.hessian(fn, x, create_graph=True)
        (g,) = t.autograd.grad(j.sum(), x)
        return j, h, g, j.requires_grad, h.requires_grad

    check(f, [X[0].copy()], grad=False)


@pytest.mark.parametrize("case", ["jacobian", "hessian", "vjp", "jvp", "vhp", "hvp"])
def test_functional_create_graph_reaches_closure_parameters(case):
    """Meta-learning and gradient-penalty code: a model's parameters are read from the function's closure,
    and the loss on a create_graph result must send them gradients, as torch's tape does."""

    def f(t, x):
        t.manual_seed(0)
        lin = t.nn.Linear(4, 3)
        x.requires_grad_()
        F = t.autograd.functional
        vec = lambda a: lin(a).tanh()  # noqa: E731
        scalar = lambda a: lin(a).sin().sum()  # noqa: E731
        if case == "jacobian":
            res = F.jacobian(vec, x[0], create_graph=True)
        elif case == "hessian":
            res = F.hessian(scalar, x[1], create_graph=True)
        elif case in ("vjp", "jvp"):
            _, res = getattr(F, case)(vec, x[2], t.ones(3) if case == "vjp" else t.ones(4), create_graph=True)
        else:
            _, res = getattr(F, case)(scalar, x[2], t.ones(4), create_graph=True)
        res.pow(2).sum().backward()
        return res, lin.weight.grad, lin.bias.grad, x.grad, res.requires_grad

    check(f, [X.copy()], grad=False)


def test_functional_create_graph_tuples_and_bad_v():
    def f(t):
        a = t.tensor([0.5, -1.0], requires_grad=True)
        b = t.tensor([0.25, 2.0], requires_grad=True)
        F = t.autograd.functional
        h = F.hessian(lambda p, q: (p * q.exp()).sum(), (a, b), create_graph=True)
        j = F.jacobian(lambda p, q: (p * q, p.sum()), (a, b), create_graph=True)
        (h[0][1].sum() + j[0][1].sum()).backward()
        try:
            F.hvp(lambda p: p.sum(), t.ones(3), None, create_graph=True)
            err = None
        except RuntimeError as e:
            err = str(e)
        return [h[0][0], h[0][1], h[1][1], j[0][0], j[1][1], a.grad, b.grad, err]

    check(f, [], grad=False)


def test_graph_helpers_exist_in_both():
    assert hasattr(torch.autograd.function, "BackwardCFunction")
    assert hasattr(torchlike.autograd.function, "BackwardCFunction")


# Node.register_hook's grad_inputs: one entry per next_functions entry, None where no gradient flows (a number,
# a tensor that does not require grad); a list argument (cat, stack) and a custom Function give every tensor's.
_LAYOUT_CASES = {
    "add_number": lambda t, x, w: x + 2,
    "mul_data": lambda t, x, w: x * w,
    "mul_data_left": lambda t, x, w: w * x,
    "where": lambda t, x, w: t.where(w > 0, x, w),
    "addcmul": lambda t, x, w: t.addcmul(w, x, w),
    "clamp_tensor": lambda t, x, w: x.clamp(w, None),
    "cat": lambda t, x, w: t.cat([w, x]),
    "stack": lambda t, x, w: t.stack([x * 2, w, x]),
    "linear": lambda t, x, w: t.nn.functional.linear(x, w[:2] * 1, w[0, :2] + 0),
    "linear_3d": lambda t, x, w: t.nn.functional.linear(x.reshape(1, 3, 4), w[:2] * 1, w[0, :2]),
    "mm": lambda t, x, w: x @ w.t(),
    "layer_norm": lambda t, x, w: t.nn.functional.layer_norm(x, (4,)),
    "lerp": lambda t, x, w: t.lerp(w, x, 0.5),
    "index_put": lambda t, x, w: w.index_put((t.tensor([0]),), x[:1]),
    "sum": lambda t, x, w: x.sum(0),
    "conv": lambda t, x, w: t.nn.functional.conv1d(x.reshape(1, 3, 4), w.reshape(2, 3, 2)),
    "custom_function": lambda t, x, w: _scale_fn(t).apply(x, w),
}


def _scale_fn(t):
    class Scale(t.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g * 2, g * 3

    return Scale


@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
@pytest.mark.parametrize("case", list(_LAYOUT_CASES))
def test_node_hook_grad_inputs_per_edge(case, create_graph):
    def f(t, x):
        x.requires_grad_()
        w = t.tensor(X * 2 - 0.25)
        y = _LAYOUT_CASES[case](t, x, w)
        seen = []

        def hook(gi, go):
            seen.append((list(gi), list(go)))
            return tuple(None if g is None else g * 3 for g in gi)

        y.grad_fn.register_prehook(lambda go: seen.append(list(go)))
        y.grad_fn.register_hook(hook)
        loss = (y * t.arange(y.numel()).reshape(y.shape)).sum()
        if create_graph:
            (g,) = t.autograd.grad(loss, x, create_graph=True)
            return seen, g, g.requires_grad, len(y.grad_fn.next_functions)
        loss.backward()
        return seen, x.grad, len(y.grad_fn.next_functions)

    check(f, [X], grad=False, atol=1e-4)


_BAD_RESULTS = {
    "tensor": lambda gi: gi[0],
    "list": lambda gi: list(gi),
    "short": lambda gi: gi[:1],
    "number": lambda gi: (1.0, None),
    "fill_none": lambda gi: (gi[0], gi[0]),
    "dtype": lambda gi: (gi[0].double(), None),
    "size": lambda gi: (gi[0][:1], None),
}


@pytest.mark.parametrize("kind", ["post", "pre", "shown_post", "shown_pre"])
@pytest.mark.parametrize("bad", list(_BAD_RESULTS))
def test_node_hook_results_are_checked(bad, kind):
    """What a Node hook returns gets torch's checks: a tuple, one value per gradient, a None stays None, same
    dtype and size."""

    def f(t, x):
        x.requires_grad_()
        if kind.startswith("shown"):  # the MmBackward0 shown inside a bias-free 3-D linear
            y = t.nn.functional.linear(x.reshape(1, 3, 4), t.ones(2, 4))
            node = y.grad_fn.next_functions[0][0]
        else:
            y = x * t.tensor(X)
            node = y.grad_fn

        def hook(*args):
            return _BAD_RESULTS[bad](args[0])

        node.register_hook(hook) if kind.endswith("post") else node.register_prehook(hook)
        try:
            y.sum().backward()
        except (TypeError, RuntimeError) as e:
            return type(e).__name__, str(e)
        return x.grad

    check(f, [X], grad=False)


# A backward with `inputs` (autograd.grad, backward(inputs=...)) runs only the nodes that lead to them (torch's
# exec_info): a node that does not is not run, nor its hooks; a node that does leaves the gradients of its other
# edges undefined, so its post-hooks see None there (a linear's bias, a product's other factor), shown nodes too.
def _two_paths(t, x, b):
    y = x * b * 2
    return (y.tanh() + (b * 3).exp()).sum()


def _nonleaf(t, x, b):
    y = x * 2
    return ((y.tanh() * b).sum(), y)  # (the input is y, read where its node is; that node is not run)


_INPUTS_CASES = {
    "mul_x": (_two_paths, "x"),
    "mul_b": (_two_paths, "b"),
    "mul_both": (_two_paths, "xb"),
    "linear_x": (lambda t, x, b: t.nn.functional.linear(x, b[:2] * 1, b[0, :2]).pow(2).sum(), "x"),
    "linear_b": (lambda t, x, b: t.nn.functional.linear(x, b[:2] * 1, b[0, :2]).pow(2).sum(), "b"),
    "linear_3d_x": (lambda t, x, b: t.nn.functional.linear(x.reshape(1, 3, 4), b[:2] * 1, b[0, :2]).sum(), "x"),
    "matmul_b": (lambda t, x, b: (x.reshape(1, 3, 4) @ b.t()).sum(), "b"),
    "cross_entropy_b": (lambda t, x, b: t.nn.functional.cross_entropy(x * b, t.tensor([0, 3, 1])), "b"),
    "nonleaf_input": (_nonleaf, "y"),
}


def _all_nodes(fn, found):
    if fn is not None and not hasattr(fn, "variable") and all(f is not fn for f in found):
        found.append(fn)
        for f, _ in fn.next_functions:
            _all_nodes(f, found)
    return found


@pytest.mark.parametrize("how", ["grad", "grad_create_graph", "backward_inputs"])
@pytest.mark.parametrize("case", list(_INPUTS_CASES))
def test_node_hooks_with_inputs_see_torch_gradients(case, how):
    def f(t, x):
        x.requires_grad_()
        b = t.tensor(X * 2 - 0.25, requires_grad=True)
        fn, which = _INPUTS_CASES[case]
        loss = fn(t, x, b)
        inputs = [v for v, name in ((x, "x"), (b, "b")) if name in which]
        if which == "y":
            loss, y = loss
            inputs = [y]
        seen = []
        for k, node in enumerate(_all_nodes(loss.grad_fn, [])):
            node.register_prehook(lambda go, k=k, n=node.name(): seen.append((k, n, "pre")))
            node.register_hook(lambda gi, go, k=k, n=node.name(): seen.append((k, n, [None if g is None else
                                                                                       g.detach() for g in gi])))
        if how == "backward_inputs":
            loss.backward(inputs=inputs)
            return seen, x.grad, b.grad, [v.grad for v in inputs]
        grads = t.autograd.grad(loss, inputs, create_graph=how == "grad_create_graph")
        return seen, [g.detach() for g in grads]

    check(f, [X], grad=False, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
def test_tensor_hooks_run_before_node_pre_hooks(create_graph):
    """torch's engine calls a node's tensor hooks, then retain_grad, then the node's pre-hooks."""

    def f(t, x):
        x.requires_grad_()
        y = x * 2
        seen = []
        y.register_hook(lambda g: (seen.append(("tensor", g.detach())), g * 10)[1])
        y.retain_grad()
        y.grad_fn.register_prehook(lambda go: (seen.append(("node", go[0].detach())), (go[0] + 1,))[1])
        y.tanh().sum().backward(create_graph=create_graph)
        return seen, x.grad.detach(), y.grad.detach()

    check(f, [X], grad=False)


@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
def test_leaf_input_tensor_hooks_run_in_autograd_grad(create_graph):
    """autograd.grad runs an input leaf's tensor hooks (once, however often it is listed) on the gradient it
    returns, and what they return is that gradient; the hooks of a leaf that is not an input do not run."""

    def f(t, x):
        x.requires_grad_()
        w = t.tensor(X + 1, requires_grad=True)
        seen = []
        x.register_hook(lambda g: (seen.append(("x", g.detach())), g * 10)[1])
        w.register_hook(lambda g: (seen.append(("w", g.detach())), None)[1])
        loss = (x * 3 * w).sum() + (w * 2).sum()
        grads = t.autograd.grad(loss, [x, x], create_graph=create_graph)
        return seen, [g.detach() for g in grads], [g.requires_grad for g in grads]

    check(f, [X], grad=False)


@pytest.mark.parametrize("create_graph", [False, True], ids=["", "create_graph"])
def test_leaf_hooks_run_when_their_gradient_is_in(create_graph):
    """A leaf's tensor hooks and post-accumulate-grad hooks run as soon as the nodes that feed it have run (torch's
    AccumulateGrad, between other nodes' hooks), on every backward of a retained graph and with inputs=."""

    def f(t, x):
        x.requires_grad_()
        w = t.tensor([0.5, -1.0, 0.25, 2.0], requires_grad=True)
        b = t.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
        loss = (((x * w).tanh() * b).exp() + w.sin() * 2).sum()
        seen = []
        for k, node in enumerate(_all_nodes(loss.grad_fn, [])):
            node.register_hook(lambda gi, go, k=k, n=node.name(): seen.append((k, n)))
        for name, v in (("x", x), ("w", w), ("b", b)):
            v.register_hook(lambda g, name=name: seen.append((name, g.detach().clone())))  # (torch's .grad is g)
            v.register_post_accumulate_grad_hook(lambda v, name=name: seen.append((name, "in .grad", v.grad is not None)))
        loss.backward(retain_graph=True, create_graph=create_graph)
        loss.backward(inputs=[w, b], create_graph=create_graph)
        return seen, x.grad.detach(), w.grad.detach(), b.grad.detach()

    check(f, [X[0]], grad=False)
