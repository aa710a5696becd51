"""Worker for tests/test_distributed_multi.py: the GPU benchmark's DataParallel + torchlike.compile
training step (bench/ddp_scaling.py, variant torchlike-dp-compile) on 4 virtual CPU devices.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``; prints one JSON object.

Two things differ between a GPU and the CPU by default, and both are set here the GPU's way:
- lazy execution is on (the default where JAX sees a GPU);
- tensors made for one device are *committed* to it: on a GPU, ``torch.arange(..., device='cuda')``
  and the backward's seed gradient live on GPU 0 only, while a CPU array stays uncommitted and
  JAX moves it freely. Committed single-device arrays meeting DataParallel's mesh-sharded ones is
  what crashed the 4-GPU run, so tensors made for the CPU are committed to CPU device 0 here.
"""

import json

import jax
import numpy as np

import torchlike as torch
from torchlike import nn
from torchlike._compile import _runtime
from torchlike._core import device as _device
from torchlike._core import lazy as _lazy
from torchlike._core import tensor as T

assert len(jax.local_devices(backend="cpu")) == 4, "needs XLA_FLAGS=--xla_force_host_platform_device_count=4"
F = nn.functional
_make_on = T.make_on


def _make_on_committed(array, device, dtype=None):
    if device.type == "cpu" and not isinstance(array, jax.core.Tracer):
        array = _lazy.put(array, _device._cpu_jax())
    return _make_on(array, device, dtype)


T.make_on = _make_on_committed
torch.lazy.enable()

V, D, H, S, LAYERS, BATCH = 64, 32, 4, 16, 1, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.fc, self.out = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in self.qkv(self.ln1(x)).split(D, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class LossGPT(nn.Module):
    """A GPT returning per-token losses (what DataParallel gathers; the mean is taken outside)."""

    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(S, D)
        self.blocks = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)

    def forward(self, idx, y):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="none").reshape(y.shape)


def train(data_parallel, bf16, steps=3):
    torch.manual_seed(0)
    model = LossGPT()
    net = nn.DataParallel(model) if data_parallel else model
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    @torch.compile
    def step(x, y):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = net(x, y).mean()
        loss.backward()
        opt.step()
        return loss

    rng = np.random.default_rng(1234)
    losses = []
    for _ in range(steps):
        t = rng.integers(0, V, size=(BATCH, S + 1))
        losses.append(step(torch.tensor(t[:, :-1]), torch.tensor(t[:, 1:])).item())
    return model, losses


def max_diff(a, b):
    return max(
        float(np.abs(np.asarray(p._data(), np.float32) - np.asarray(q._data(), np.float32)).max())
        for p, q in zip(a.parameters(), b.parameters())
    )


results = {}
for name, bf16 in (("fp32", False), ("bf16", True)):
    _runtime.stats.clear()
    one, one_losses = train(False, bf16)
    four, four_losses = train(True, bf16)
    results[name] = {
        "param_max_diff": max_diff(one, four),
        "loss_max_diff": max(abs(a - b) for a, b in zip(one_losses, four_losses)),
        "losses": four_losses,
        "param_specs": sorted({str(p._data().sharding.spec) for p in four.parameters()}),
        "compile_stats": dict(_runtime.stats),
    }
results["lazy"] = torch.lazy.enabled()
print("RESULT " + json.dumps(results))
