"""nn.Module's API under torch and torchlike: registration, iteration, hooks, state_dict, load_state_dict,
reprs, containers, conversions, Parameter -- and torch's errors for misuse."""

from __future__ import annotations

import copy
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from _harness import assert_same, check_raises

import torchlike


def both(fn):  # noqa: ANN001, ANN201
    return fn(torch), fn(torchlike)


def same(fn) -> None:  # noqa: ANN001
    ref, got = both(fn)
    assert got == ref, f"torchlike: {got!r}\ntorch:     {ref!r}"


def _model(t):  # noqa: ANN001, ANN202
    nn = t.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.register_buffer("scale", t.ones(4))
            self.register_buffer("tmp", t.zeros(1), persistent=False)
            self.gain = nn.Parameter(t.tensor(2.0))

        def forward(self, x):  # noqa: ANN001, ANN202
            return self.bn(self.conv(x)) * self.gain

    t.manual_seed(0)
    return nn.Sequential(
        OrderedDict(
            block=Block(),
            act=nn.ReLU(inplace=True),
            pool=nn.AdaptiveAvgPool2d(1),
            flat=nn.Flatten(),
            heads=nn.ModuleList([nn.Linear(4, 2) for _ in range(3)] + [nn.Linear(4, 3, bias=False)]),
            table=nn.ModuleDict({"emb": nn.Embedding(5, 4, padding_idx=0), "drop": nn.Dropout(0.1)}),
        )
    )


def test_repr_and_names() -> None:
    same(lambda t: repr(_model(t)))
    same(lambda t: [n for n, _ in _model(t).named_parameters()])
    same(lambda t: [n for n, _ in _model(t).named_buffers()])
    same(lambda t: [n for n, _ in _model(t).named_modules()])
    same(lambda t: [n for n, _ in _model(t).named_children()])
    same(lambda t: list(_model(t).state_dict().keys()))
    same(lambda t: [type(m).__name__ for m in _model(t).modules()])
    same(lambda t: [n for n, _ in _model(t).named_parameters(prefix="m", recurse=False)])
    same(lambda t: [n for n, _ in _model(t).block.named_parameters(prefix="blk")])
    same(lambda t: sorted(k for k in dir(_model(t).block) if not k.startswith("_")))
    same(lambda t: repr(_model(t).state_dict()._metadata))


def test_state_dict_values_and_roundtrip() -> None:
    ref, got = both(lambda t: _model(t).state_dict())
    for k in ref:
        assert_same(ref[k], got[k], 0, 0, path=k)
    assert str(got["block.bn.num_batches_tracked"].dtype) == "torch.int64"
    m = _model(torchlike)
    res = m.load_state_dict(got)
    assert repr(res) == "<All keys matched successfully>"
    assert res == ((), ()) or (list(res.missing_keys), list(res.unexpected_keys)) == ([], [])


def test_load_state_dict_errors_and_result() -> None:
    def missing(t):  # noqa: ANN001, ANN202
        m = _model(t)
        sd = m.state_dict()
        del sd["block.conv.weight"]
        sd["extra.w"] = t.zeros(1)
        return m.load_state_dict(sd, strict=False)

    ref, got = both(missing)
    assert repr(got) == repr(ref)
    assert got.missing_keys == ref.missing_keys and got.unexpected_keys == ref.unexpected_keys

    def strict(t):  # noqa: ANN001, ANN202
        m = _model(t)
        sd = m.state_dict()
        del sd["block.conv.weight"]
        sd["extra.w"] = t.zeros(1)
        sd["heads.0.weight"] = t.zeros(5, 4)
        m.load_state_dict(sd)

    check_raises(strict)
    ref_e, got_e = None, None
    try:
        strict(torch)
    except RuntimeError as e:
        ref_e = str(e)
    try:
        strict(torchlike)
    except RuntimeError as e:
        got_e = str(e)
    assert got_e == ref_e
    check_raises(lambda t: _model(t).load_state_dict([1, 2]))
    check_raises(lambda t: t.nn.Linear(2, 2).load_state_dict({"weight": [[1.0]], "bias": t.zeros(2)}))


