"""torchlike.utils.checkpoint, autograd anomaly mode and torchlike.jit on their own."""

import warnings

import numpy as np
import pytest

import torchlike as torch
import torchlike.jit
import torchlike.utils.checkpoint
from torchlike.autograd import engine


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh(), torch.nn.Dropout(0.5), torch.nn.Linear(3, 1))


def test_reentrant_checkpoint_recomputes_without_keeping_activations():
    net = _net()
    seen = []

    def f(x):
        seen.append(torch.is_grad_enabled())
        return net(x)

    x = torch.ones(2, 3, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(f, x, use_reentrant=True)
    assert type(out.grad_fn).__name__ == "CheckpointFunctionBackward"
    assert [type(n).__name__ for n, _ in out.grad_fn.next_functions] == ["AccumulateGrad"]  # only the input
    out.sum().backward()
    assert seen == [False, True]  # forward without history, then the recomputation with it
    assert x.grad is not None and net[0].weight.grad is not None


def test_checkpoint_gradients_equal_direct_run_with_dropout():
    results = []
    for mode in (None, True, False):
        net = _net()
        x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        out = net(x) if mode is None else torch.utils.checkpoint.checkpoint(net, x, use_reentrant=mode)
        out.sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), net[0].weight.grad.numpy(), torch.rand(1).numpy()])
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_reentrant_recompute_uses_the_forwards_autocast():
    grads = []
    for ck in (False, True):
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 2)
        x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = torch.utils.checkpoint.checkpoint(lin, x, use_reentrant=True) if ck else lin(x)
        assert out.dtype == torch.bfloat16
        out.float().sum().backward()
        grads.append((x.grad.numpy(), lin.weight.grad.numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
    seen = []
    x = torch.ones(2, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(lambda a: seen.append(torch.is_autocast_enabled("cpu")) or a * 2, x,
                                            use_reentrant=True)  # fmt: skip
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out.sum().backward()  # the recompute runs without autocast, as the forward did
    assert seen == [False, False]


def test_checkpoint_without_use_reentrant_warns_and_no_input_grad_warns():
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        torch.utils.checkpoint.checkpoint(lambda a: a + 1, torch.ones(1, requires_grad=True))
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = torch.utils.checkpoint.checkpoint(lambda a: a + 1, torch.ones(1), use_reentrant=True)
    assert out.grad_fn is None


def test_non_reentrant_context_fn_forward_context_is_used():
    entered = []

    class Ctx:
        def __enter__(self):
            entered.append(True)

        def __exit__(self, *a):
            pass

    x = torch.ones(2, requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(lambda a: a * 3, x, use_reentrant=False, context_fn=lambda: (Ctx(), Ctx()))
    assert entered == [True] and type(out.grad_fn).__name__ == "MulBackward0"


def test_anomaly_flags_and_restore():
    assert not torch.autograd.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = torch.autograd.detect_anomaly(check_nan=False)
    with ctx:
        assert torch.autograd.is_anomaly_enabled() and not torch.autograd.is_anomaly_check_nan_enabled()
    assert not torch.autograd.is_anomaly_enabled() and torch.autograd.is_anomaly_check_nan_enabled()
    torch.autograd.set_detect_anomaly(True)
    try:
        assert torch.autograd.is_anomaly_enabled()
    finally:
        torch.autograd.set_detect_anomaly(False)
    assert not torch.autograd.is_anomaly_enabled()


def test_anomaly_mode_uses_per_node_path_and_names_the_node():
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    for _ in range(3):  # warm the fused program cache for this graph
        (x.exp() * 2).sum().backward()
    fused = engine.stats["fused_calls"]
    with torch.autograd.set_detect_anomaly(True):
        (x.exp() * 2).sum().backward()
        assert engine.stats["fused_calls"] == fused
        y = torch.tensor([0.0], requires_grad=True)
        with pytest.raises(RuntimeError, match=r"^Function 'SqrtBackward0' returned nan values in its 0th output\.$"):
            (y.sqrt() * 0).sum().backward()
    y.grad = None
    (y.sqrt() * 0).sum().backward()  # off again: nan gradient, no error
    assert np.isnan(y.grad.numpy()).all()


def test_jit_script_runs_eager_code_with_is_scripting():
    def f(x):
        return x + 1, torch.jit.is_scripting(), torch.jit.is_tracing()

    with pytest.warns(DeprecationWarning, match="`torch.jit.script` is deprecated"):
        sf = torch.jit.script(f)
    out, scripting, tracing = sf(torch.ones(1))
    assert out.tolist() == [2.0] and scripting and not tracing
    assert not torch.jit.is_scripting()
    seen = []

    def g(x):
        seen.append((torch.jit.is_scripting(), torch.jit.is_tracing()))
        return x

    with pytest.warns(DeprecationWarning, match="`torch.jit.trace` is deprecated"):
        tg = torch.jit.trace(g, torch.ones(1), check_trace=False)
    tg(torch.ones(1))
    assert seen == [(False, True)] * 2 and not torch.jit.is_tracing()


def test_jit_script_module_shares_parameters_and_supports_containers():
    net = _net()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm = torch.jit.script(net)
        assert torch.jit.script(sm) is sm
    assert isinstance(sm, torch.jit.ScriptModule) and isinstance(sm, torch.jit.RecursiveScriptModule)
    assert len(sm) == 4 and [type(m).__name__ for m in sm] == ["RecursiveScriptModule"] * 4
    assert sm[0].weight is net[0].weight and list(sm.state_dict()) == list(net.state_dict())
    sm.eval()
    assert net.training and not sm.training
    x = torch.ones(2, 3)
    net.eval()
    np.testing.assert_array_equal(sm(x).detach().numpy(), net(x).detach().numpy())


def test_jit_methods_of_the_original_class_and_compiled_only_attributes():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 2.0

        @torch.jit.export
        def helper(self, x):
            return x * self.scale

        @staticmethod
        def three():
            return 3

        def forward(self, x):
            return self.helper(x) + self.three()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm = torch.jit.script(M())
    assert sm(torch.ones(1)).tolist() == [5.0] and sm.helper(torch.ones(1)).tolist() == [2.0]
    for attr in ("code", "graph", "save"):
        with pytest.raises(NotImplementedError, match=f"ScriptModule.{attr} is not supported"):
            getattr(sm, attr)
    with pytest.raises(NotImplementedError, match="torch.jit.load"):
        torch.jit.load("m.pt")
    with pytest.raises(TypeError, match="is a built-in class"), pytest.warns(DeprecationWarning):
        torch.jit.script(3)


def test_jit_decorators_return_the_function():
    def g(x):
        return x

    assert torch.jit.ignore(g) is g and torch.jit.unused(g) is g and torch.jit.export(g) is g
    with pytest.warns(FutureWarning, match=r"ignore\(True\) has been deprecated"):
        assert torch.jit.ignore(drop=True)(g) is g
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        torch.jit.ignore(3)
    assert torch.jit.Attribute(1, int).value == 1 and torch.jit.annotate(int, 4) == 4


def test_jit_warning_classes_and_unavailable_compilers():
    assert issubclass(torch.jit.TracerWarning, Warning) and issubclass(torch.jit.ScriptWarning, Warning)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)  # the common use
    for make in (lambda: torch.jit.CompilationUnit("def f(x): return x"), lambda: torch.jit.export_opnames(None)):
        with pytest.raises(NotImplementedError, match="not supported by torchlike"):
            make()

    @torch.jit._overload
    def f(x: int) -> int: ...

    def f(x):  # noqa: F811 - torch's overload pattern: the last definition is the implementation
        return x * 2

    assert f(3) == 6 and torch.jit._fork is torch.jit.fork


def test_jit_script_keeps_scripted_submodules_and_separates_later_hooks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inner = torch.jit.script(torch.nn.Linear(2, 2))
        outer = torch.jit.script(torch.nn.Sequential(inner, torch.nn.ReLU()))
        assert outer[0] is inner
        calls = []
        m = torch.nn.Linear(2, 2)
        m.register_forward_hook(lambda *a: calls.append("before"))
        sm = torch.jit.script(m)
    sm.register_forward_hook(lambda *a: calls.append("on scripted"))
    m(torch.ones(2))
    sm(torch.ones(2))
    assert calls == ["before", "before", "on scripted"]
