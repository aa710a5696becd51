"""Worker for tests/test_distributed_multi.py: FSDP2's fully_shard over a mesh of 4 virtual CPU
devices (init_device_mesh), trained next to the same model unsharded.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``; prints one JSON object.
"""

import json

import jax
import numpy as np

import torchlike as torch
from torchlike import nn
from torchlike._compile import _runtime
from torchlike.distributed.device_mesh import init_device_mesh
from torchlike.distributed.fsdp import FSDPModule, fully_shard

assert len(jax.local_devices(backend="cpu")) == 4, "needs XLA_FLAGS=--xla_force_host_platform_device_count=4"
results = {}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(32)
        self.fc = nn.Linear(32, 64)
        self.out = nn.Linear(64, 32)

    def forward(self, x):
        return x + self.out(nn.functional.gelu(self.fc(self.ln(x))))


def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(40, 32), Block(), Block(), nn.LayerNorm(32), nn.Linear(32, 40, bias=False))


def train(model, steps=5, compiled=False):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 40), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = torch.compile(step)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randint(0, 40, (8, 6), generator=g)
        y = torch.randint(0, 40, (8, 6), generator=g)
        losses.append(step(x, y).item())
    return opt, losses


def spec(t):
    return str(t._data().sharding.spec)


mesh = init_device_mesh("cpu", (4,), mesh_dim_names=("dp",))
results["mesh"] = [repr(mesh), mesh.shape, mesh.size(), list(mesh.jax_mesh.axis_names)]
ref = build()
_, ref_losses = train(ref)
for mode in ("eager", "lazy", "compiled"):
    torch.lazy.enable() if mode == "lazy" else torch.lazy.disable()
    model = build()
    for blk in (model[1], model[2]):
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    _runtime.stats.clear()
    opt, losses = train(model, compiled=mode == "compiled")
    r = results[mode] = {}
    r["compiled_calls"] = _runtime.stats["calls"]
    r["loss_max_diff"] = max(abs(a - b) for a, b in zip(ref_losses, losses))
    r["param_max_diff"] = max(
        float(np.abs(np.asarray(p._data()) - np.asarray(q._data())).max())
        for p, q in zip(ref.parameters(), model.parameters())
    )
    r["losses"] = losses
    r["param_specs"] = {n: spec(p) for n, p in model.named_parameters()}
    r["state_specs"] = sorted({spec(s["exp_avg"]) for s in opt.state.values()})
    w = model[1].fc.weight._data()  # each device holds a quarter of the rows
    r["shard_shapes"] = sorted({tuple(s.data.shape) for s in w.addressable_shards})
    r["classes"] = [type(model).__name__, type(model[1]).__name__, isinstance(model[1], FSDPModule)]
try:
    init_device_mesh("cpu", (3,))
except RuntimeError as e:
    results["bad_shape"] = str(e)
print("RESULT " + json.dumps(results))
