"""torchlike.serialization on its own: round trips, storage sharing, containers, map_location, format."""

import copy
import io
import os
import pathlib
import pickle
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import torchlike as tl
from torchlike.serialization import load, save

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64", "complex128"]  # fmt: skip


def _tensor(dtype: str, shape=(3, 4)) -> tl.Tensor:
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * 1.5 - 4
    if dtype == "bool":
        return tl.tensor(a > 0)
    if dtype.startswith("complex"):
        return tl.tensor(a + 1j * a[::-1], dtype=getattr(tl, dtype))
    if dtype.startswith("u"):
        a = np.abs(a) * 3
    return tl.tensor(a).to(getattr(tl, dtype))


def _bytes(t: tl.Tensor) -> bytes:
    return np.asarray(t.contiguous()._data()).tobytes()


def _roundtrip(obj, **kw):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **kw)


def _same(a: tl.Tensor, b: tl.Tensor) -> None:
    assert a.dtype is b.dtype and a.shape == b.shape
    assert a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
    assert _bytes(a) == _bytes(b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips_bit_exact(dtype):
    x = _tensor(dtype)
    got = _roundtrip({"x": x, "view": x[1:, ::2], "t": x.t(), "scalar": x[1, 2], "empty": x[:0]})
    _same(got["x"], x)
    _same(got["view"], x[1:, ::2])
    _same(got["t"], x.t())
    _same(got["scalar"], x[1, 2])
    assert got["empty"].shape == (0, 4) and got["empty"].dtype is x.dtype


def test_special_float_values_are_kept():
    x = tl.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-45], dtype=tl.float32)
    assert _bytes(_roundtrip(x)) == _bytes(x)


def test_views_share_one_storage_record_and_memory_after_load():
    x = tl.arange(12, dtype=tl.float32).reshape(3, 4)
    buf = io.BytesIO()
    save([x, x[1], x.t(), x.detach()], buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]
    buf.seek(0)
    a, row, at, alias = load(buf)
    assert row.storage_offset() == 4 and at.stride() == (1, 4)
    a[1, 0] = 100.0
    assert row[0].item() == 100.0 and at[0, 1].item() == 100.0 and alias[1, 0].item() == 100.0
    assert a.untyped_storage().data_ptr() == row.untyped_storage().data_ptr()


def test_view_saved_before_its_base_still_shares():
    x = tl.arange(6, dtype=tl.int64)
    v, base = _roundtrip([x[2:], x])
    base[3] = -7
    assert v[1].item() == -7 and v.storage_offset() == 2


