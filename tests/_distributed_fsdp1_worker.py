"""Worker for tests/test_distributed_multi.py: FSDP1 (FullyShardedDataParallel), state dicts and
torch.distributed.checkpoint over N virtual CPU devices (``XLA_FLAGS=
--xla_force_host_platform_device_count=N``), checked against the same model unsharded.

    python _distributed_fsdp1_worker.py save FOLDER   # 4 devices: train, check, save a checkpoint
    python _distributed_fsdp1_worker.py load FOLDER   # any device count: load it, train on

Prints one JSON object after ``RESULT ``.
"""

import functools
import json
import sys
import warnings

import jax
import numpy as np

import torchlike as torch
import torchlike.distributed.checkpoint as dcp
from torchlike import nn
from torchlike.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict
from torchlike.distributed.device_mesh import init_device_mesh
from torchlike.distributed.fsdp import FullStateDictConfig, MixedPrecision, ShardingStrategy, StateDictType, fully_shard
from torchlike.distributed.fsdp import FullyShardedDataParallel as FSDP
from torchlike.distributed.fsdp.wrap import ModuleWrapPolicy, size_based_auto_wrap_policy, transformer_auto_wrap_policy
from torchlike.distributed.tensor import DTensor

mode, folder = sys.argv[1], sys.argv[2]
ndev = len(jax.local_devices(backend="cpu"))
results = {"ndev": ndev}
STEPS = 3  # before the checkpoint


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


def batches(start, steps):
    g = torch.Generator().manual_seed(1)
    out = []
    for _ in range(start + steps):
        out.append((torch.randint(0, 40, (8, 6), generator=g), torch.randint(0, 40, (8, 6), generator=g)))
    return out[start:]


def train(model, opt, start, steps, autocast=False):
    losses = []
    for x, y in batches(start, steps):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = nn.functional.cross_entropy(model(x).reshape(-1, 40).float(), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def full_params(model):
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        return {k: v.numpy() for k, v in model.state_dict().items()}


def max_diff(a, b):
    return max(float(np.abs(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64)).max()) for k in a)


def spec(t):
    return str(t._data().sharding.spec)


ref = build()
ref_opt = torch.optim.AdamW(ref.parameters(), lr=1e-2)
ref_losses = train(ref, ref_opt, 0, STEPS)
ref_state = {k: v.numpy().copy() for k, v in ref.state_dict().items()}
ref_next = train(ref, ref_opt, STEPS, 2)  # what the run resumed from the checkpoint must give

policies = {
    "module": ModuleWrapPolicy({Block}),
    "transformer": functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block}),
    "size": functools.partial(size_based_auto_wrap_policy, min_num_params=3000),
}

