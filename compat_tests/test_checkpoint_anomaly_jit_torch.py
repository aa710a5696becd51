"""torch.utils.checkpoint, autograd anomaly mode and torch.jit, compared with real torch."""

import warnings

import numpy as np
import pytest
import torch
from _harness import assert_same, check_raises

import torchlike
import torchlike.jit
import torchlike.utils.checkpoint

X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def _model(lib, dropout):
    lib.manual_seed(0)
    layers = [lib.nn.Linear(4, 4), lib.nn.Tanh()]
    if dropout:
        layers.append(lib.nn.Dropout(0.5))
    return lib.nn.Sequential(*layers, lib.nn.Linear(4, 2))


def _run_both(fn):
    """``fn(lib)`` returns a dict of results; compare torch's and torchlike's."""
    ref, got = fn(torch), fn(torchlike)
    assert ref.keys() == got.keys()
    for k in ref:
        if isinstance(ref[k], torch.Tensor) or (isinstance(ref[k], list) and isinstance(ref[k][0], torch.Tensor)):
            assert_same(ref[k], got[k], path=k)
        else:
            assert ref[k] == got[k], (k, ref[k], got[k])


def _grads(lib, model, x, out):
    (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
    r = {"x.grad": x.grad, "after": lib.rand(2)}  # the RNG stream continues as torch's
    r.update({f"{n}.grad": p.grad for n, p in model.named_parameters()})
    return r


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("dropout", [False, True])
def test_checkpoint_outputs_and_gradients(reentrant, dropout):
    def fn(lib):
        model = _model(lib, dropout)
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=reentrant)
        return {"out": out, "grad_fn": type(out.grad_fn).__name__, **_grads(lib, model, x, out)}

    _run_both(fn)


def test_checkpoint_matches_direct_run():
    def run(ck):
        model = _model(torchlike, True)
        x = torchlike.tensor(X, requires_grad=True)
        out = model(x) if ck is None else torchlike.utils.checkpoint.checkpoint(model, x, use_reentrant=ck)
        return {"out": out.detach(), **_grads(torchlike, model, x, out)}

    direct = run(None)
    for reentrant in (True, False):
        got = run(reentrant)
        for k in direct:
            np.testing.assert_allclose(got[k].numpy(), direct[k].numpy(), rtol=1e-6, err_msg=k)


def test_checkpoint_multiple_outputs_and_non_tensor_args():
    def f(a, scale, b):
        return a * scale + b.sin(), (a * b).sum(0)

    def fn(lib):
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X[::-1].copy(), requires_grad=True)
        y, z = lib.utils.checkpoint.checkpoint(f, a, 3.0, b, use_reentrant=True)
        (y.sum() + (z * z).sum()).backward()
        return {"y": y, "z": z, "a.grad": a.grad, "b.grad": b.grad}

    _run_both(fn)


