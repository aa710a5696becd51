"""The same SummaryWriter calls under torch and torchlike write the same events."""

import numpy as np
import pytest
import torch

import torchlike as tl

pytest.importorskip("tensorboard", reason="the optional `tensorboard` package is not installed")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

pytestmark = pytest.mark.slow  # writes and reads event files under both libraries


def _log(lib, log_dir):
    from importlib import import_module

    writer_cls = import_module(f"{lib.__name__}.utils.tensorboard").SummaryWriter
    vals = np.random.default_rng(0).normal(size=200).astype(np.float32)
    with writer_cls(str(log_dir)) as w:
        for step in range(3):
            w.add_scalar("train/loss", lib.tensor(2.0 / (step + 1)), step, walltime=10.0 + step)
            w.add_scalars("cmp", {"x": float(step), "y": lib.tensor(step * 2.0)}, step, walltime=10.0)
        w.add_scalar("new", 1.25, 1, walltime=1.0, new_style=True, double_precision=True)
        w.add_histogram("h/default", lib.tensor(vals), 0, walltime=1.0)
        w.add_histogram("h/auto", lib.tensor(vals).double(), 1, bins="auto", walltime=1.0, max_bins=7)
        w.add_histogram("h/np", vals * 3, 2, bins=10, walltime=1.0)
        w.add_text("notes", "step **one**", 0, walltime=1.0)


def _events(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "scalars": 0, "histograms": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["scalars"]:
        out["s:" + tag] = [(e.wall_time, e.step, e.value) for e in acc.Scalars(tag)]
    for tag in acc.Tags()["histograms"]:
        out["h:" + tag] = [(e.wall_time, e.step, str(e.histogram_value)) for e in acc.Histograms(tag)]
    for tag in acc.Tags()["tensors"]:
        out["t:" + tag] = [(e.wall_time, e.step, str(e.tensor_proto)) for e in acc.Tensors(tag)]
    return out


def test_same_events_as_torch(tmp_path):
    _log(torch, tmp_path / "torch")
    _log(tl, tmp_path / "tl")
    ref, got = _events(tmp_path / "torch"), _events(tmp_path / "tl")
    assert ref and got == ref
    for key in ("x", "y"):
        assert _events(tmp_path / "tl" / f"cmp_{key}") == _events(tmp_path / "torch" / f"cmp_{key}")
