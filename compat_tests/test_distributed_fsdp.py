"""FSDP1 (FullyShardedDataParallel), its state dicts, torch.distributed.checkpoint.state_dict and
dcp.save/load under real torch and torchlike: one script, run by both, the same stdout.

torch runs it in a gloo world of one rank (FSDP then switches to NO_SHARD, with its warning);
torchlike in one process on one device, which does the same. Sharding over several devices is
tested against the unsharded model in tests/test_distributed_multi.py (torch's FSDP needs one
process per rank for that).
"""

from __future__ import annotations

import importlib.util
import socket

import pytest

from torchlike.compat import compare_script
from torchlike.compat._report import format_result

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="real torch is not installed"),
    pytest.mark.slow,  # two interpreters
]

SCRIPT = r'''
import functools
import sys
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torch.distributed.fsdp import FullStateDictConfig, MixedPrecision, ShardingStrategy, StateDictType
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy, transformer_auto_wrap_policy

dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + sys.argv[1], rank=0, world_size=1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 16)
        self.register_buffer("scale", torch.ones(16))

    def forward(self, x):
        return x + (self.fc(self.ln(x)) * self.scale)[..., :8]


def build():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), Block(), Block(), nn.Linear(8, 2))


def train(model, steps=3):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        loss = model(torch.randn(8, 4, generator=g)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    return opt, losses


def no_shard_warnings(ws):
    return sorted({str(w.message) for w in ws if "NO_SHARD" in str(w.message)})


cpu = torch.device("cpu")
for name, policy in [("module", ModuleWrapPolicy({Block})),
                     ("transformer", functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})),
                     ("size", functools.partial(size_based_auto_wrap_policy, min_num_params=100))]:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        model = FSDP(build(), auto_wrap_policy=policy, device_id=cpu)
    print(name, no_shard_warnings(ws), model.sharding_strategy)
    print(model)
    print([(n, tuple(p.shape), p.dtype) for n, p in model.named_parameters()])
    opt, losses = train(model)
    print(losses, list(model.state_dict()))
    print([(n, tuple(p.grad.shape)) for n, p in model.named_parameters()])

model = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=cpu)
opt, losses = train(model)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        sd = model.state_dict()
print(no_shard_warnings(ws), [(k, type(v).__name__, tuple(v.shape)) for k, v in sd.items()])
with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
    full = model.state_dict()
print([(k, type(v).__name__, tuple(v.shape), str(v.device)) for k, v in full.items()])
fresh = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=cpu)
print(fresh.load_state_dict(full))
print(all(torch.equal(a, b) for a, b in zip(fresh.parameters(), model.parameters())))
try:
    fresh.load_state_dict({k: v for k, v in full.items() if k != "3.bias"})
except RuntimeError as e:
    print("RuntimeError", e)

msd, osd = get_state_dict(model, opt)
print(list(msd), sorted(osd["state"]), osd["param_groups"][0]["params"], sorted(osd["state"]["1.fc.weight"]))
print(tuple(osd["state"]["1.fc.weight"]["exp_avg"].shape), osd["param_groups"][0]["lr"])
with tempfile.TemporaryDirectory() as folder:
    dcp.save({"model": msd, "optim": osd, "epoch": 3}, checkpoint_id=folder)
    model2 = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=cpu)
    opt2, _ = train(model2, 1)
    msd2, osd2 = get_state_dict(model2, opt2)
    state = {"model": msd2, "optim": osd2, "epoch": 0}
    dcp.load(state, checkpoint_id=folder)
    set_state_dict(model2, opt2, model_state_dict=state["model"], optim_state_dict=state["optim"])
    print(state["epoch"], all(torch.equal(a, b) for a, b in zip(model2.parameters(), model.parameters())))
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(5))
    for m, o in ((model, opt), (model2, opt2)):
        loss = m(x).pow(2).mean()
        o.zero_grad()
        loss.backward()
        o.step()
    print(round(loss.item(), 5), all(torch.equal(a, b) for a, b in zip(model2.parameters(), model.parameters())))
full_opts = StateDictOptions(full_state_dict=True, cpu_offload=True)
msd, osd = get_state_dict(model, opt, options=full_opts)
print([(k, type(v).__name__, str(v.device)) for k, v in msd.items()][:3])

orig = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=cpu, use_orig_params=True)
print([(n, tuple(p.shape)) for n, p in orig.named_parameters()])
print(train(orig)[1], list(orig.state_dict()))
mp = FSDP(build(), auto_wrap_policy=ModuleWrapPolicy({Block}), device_id=cpu,
          mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16))
out = mp(torch.randn(2, 4))
print(out.dtype, mp.module[1].fc.weight.dtype, mp.module[1].scale.dtype, mp.module._flat_param.dtype)
print([(k, v.dtype) for k, v in mp.state_dict().items()][:6])
ns = FSDP(build(), sharding_strategy=ShardingStrategy.NO_SHARD, device_id=cpu)
print([(n, tuple(p.shape)) for n, p in ns.named_parameters()], ns.sharding_strategy)
print(len(FSDP.fsdp_modules(model)), len(FSDP.fsdp_modules(model, root_only=True)))
dist.destroy_process_group()
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fsdp1_state_dicts_and_checkpoint_match_torch(tmp_path):
    script = tmp_path / "fsdp1_one_rank.py"
    script.write_text(SCRIPT)
    result = compare_script(script, args=[str(_free_port())], timeout=300)
    assert result.torch.returncode == 0, result.torch.stderr[-3000:]
    assert result.ok, format_result(result)
