"""Worker for tests/test_distributed_multi.py: FSDP1 over 2 virtual CPU devices, the way
bench/ddp_scaling.py runs it on 2 GPUs (model moved to the first device, token batches from the
host), against the same model unsharded; then what each device holds, FSDP against NO_SHARD (DDP's
replicated layout).

With ``FAKE_CUDA=1`` the CPU devices are dressed as GPUs (``cuda:N`` maps to CPU device N and
device meshes of type 'cuda' use the CPU devices), so a host batch (``cpu``) meets parameters on
``cuda:0`` as on a GPU host: the placement bug of issue 32 raised there.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=2``; prints one RESULT JSON line.
"""

import json
import os

import jax
import numpy as np

import torchlike as torch
from torchlike import nn
from torchlike._core import device as _device
from torchlike.distributed import device_mesh as _mesh_mod
from torchlike.distributed.device_mesh import DeviceMesh
from torchlike.distributed.fsdp import FullyShardedDataParallel as FSDP
from torchlike.distributed.fsdp import ShardingStrategy
from torchlike.distributed.fsdp.wrap import ModuleWrapPolicy

assert len(jax.local_devices(backend="cpu")) == 2, "needs XLA_FLAGS=--xla_force_host_platform_device_count=2"
FAKE = os.environ.get("FAKE_CUDA") == "1"
if FAKE:  # read through the modules at call time, so patching them here is enough
    cpus = tuple(jax.local_devices(backend="cpu"))
    _device._gpus = lambda: cpus
    _device.from_jax = lambda j: _device.device("cuda", cpus.index(j))
    _mesh_mod._platform = lambda device_type: "cpu"

V, D = 64, 32
DEV = "cuda:0" if FAKE else "cpu"
MESH_TYPE = "cuda" if FAKE else "cpu"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, 4 * D)
        self.out = nn.Linear(4 * D, D)

    def forward(self, x):
        return x + self.out(nn.functional.gelu(self.fc(self.ln(x))))


class LossModel(nn.Module):
    """bench/ddp_scaling.py's shape: embedding, blocks, head, per-token cross entropy."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D)
        self.pos = nn.Embedding(8, D)
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(D, V, bias=False)

    def forward(self, x, y):
        # positions made on the input's device (cuda:0, one device) meet the batch split over the mesh
        h = self.emb(x) + self.pos(torch.arange(x.shape[1], device=x.device))
        logits = self.head(self.blocks(h))
        return nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1), reduction="none").reshape(y.shape)


def build():
    torch.manual_seed(0)
    return LossModel().to(DEV)


rng = np.random.default_rng(0)
batches = [torch.tensor(rng.integers(0, V, size=(4, 9), dtype=np.int64)) for _ in range(4)]  # host (cpu) batches


def train(net, params_of, to=None):
    opt = torch.optim.AdamW(net.parameters(), lr=1e-2)
    losses = []
    for t in batches:
        opt.zero_grad(set_to_none=False)
        t = t.to(to) if to else t  # the unsharded reference needs its batch on its device, as in torch
        loss = net(t[:, :-1], t[:, 1:]).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return opt, losses, params_of()


def per_device_bytes(tensors):
    """Bytes each device holds of these tensors' arrays (jax's addressable shards)."""
    out = {}
    for t in tensors:
        for s in t._data().addressable_shards:
            out[str(s.device)] = out.get(str(s.device), 0) + s.data.nbytes
    return sorted(out.values())


def state_tensors(opt):
    return [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor) and v.dim() > 0]


ref = build()
_, ref_losses, ref_params = train(
    ref, lambda: {k: v.detach().cpu().numpy() for k, v in ref.state_dict().items()}, to=DEV
)

result = {"fake_cuda": FAKE}
for name, strategy in (("full_shard", ShardingStrategy.FULL_SHARD), ("no_shard", ShardingStrategy.NO_SHARD)):
    model = build()
    mesh = DeviceMesh(MESH_TYPE, [0, 1])
    net = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({Block}), device_mesh=mesh, sharding_strategy=strategy)

    def params_of():
        with FSDP.state_dict_type(net, torch.distributed.fsdp.StateDictType.FULL_STATE_DICT):
            return {k: v.detach().cpu().numpy() for k, v in net.state_dict().items()}

    opt, losses, params = train(net, params_of)
    flat = list(net.parameters())
    r = {
        "loss_max_diff": max(abs(a - b) for a, b in zip(losses, ref_losses)),
        "param_max_diff": max(float(np.abs(params[k] - ref_params[k]).max()) for k in ref_params),
        "param_devices": sorted({str(p.device) for p in flat}),
        "param_specs": sorted({str(p._data().sharding.spec) for p in flat}),
        "grad_specs": sorted({str(p.grad._data().sharding.spec) for p in flat}),
        "state_specs": sorted({str(v._data().sharding.spec) for v in state_tensors(opt)}),
        "param_bytes": per_device_bytes(flat),
        "grad_bytes": per_device_bytes([p.grad for p in flat]),
        "state_bytes": per_device_bytes(state_tensors(opt)),
        "total_param_bytes": sum(p.numel() * p.element_size() for p in flat),
    }
    with torch.no_grad():
        out = net(batches[0][:, :-1], batches[0][:, 1:])
    r["output_device"] = str(out.device)
    r["output_spec"] = str(out._data().sharding.spec)
    result[name] = r
print("RESULT " + json.dumps(result))
