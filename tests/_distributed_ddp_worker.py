"""Worker for tests/test_distributed_launch.py, started by ``python -m torchlike.distributed.run``.

Every rank checks the collectives, then trains an MLP with DistributedDataParallel on its share
of each global batch (DistributedSampler) next to a local reference model trained on the whole
global batch, and prints lines the test compares across ranks.
"""

import os
import sys

import numpy as np

import torchlike as torch
import torchlike.distributed as dist
from torchlike import nn
from torchlike.nn.parallel import DistributedDataParallel as DDP
from torchlike.utils.data import DataLoader, DistributedSampler, TensorDataset


def say(line):
    # both ranks share the launcher's stdout: one write(2) per line (< PIPE_BUF, so atomic) keeps
    # their lines whole even when Python's stdout is unbuffered (PYTHONUNBUFFERED splits a print
    # into the text and its newline)
    sys.stdout.flush()
    os.write(1, (line + "\n").encode())


def check(name, got, want):
    ok = np.allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64))
    say(f"rank {rank} {'OK' if ok else 'FAIL'} {name} got={got} want={want}")


dist.init_process_group(backend="gloo")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == int(sys.argv[1]) and dist.is_initialized()

# --- collectives ---------------------------------------------------------------------------------
t = torch.arange(3, dtype=torch.float32) + rank
dist.all_reduce(t)
check("all_reduce_sum", t.tolist(), [sum(i + r for r in range(world)) for i in range(3)])
t = torch.arange(3, dtype=torch.float32) + rank
dist.all_reduce(t, op=dist.ReduceOp.MAX)
check("all_reduce_max", t.tolist(), [i + world - 1 for i in range(3)])
t = torch.tensor([rank + 1, 7])
dist.all_reduce(t, op=dist.ReduceOp.PRODUCT)
check("all_reduce_prod_int", t.tolist(), [float(np.prod(range(1, world + 1))), 7.0**world])
parts = [torch.zeros(2) for _ in range(world)]
dist.all_gather(parts, torch.full((2,), float(rank)))
check("all_gather", [p.tolist() for p in parts], [[float(r)] * 2 for r in range(world)])
out = torch.zeros(world, 2)
dist.all_gather_into_tensor(out, torch.full((2,), float(rank)))
check("all_gather_into_tensor", out.tolist(), [[float(r)] * 2 for r in range(world)])
b = torch.tensor([float(rank), -1.5])
dist.broadcast(b, src=world - 1)
check("broadcast", b.tolist(), [world - 1.0, -1.5])
rs = torch.zeros(2)
dist.reduce_scatter_tensor(rs, torch.arange(2.0 * world) * (rank + 1))
scale = sum(r + 1 for r in range(world))
check("reduce_scatter_tensor", rs.tolist(), [scale * (2 * rank), scale * (2 * rank + 1)])
objs = [None] * world
dist.all_gather_object(objs, {"rank": rank})
check("all_gather_object", [o["rank"] for o in objs], list(range(world)))
if world > 1:
    if rank == 0:
        dist.send(torch.tensor([4.0, 2.0]), dst=1)
    elif rank == 1:
        got = torch.zeros(2)
        src = dist.recv(got, src=0)
        check("send_recv", got.tolist() + [src], [4.0, 2.0, 0])
sub = dist.new_group([0])
if rank == 0:
    s = torch.ones(1) * 5
    dist.all_reduce(s, group=sub)
    check("subgroup", s.tolist(), [5.0])
else:
    assert sub == dist.GroupMember.NON_GROUP_MEMBER
dist.barrier()

# --- DDP training against a reference on the global batch ----------------------------------------


def mlp(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))


gen = torch.Generator().manual_seed(123)
data = TensorDataset(torch.randn(120 * world, 6, generator=gen), torch.randn(120 * world, 3, generator=gen))
local_batch = 4
model = DDP(mlp(seed=rank))  # rank 0's initial parameters are broadcast
ref = mlp(seed=0)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
samplers = [DistributedSampler(data, num_replicas=world, rank=r, shuffle=True, seed=7) for r in range(world)]
loaders = [iter(DataLoader(data, batch_size=local_batch, sampler=s)) for s in samplers]


def global_step(micro):
    """One optimizer step over ``micro`` micro-batches per rank (all but the last under no_sync)."""
    batches = [[next(it) for it in loaders] for _ in range(micro)]
    opt.zero_grad()
    for k, per_rank in enumerate(batches):
        x, y = per_rank[rank]
        ctx = model.no_sync() if k < micro - 1 else torch.enable_grad()
        with ctx:
            nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    ref_opt.zero_grad()
    for per_rank in batches:
        x = torch.cat([xy[0] for xy in per_rank])
        y = torch.cat([xy[1] for xy in per_rank])
        nn.functional.mse_loss(ref(x), y).backward()
    ref_opt.step()


def max_diff():
    return max(float((p - q).abs().max()) for p, q in zip(model.module.parameters(), ref.parameters()))


for _ in range(20):
    global_step(1)
say(f"rank {rank} ddp_vs_global_batch {max_diff():.3e}")
for _ in range(5):
    global_step(2)
say(f"rank {rank} no_sync_vs_global_batch {max_diff():.3e}")


class Branchy(nn.Module):
    """``extra`` is used on rank 0 only, ``never`` on no rank."""

    def __init__(self):
        super().__init__()
        self.body, self.extra, self.never = nn.Linear(2, 2), nn.Linear(2, 2), nn.Linear(2, 2)

    def forward(self, x):
        y = self.body(x)
        return self.extra(y) if rank == 0 else y


torch.manual_seed(0)
branchy = DDP(Branchy(), find_unused_parameters=True)
branchy(torch.ones(1, 2)).sum().backward()
extra = branchy.module.extra.weight.grad
local0 = torch.ones(2, 2) * (branchy.module.body(torch.ones(1, 2)).detach().t()).reshape(1, 2)
check("unused_on_one_rank", extra.tolist(), (local0 / world).tolist())
check("unused_everywhere", [branchy.module.never.weight.grad is None], [True])
checksum = sum(float(p.double().sum()) for p in model.parameters())
say(f"rank {rank} checksum {checksum:.12f}")
say(f"rank {rank} state_dict {list(model.state_dict())[0]}")
dist.destroy_process_group()
env = " ".join(f"{k}={os.environ[k]}" for k in ("LOCAL_RANK", "GROUP_RANK", "LOCAL_WORLD_SIZE", "GROUP_WORLD_SIZE"))
say(f"rank {rank} env {env}")
say(f"rank {rank} done")
