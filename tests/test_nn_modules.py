"""nn.Module, Parameter and containers on their own (no torch)."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.bn(self.fc1(x))))


def test_parameter_is_a_leaf_sharing_memory() -> None:
    data = torch.ones(2, 3)
    p = nn.Parameter(data)
    assert isinstance(p, torch.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    with torch.no_grad():
        p.add_(1)
    assert data.tolist() == [[2.0] * 3] * 2  # same buffer
    assert repr(p).startswith("Parameter containing:\ntensor(")
    assert type(p * 2) is torch.Tensor and type(p.detach()) is torch.Tensor
    assert not nn.Parameter(torch.ones(1), requires_grad=False).requires_grad
    with pytest.raises(RuntimeError):
        nn.Parameter(torch.ones(2, dtype=torch.int64))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.tolist() == p.tolist()


def test_buffer_marker() -> None:
    m = nn.Module()
    m.b = nn.Buffer(torch.ones(2), persistent=False)
    m.c = nn.Buffer(torch.zeros(1))
    assert list(m._buffers) == ["b", "c"] and list(m.state_dict()) == ["c"]
    assert isinstance(m.b, nn.Buffer) and not isinstance(torch.ones(1), nn.Buffer)


def test_registration_and_iteration() -> None:
    torch.manual_seed(0)
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight", "fc2.bias"
    ]  # fmt: skip
    assert [n for n, _ in net.named_buffers()] == [
        "steps",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert list(net.state_dict()) == [
        "steps", "fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
        "bn.num_batches_tracked", "fc2.weight", "fc2.bias",
    ]  # fmt: skip
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_children()] == ["fc1", "bn", "fc2"]
    assert net.get_submodule("bn") is net.bn and net.get_parameter("fc2.bias") is net.fc2.bias
    assert net.get_buffer("bn.running_var") is net.bn.running_var
    # shared modules and parameters are listed once
    shared = nn.Sequential(net.fc1, net.fc1)
    assert len(list(shared.parameters())) == 2
    assert len(list(shared.named_parameters(remove_duplicate=False))) == 4


def test_setattr_moves_between_kinds() -> None:
    m = nn.Module()
    m.x = nn.Parameter(torch.ones(1))
    with pytest.raises(TypeError, match="as parameter 'x' \\(torch.nn.Parameter or None expected\\)"):
        m.x = nn.Linear(1, 1)
    m.y = torch.ones(1)
    m.y = nn.Linear(1, 1)  # a module replaces a plain attribute
    m.x = None
    del m.x
    m.x = nn.Linear(1, 1)
    assert "x" not in m._parameters and "x" in m._modules and "y" not in m.__dict__
    m.x = None
    assert m._modules["x"] is None
    with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as child module 'x'"):
        m.x = torch.ones(1)
    del m.x
    assert "x" not in m._modules


def test_forward_pre_and_post_hooks_and_removal() -> None:
    lin = nn.Linear(2, 2)
    seen = []
    h = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    g = lin.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    y = lin(torch.ones(3, 2))
    assert seen == [torch.Size([3, 2])]
    np.testing.assert_allclose(
        y.detach().numpy(), (lin.bias + 1).detach().numpy()[None].repeat(3, 0), rtol=1e-6
    )
    h.remove()
    g.remove()
    with g:
        pass
    assert not lin._forward_hooks and not lin._forward_pre_hooks


def test_always_call_hook_runs_on_error() -> None:
    class Boom(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ValueError("boom")

    calls = []
    m = Boom()
    m.register_forward_hook(lambda mod, args, out: calls.append(out), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(torch.ones(1))
    assert calls == [None]


def test_full_backward_hook_sees_grads_and_can_replace_them() -> None:
    lin = nn.Linear(3, 2)
    got = {}

    def hook(mod, grad_input, grad_output):  # noqa: ANN001, ANN202
        got["gi"] = grad_input[0].clone()
        got["go"] = grad_output[0].clone()
        return (grad_input[0] * 0,)

    lin.register_full_backward_hook(hook)
    x = torch.ones(4, 3, requires_grad=True)
    lin(x).sum().backward()
    assert got["go"].tolist() == [[1.0, 1.0]] * 4
    np.testing.assert_allclose(
        got["gi"].numpy(), np.tile(lin.weight.detach().numpy().sum(0), (4, 1)), rtol=1e-6
    )
    assert x.grad.abs().sum().item() == 0.0
    assert lin.weight.grad is not None
    with pytest.raises(NotImplementedError):
        lin.register_backward_hook(hook)


def test_state_dict_roundtrip_and_strict_errors() -> None:
    torch.manual_seed(0)
    a, b = Net(), Net()
    res = b.load_state_dict(a.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    for (_, pa), (_, pb) in zip(a.named_parameters(), b.named_parameters()):
        assert pa.tolist() == pb.tolist()
    sd = a.state_dict()
    sd.pop("fc1.bias")
    sd["nope"] = torch.zeros(1)
    res = b.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc1.bias"] and res.unexpected_keys == ["nope"]
    with pytest.raises(RuntimeError, match="Error\\(s\\) in loading state_dict for Net:\n\tMissing key"):
        b.load_state_dict(sd)
    # keep_vars keeps the Parameters, the default detaches
    assert isinstance(a.state_dict(keep_vars=True)["fc1.weight"], nn.Parameter)
    assert not a.state_dict()["fc1.weight"].requires_grad


def test_train_eval_and_batchnorm_running_stats() -> None:
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(5, 4)
    net(x)
    assert net.bn.num_batches_tracked.item() == 1
    assert net.bn.running_mean.abs().sum().item() > 0
    rm = net.bn.running_mean.clone()
    net.eval()
    assert not any(m.training for m in net.modules())
    net(x)
    assert net.bn.num_batches_tracked.item() == 1 and net.bn.running_mean.tolist() == rm.tolist()


def test_to_and_dtype_conversions_keep_parameter_identity() -> None:
    net = Net()
    w = net.fc1.weight
    net.double()
    assert net.fc1.weight is w and w.dtype is torch.float64
    assert net.bn.num_batches_tracked.dtype is torch.int64  # integral buffers keep their dtype
    net.to(torch.float32)
    assert w.dtype is torch.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        net.to(torch.int32)
    net(torch.randn(3, 4)).sum().backward()
    net.half()
    assert w.grad.dtype is torch.float16


def test_zero_grad_and_requires_grad() -> None:
    lin = nn.Linear(2, 2)
    lin(torch.ones(1, 2)).sum().backward()
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad.abs().sum().item() == 0.0
    lin.zero_grad()
    assert lin.weight.grad is None
    lin.requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


def test_containers() -> None:
    seq = nn.Sequential(OrderedDict(a=nn.Linear(2, 3), b=nn.ReLU()))
    assert (
        isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.ReLU) and isinstance(seq[:1], nn.Sequential)
    )
    seq.append(nn.Linear(3, 1))
    assert list(seq._modules) == ["a", "b", "2"] and seq(torch.ones(4, 2)).shape == (4, 1)
    ml = nn.ModuleList([nn.Linear(1, 1)] * 3)
    assert "(0-2): 3 x Linear(in_features=1, out_features=1, bias=True)" in repr(ml)
    md = nn.ModuleDict({"x": nn.ReLU()})
    md.update([("y", nn.Tanh())])
    assert list(md) == ["x", "y"]
    pl = nn.ParameterList([torch.ones(2)])
    assert isinstance(pl[0], nn.Parameter)
    pd = nn.ParameterDict({"w": torch.ones(1)})
    assert isinstance(pd["w"], nn.Parameter) and list(pd.parameters())[0] is pd["w"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        seq[5]


def test_pickle_and_deepcopy_models() -> None:
    torch.manual_seed(0)
    net = Net()
    clone = copy.deepcopy(net)
    assert clone.fc1.weight is not net.fc1.weight and clone.fc1.weight.tolist() == net.fc1.weight.tolist()
    x = torch.randn(3, 4)
    np.testing.assert_allclose(clone(x).detach().numpy(), net(x).detach().numpy(), rtol=1e-6)
    back = pickle.loads(pickle.dumps(net))
    assert isinstance(back.fc1.weight, nn.Parameter)


def test_global_forward_hooks() -> None:
    seen = []
    h = nn.register_module_forward_hook(lambda m, i, o: seen.append(type(m).__name__))
    try:
        nn.Sequential(nn.ReLU())(torch.ones(1))
    finally:
        h.remove()
    assert seen == ["ReLU", "Sequential"]