def test_load_state_dict_copies_values() -> None:
    def f(t):  # noqa: ANN001, ANN202
        t.manual_seed(1)
        a, b = t.nn.Linear(3, 2), t.nn.Linear(3, 2)
        w = a.weight
        a.load_state_dict(b.state_dict())
        assert a.weight is w  # copied in place, the Parameter object stays
        bn = t.nn.BatchNorm1d(2)
        sd = bn.state_dict()
        del sd["num_batches_tracked"]
        sd._metadata[""] = {"version": 1}  # an old checkpoint: num_batches_tracked may be missing
        res = bn.load_state_dict(sd)
        m = t.nn.Linear(3, 2)
        m.load_state_dict(b.state_dict(), assign=True)
        return a.weight.detach().numpy().tolist(), repr(res), m.weight is not None

    same(f)


def test_registration_errors() -> None:
    def no_init(t):  # noqa: ANN001, ANN202
        class Bad(t.nn.Module):
            def __init__(self) -> None:
                self.lin = t.nn.Linear(2, 2)

        Bad()

    check_raises(no_init)
    check_raises(lambda t: t.nn.Module().register_buffer("a.b", t.zeros(1)))
    check_raises(lambda t: t.nn.Module().register_buffer("", t.zeros(1)))
    check_raises(lambda t: t.nn.Module().register_buffer("x", 3))
    check_raises(lambda t: t.nn.Module().register_parameter("w", t.zeros(2)))
    check_raises(lambda t: t.nn.Module().add_module("m", 3))
    check_raises(lambda t: t.nn.Module().add_module("a.b", t.nn.ReLU()))

    def assign_tensor_to_param(t):  # noqa: ANN001, ANN202
        m = t.nn.Linear(2, 2)
        m.weight = t.zeros(2, 2)

    check_raises(assign_tensor_to_param)

    def non_leaf(t):  # noqa: ANN001, ANN202
        m = t.nn.Module()
        p = t.nn.Parameter(t.ones(2))
        m.register_parameter("w", p * 2)

    check_raises(non_leaf)

    def existing(t):  # noqa: ANN001, ANN202
        m = t.nn.Module()
        m.foo = 1
        m.register_buffer("foo", t.zeros(1))

    check_raises(existing)
    check_raises(lambda t: t.nn.Linear(2, 2).nope)
    check_raises(lambda t: t.nn.Module()(1))
    check_raises(lambda t: t.nn.Module().train("yes"))
    check_raises(lambda t: t.nn.Linear(2, 2).to(t.int64))
    check_raises(lambda t: _model(t).get_submodule("block.nothing"))
    check_raises(lambda t: _model(t).get_submodule("block.gain"))
    check_raises(lambda t: _model(t).get_parameter("block.scale"))
    check_raises(lambda t: _model(t).get_buffer("block.gain"))


def test_attribute_semantics() -> None:
    def f(t):  # noqa: ANN001, ANN202
        m = t.nn.Module()
        m.w = t.nn.Parameter(t.ones(2))
        m.b = t.nn.Buffer(t.zeros(2), persistent=False)
        m.sub = t.nn.Linear(2, 1)
        m.plain = t.ones(1)
        out = [sorted(m._parameters), sorted(m._buffers), sorted(m._modules), list(m.state_dict())]
        m.w = None
        m.sub = None
        del m.b
        out += [list(m._parameters.items()), list(m._modules.items()), list(m.state_dict())]
        return repr(out)

    same(f)
    same(lambda t: (_model(t).get_submodule("heads.3").extra_repr(), _model(t).get_parameter("block.gain").item(),
                    _model(t).get_buffer("block.scale").tolist()))  # fmt: skip


