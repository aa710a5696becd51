"""`python -m torchlike compare --trace`: the op log's comparison, and the torchlike side's tracer.

No real torch here: the comparison runs on hand-made records, and the tracer runs a script under
`python -m torchlike run` with the trace variable set (the torch side is tested in
compat_tests/test_compare_trace.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from torchlike._cli import _parse_compare, main
from torchlike.compat import _tracelog as T

REPO = Path(__file__).resolve().parents[1]


def _value(values: list | np.ndarray, dtype: str = "torch.float32", shape: tuple | None = None) -> dict:
    arr = np.asarray(values, dtype=np.float64)
    return T.value_record(dtype, arr.reshape(shape) if shape is not None else arr)


def _rec(i: int, name: str, *outs: dict, ins: str | None = "same", where: str = "s.py:1") -> dict:
    return {"i": i, "name": name, "where": where, "outs": list(outs), "ins": ins}


# ---- tolerances ----


def test_float32_tolerance_is_a_few_ulps() -> None:
    eps = float(np.finfo(np.float32).eps)
    x = np.array([1.0, 2.0, -3.0, 0.5])
    assert T.compare_values(_value(x), _value(x * (1 + 4 * eps))).ok
    d = T.compare_values(_value(x), _value(x * (1 + 64 * eps)))
    assert not d.ok and d.max_rel == pytest.approx(64 * eps, rel=1e-3) and d.rtol == 16 * eps
    assert T.compare_values(_value(x), _value(x * (1 + 64 * eps)), ulps=100).ok


def test_low_precision_and_integer_tolerances() -> None:
    assert T.rtol_for("torch.bfloat16") == 4 * 2.0**-7
    assert T.rtol_for("torch.float16") == 4 * float(np.finfo(np.float16).eps)
    assert T.rtol_for("torch.int64") == 0 and T.rtol_for("torch.bool") == 0
    assert T.compare_values(_value([1.0, 2.0], "torch.bfloat16"), _value([1.01, 2.0], "torch.bfloat16")).ok
    assert not T.compare_values(_value([1, 2], "torch.int64"), _value([1, 3], "torch.int64")).ok
    assert T.compare_values(_value([1, 2], "torch.int64"), _value([1, 2], "torch.int64")).max_rel == 0


def test_small_elements_are_judged_on_the_tensors_scale_and_specials_match() -> None:
    # 1e-7 of a near-zero element (a sum that cancelled) is rounding on a tensor whose values are ~1
    assert T.compare_values(_value([1.0, -1.0, 1e-9]), _value([1.0, -1.0, 1e-9 + 1e-7])).ok
    nan, inf = float("nan"), float("inf")
    assert T.compare_values(_value([nan, inf, -inf, 1.0]), _value([nan, inf, -inf, 1.0])).ok
    d = T.compare_values(_value([nan, 1.0]), _value([0.0, 1.0]))
    assert not d.ok and d.max_abs == inf
    assert "shape (2,) vs (3,)" in T.compare_values(_value([1, 2]), _value([1, 2, 3])).reason
    assert "dtype" in T.compare_values(_value([1.0]), _value([1.0], "torch.float64")).reason


def test_large_tensors_are_sampled_and_their_sums_checked() -> None:
    big = np.linspace(-1, 1, T.FULL_LIMIT * 3)
    rec = _value(big)
    assert not rec["full"] and rec["values"].size == T.SAMPLE
    assert rec["values"][0] == big[0] and rec["values"][-1] == big[-1]
    other = big.copy()
    other[1] += 0.5  # not in the sample: the sums tell
    assert 1 not in T.sample_indices(big.size)
    assert not T.compare_values(rec, _value(other)).ok
    assert T.compare_values(rec, _value(big.copy())).ok


def test_outputs_of_one_call_share_a_scale() -> None:
    # an optimizer step's gradients: a bias before a norm layer has a zero gradient up to rounding noise
    weights, noise = [0.5, -0.25, 0.125], [1e-9, -2e-9]
    a = _rec(0, "SGD.step:grads", _value(weights), _value(noise))
    b = _rec(0, "SGD.step:grads", _value(weights), _value([-1e-9, 1e-9]))
    assert all(d.ok for d in T.compare_records(a, b))
    assert not T.compare_values(_value(noise), _value([-1e-9, 1e-9])).ok  # on its own scale it is all noise


# ---- alignment ----


def test_operator_names_align_with_torchs() -> None:
    names = {"Tensor.__add__": "add", "Tensor.__radd__": "add", "Tensor.__iadd__": "add_", "torch.add": "add",
             "Tensor.__pow__": "pow", "Tensor.__rsub__": "rsub", "Tensor.__getitem__": "getitem", "F.relu": "relu",
             "Tensor.__neg__": "neg", "Tensor.__truediv__": "div", "Tensor.__rtruediv__": "rdiv"}  # fmt: skip
    for name, key in names.items():
        assert T.key({"name": name}) == key, name


def test_compare_logs_finds_first_divergences() -> None:
    x = [1.0, 2.0, 3.0]
    a = [_rec(0, "torch.randn", _value(x)), _rec(1, "Tensor.mul", _value(x), ins="h1"),
         _rec(2, "F.relu", _value(x), ins="h2"), _rec(3, "nn.Linear", _value(x), ins="h3"),
         _rec(4, "Tensor.sum", _value([6.0]), ins="h4")]  # fmt: skip
    b = [_rec(0, "torch.randn", _value(x)), _rec(1, "Tensor.__mul__", _value([1.0, 2.0, 3.0003]), ins="h1"),
         _rec(2, "F.relu", _value([1.0, 2.0, 3.0003]), ins="other"), _rec(3, "nn.Linear", _value([1.0, 2.1, 3.0]), ins="h3"),
         _rec(4, "Tensor.sum", _value([6.1]), ins="h4")]  # fmt: skip
    result = T.compare_logs(a, b)
    assert result.matched == 4  # stops once every kind of first is found
    assert result.first_inexact.a["i"] == 1
    assert result.first.a["i"] == 1 and result.first.same_inputs  # 1e-4 relative: beyond 16 ulps of float32
    assert result.first_local.a["i"] == 1
    assert result.first_large.a["i"] == 3  # 0.1 / 2.1 relative
    text = T.format_comparison(result)
    assert "FIRST DIVERGENCE: op #1 under torch, #1 under torchlike: Tensor.mul" in text
    assert "bit-identical in both runs, so this op itself computes differently" in text
    assert "FIRST DIFFERENCE ABOVE 0.001 RELATIVE: op #3" in text


def test_compare_logs_resynchronises_after_extra_ops() -> None:
    v = _value([1.0])
    a = [_rec(i, n, v) for i, n in enumerate(["randn", "mul", "add", "relu", "sum", "mean"])]
    b = [_rec(i, n, v) for i, n in enumerate(["randn", "mul", "unsqueeze", "squeeze", "add", "relu", "sum", "mean"])]
    result = T.compare_logs(a, b)
    assert result.matched == 6 and result.first is None and result.lost is None
    assert [(side, [r["name"] for r in recs]) for side, recs in result.skipped] == [
        ("torchlike", ["unsqueeze", "squeeze"])
    ]
    assert not result.ok
    assert "only under torchlike: #2 unsqueeze (s.py:1), #3 squeeze (s.py:1)" in T.format_comparison(result)
    lost = T.compare_logs(a, [_rec(i, f"other{i}", v) for i in range(6)])
    assert lost.lost is not None and "could not be realigned" in T.format_comparison(lost)


def test_compare_logs_of_equal_runs() -> None:
    a = [_rec(i, "Tensor.add", _value([float(i)])) for i in range(5)]
    result = T.compare_logs(a, [dict(r) for r in a])
    assert result.ok and result.matched == 5 and result.first_inexact is None
    assert "no op differs beyond its dtype's tolerance" in T.format_comparison(result)


def test_log_writer_bounds_and_reader_survives_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "log"
    writer = T.LogWriter(str(path), max_ops=3)
    for i in range(5):
        writer.write(f"op{i}", "s.py:1", [_value([i])], None)
    writer.close()
    assert [r["name"] for r in T.read_log(str(path))] == ["op0", "op1", "op2"]
    data = path.read_bytes()
    path.write_bytes(data[:-5])  # a run killed while writing
    assert [r["name"] for r in T.read_log(str(path))] == ["op0", "op1"]
    assert T.read_log(str(tmp_path / "missing")) == []


# ---- the torchlike side ----

_TRACED = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(2, 3)
y = F.softmax(net(x) * 2, dim=1)
loss = (y - 1).pow(2).mean()
loss.backward()
opt.step()
x[0] = 1.0
x.add_(1)
print(round(loss.item(), 4), torch.cat([x, x]).shape)
"""


