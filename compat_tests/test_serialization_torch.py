"""torch.save <-> torchlike.load and torchlike.save <-> torch.load, bit for bit."""

import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.serialization import load, save

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]  # fmt: skip


def _np_values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(len(dtype))
    a = rng.normal(size=(3, 4)) * 50
    if dtype == "bool":
        return a > 0
    if dtype.startswith("complex"):
        return a + 1j * rng.normal(size=(3, 4))
    if dtype.startswith("u"):
        return np.abs(a).astype(np.int64)
    return a


def _torch_tensor(dtype: str) -> torch.Tensor:
    return torch.tensor(_np_values(dtype)).to(getattr(torch, dtype))


def _raw(t) -> bytes:
    """The tensor's elements' bytes, in C order (a view of int16 for bfloat16)."""
    if isinstance(t, torch.Tensor):
        t = t.detach().contiguous()
        return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy().tobytes()
    return np.asarray(t.detach().contiguous()._data()).tobytes()


def _check_same(ref, got, path="obj"):
    if isinstance(ref, torch.Tensor):
        assert isinstance(got, (torch.Tensor, tl.Tensor)), path
        assert str(got.dtype) == str(ref.dtype), path
        assert tuple(got.shape) == tuple(ref.shape), path
        assert tuple(got.stride()) == tuple(ref.stride()) and got.storage_offset() == ref.storage_offset(), (
            path
        )
        assert got.requires_grad == ref.requires_grad, path
        assert _raw(got) == _raw(ref), path
        assert type(got).__name__ == type(ref).__name__, path
    elif isinstance(ref, dict):
        assert type(got).__name__ == type(ref).__name__ and list(got) == list(ref), path
        if hasattr(ref, "_metadata"):
            assert got._metadata == ref._metadata, path
        for k in ref:
            _check_same(ref[k], got[k], f"{path}[{k!r}]")
    elif isinstance(ref, (list, tuple)):
        assert type(got) is type(ref) and len(got) == len(ref), path
        for i, (r, g) in enumerate(zip(ref, got)):
            _check_same(r, g, f"{path}[{i}]")
    else:
        assert got == ref, path


def _torch_dtype_zoo() -> dict:
    out = {}
    for d in DTYPES:
        t = _torch_tensor(d)
        out.update({d: t, d + "/view": t[1:, ::2], d + "/t": t.t(), d + "/0d": t[2, 1], d + "/empty": t[:0],
                    d + "/fresh_empty": torch.zeros(0, 2, dtype=t.dtype)})  # fmt: skip
    return out


def _trained_torch_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 4), torch.randn(16, 2)
    for _ in range(3):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    return model, opt


def _roundtrip_torch_to_torchlike(obj, **kw):
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return load(buf, **kw), buf.getvalue()


def _roundtrip_torchlike_to_torch(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return torch.load(buf, **kw), buf.getvalue()


def test_every_dtype_torch_to_torchlike_and_back_byte_identical():
    zoo = _torch_dtype_zoo()
    got, torch_file = _roundtrip_torch_to_torchlike(zoo)
    _check_same(zoo, got)
    back, our_file = _roundtrip_torchlike_to_torch(got)
    _check_same(zoo, back)
    assert our_file == torch_file  # the whole checkpoint, serialization id included


def test_views_keep_sharing_both_ways():
    x = torch.arange(12.0).reshape(3, 4)
    got, _ = _roundtrip_torch_to_torchlike([x, x[1], x[:, 2]])
    got[0][1, 2] = -5.0
    assert got[1][2].item() == -5.0 and got[2][1].item() == -5.0
    back, _ = _roundtrip_torchlike_to_torch(got)
    assert (
        back[0].untyped_storage().data_ptr()
        == back[1].untyped_storage().data_ptr()
        == back[2].untyped_storage().data_ptr()
    )
    back[0][0, 2] = 42.0
    assert back[2][0].item() == 42.0


def test_trained_model_state_dict_both_ways():
    model, _ = _trained_torch_model()
    sd = model.state_dict()
    got, torch_file = _roundtrip_torch_to_torchlike(sd)
    _check_same(sd, got)
    back, our_file = _roundtrip_torchlike_to_torch(got)
    _check_same(sd, back)
    assert our_file == torch_file
    fresh = torch.nn.Sequential(
        torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 2)
    )
    fresh.load_state_dict(back)
    x = torch.randn(5, 4)
    model.eval(), fresh.eval()
    assert torch.equal(model(x), fresh(x))


def test_optimizer_state_dict_both_ways():
    _, opt = _trained_torch_model()
    sd = opt.state_dict()
    got, torch_file = _roundtrip_torch_to_torchlike(sd)
    _check_same(sd, got)
    assert got["state"][0]["step"].dtype is tl.float32
    back, our_file = _roundtrip_torchlike_to_torch(got)
    _check_same(sd, back)
    assert our_file == torch_file