def test_hooks() -> None:
    def f(t):  # noqa: ANN001, ANN202
        log = []
        m = t.nn.Linear(2, 2)
        t.manual_seed(0)
        m = t.nn.Linear(2, 2)
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append(("pre", tuple(args[0].shape))))
        h2 = m.register_forward_hook(lambda mod, args, out: out * 2)
        m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("first"), prepend=True)
        y = m(t.ones(3, 2))
        h1.remove()
        h2.remove()
        y2 = m(t.ones(3, 2))
        grads = []
        m.register_full_backward_hook(lambda mod, gi, go: grads.append((gi[0].shape, go[0].shape)))
        x = t.ones(3, 2, requires_grad=True)
        m(x).sum().backward()
        with t.no_grad():
            m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        x2 = t.ones(3, 2, requires_grad=True)
        m(x2).sum().backward()
        return log, y.tolist(), y2.tolist(), [(tuple(a), tuple(b)) for a, b in grads], x2.grad.tolist()

    ref, got = both(f)
    assert got[0] == ref[0] and got[3] == ref[3]
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6)
    np.testing.assert_allclose(got[4], ref[4], rtol=1e-6)

    def state_hooks(t):  # noqa: ANN001, ANN202
        m = t.nn.Linear(2, 2)
        calls = []
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix)))
        m.register_load_state_dict_post_hook(
            lambda mod, keys: calls.append(("post", list(keys.missing_keys)))
        )
        m.load_state_dict(m.state_dict(prefix="p."), strict=False)
        return calls

    same(state_hooks)


def test_modes_zero_grad_apply_and_conversions() -> None:
    def f(t):  # noqa: ANN001, ANN202
        m = _model(t)
        m.eval()
        modes = [mod.training for mod in m.modules()]
        m.train()
        x = t.randn(2, 3, 4, 4)
        m.block(x).sum().backward()
        had = [p.grad is not None for p in m.parameters()]
        m.zero_grad(set_to_none=False)
        zeros = [float(p.grad.abs().sum()) for p in m.parameters() if p.grad is not None]
        m.zero_grad()
        none = [p.grad is None for p in m.parameters()]
        names = []
        m.apply(lambda mod: names.append(type(mod).__name__))
        w = m.block.conv.weight
        m.double()
        dtypes = [str(p.dtype) for p in m.parameters()] + [str(b.dtype) for b in m.buffers()]
        assert m.block.conv.weight is w  # converted in place
        m.half().float()
        m.to(t.float64).to("cpu")
        m.requires_grad_(False)
        return (
            modes,
            had,
            zeros,
            none,
            names,
            [d.split(".")[-1] for d in dtypes],
            [p.requires_grad for p in m.parameters()],
        )

    same(f)


