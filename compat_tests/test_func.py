"""torch.func transforms under torch and torchlike (torchlike maps them onto JAX's transforms)."""

import functools

import numpy as np
import pytest
from _harness import check, check_raises

X = np.random.RandomState(0).rand(3, 4).astype(np.float32)
V = np.random.RandomState(1).rand(4).astype(np.float32)

CASES = {
    "grad": lambda t, a, b: t.func.grad(lambda z, w: ((z @ w).sin() ** 2).sum())(a, b),
    "grad_argnums": lambda t, a, b: t.func.grad(lambda z, w: ((z @ w).sin() ** 2).sum(), argnums=(0, 1))(a, b),
    "grad_aux": lambda t, a, b: t.func.grad(lambda z: ((z * 2).sum(), z.mean()), has_aux=True)(a),
    "grad_and_value": lambda t, a, b: t.func.grad_and_value(lambda z: z.exp().sum())(a),
    "vmap": lambda t, a, b: t.func.vmap(lambda r, w: (r * w).sum())(a, b.expand(3, 4)),
    "vmap_in_dims": lambda t, a, b: t.func.vmap(lambda r: r.cumsum(0), in_dims=1)(a),
    "vmap_none": lambda t, a, b: t.func.vmap(lambda r, w: r @ w, in_dims=(0, None))(a, b),
    "vmap_out_dims": lambda t, a, b: t.func.vmap(lambda r: r * 2, out_dims=1)(a),
    "per_sample_grad": lambda t, a, b: t.func.vmap(t.func.grad(lambda r, w: ((r * w).sum()) ** 2), in_dims=(0, None))(a, b),
    "jacrev": lambda t, a, b: t.func.jacrev(lambda z: z.sin() * z)(b),
    "jacfwd": lambda t, a, b: t.func.jacfwd(lambda z: z.sin() * z)(b),
    "hessian": lambda t, a, b: t.func.hessian(lambda z: (z.sin() * z).sum())(b),
    "jvp": lambda t, a, b: t.func.jvp(lambda z: z.exp(), (b,), (b,)),
    "jvp_aux": lambda t, a, b: t.func.jvp(lambda z: (z.exp(), z.sum()), (b,), (b * 2,), has_aux=True),
    "jvp_two": lambda t, a, b: t.func.jvp(lambda z, w: z @ w, (a, b), (a * 0 + 1, b)),
    "vjp": lambda t, a, b: t.func.vjp(lambda z: z.exp(), b)[1](b),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_transform(name):
    check(CASES[name], [X, V], grad=False)


def test_vmap_refuses_randomness_by_default():
    check_raises(lambda t, a: t.func.vmap(lambda r: r + t.rand(4))(a), [X])


def test_functional_call_and_stack_module_state():
    def f(t, a):
        t.manual_seed(0)
        m = t.nn.Linear(4, 2)
        params = {k: v.detach() * 2 for k, v in m.named_parameters()}
        out = t.func.functional_call(m, params, (a,))
        models = [t.nn.Linear(4, 2) for _ in range(3)]
        p, b = t.func.stack_module_state(models)
        ens = t.func.vmap(lambda pp, x: t.func.functional_call(models[0], pp, (x,)), in_dims=(0, None))(p, a)
        return out, m.weight, sorted(p), p["weight"].shape, ens

    check(f, [X], grad=False)


CONNECTED = [n for n in CASES if n != "vjp"]


@pytest.mark.parametrize("name", CONNECTED)
def test_transform_results_connect_to_the_outer_graph(name):
    """Arguments that require grad: the results have a grad_fn and the outer backward reaches the arguments
    (torch.func's results are tracked by the outer autograd; torchlike records the transform as one op)."""
    def leaves(out):
        return [x for o in out for x in leaves(o)] if isinstance(out, (tuple, list)) else [out]

    check(lambda t, a, b: (lambda out: (out, [o.requires_grad for o in leaves(out)]))(CASES[name](t, a, b)), [X, V])


# --- tensors the function reads from its closure get gradients through the results, as torch's do ---------

def _closure_cases(t):
    t.manual_seed(0)
    w = t.randn(4, requires_grad=True)
    unused = t.randn(4, requires_grad=True)
    lin = t.nn.Linear(4, 3)
    x, xs = t.randn(4), t.randn(5, 4)

    def loss(z):
        return ((z * w).sum()) ** 2 + 0 * z.sum() if unused is not None else None

    scale = functools.partial(lambda z, s: (z * s).tanh(), s=w)
    results = {
        "grad": t.func.grad(loss)(x),
        "grad_both": t.func.grad(loss)(x.clone().requires_grad_()),
        "jacrev_module": t.func.jacrev(lin)(x),
        "jacfwd_method": t.func.jacfwd(lin.forward)(x),
        "vmap": t.func.vmap(lambda r: (r * w).sin())(xs),
        "vmap_partial": t.func.vmap(scale)(xs),
        "hessian": t.func.hessian(lambda z: (z * w).exp().sum())(x),
        "jvp": t.func.jvp(lambda z: z * w, (x,), (x,))[1],
    }
    out = {}
    for name, r in results.items():
        out[name] = [r.requires_grad, r.detach().numpy()]
        (r.sin().sum()).backward()
        out[name] += [None if p.grad is None else p.grad.numpy().copy() for p in (w, unused, lin.weight, lin.bias)]
        for p in (w, unused, lin.weight, lin.bias):
            p.grad = None
    return out


def test_closure_tensors_get_gradients_as_in_torch():
    import torch

    import torchlike

    want, got = _closure_cases(torch), _closure_cases(torchlike)
    for name in want:
        for a, b in zip(want[name], got[name]):
            assert (a is None) == (b is None), name
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6, err_msg=name)


def _vjp_cases(t, term):
    t.manual_seed(0)
    x = t.randn(3, requires_grad=True)
    w = t.randn(3, requires_grad=True)
    out, fn = t.func.vjp(lambda z: z.sin() * w, x)
    (g,) = fn(t.ones(3))
    o2, fn2, aux = t.func.vjp(lambda z: (z.sin(), z.cos()), x, has_aux=True)
    (g2,) = fn2(t.ones(3))
    o3, jfn = t.func.linearize(lambda z: z.exp() * w, x)
    c = t.ones(3, requires_grad=True)
    (g5,) = t.func.vjp(t.sin, x.detach())[1](c)
    terms = {"out": out, "g": g, "o2": o2, "g2": g2, "aux": aux, "o3": o3, "g5": g5}
    r = terms[term]
    r.sum().backward()
    return [r.requires_grad, r.detach().numpy(), jfn(t.ones(3)).detach().numpy()] + [
        None if v.grad is None else v.grad.numpy() for v in (x, w, c)]


@pytest.mark.parametrize("term", ["out", "g", "o2", "g2", "aux", "o3", "g5"])
def test_vjp_and_linearize_results_connect_to_the_outer_graph(term):
    import torch

    import torchlike

    for a, b in zip(_vjp_cases(torch, term), _vjp_cases(torchlike, term)):
        assert (a is None) == (b is None)
        if isinstance(a, bool):
            assert a == b
        elif a is not None:
            np.testing.assert_allclose(b, a, rtol=2e-5, atol=1e-6)