def test_a_view_alone_saves_its_whole_base_buffer():
    x = tl.arange(10, dtype=tl.float64)
    buf = io.BytesIO()
    save(x[3:5], buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    assert len(z.read("archive/data/0")) == 10 * 8
    buf.seek(0)
    v = load(buf)
    assert v.tolist() == [3.0, 4.0] and v.storage_offset() == 3


def test_requires_grad_and_tensor_attributes():
    w = tl.ones(2, requires_grad=True)
    t = tl.zeros(3)
    t.note = "hi"
    got = _roundtrip({"w": w, "t": t})
    assert got["w"].requires_grad and got["w"].is_leaf
    assert got["t"].note == "hi" and not got["t"].requires_grad


def test_parameter_round_trip():
    from torchlike.nn.parameter import Parameter

    p = Parameter(tl.arange(4, dtype=tl.float32))
    got = _roundtrip(OrderedDict(weight=p))
    assert isinstance(got["weight"], Parameter) and got["weight"].requires_grad
    assert got["weight"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_state_dict_metadata_and_optimizer_state():
    sd = OrderedDict([("0.weight", tl.ones(2, 3)), ("0.bias", tl.zeros(2))])
    sd._metadata = OrderedDict([("", {"version": 1}), ("0", {"version": 1})])
    opt = {"state": {0: {"step": tl.tensor(3.0), "exp_avg": tl.full((2, 3), 0.5)}},
           "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "params": [0, 1], "foreach": None}]}  # fmt: skip
    ckpt = {"epoch": 7, "loss": 0.25, "model": sd, "optim": opt, "names": ["a", "b"], "flags": {1, 2},
            "blob": b"\x00\x01", "c": 1 + 2j, "dt": tl.float16, "dev": tl.device("cpu"), "shape": tl.Size([2, 3])}  # fmt: skip
    got = _roundtrip(ckpt)
    assert type(got["model"]) is OrderedDict and got["model"]._metadata == sd._metadata
    assert list(got["model"]) == ["0.weight", "0.bias"]
    assert got["optim"]["state"][0]["step"].item() == 3.0
    assert got["optim"]["param_groups"] == opt["param_groups"]
    assert (got["epoch"], got["loss"], got["names"], got["flags"], got["blob"], got["c"]) == (
        7,
        0.25,
        ["a", "b"],
        {1, 2},
        b"\x00\x01",
        1 + 2j,
    )
    assert got["dt"] is tl.float16 and got["dev"] == tl.device("cpu") and type(got["shape"]) is tl.Size


class Plain:
    def __init__(self, a):
        self.a = a


def test_plain_objects_need_weights_only_false():
    obj = {"p": Plain(tl.ones(2))}
    got = _roundtrip(obj, weights_only=False)
    assert isinstance(got["p"], Plain) and got["p"].a.tolist() == [1.0, 1.0]
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL test_serialization.Plain"):
        _roundtrip(obj)


def test_safe_globals_allow_a_class():
    obj = Plain(3)
    with tl.serialization.safe_globals([Plain]):
        assert _roundtrip(obj).a == 3
    with pytest.raises(pickle.UnpicklingError):
        _roundtrip(obj)


def test_weights_only_error_text_is_torchs():
    with pytest.raises(pickle.UnpicklingError) as e:
        _roundtrip(Plain(1))
    msg = str(e.value)
    assert msg.startswith("Weights only load failed. This file can still be loaded")
    assert "weights_only` set to `False` will likely succeed" in msg


class _MakesFile:
    path = ""

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_malicious_pickle_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    _MakesFile.path = str(marker)
    # a checkpoint whose pickle would create a file when unpickled
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": _MakesFile()}, protocol=2))
        z.writestr("archive/version", "3\n")
    payloads = [raw.getvalue()]
    # and one through os.system, hand-written
    cmd = f"touch {marker}".encode()
    payloads.append(b"\x80\x02cposix\nsystem\nq\x00X" + struct.pack("<I", len(cmd)) + cmd + b"\x85R.")
    for p in payloads:
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            load(io.BytesIO(p))
        assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError, match="whose module posix is blocked"):
        load(io.BytesIO(payloads[1]))
    assert not marker.exists()


def test_weights_only_refuses_calls_on_smuggled_objects():
    bad = b"\x80\x02ccollections\nOrderedDict\n)R}b."  # BUILD of a plain dict state is allowed on OrderedDict
    assert load(_as_checkpoint(bad)) == OrderedDict()
    evil = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}b."  # BUILD on a function: refused
    with pytest.raises(pickle.UnpicklingError, match="Can only build"):
        load(_as_checkpoint(evil))


def _as_checkpoint(pkl: bytes) -> io.BytesIO:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", "3\n")
    raw.seek(0)
    return raw


def test_paths_pathlib_and_archive_name(tmp_path):
    x = tl.arange(3)
    p = tmp_path / "my.model.pt"
    save(x, p)
    assert zipfile.ZipFile(p).namelist()[0] == "my.model/data.pkl"
    assert load(p).tolist() == [0, 1, 2]
    assert load(str(p)).tolist() == [0, 1, 2]
    with open(p, "rb") as fh:
        assert load(fh).tolist() == [0, 1, 2]
    assert oct(os.stat(p).st_mode & 0o777) != "0o600"  # not the temporary file's private mode


def test_records_are_64_byte_aligned():
    buf = io.BytesIO()
    save([tl.ones(3), tl.zeros(5, dtype=tl.float64), tl.tensor([True])], buf)
    raw = buf.getvalue()
    for info in zipfile.ZipFile(io.BytesIO(raw)).infolist():
        name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
    names = [i.filename for i in zipfile.ZipFile(io.BytesIO(raw)).infolist()]
    assert names == ["archive/data.pkl", "archive/.format_version", "archive/.storage_alignment", "archive/byteorder",
                     "archive/data/0", "archive/data/1", "archive/data/2", "archive/version",
                     "archive/.data/serialization_id"]  # fmt: skip


def test_saving_is_deterministic():
    obj = {"a": tl.arange(5), "b": [tl.ones(2)] * 2}
    b1, b2 = io.BytesIO(), io.BytesIO()
    save(obj, b1)
    save(obj, b2)
    assert b1.getvalue() == b2.getvalue()


def test_interrupted_save_keeps_the_previous_file(tmp_path, monkeypatch):
    p = tmp_path / "ckpt.pt"
    save({"epoch": 1, "w": tl.ones(4)}, p)
    before = p.read_bytes()
    from torchlike._serialization import _zip

    real = _zip.PyTorchFileWriter.write_record

    def failing(self, name, data, size):
        if name.startswith("data/"):
            raise OSError("disk full (simulated)")
        return real(self, name, data, size)

    monkeypatch.setattr(_zip.PyTorchFileWriter, "write_record", failing)
    with pytest.raises(OSError, match="simulated"):
        save({"epoch": 2, "w": tl.zeros(4)}, p)
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]  # the temporary file is gone
    assert load(p)["epoch"] == 1


