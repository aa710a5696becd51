"""torch's public module paths (torch.nn.modules.linear, ...) are real modules under torchlike, and whole
models pickled by one library load in the other (torch.save(model), load(weights_only=False))."""

from __future__ import annotations

import importlib
import inspect
import io
import pkgutil

import numpy as np
import pytest
import torch
import torch.nn.modules as torch_modules

import torchlike

# public classes of torch.nn.modules.* that torchlike lacks, and why
_NOT_PROVIDED = {
    ("container", "Container"): "deprecated since torch 1.0",
    ("loss", "LinearCrossEntropyLoss"): "not implemented in torchlike yet",
    ("normalization", "CrossMapLRN2d"): "not implemented in torchlike yet",
}
_NO_MODULE = {"linear_cross_entropy", "linear_cross_entropy_options"}  # torch 2.13's new fused loss: not yet
_PUBLIC = sorted(m.name for m in pkgutil.iter_modules(torch_modules.__path__) if not m.name.startswith("_"))


def _classes(module: object) -> list[str]:
    return sorted(n for n, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__)


def _with_classes(name: str) -> bool:
    return name not in _NO_MODULE and bool(_classes(importlib.import_module(f"torch.nn.modules.{name}")))


@pytest.mark.parametrize("name", [n for n in _PUBLIC if _with_classes(n)])
def test_module_path_has_torchs_classes(name: str) -> None:
    ref = importlib.import_module(f"torch.nn.modules.{name}")
    mod = importlib.import_module(f"torchlike.nn.modules.{name}")
    for cls in _classes(ref):
        if (name, cls) in _NOT_PROVIDED or (cls.startswith("_") and not hasattr(mod, cls)):
            continue  # torch's private helpers: checked where torchlike has them
        obj = getattr(mod, cls)
        assert obj.__module__ == f"torchlike.nn.modules.{name}", f"{cls}.__module__ is {obj.__module__}"
        if not cls.startswith("_"):
            assert getattr(torchlike.nn, cls, obj) is obj, f"torchlike.nn.{cls} is another class"
    assert sorted(getattr(mod, "__all__", [])) == sorted(
        n for n in getattr(ref, "__all__", []) if (name, n) not in _NOT_PROVIDED and hasattr(mod, n)
    )


def _model(t):  # noqa: ANN001, ANN202
    nn = t.nn
    t.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.2),
        nn.ConvTranspose2d(4, 4, 2, stride=2), nn.GroupNorm(2, 4), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
        nn.Linear(16, 8), nn.LayerNorm(8), nn.GELU(), nn.Unflatten(1, (2, 4)), nn.Identity(), nn.Flatten(),
        nn.Linear(8, 3, bias=False), nn.LogSoftmax(dim=1),
    )  # fmt: skip


def _recurrent(t):  # noqa: ANN001, ANN202
    nn = t.nn
    t.manual_seed(0)
    return nn.ModuleDict({
        "emb": nn.Embedding(7, 3, padding_idx=0), "lstm": nn.LSTM(3, 4, num_layers=2, batch_first=True),
        "gru": nn.GRU(4, 4, bidirectional=True), "enc": nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
    })  # fmt: skip


def _run(t, m, x):  # noqa: ANN001, ANN202
    m.eval()
    with t.no_grad():
        if isinstance(m, t.nn.Sequential):
            return [m(t.tensor(x["img"]))]
        h = m["emb"](t.tensor(x["ids"]))
        out, _ = m["lstm"](h)
        out2, _ = m["gru"](out)
        return [out, out2, m["enc"](out2)]


_INPUTS = {"img": np.random.RandomState(0).randn(2, 3, 4, 4).astype(np.float32),
           "ids": np.array([[1, 2, 3, 0], [4, 5, 6, 1]])}  # fmt: skip


