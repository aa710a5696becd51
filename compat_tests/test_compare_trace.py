"""`python -m torchlike compare --trace` end to end: the torch side's log (through torch's TorchFunctionMode)
lines up op for op with torchlike's, and a planted difference is named at its line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from torchlike.compat._trace import trace_script

pytestmark = pytest.mark.slow  # runs scripts under torch and torchlike

REPO = Path(__file__).resolve().parents[1]

_SCRIPT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))

    def forward(self, x):
        return F.log_softmax(self.body(x) * SCALE, dim=1)


SCALE = 1.001 if torch.__name__ == "torchlike" and PLANT else 1.0
torch.manual_seed(0)
net = Net()
opt = torch.optim.Adam(net.parameters(), lr=0.01)
x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
for step in range(3):
    opt.zero_grad()
    loss = F.nll_loss(net(x), y)
    loss.backward()
    opt.step()
    print(step, round(loss.item(), 4))
z = x.clone()
z[0] = 2.0
z += 1
z.mul_(0.5)
rows = [r.sum() for r in z[:3]]
print(torch.stack(rows), torch.linalg.norm(z), (1 - z).abs().max(), z.argmax(dim=1), z.T @ z)
"""


def _write(tmp_path: Path, plant: bool) -> Path:
    path = tmp_path / "traced.py"
    path.write_text(_SCRIPT.replace("PLANT", str(plant)))
    return path


def test_trace_logs_line_up_op_for_op(tmp_path: Path) -> None:
    result = trace_script(_write(tmp_path, plant=False))
    assert result.run.ok, result.run.torchlike.stderr
    trace = result.trace
    assert trace.torch_count == trace.torchlike_count == trace.matched > 40
    assert not trace.skipped and trace.lost is None
    assert trace.first_large is None  # nothing but rounding parts the runs


def test_trace_names_a_planted_difference(tmp_path: Path) -> None:
    script = _write(tmp_path, plant=True)
    proc = subprocess.run(
        [sys.executable, "-m", "torchlike", "compare", "--trace", script.name],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "FIRST DIVERGENCE: op #6 under torch, #6 under torchlike: Tensor.mul" in out, out
    assert "called at traced.py:12" in out
    assert "output 0: float32[16, 3]: max abs diff" in out
    assert "inputs: not bit-identical between the runs" in out  # the planted factor is an input
    assert out.count("FIRST DIVERGENCE:") == 1
    # the module reads the planted factor from a global, which its input digest (arguments, parameters,
    # buffers) cannot see: with everything it was given bit-identical, it is the op that computes differently
    assert "FIRST DIVERGENCE WITH BIT-IDENTICAL INPUTS: op #8 under torch, #8 under torchlike: Net" in out