def test_checkpoint_dict_built_in_torchlike_loads_in_torch():
    w = tl.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=tl.float32)
    model = OrderedDict(
        [("fc.weight", w), ("fc.bias", tl.zeros(3)), ("bn.num_batches_tracked", tl.tensor(5))]
    )
    model._metadata = OrderedDict([("", {"version": 1}), ("fc", {"version": 1}), ("bn", {"version": 2})])
    optim = {"state": {0: {"step": tl.tensor(10.0), "exp_avg": w * 0.1, "exp_avg_sq": w * w}},
             "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
                               "amsgrad": False, "params": [0, 1, 2]}]}  # fmt: skip
    ckpt = {"epoch": 12, "loss": 0.0123, "model": model, "optimizer": optim, "dtype": tl.bfloat16,
            "device": tl.device("cpu"), "shape": tl.Size([3, 4])}  # fmt: skip
    back, our_file = _roundtrip_torchlike_to_torch(ckpt)  # torch's default: weights_only=True
    assert back["epoch"] == 12 and back["loss"] == 0.0123
    assert back["model"]._metadata == model._metadata
    assert torch.equal(
        back["model"]["fc.weight"], torch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=torch.float32)
    )
    assert back["model"]["bn.num_batches_tracked"].dtype == torch.int64
    assert back["optimizer"]["param_groups"] == optim["param_groups"]
    assert (
        back["dtype"] is torch.bfloat16
        and back["device"] == torch.device("cpu")
        and back["shape"] == torch.Size([3, 4])
    )
    # and torch writes the same bytes for the same checkpoint
    again = io.BytesIO()
    torch.save(back, again)
    assert again.getvalue() == our_file


def test_parameters_and_tensor_attributes_both_ways():
    from torchlike.nn.parameter import Parameter

    tp = torch.nn.Parameter(torch.arange(3.0))
    tt = torch.ones(2)
    tt.tag = "x"
    got, torch_file = _roundtrip_torch_to_torchlike(
        {"p": tp, "frozen": torch.nn.Parameter(torch.ones(1), False), "t": tt}
    )
    assert isinstance(got["p"], Parameter) and got["p"].requires_grad and not got["frozen"].requires_grad
    assert got["t"].tag == "x"
    back, our_file = _roundtrip_torchlike_to_torch(got)
    assert isinstance(back["p"], torch.nn.Parameter) and back["p"].requires_grad and back["t"].tag == "x"
    assert our_file == torch_file


def test_torchlike_parameter_saved_from_scratch():
    from torchlike.nn.parameter import Parameter

    back, _ = _roundtrip_torchlike_to_torch([Parameter(tl.ones(2, 2)), tl.ones(1, requires_grad=True)])
    assert type(back[0]) is torch.nn.Parameter and back[0].requires_grad
    assert type(back[1]) is torch.Tensor and back[1].requires_grad


def test_files_on_disk_identical(tmp_path):
    zoo = {"a": torch.arange(10), "b": torch.randn(2, 3).to(torch.bfloat16), "c": [torch.ones(2)] * 3}
    (tmp_path / "t").mkdir()
    (tmp_path / "l").mkdir()
    torch.save(zoo, tmp_path / "t" / "model.ckpt.pt")
    save(load(tmp_path / "t" / "model.ckpt.pt"), tmp_path / "l" / "model.ckpt.pt")
    ours = (tmp_path / "l" / "model.ckpt.pt").read_bytes()
    assert ours == (tmp_path / "t" / "model.ckpt.pt").read_bytes()
    assert zipfile.ZipFile(io.BytesIO(ours)).namelist()[0] == "model.ckpt/data.pkl"


def test_legacy_format_both_ways():
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    obj = {"x": x, "row": x[1], "h": torch.ones(2, dtype=torch.float16), "n": 3}
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    got = load(buf)
    _check_same(obj, got)
    buf2 = io.BytesIO()
    save(got, buf2, _use_new_zipfile_serialization=False)
    buf2.seek(0)
    _check_same(obj, torch.load(buf2))


class Thing:
    pass


@pytest.mark.parametrize(
    "obj",
    [
        {"f": np.float64(1.0)},
        {"thing": Thing()},
        {"fn": len},
        {"o": OrderedDict, "c": complex, "s": {1, 2}, "b": bytearray(b"x"), "by": b"\x00"},
    ],  # fmt: skip
    ids=["numpy_scalar", "user_class", "builtin_function", "allowed"],
)
def test_weights_only_matches_torch(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    raw = buf.getvalue()
    results = []
    for loader in (torch.load, load):
        try:
            results.append(loader(io.BytesIO(raw)))
        except pickle.UnpicklingError as e:
            results.append(e)
    ref, got = results
    if not isinstance(ref, Exception):
        assert got == ref
        return
    assert isinstance(got, pickle.UnpicklingError)
    assert str(got).splitlines()[0] == str(ref).splitlines()[0]
    assert str(got).split("WeightsUnpickler error: ")[-1] == str(ref).split("WeightsUnpickler error: ")[-1]


def test_malicious_checkpoint_refused_by_both(tmp_path):
    marker = tmp_path / "created"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    buf = io.BytesIO()
    torch.save({"w": torch.ones(1), "evil": Evil()}, buf)
    raw = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError) as ours:
        load(io.BytesIO(raw))
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(io.BytesIO(raw))
    assert not marker.exists()
    assert str(ours.value) == str(theirs.value)