@pytest.mark.parametrize("build", [_model, _recurrent], ids=["cnn", "recurrent"])
def test_whole_model_saved_by_torch_loads(build) -> None:  # noqa: ANN001
    ref = build(torch)
    buf = io.BytesIO()
    torch.save(ref, buf)
    buf.seek(0)
    got = torchlike.load(buf, weights_only=False)
    assert type(got).__module__ == "torchlike." + type(ref).__module__.removeprefix("torch.")
    assert repr(got) == repr(ref)
    for r, g in zip(_run(torch, ref, _INPUTS), _run(torchlike, got, _INPUTS)):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("build", [_model, _recurrent], ids=["cnn", "recurrent"])
def test_whole_model_saved_by_torchlike_loads_in_torch(build) -> None:  # noqa: ANN001
    ours = build(torchlike)
    buf = io.BytesIO()
    torchlike.save(ours, buf)
    buf.seek(0)
    got = torch.load(buf, weights_only=False)
    assert repr(got) == repr(ours)
    for r, g in zip(_run(torchlike, ours, _INPUTS), _run(torch, got, _INPUTS)):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-5)
    # only torch's public paths are named
    raw = buf.getvalue()
    assert b"torchlike" not in raw and b"torch.nn.modules._" not in raw


def test_modules_utils() -> None:
    from collections import OrderedDict

    import torch.nn.modules.utils as theirs

    import torchlike.nn.modules.utils as ours

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4]):
            assert getattr(ours, name)(arg) == getattr(theirs, name)(arg)
        assert getattr(ours, name).__name__ == name
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 5], [1, 2, 3]) == theirs._list_with_default([None, 5], [1, 2, 3])
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        ours._list_with_default([None, 5], [1, 2])

    def stripped(mod, t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        sd = t.nn.DataParallel(t.nn.Linear(2, 2)).state_dict() if t is torch else None
        sd = OrderedDict((f"module.{k}", v) for k, v in t.nn.Linear(2, 2).state_dict().items()) if sd is None else sd
        sd._metadata = OrderedDict([("", {}), ("module", {"version": 1})])
        mod.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd), list(sd._metadata)

    assert stripped(ours, torchlike) == stripped(theirs, torch)


def test_path_modules_do_not_leak_into_nn() -> None:
    import types

    def submodules(nn):  # noqa: ANN001, ANN202
        return {n for n in dir(nn) if not n.startswith("_") and isinstance(getattr(nn, n), types.ModuleType)}

    assert submodules(torchlike.nn) <= submodules(torch.nn)
    assert torchlike.nn.utils.__name__ == "torchlike.nn.utils"


_USER_MODEL = """
import sys
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 2, bias=False)

    def forward(self, x):
        return self.head(self.body(x))


torch.manual_seed(0)
path, mode = sys.argv[1], sys.argv[2]
if mode == "save":
    torch.save(Net(), path)
model = torch.load(path, weights_only=False)
print(type(model).__name__, type(model.body[0]))
print(model(torch.arange(6.0).view(2, 3)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("saver", ["torch", "torchlike"])
def test_user_model_pickled_across_libraries(tmp_path, saver: str) -> None:  # noqa: ANN001
    """A script's own Module subclass (pickled as __main__.Net) saved by one library, loaded by the other."""
    import os
    import subprocess
    import sys

    script = tmp_path / "user_model.py"
    script.write_text(_USER_MODEL)
    ckpt = str(tmp_path / "model.pt")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}
    plain = [sys.executable, str(script)]
    aliased = [sys.executable, "-m", "torchlike", "run", str(script)]
    first, second = (plain, aliased) if saver == "torch" else (aliased, plain)
    out1 = subprocess.run([*first, ckpt, "save"], capture_output=True, text=True, env=env, timeout=300)
    assert out1.returncode == 0, out1.stderr
    out2 = subprocess.run([*second, ckpt, "load"], capture_output=True, text=True, env=env, timeout=300)
    assert out2.returncode == 0, out2.stderr
    assert out2.stdout == out1.stdout