if mode == "save":
    for label, kwargs in [("full_module", dict(auto_wrap_policy=policies["module"])),
                          ("full_transformer", dict(auto_wrap_policy=policies["transformer"])),
                          ("grad_op_size", dict(auto_wrap_policy=policies["size"],
                                                sharding_strategy=ShardingStrategy.SHARD_GRAD_OP)),
                          ("no_shard", dict(sharding_strategy=ShardingStrategy.NO_SHARD)),
                          ("orig_params", dict(auto_wrap_policy=policies["module"], use_orig_params=True))]:  # fmt: skip
        model = FSDP(build(), **kwargs)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        r = results[label] = {}
        if label in ("full_module", "no_shard", "orig_params"):  # (the others: layout and wrapping only)
            losses = train(model, opt, 0, STEPS)
            r["loss_max_diff"] = max(abs(a - b) for a, b in zip(ref_losses, losses))
            r["param_max_diff"] = max_diff(ref_state, full_params(model))
            r["grad_specs"] = sorted({spec(p.grad) for p in model.parameters()})
            r["state_specs"] = sorted({spec(s["exp_avg"]) for s in opt.state.values()})
        r["names"] = [n for n, _ in model.named_parameters()]
        r["shapes"] = [list(p.shape) for p in model.parameters()]
        r["param_specs"] = sorted({spec(p) for p in model.parameters()})
        r["n_fsdp"] = len(FSDP.fsdp_modules(model))
        r["attr_is_param"] = isinstance(model.module[1].fc.weight, nn.Parameter)
        r["repr_head"] = repr(model).splitlines()[:4]
    # mixed precision: bf16 parameters in forward against the unsharded model under bf16 autocast
    mp = FSDP(build(), auto_wrap_policy=policies["module"],
              mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))  # fmt: skip
    mp_losses = train(mp, torch.optim.AdamW(mp.parameters(), lr=1e-2), 0, STEPS)
    auto = build()
    auto_losses = train(auto, torch.optim.AdamW(auto.parameters(), lr=1e-2), 0, STEPS, autocast=True)
    results["mixed"] = {"vs_autocast": max(abs(a - b) for a, b in zip(auto_losses, mp_losses)),
                        "vs_fp32": max(abs(a - b) for a, b in zip(ref_losses, mp_losses)),
                        "flat_dtype": str(mp.module._flat_param.dtype),
                        "view_dtype": str(mp.module[1].fc.weight.dtype)}  # fmt: skip
    # 1 device: torch's switch to NO_SHARD, with its warning
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        one = FSDP(build(), device_mesh=init_device_mesh("cpu", (ndev,))) if ndev == 1 else None
    results["one_device_warning"] = [str(x.message) for x in w]

    # state dicts of a trained FSDP1 model
    model = FSDP(build(), auto_wrap_policy=policies["module"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    train(model, opt, 0, STEPS)
    with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
        sharded = model.state_dict()
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT,
                              FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):  # fmt: skip
        full = model.state_dict()
    results["sharded_sd"] = {
        "keys_match": list(sharded) == list(ref_state) == list(full),
        "types": sorted({type(v).__name__ for v in sharded.values()}),
        "placements": sorted({repr(v.placements) for v in sharded.values() if isinstance(v, DTensor)}),
        "full_tensor_diff": max(float(np.abs(v.full_tensor().numpy() - full[k].numpy()).max())
                                for k, v in sharded.items()),  # fmt: skip
        "spec": spec(sharded["1.fc.weight"]),
        "full_types": sorted({type(v).__name__ for v in full.values()}),
        "full_device": sorted({str(v.device) for v in full.values()}),
    }
    # loading a full state dict into a fresh FSDP model, and a sharded one into another
    fresh = FSDP(build(), auto_wrap_policy=policies["module"])
    fresh.load_state_dict(full)
    other = FSDP(build(), auto_wrap_policy=policies["module"])
    with FSDP.state_dict_type(other, StateDictType.SHARDED_STATE_DICT):
        other.load_state_dict(sharded)
    results["loaded"] = [max_diff(full_params(model), full_params(fresh)),
                         max_diff(full_params(model), full_params(other)), spec(fresh.module._flat_param)]  # fmt: skip
    try:
        fresh.load_state_dict({k: v for k, v in full.items() if k != "3.weight"})
    except RuntimeError as e:
        results["missing_error"] = str(e)

    # get_state_dict / dcp.save: an FSDP1 model and an FSDP2 model with their AdamW states
    msd, osd = get_state_dict(model, opt)
    results["dsd"] = {
        "model_keys": list(msd) == list(ref_state),
        "optim_keys": sorted(osd["state"]) == sorted(k for k in ref_state),
        "exp_avg_type": type(osd["state"]["1.fc.weight"]["exp_avg"]).__name__,
        "exp_avg_shape": list(osd["state"]["1.fc.weight"]["exp_avg"].shape),
        "groups": [g["params"][:2] for g in osd["param_groups"]],
    }
    dcp.save({"model": msd, "optim": osd, "step": STEPS}, checkpoint_id=folder + "/fsdp1")
    f2 = build()
    mesh = init_device_mesh("cpu", (ndev,), mesh_dim_names=("dp",))
    for blk in (f2[1], f2[2]):
        fully_shard(blk, mesh=mesh)
    fully_shard(f2, mesh=mesh)
    opt2 = torch.optim.AdamW(f2.parameters(), lr=1e-2)
    losses2 = train(f2, opt2, 0, STEPS)
    sd2 = f2.state_dict()
    results["fsdp2"] = {
        "loss_max_diff": max(abs(a - b) for a, b in zip(ref_losses, losses2)),
        "types": sorted({type(v).__name__ for k, v in sd2.items()}),
        "full_tensor_diff": max(float(np.abs(v.full_tensor().numpy() - ref_state[k]).max()) for k, v in sd2.items()),
        "placements": repr(sd2["1.fc.weight"].placements),
    }
    msd2, osd2 = get_state_dict(f2, opt2)
    dcp.save({"model": msd2, "optim": osd2}, storage_writer=dcp.FileSystemWriter(folder + "/fsdp2"))
    with open(folder + "/meta.json", "w") as f:
        json.dump({"saved_on": ndev}, f)

else:  # load, at this process's device count
    with open(folder + "/meta.json") as f:
        results["saved_on"] = json.load(f)["saved_on"]
    # FSDP1: a fresh model and optimizer, state from the checkpoint, then two more steps
    model = FSDP(build(), auto_wrap_policy=policies["module"])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    train(model, opt, 0, 1)  # creates the optimizer state (overwritten by the load)
    msd, osd = get_state_dict(model, opt)
    state = {"model": msd, "optim": osd, "step": 0}
    dcp.load(state, checkpoint_id=folder + "/fsdp1")
    set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
    r = results["fsdp1"] = {"step": state["step"]}
    r["next_losses_diff"] = max(abs(a - b) for a, b in zip(ref_next, train(model, opt, STEPS, 2)))
    r["param_specs"] = sorted({spec(p) for p in model.parameters()})
    r["state_specs"] = sorted({spec(s["exp_avg"]) for s in opt.state.values()})
    # FSDP2 at this device count, and a plain unsharded model from the same FSDP2 checkpoint
    f2 = build()
    mesh = init_device_mesh("cpu", (ndev,), mesh_dim_names=("dp",))
    for blk in (f2[1], f2[2]):
        fully_shard(blk, mesh=mesh)
    fully_shard(f2, mesh=mesh)
    opt2 = torch.optim.AdamW(f2.parameters(), lr=1e-2)
    train(f2, opt2, 0, 1)
    msd2, osd2 = get_state_dict(f2, opt2)
    state2 = {"model": msd2, "optim": osd2}
    dcp.load(state2, storage_reader=dcp.FileSystemReader(folder + "/fsdp2"))
    set_state_dict(f2, opt2, model_state_dict=state2["model"], optim_state_dict=state2["optim"])
    results["fsdp2"] = {"next_losses_diff": max(abs(a - b) for a, b in zip(ref_next, train(f2, opt2, STEPS, 2))),
                        "param_specs": sorted({spec(p) for p in f2.parameters()})}  # fmt: skip
    plain = build()
    popt = torch.optim.AdamW(plain.parameters(), lr=1e-2)
    train(plain, popt, 0, 1)
    opts = StateDictOptions(full_state_dict=True)
    msd3, osd3 = get_state_dict(plain, popt, options=opts)
    state3 = {"model": msd3, "optim": osd3}
    dcp.load(state3, checkpoint_id=folder + "/fsdp2")
    set_state_dict(plain, popt, model_state_dict=state3["model"], optim_state_dict=state3["optim"], options=opts)
    results["plain"] = {"next_losses_diff": max(abs(a - b) for a, b in zip(ref_next, train(plain, popt, STEPS, 2)))}
    try:
        dcp.load({"model": {"nope": torch.zeros(2)}}, checkpoint_id=folder + "/fsdp2")
    except RuntimeError as e:
        results["missing_key"] = str(e)
print("RESULT " + json.dumps(results))