def test_map_location_callable_sees_torchs_location_tags():
    seen_t, seen_l = [], []
    x = torch.arange(4.0)
    buf = io.BytesIO()
    torch.save([x, x[2:]], buf)
    raw = buf.getvalue()
    torch.load(io.BytesIO(raw), map_location=lambda s, loc: seen_t.append((loc, s.nbytes())))
    load(io.BytesIO(raw), map_location=lambda s, loc: seen_l.append((loc, s.nbytes())))
    assert seen_t == seen_l


def test_truncated_torch_file_error_matches():
    buf = io.BytesIO()
    torch.save({"w": torch.arange(50.0)}, buf)
    raw = buf.getvalue()[:-30]
    with pytest.raises(RuntimeError) as theirs:
        torch.load(io.BytesIO(raw))
    with pytest.raises(RuntimeError) as ours:
        load(io.BytesIO(raw))
    assert str(ours.value) == str(theirs.value)


def test_weights_only_false_whole_objects():
    buf = io.BytesIO()
    torch.save(
        {"size": torch.Size([2]), "dev": torch.device("cpu"), "layout": torch.strided, "slice": slice(1, 2)},
        buf,
    )
    buf.seek(0)
    got = load(buf, weights_only=False)
    assert got["size"] == tl.Size([2]) and got["dev"] == tl.device("cpu") and got["layout"] is tl.strided
    assert got["slice"] == slice(1, 2)


def test_big_endian_checkpoint():
    x = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float32)
    c = torch.tensor([1 + 2j], dtype=torch.complex64)
    buf = io.BytesIO()
    torch.save([x, c], buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as w:  # rewrite as a big-endian machine would have
        for name in z.namelist():
            data = z.read(name)
            if name.endswith("byteorder"):
                data = b"big"
            elif name.endswith("data/0"):
                data = np.frombuffer(data, "<f4").astype(">f4").tobytes()
            elif name.endswith("data/1"):
                data = np.frombuffer(data, "<c8").astype(">c8").tobytes()
            w.writestr(name, data)
    out.seek(0)
    got = load(out)
    assert got[0].tolist() == [1.5, -2.0, 3.25] and got[1].tolist() == [1 + 2j]


def test_storage_offsets_follow_miniz_layout(tmp_path):
    # torch's mmap loader computes record offsets from miniz's layout; they must hold for our files
    from torch.utils.serialization import config

    obj = {f"t{i}": tl.arange(i * 7 + 1, dtype=tl.float32) for i in range(6)}
    save(obj, tmp_path / "c.pt")
    old = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    try:
        got = torch.load(tmp_path / "c.pt", mmap=True)
    finally:
        config.load.calculate_storage_offsets = old
    for i in range(6):
        assert torch.equal(got[f"t{i}"], torch.arange(i * 7 + 1, dtype=torch.float32))


def test_lazy_conj_and_neg_bits_are_resolved():
    z = torch.tensor([1 + 2j, 3 - 1j])
    obj = {"conj": z.conj(), "neg": torch.tensor([1.0, -2.0])._neg_view()}
    got, _ = _roundtrip_torch_to_torchlike(obj)
    assert got["conj"].tolist() == z.conj().resolve_conj().tolist()
    assert got["neg"].tolist() == [-1.0, 2.0]


def test_numpy_shared_and_reinterpreted_tensors_load_in_torch():
    a = np.arange(6, dtype=np.float32).reshape(2, 3).T  # a non-contiguous numpy array shared with the tensor
    t = tl.from_numpy(a)
    x = tl.arange(4, dtype=tl.float32)
    back, _ = _roundtrip_torchlike_to_torch([t, t[1], x.view(tl.int32)])
    assert back[0].tolist() == a.tolist() and back[1].tolist() == [1.0, 4.0]
    assert torch.equal(back[2], torch.arange(4, dtype=torch.float32).view(torch.int32))
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        save([x, x.view(tl.int32)], io.BytesIO())
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        z = torch.zeros(2)
        torch.save([z, z.view(torch.int32)], io.BytesIO())


def test_save_path_errors_match(tmp_path):
    for target in (tmp_path, tmp_path / "missing" / "x.pt"):
        msgs = []
        for saver, value in ((torch.save, torch.ones(1)), (save, tl.ones(1))):
            with pytest.raises(RuntimeError) as e:
                saver(value, target)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