def test_checkpoint_sequential():
    def fn(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(*[lib.nn.Linear(4, 4) for _ in range(4)], lib.nn.Dropout(0.3), lib.nn.Tanh())
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.utils.checkpoint.checkpoint_sequential(model, 2, x)
        r = {"out": out, "warn": [str(m.message) for m in w], "grad_fn": type(out.grad_fn).__name__}
        return {**r, **_grads(lib, model, x, out)}

    _run_both(fn)


def test_checkpoint_use_reentrant_warning_and_errors():
    def fn(lib):
        x = lib.tensor(X, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.utils.checkpoint.checkpoint(lambda a: a * 2, x)
            lib.utils.checkpoint.checkpoint(lambda a: a * 2, x.detach(), use_reentrant=True)
        return {"warn": [(m.category.__name__, str(m.message)) for m in w]}

    _run_both(fn)
    ck = "utils.checkpoint.checkpoint"
    check_raises(lambda t: eval(f"t.{ck}")(lambda a, b: a, t.ones(1), b=1, use_reentrant=True))
    check_raises(lambda t: eval(f"t.{ck}")(lambda a: a, t.ones(1), use_reentrant=True, debug=True))
    check_raises(lambda t: eval(f"t.{ck}")(lambda a: a, t.ones(1), use_reentrant=False, determinism_check="x"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the use_reentrant warning comes first
        check_raises(lambda t: t.utils.checkpoint.checkpoint_sequential([t.nn.Tanh()], 1, t.ones(1), foo=1))


def test_checkpoint_non_reentrant_kwargs():
    def fn(lib):
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(lambda a, *, k: a.exp() * k, x, k=2.0, use_reentrant=False)
        out.sum().backward()
        return {"out": out, "x.grad": x.grad}

    _run_both(fn)


def test_checkpoint_reentrant_batchnorm_updates_twice_and_inputs_without_grad():
    def fn(lib):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(4)
        lin = lib.nn.Linear(4, 4)
        x = lib.tensor(X, requires_grad=True)
        lib.utils.checkpoint.checkpoint(bn, x, use_reentrant=True).sum().backward()  # recompute updates again
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.utils.checkpoint.checkpoint(lin, x.detach(), use_reentrant=True)
        out2 = lib.utils.checkpoint.checkpoint(lin, x.detach(), use_reentrant=False)
        out2.sum().backward()
        return {"n": bn.num_batches_tracked, "mean": bn.running_mean, "x.grad": x.grad, "rg": out.requires_grad,
                "warn": [str(m.message) for m in w], "rg2": out2.requires_grad, "w.grad": lin.weight.grad}  # fmt: skip

    _run_both(fn)


def test_checkpoint_reentrant_recomputes_under_the_forwards_autocast():
    def fn(lib):
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3)
        x = lib.tensor(X, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            out = lib.utils.checkpoint.checkpoint(lin, x, use_reentrant=True)
        out.float().sum().backward()  # backward outside autocast: the recompute must still be bfloat16
        return {"out": out, "x.grad": x.grad, "w.grad": lin.weight.grad}

    ref, got = fn(torch), fn(torchlike)
    assert_same(ref["out"], got["out"])
    for k in ("x.grad", "w.grad"):  # NOTE: torchlike's bfloat16 linear backward rounds differently (not checkpoint's)
        assert_same(ref[k], got[k], rtol=1e-2, atol=1e-2, path=k)


def test_checkpoint_reentrant_retain_graph_and_second_backward():
    def fn(lib):
        lib.manual_seed(0)
        model = _model(lib, True)
        x = lib.tensor(X, requires_grad=True)
        out = lib.utils.checkpoint.checkpoint(model, x, use_reentrant=True).sum()
        out.backward(retain_graph=True)
        out.backward()  # recomputes again, with the same dropout mask
        return {"x.grad": x.grad, "w.grad": model[0].weight.grad}

    _run_both(fn)

    def twice(t):
        out = t.utils.checkpoint.checkpoint(t.nn.Linear(2, 2), t.ones(2, requires_grad=True), use_reentrant=True)
        out.sum().backward()
        out.sum().backward()

    check_raises(twice)


# --- anomaly mode ------------------------------------------------------------------------------


def _nan_backward(lib, left):
    a = lib.tensor([float("inf")])
    b = lib.tensor([2.0], requires_grad=True)
    z = ((a * b) if left else (b * a)) * 0
    z.sum().backward()


@pytest.mark.parametrize("left", [True, False])
def test_anomaly_nan_error(left):
    def run(lib):
        with lib.autograd.set_detect_anomaly(True):
            for _ in range(3):  # repeated: a cached fused backward must not skip the check
                _nan_backward(lib, left)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's forward-traceback warning (not mirrored)
        check_raises(run)
    assert not torchlike.autograd.is_anomaly_enabled()


def test_anomaly_custom_function_nan():
    def run(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g, g * float("nan")

        x = lib.ones(2, requires_grad=True)
        y = lib.ones(2, requires_grad=True)
        with lib.autograd.set_detect_anomaly(True):
            F.apply(x, y).sum().backward()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(run)


def test_anomaly_warning_flags_and_check_nan_off():
    def fn(lib):
        r = {}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly(check_nan=False):
                r["on"] = lib.is_anomaly_enabled() if lib is torch else lib.autograd.is_anomaly_enabled()
                x = lib.tensor([0.0, 4.0], requires_grad=True)
                (x.sqrt() * 0).sum().backward()  # nan gradient, not checked
                r["x.grad"] = x.grad
        r["warn"] = [(m.category.__name__, str(m.message)) for m in w]
        r["off"] = lib.is_anomaly_enabled() if lib is torch else lib.autograd.is_anomaly_enabled()
        r["callable"] = callable(lib.autograd.detect_anomaly)
        return r

    _run_both(fn)


# --- torch.jit ---------------------------------------------------------------------------------


def _warns(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(m.category.__name__, str(m.message)) for m in w]


def test_jit_script_function_and_module():
    def f(x, y: int = 2):
        return x * y + 1

    def fn(lib):
        sf, w1 = _warns(lambda: lib.jit.script(f))
        model = _model(lib, False)
        sm, w2 = _warns(lambda: lib.jit.script(model))
        x = lib.tensor(X, requires_grad=True)
        out = sm(x)
        r = {"f": sf(x.detach()), "name": sf.name, "w1": w1, "w2": w2, "out": out, "repr": repr(sm),
             "keys": list(sm.state_dict()), "shared": next(sm.parameters()) is next(model.parameters()),
             "is_module": isinstance(sm, lib.nn.Module), "is_script": isinstance(sm, lib.jit.ScriptModule),
             "orig": sm.original_name, "grad_fn": type(out.grad_fn).__name__}  # fmt: skip
        return {**r, **_grads(lib, model, x, out)}

    _run_both(fn)


def test_jit_trace_function_and_module():
    def fn(lib):
        model = _model(lib, False)
        x = lib.tensor(X)
        tm, w1 = _warns(lambda: lib.jit.trace(model, x))
        tf, w2 = _warns(lambda: lib.jit.trace(lambda a: a * 2, x))
        return {"out": tm(x), "f": tf(x), "w1": sorted(set(w1)), "w2": sorted(set(w2)), "repr": repr(tm),
                "name": tf.name, "is_script": isinstance(tm, lib.jit.ScriptModule)}  # fmt: skip

    _run_both(fn)


def test_jit_decorators_and_helpers():
    def fn(lib):
        @lib.jit.ignore
        def helper(x):
            return x + 1

        @lib.jit.unused
        def unused(x):
            return x - 1

        x = lib.tensor(X)
        fut = lib.jit.fork(helper, x)
        return {"ignore": helper(x), "unused": unused(x), "scripting": lib.jit.is_scripting(),
                "tracing": lib.jit.is_tracing(), "annotate": lib.jit.annotate(int, 3),
                "export": lib.jit.export(helper) is helper, "wait": lib.jit.wait(fut),
                "attr": repr(lib.jit.Attribute(3, int)), "final": repr(lib.jit.Final[int])}  # fmt: skip

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_both(fn)


def test_jit_isinstance():
    from typing import Dict, List, Optional, Tuple, Union

    cases = [([1, 2], List[int]), ([1, "a"], list[int]), ({"a": [1]}, Dict[str, List[int]]), ({1: 2}, dict[str, int]),
             ((1, "a"), Tuple[int, str]), ((1,), tuple[int, str]), (None, Optional[int]), (3, Optional[int]),
             ("a", Union[List[int], str]), ("a", int | str), (2.0, (int, float)), ([[1.0]], List[List[float]])]  # fmt: skip

    def fn(lib):
        out = {f"case{i}": lib.jit.isinstance(o, t) for i, (o, t) in enumerate(cases)}
        out["tensor"] = lib.jit.isinstance(lib.ones(1), lib.Tensor)
        _, out["empty_warn"] = _warns(lambda: lib.jit.isinstance([], List[int]))
        return out

    _run_both(fn)
    check_raises(lambda t: t.jit.isinstance([1], list))
    check_raises(lambda t: t.jit.isinstance({}, Dict))
    check_raises(lambda t: t.jit.isinstance(1, [int]))


def test_jit_script_module_subclass():
    def fn(lib):
        class M(lib.jit.ScriptModule):
            def __init__(self):
                super().__init__()
                lib.manual_seed(0)
                self.lin = lib.nn.Linear(4, 2)

            @lib.jit.script_method
            def forward(self, x):
                return self.lin(x) + 1

        m = M()
        return {"out": m(lib.tensor(X)), "keys": list(m.state_dict()), "name": m.original_name}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_both(fn)


def test_jit_trace_runs_the_example_like_torch():
    def fn(lib):
        calls = []

        class M(lib.nn.Module):
            def forward(self, x):
                calls.append("m")
                return x * 2

        def f(x):
            calls.append(int(x.shape[0]))
            return [x, x + 1]

        r = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for check in (True, False):
                lib.jit.trace(M(), lib.ones(1), check_trace=check)
                lib.jit.trace(f, (lib.ones(1),), check_trace=check)
            lib.jit.trace(f, lib.ones(1), check_inputs=[(lib.ones(2),), (lib.ones(3),)])
            r["calls"] = list(calls)
            r["list_out"] = lib.jit.trace(f, lib.ones(1), check_trace=False)(lib.zeros(1))
            r["dict_ok"] = lib.jit.trace(lambda x: {"a": x}, lib.ones(1), check_trace=False, strict=False)(lib.ones(1))[
                "a"
            ]
            lib.manual_seed(0)
            lib.jit.trace(lib.nn.Dropout(0.5), lib.ones(8), check_trace=False)  # the example run draws
            r["after"] = lib.rand(2)
        return r

    _run_both(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(lambda t: t.jit.trace(lambda x: {"a": x}, t.ones(1)))
        check_raises(lambda t: t.jit.trace(lambda x: (x, 3), t.ones(1)))
        check_raises(lambda t: t.jit.trace(lambda x: x))


def test_jit_script_module_copy_and_pickle():
    import copy
    import io
    import pickle

    def fn(lib):
        sm = lib.jit.script(_model(lib, False))
        c = copy.deepcopy(sm)
        x = lib.tensor(X)
        return {"repr": repr(c), "out": c(x), "fresh": next(c.parameters()) is not next(sm.parameters())}

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_both(fn)
        check_raises(lambda t: pickle.dumps(t.jit.script(_model(t, False))))
        check_raises(lambda t: t.save(t.jit.script(_model(t, False)), io.BytesIO()))


def test_checkpoint_reentrant_refuses_grad_and_backward_inputs():
    def via_grad(t):
        x = t.ones(2, requires_grad=True)
        t.autograd.grad(t.utils.checkpoint.checkpoint(t.nn.Linear(2, 2), x, use_reentrant=True).sum(), x)

    def via_inputs(t):
        x = t.ones(2, requires_grad=True)
        t.utils.checkpoint.checkpoint(t.nn.Linear(2, 2), x, use_reentrant=True).sum().backward(inputs=[x])

    check_raises(via_grad)
    check_raises(via_inputs)

    def fn(lib):  # the non-reentrant variant supports both
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 2)
        x = lib.tensor(X, requires_grad=True)
        (g,) = lib.autograd.grad(lib.utils.checkpoint.checkpoint(lin, x, use_reentrant=False).sum(), x)
        return {"g": g, "w.grad": lin.weight.grad}

    _run_both(fn)


def _double(x):
    return x * 2


class _Iface:
    def run(self, x: torch.Tensor) -> torch.Tensor:
        pass


def test_jit_fuser_settings():
    def fn(lib):
        r = {}
        with lib.jit.optimized_execution(False), lib.jit.fuser("fuser1"):
            r["out"] = lib.jit.script(_double)(lib.tensor(X))
        _, r["w"] = _warns(lambda: lib.jit.set_fusion_strategy([("DYNAMIC", 3)]))
        r["prev"] = lib.jit.set_fusion_strategy([("STATIC", 2), ("DYNAMIC", 10)])
        _, r["strict"] = _warns(lambda: lib.jit.strict_fusion())
        r["onednn"] = lib.jit.onednn_fusion_enabled()
        _, r["iface"] = _warns(lambda: lib.jit.interface(_Iface).__name__)
        r["sit"] = lib.jit.script_if_tracing(lambda x: x + 1)(lib.tensor(X))
        return r

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _run_both(fn)
        check_raises(lambda t: t.jit.fuser("nope").__enter__())
        check_raises(lambda t: t.jit.interface(3))