def test_parameter_semantics() -> None:
    def f(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        data = t.randn(2, 3)
        p = t.nn.Parameter(data)
        q = t.nn.Parameter(t.ones(2), requires_grad=False)
        with t.no_grad():
            p.mul_(2)
        same_memory = bool((data == p.detach()).all())
        out = [repr(p), str(q), p.requires_grad, q.requires_grad, p.is_leaf, isinstance(p, t.Tensor),
               type(p * 2).__name__, type(p.data).__name__, same_memory, repr(t.nn.Parameter())]  # fmt: skip
        pc = copy.deepcopy(p)
        out += [type(pc).__name__, pc.requires_grad, bool((pc == p).all()), pc is not p]
        return out

    same(f)


def test_containers() -> None:
    def f(t):  # noqa: ANN001, ANN202
        nn = t.nn
        t.manual_seed(0)
        seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
        out = [repr(seq[1:]), repr(seq[-1]), len(seq)]
        seq.append(nn.Sigmoid())
        seq.insert(1, nn.Tanh())
        del seq[2]
        seq.extend([nn.Identity()])
        out += [repr(seq), repr(seq + nn.Sequential(nn.ReLU())), repr(nn.Sequential(nn.ReLU()) * 2)]
        seq.pop(0)
        out.append(repr(seq))
        ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
        ml.append(nn.ReLU())
        ml.insert(0, nn.Linear(2, 2))
        out += [repr(ml), repr(ml[1:3]), len(ml), repr(nn.ModuleList())]
        md = nn.ModuleDict([("a", nn.ReLU()), ("b", nn.Tanh())])
        md["c"] = nn.Sigmoid()
        out += [repr(md), list(md.keys()), "a" in md, repr(md.pop("b"))]
        pl = nn.ParameterList([nn.Parameter(t.ones(2, 3)), t.zeros(4)])
        pl.append(nn.Parameter(t.ones(1, dtype=t.float64)))
        out += [repr(pl), len(pl), [type(p).__name__ for p in pl], repr(pl[1:])]
        pd = nn.ParameterDict({"b": nn.Parameter(t.ones(2)), "a": t.zeros(3)})
        pd["c"] = nn.Parameter(t.ones(1))
        out += [repr(pd), list(pd.keys()), repr(pd.get("zz")), len(pd)]
        x = t.ones(1, 2)
        out.append(round(float(nn.Sequential(nn.Linear(2, 2), nn.ReLU())(x).sum()), 5))
        return out

    same(f)
    check_raises(lambda t: t.nn.Sequential(t.nn.ReLU())[3])
    check_raises(lambda t: t.nn.ModuleList()[0])
    check_raises(lambda t: t.nn.ParameterList()(1))
    check_raises(lambda t: t.nn.Sequential() + 1)
    check_raises(lambda t: t.nn.ModuleDict([("a",)]))


def test_layer_reprs() -> None:
    def reprs(t):  # noqa: ANN001, ANN202
        nn = t.nn
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mods = [
                nn.Conv2d(3, 8, (3, 5), stride=2, padding=(1, 2), dilation=2, groups=1, bias=False, padding_mode="reflect"),
                nn.Conv1d(2, 4, 3, padding="same"), nn.ConvTranspose2d(4, 2, 3, stride=2, output_padding=1),
                nn.MaxPool2d(3, 2, 1, ceil_mode=True), nn.AvgPool1d(3), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((None, 3)),
                nn.AdaptiveMaxPool1d(2), nn.LPPool2d(2, 3), nn.BatchNorm1d(3, momentum=None), nn.InstanceNorm2d(3),
                nn.LayerNorm((2, 3)), nn.GroupNorm(2, 4), nn.RMSNorm(3, eps=1e-5), nn.LocalResponseNorm(2),
                nn.Dropout(0.2, inplace=True), nn.AlphaDropout(), nn.Embedding(4, 2, padding_idx=-1, max_norm=1.0),
                nn.EmbeddingBag(4, 2, mode="sum"), nn.ReLU(inplace=True), nn.ReLU6(), nn.LeakyReLU(0.2),
                nn.ELU(alpha=0.5, inplace=True), nn.Hardtanh(-2, 2), nn.GELU("tanh"), nn.Softmax(dim=1),
                nn.LogSoftmax(), nn.Softplus(2, 10), nn.Threshold(0.1, 20), nn.PReLU(3), nn.RReLU(), nn.Hardshrink(),
                nn.Softshrink(0.3), nn.GLU(), nn.SiLU(), nn.Mish(), nn.CELU(), nn.SELU(), nn.Tanh(), nn.Sigmoid(),
                nn.Upsample(scale_factor=2, mode="bilinear"), nn.UpsamplingNearest2d(size=4), nn.PixelShuffle(3),
                nn.ZeroPad2d(1), nn.ConstantPad3d(1, 2.0), nn.ReflectionPad1d((1, 2)), nn.ReplicationPad2d(2),
                nn.CircularPad1d(1), nn.Fold(4, 2), nn.Unfold(2), nn.Flatten(0, 2), nn.Unflatten(1, (2, 2)),
                nn.Bilinear(2, 3, 4), nn.Identity(), nn.CosineSimilarity(), nn.PairwiseDistance(),
                nn.MSELoss(), nn.CrossEntropyLoss(weight=t.ones(3)), nn.NLLLoss(), nn.BCEWithLogitsLoss(pos_weight=t.ones(2)),
                nn.KLDivLoss(reduction="batchmean"), nn.CTCLoss(), nn.TripletMarginLoss(), nn.HuberLoss(),
                nn.RNN(2, 3, 2, nonlinearity="relu", bias=False, dropout=0.1), nn.GRU(2, 3, batch_first=True),
                nn.LSTM(2, 4, proj_size=2, bidirectional=True), nn.RNNCell(2, 3, nonlinearity="relu"), nn.LSTMCell(2, 3),
                nn.GRUCell(2, 3, bias=False), nn.MultiheadAttention(4, 2, kdim=3, vdim=5),
                nn.TransformerDecoderLayer(4, 2, 8), nn.Transformer(4, 2, 1, 1, 8),
            ]  # fmt: skip
        return [repr(m) for m in mods] + [list(m.state_dict()) for m in mods]

    ref, got = both(reprs)
    for r, g in zip(ref, got):
        assert g == r, f"\ntorch:     {r}\ntorchlike: {g}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_deepcopy_and_shared_parameters(dtype: str) -> None:
    def f(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        lin = t.nn.Linear(2, 2).to(getattr(t, dtype))
        m = t.nn.Sequential(lin, t.nn.ReLU(), lin)
        c = copy.deepcopy(m)
        shared = c[0] is c[2] and c[0].weight is c[2].weight
        return (
            len(list(m.parameters())),
            len(list(m.parameters())),
            shared,
            c[0].weight.tolist() == lin.weight.tolist(),
        )

    same(f)


def _lazy_net(t):  # noqa: ANN001, ANN202
    nn = t.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c = nn.LazyConv2d(4, 3)
            self.bn = nn.LazyBatchNorm2d()
            self.fc = nn.LazyLinear(5)
            self.ct = nn.LazyConvTranspose1d(2, 3, bias=False)
            self.inorm = nn.LazyInstanceNorm1d(affine=False)
            self.head = nn.Linear(5, 2)

        def forward(self, x):  # noqa: ANN001, ANN202
            y = self.fc(self.bn(self.c(x)).flatten(1))
            return self.head(y), self.inorm(self.ct(y.unsqueeze(1)))

    t.manual_seed(0)
    return Net()


def _values(tensors):  # noqa: ANN001, ANN202
    return [np.round(v.detach().double().numpy(), 5).tolist() for v in tensors]


def test_lazy_modules() -> None:
    # before the first forward: reprs, uninitialized state, conversions keep them lazy
    same(lambda t: repr(_lazy_net(t)))
    same(lambda t: {k: repr(v) for k, v in _lazy_net(t).state_dict().items()})
    same(lambda t: [repr(p) for p in _lazy_net(t).parameters()])
    same(lambda t: (_lazy_net(t).fc.has_uninitialized_params(), t.nn.parameter.is_lazy(_lazy_net(t).fc.weight)))
    same(lambda t: str(_lazy_net(t).double().fc.weight.dtype))

    def dry_run(t):  # noqa: ANN001, ANN202
        m = _lazy_net(t).double()
        x = t.randn(2, 3, 6, 6, dtype=t.float64)
        out = m(x)
        return (repr(m), [type(c).__name__ for c in m.children()], _values(out), _values(m.state_dict().values()),
                {k: list(v.shape) for k, v in m.state_dict().items()})  # fmt: skip

    same(dry_run)  # the same parameters: reset_parameters draws from the generator at the first forward

    def load(t):  # noqa: ANN001, ANN202
        src = _lazy_net(t)
        src(t.randn(2, 3, 6, 6))
        dst = _lazy_net(t)
        dst.load_state_dict(src.state_dict())
        return type(dst.fc).__name__, list(dst.fc.weight.shape), _values(dst.state_dict().values())

    same(load)


def test_lazy_module_errors() -> None:
    check_raises(lambda t: t.nn.UninitializedParameter().shape)
    check_raises(lambda t: t.nn.UninitializedParameter() + 1, match_message=False)  # torch names the function
    check_raises(lambda t: t.nn.LazyConv1d(2, 2)(t.ones(2, 2, 2, 2)))
    check_raises(lambda t: t.nn.LazyConv2d(4, 3, groups=2)(t.ones(1, 3, 5, 5)))


def test_adaptive_log_softmax_with_loss() -> None:
    def run(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        m = t.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
        x = t.randn(5, 8, requires_grad=True)
        out, loss = m(x, t.tensor([0, 4, 9, 2, 7]))
        loss.backward()
        single = m(x[0].detach(), t.tensor(8))
        meta = (repr(m), [list(p.shape) for p in m.parameters()], out.grad_fn.name(), loss.grad_fn.name(),
                m.predict(x.detach()).tolist())  # fmt: skip
        values = [out, loss, x.grad, m.tail[1][1].weight.grad, m.log_prob(x.detach()), single.output, single.loss]
        return meta, np.concatenate([v.detach().double().numpy().ravel() for v in values])

    (ref_meta, ref), (meta, got) = both(run)
    assert meta == ref_meta
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    for bad in (lambda t, m: m(t.zeros(5, 8), t.tensor([0, 10, 1, 1, 1])), lambda t, m: m(t.zeros(5, 8), t.tensor([1])),
                lambda t, m: m(t.zeros(5, 8), t.zeros(1, 5, dtype=t.long)),
                lambda t, m: t.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])):  # fmt: skip
        check_raises(lambda t: bad(t, t.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6])))


