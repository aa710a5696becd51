"""Worker for tests/test_distributed_multi.py (started by ``python -m torchlike.distributed.run``
with ``TORCHLIKE_LAZY=1``): a DDP training step in lazy mode records the gradient all-reduce in
the same pending graph as the forward, the backward and the optimizer update (and the broadcast of
the buffers from rank 0 before the forward), so a step is one program (one flush); its results
equal a local model trained on the global batch.
Prints one ``RESULT`` JSON line per rank.
"""

import gc
import json
import os
import sys

import jax
import numpy as np

import torchlike as torch
import torchlike.distributed as dist
from torchlike import nn
from torchlike._core import lazy as _lazy
from torchlike.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert torch.lazy.enabled(), "run with TORCHLIKE_LAZY=1"


class Scaled(nn.Module):
    """A module with buffers (DDP broadcasts them from rank 0 before each forward): a counter it
    updates and a fixed scale."""

    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.register_buffer("scale", torch.full((16,), 0.5))

    def forward(self, x):
        with torch.no_grad():
            self.calls += 1
        y = x * self.scale
        return y + y.view(-1, 4, 4).transpose(1, 2).reshape(-1, 16)  # nodes that save nothing (view, add)


def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), Scaled(), nn.Tanh(), nn.Linear(16, 3))


g = torch.Generator().manual_seed(3)
data = [(torch.randn(8, 6, generator=g), torch.randn(8, 3, generator=g)) for _ in range(10)]
for x, y in data:  # small CPU draws start on the host: as JAX arrays now, the live count below is the step's alone
    x._data(), y._data()
share = 8 // world

model = DDP(build())
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
ref = build()
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
flushes, losses, reasons = [], [], []
# per step: programs run (compiled ones), SPMD programs compiled so far, live arrays after it
programs, hot, compiles, live = [], [], [], []
kept = []  # the losses, kept as a training loop may (their graphs must not keep activations alive)
for step, (x, y) in enumerate(data):
    xs, ys = x[rank * share : (rank + 1) * share], y[rank * share : (rank + 1) * share]
    if step == 4:  # no_sync: gradients of this backward accumulate locally, the next step averages the sum
        with model.no_sync():
            nn.functional.mse_loss(model(xs), ys).backward()
    torch.lazy.mark_step()
    before = torch.lazy.stats().get("flushes", 0)
    reasons_before = torch.lazy.stats()["flush_reasons"]
    ran_before, hits_before = _lazy.stats["hits"] + _lazy.stats["cold_runs"], _lazy.stats["hits"]
    loss = nn.functional.mse_loss(model(xs), ys)
    loss.backward()
    opt.step()
    opt.zero_grad()
    losses.append(loss.item())  # the one flush of the step
    kept.append(loss)
    programs.append(_lazy.stats["hits"] + _lazy.stats["cold_runs"] - ran_before)
    hot.append(_lazy.stats["hits"] - hits_before)
    compiles.append(sum(p.compiled is not None for p in _lazy._programs.values() if p.spmd is not None))
    gc.collect()
    live.append(len(jax.live_arrays()) - len(kept))  # each kept loss holds its one value
    st = torch.lazy.stats()
    flushes.append(st.get("flushes", 0) - before)
    reasons.append({k: v - reasons_before.get(k, 0) for k, v in st["flush_reasons"].items() if v != reasons_before.get(k, 0)})
    if step == 4:
        nn.functional.mse_loss(ref(x), y).backward()
    nn.functional.mse_loss(ref(x), y).backward()
    ref_opt.step()
    ref_opt.zero_grad()
spmd = [p for p in _lazy._programs.values() if p.spmd is not None]
st = torch.lazy.stats()
compiled = {"spmd_programs": len(spmd), "spmd_compiled": sum(p.compiled is not None for p in spmd),
            "compile_failures": st.get("compile_failures", 0), "hits": st.get("hits", 0)}  # fmt: skip
calls = [int(model.module[1].calls.item()), int(ref[1].calls.item())]
diff = max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max()) for p, q in zip(model.parameters(), ref.parameters()))
sys.stdout.flush()
os.write(1, ("RESULT " + json.dumps({"rank": rank, "flushes": flushes, "param_diff": diff, "reasons": reasons, "calls": calls,
                                        "programs": programs, "hot": hot, "compiled_after_step": compiles, "live_arrays": live, **compiled}) + "\n").encode())
dist.destroy_process_group()
