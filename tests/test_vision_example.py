"""examples/cifar_resnet.py runs unmodified under `python -m torchlike run` (a torch + torchvision script)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "cifar_resnet.py")


@pytest.mark.slow
def test_cifar_resnet_runs_under_torchlike(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.dirname(EXAMPLE)),
                                                       os.environ.get("PYTHONPATH", "")]))  # fmt: skip
    out = subprocess.run([sys.executable, "-m", "torchlike", "run", EXAMPLE, "--steps", "2", "--workers", "2"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "train 256 test 64 classes ['airplane', 'automobile', 'bird']..."
    assert [re.match(r"step +(\d+) +loss \d+\.\d{4} +lr \d\.\d{5}$", line).group(1) for line in lines[1:3]] == [
        "1",
        "2",
    ]
    assert re.match(r"test accuracy \d\.\d{3} \(\d+/64\)$", lines[3])
    assert os.path.isfile(tmp_path / "runs" / "cifar_resnet" / "data" / "cifar-10-batches-py" / "data_batch_1")