def test_unpicklable_object_writes_nothing(tmp_path):
    p = tmp_path / "c.pt"
    with pytest.raises(Exception):
        save({"f": lambda: 0}, p)
    assert not p.exists() and os.listdir(tmp_path) == []


@pytest.mark.parametrize("cut", [0.3, 0.7, 0.99])
def test_truncated_files_raise(cut):
    buf = io.BytesIO()
    save({"w": tl.arange(100, dtype=tl.float32)}, buf)
    raw = buf.getvalue()
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
        load(io.BytesIO(raw[: int(len(raw) * cut)]))


def test_corrupted_data_is_detected():
    buf = io.BytesIO()
    save({"w": tl.arange(100, dtype=tl.float32)}, buf)
    raw = bytearray(buf.getvalue())
    at = raw.find(np.arange(100, dtype=np.float32).tobytes())
    raw[at + 37] ^= 0xFF
    with pytest.raises(RuntimeError, match="CRC-32 check failed"):
        load(io.BytesIO(bytes(raw)))


def test_not_a_checkpoint():
    with pytest.raises(RuntimeError, match="Invalid magic number; corrupt file"):
        load(io.BytesIO(b"\x80\x02K\x05."))  # a pickle, of something else
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):  # no pickle: the unpickler fails
        load(io.BytesIO(b"hello world\n"))
    with pytest.raises(EOFError):
        load(io.BytesIO(b""))
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as z:
        z.writestr("x/foo", "bar")
    with pytest.raises(RuntimeError, match='Expected hasRecord\\("version"\\)'):
        load(io.BytesIO(raw.getvalue()))


def test_map_location_forms():
    x = tl.arange(3, dtype=tl.float32)
    for ml in ["cpu", tl.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s, lambda s, loc: None]:
        got = _roundtrip(x, map_location=ml)
        assert got.device == tl.device("cpu") and got.tolist() == [0.0, 1.0, 2.0]
    seen = []
    _roundtrip([x, x[1:]], map_location=lambda s, loc: seen.append((loc, s.nbytes())))
    assert seen == [("cpu", 12)]