def test_fractional_max_pool() -> None:
    """Windows from the same generator draws, torch's interval arithmetic, first-max/last-NaN picks and
    the gradient routed to the picked elements."""

    def run(t):  # noqa: ANN001, ANN202
        F = t.nn.functional
        t.manual_seed(0)
        x = t.randn(2, 3, 9, 11, requires_grad=True)
        y, idx = F.fractional_max_pool2d(x, 3, output_ratio=(0.5, 0.5), return_indices=True)
        (y * t.arange(20.0).view(4, 5)).sum().backward()
        m = t.nn.FractionalMaxPool2d((2, 3), output_size=(4, 5))
        pooled = m(t.arange(2 * 7 * 8.0).view(2, 7, 8))
        v3, i3 = F.fractional_max_pool3d(t.randn(1, 2, 7, 8, 9), 2, output_size=(3, 4, 5), return_indices=True)
        nan = float("nan")
        xn = t.tensor([[[1.0, nan, 2.0, nan], [-float("inf")] * 4, [5.0, 5.0, 5.0, 1.0]]])
        vn, i_n = F.fractional_max_pool2d(xn, 2, output_size=(2, 2), _random_samples=t.tensor([[[0.3, 0.9]]]),
                                          return_indices=True)  # fmt: skip
        return (repr(m), y.grad_fn.name(), idx.tolist(), x.grad.tolist(), pooled.tolist(), i3.tolist(),
                round(float(v3.sum()), 4), str(vn.tolist()), i_n.tolist())  # fmt: skip

    same(run)
    for bad in ("F.fractional_max_pool2d(x, 3)", "F.fractional_max_pool2d(x, 3, output_ratio=0.5)",
                "F.fractional_max_pool2d(x, 6, output_size=5)", "F.fractional_max_pool2d(x[0, 0, 0], 2, output_size=2)",
                "t.nn.FractionalMaxPool2d(2, output_ratio=1.5)", "t.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)",
                "t.nn.FractionalMaxPool3d(2)", "F.fractional_max_pool3d(x, 2, output_size=(3, 4, 10))",
                "F.fractional_max_pool3d(x, 3, output_size=(1, 4, 5))"):  # fmt: skip
        check_raises(eval(f"lambda t, x: (lambda F: {bad})(t.nn.functional)"), [np.zeros((2, 3, 9, 11), "float32")])  # noqa: S307