@pytest.mark.slow
def test_torchlike_tracer_logs_user_level_calls(tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text(_TRACED)
    log = tmp_path / "trace.log"
    env = dict(os.environ, TORCHLIKE_TRACE=str(log), TORCHLIKE_TRACE_MAX_OPS="100")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run([sys.executable, "-m", "torchlike", "run", "s.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    records = T.read_log(str(log))
    got = [(r["name"], r["where"]) for r in records]
    assert got == [
        ("torch.randn", "s.py:8"),
        ("nn.Linear", "s.py:9"),  # modules a container calls: logged, at the user's line
        ("nn.ReLU", "s.py:9"),
        ("nn.Sequential", "s.py:9"),
        ("Tensor.__mul__", "s.py:9"),
        ("F.softmax", "s.py:9"),
        ("Tensor.__sub__", "s.py:10"),
        ("Tensor.pow", "s.py:10"),
        ("Tensor.mean", "s.py:10"),  # backward: no tensor result; its own ops are not the user's
        ("SGD.step:grads", "s.py:12"),
        ("SGD.step", "s.py:12"),
        ("Tensor.__setitem__", "s.py:13"),  # in-place ops log the changed tensor
        ("Tensor.add_", "s.py:14"),
        ("Tensor.item", "s.py:15"),
        ("torch.cat", "s.py:15"),
    ], got
    step = records[9]
    assert [v["shape"] for v in step["outs"]] == [(4, 3), (4,)]  # one value per parameter
    assert records[11]["outs"][0]["values"][:3].tolist() == [1.0, 1.0, 1.0]
    assert records[13]["outs"][0]["shape"] == () and records[13]["outs"][0]["dtype"] == "torch.float32"
    assert records[4]["ins"] is not None and records[4]["ins"] != records[5]["ins"]


def test_compare_trace_options() -> None:
    assert _parse_compare(["--trace", "s.py", "--max-ops", "50", "--ulps=8"]) == (
        {"--trace": "1", "--max-ops": "50", "--ulps": "8"},
        "s.py",
        [],
    )


def test_compare_trace_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    assert main(["compare", str(script), "--max-ops", "5"]) == 2
    assert "--max-ops and --ulps go with --trace" in capsys.readouterr().err
    assert main(["compare", "--trace", str(script), "--max-ops", "x"]) == 2
    assert "invalid int value" in capsys.readouterr().err