def test_cuda_checkpoint_without_gpu(monkeypatch):
    from torchlike._serialization import _pickler

    if tl.cuda.is_available():
        pytest.skip("this machine has a GPU")
    monkeypatch.setattr(_pickler, "_location", lambda dev: "cuda:0")
    buf = io.BytesIO()
    save({"w": tl.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
        load(buf)
    buf.seek(0)
    assert load(buf, map_location={"cuda:0": "cpu"})["w"].tolist() == [1.0, 1.0]
    buf.seek(0)
    with pytest.raises(RuntimeError, match="don't know how to restore data location"):
        load(buf, map_location="foo")


def test_legacy_format_round_trip():
    x = tl.arange(6, dtype=tl.int16).reshape(2, 3)
    buf = io.BytesIO()
    save({"x": x, "row": x[1], "f": tl.ones(2, dtype=tl.bfloat16)}, buf, _use_new_zipfile_serialization=False)
    assert not buf.getvalue().startswith(b"PK")
    buf.seek(0)
    got = load(buf)
    _same(got["x"], x)
    _same(got["row"], x[1])
    got["x"][1, 1] = 40
    assert got["row"][1].item() == 40


def test_file_object_errors():
    with pytest.raises(AttributeError, match="expected 'f' to be string, path, or a file-like object"):
        save(tl.ones(1), 123)

    class NoSeek(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    with pytest.raises(OSError, match="You can only torch.load from a file that is seekable"):
        load(NoSeek())


def test_mmap_load(tmp_path):
    p = tmp_path / "m.pt"
    save({"a": tl.arange(1000, dtype=tl.float32), "b": tl.ones(3, dtype=tl.int8)}, p)
    got = load(p, mmap=True)
    assert got["a"][999].item() == 999.0 and got["b"].tolist() == [1, 1, 1]
    with pytest.raises(ValueError, match="f must be a file path"):
        load(io.BytesIO(p.read_bytes()), mmap=True)


def test_pickle_and_copy_of_tensors():
    x = tl.arange(6, dtype=tl.float32).reshape(2, 3)
    a, v = pickle.loads(pickle.dumps([x, x[1]]))
    a[1, 1] = 9.0
    assert v.tolist() == [3.0, 9.0, 5.0]
    c = copy.copy(x)
    c[0, 0] = -1.0  # torch: copy.copy shares the storage
    assert x[0, 0].item() == -1.0
    d = copy.deepcopy(x)
    d[0, 0] = 5.0
    assert x[0, 0].item() == -1.0


def test_untyped_storage_api():
    x = tl.tensor([1.0], dtype=tl.float32)
    s = x.untyped_storage()
    assert s.nbytes() == 4 and len(s) == 4 and s.tolist() == [0, 0, 128, 63]
    assert repr(s).endswith("[torch.storage.UntypedStorage(device=cpu) of size 4]")
    assert x.untyped_storage() is s
    got = _roundtrip(s)
    assert got.tolist() == [0, 0, 128, 63]


def test_pathlike_and_non_ascii_names(tmp_path):
    p = tmp_path / "modèle.pt"
    save(tl.ones(1), pathlib.Path(p))
    assert zipfile.ZipFile(p).namelist()[0].startswith("archive/")
    assert load(p).tolist() == [1.0]


def test_weights_only_cannot_set_attributes_on_shared_objects():
    # state may only be set on a freshly rebuilt tensor, never on a shared object such as tl.strided
    pkl = (
        b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ctorch.serialization\n_get_layout\nctorch\nTensor\n"
        b"X\x0d\x00\x00\x00torch.strided\x85}X\x04\x00\x00\x00nameX\x04\x00\x00\x00evilstR."
    )
    with pytest.raises(RuntimeError, match="expected a tensor"):
        load(_as_checkpoint(pkl))
    assert tl.strided.name == "strided"
