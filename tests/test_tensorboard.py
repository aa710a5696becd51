"""torchlike.utils.tensorboard: event files read back with TensorBoard's own EventAccumulator."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import torchlike as tl

tb = pytest.importorskip("tensorboard", reason="the optional `tensorboard` package is not installed")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from torchlike.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "scalars": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_scalars_histograms_text_read_back(tmp_path):
    with SummaryWriter(tmp_path / "run") as w:
        for step in range(4):
            w.add_scalar("loss", tl.tensor(1.0 / (step + 1)), step, walltime=100.0 + step)
        w.add_scalar("lr", 0.5, 0, walltime=1.0)
        w.add_scalar("acc", np.float32(0.75), 3, walltime=1.0, new_style=True)
        w.add_histogram("weights", tl.arange(100, dtype=tl.float32) / 10, 2, walltime=1.0)
        w.add_histogram("bf16", tl.ones(5, dtype=tl.bfloat16), 0, walltime=1.0)
        w.add_text("note", "hello <b>world</b>", 1, walltime=1.0)
    acc = _read(tmp_path / "run")
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2, 3] and [e.wall_time for e in loss] == [
        100.0,
        101.0,
        102.0,
        103.0,
    ]
    np.testing.assert_allclose([e.value for e in loss], [1.0, 0.5, 1 / 3, 0.25], rtol=1e-6)
    assert acc.Scalars("lr")[0].value == 0.5
    assert acc.Tensors("acc")[0].tensor_proto.float_val == [0.75]
    h = acc.Histograms("weights")[0]
    assert h.step == 2 and h.histogram_value.num == 100 and h.histogram_value.max == pytest.approx(9.9)
    assert sum(h.histogram_value.bucket) == 100
    assert acc.Histograms("bf16")[0].histogram_value.sum == 5.0
    assert acc.Tensors("note/text_summary")[0].tensor_proto.string_val == [b"hello <b>world</b>"]


def test_add_scalars_writes_one_run_per_key(tmp_path):
    w = SummaryWriter(str(tmp_path / "r"))
    w.add_scalars("metrics/train", {"a": 1.0, "b": tl.tensor(2.0)}, 5, walltime=3.0)
    w.flush()
    w.close()
    w.close()  # a second close is ignored, as in torch
    for key, value in (("a", 1.0), ("b", 2.0)):
        ev = _read(tmp_path / "r" / f"metrics_train_{key}").Scalars("metrics/train")
        assert [(e.step, e.value) for e in ev] == [(5, value)]


def test_reopens_after_close_and_purge_step(tmp_path):
    w = SummaryWriter(tmp_path / "p", purge_step=3, filename_suffix=".x")
    w.add_scalar("s", 1.0, 3, walltime=1.0)
    w.close()
    w.add_scalar("s", 2.0, 4, walltime=2.0)  # a new event file, as torch does after close
    w.close()
    files = sorted(p.name for p in (tmp_path / "p").iterdir())
    assert len(files) == 2 and all(f.endswith(".x") for f in files)
    assert [e.value for e in _read(tmp_path / "p").Scalars("s")] == [1.0, 2.0]


def test_errors():
    w = SummaryWriter.__new__(SummaryWriter)
    with pytest.raises(NotImplementedError, match="add_image"):
        w.add_image
    with pytest.raises(AssertionError, match="one element"):
        from torchlike.utils.tensorboard import _summary

        _summary.scalar("x", tl.ones(2))
    with pytest.raises(ValueError, match="no element"):
        _summary.make_histogram(np.zeros(0), 10)


@pytest.mark.slow
def test_missing_tensorboard_is_a_clear_import_error():
    code = (
        "import sys; sys.modules['tensorboard'] = None\n"
        "try:\n    from torchlike.utils.tensorboard import SummaryWriter\n"
        "except ImportError as e:\n    print(type(e).__name__, e.name, e)\n"
    )
    root = pathlib.Path(__file__).parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root)
    assert out.stdout.startswith(
        "ModuleNotFoundError tensorboard torchlike.utils.tensorboard needs the `tensorboard` package"
    )
