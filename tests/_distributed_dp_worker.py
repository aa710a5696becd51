"""Worker for tests/test_distributed_multi.py: nn.DataParallel over 4 virtual CPU devices.

Run with ``XLA_FLAGS=--xla_force_host_platform_device_count=4``; prints one JSON object.
"""

import json

import jax
import numpy as np

import torchlike as torch
from torchlike import nn

assert len(jax.local_devices(backend="cpu")) == 4, "needs XLA_FLAGS=--xla_force_host_platform_device_count=4"
results = {}


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 4))


def train(model, net, steps, compiled=False):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step(x, y):
        loss = nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = torch.compile(step)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        step(torch.randn(16, 8, generator=g), torch.randn(16, 4, generator=g))


def max_diff(a, b):
    return max(float(np.abs(np.asarray(p._data()) - np.asarray(q._data())).max()) for p, q in zip(a, b))


def spec(t):
    sharding = t._data().sharding
    return str(sharding.spec) if hasattr(sharding, "spec") else type(sharding).__name__


# eager: 20 steps equal a single-device run on the same global batch
ref, model = mlp(), mlp()
dp = nn.DataParallel(model)
train(ref, ref, 20)
train(model, dp, 20)
results["eager_max_diff"] = max_diff(ref.parameters(), model.parameters())
results["param_specs"] = sorted({spec(p) for p in model.parameters()})
results["grad_specs"] = sorted({spec(p.grad) for p in model.parameters()})
x = torch.randn(16, 8)
out = dp(x)
results["output_spec"] = spec(out)
results["output_device"] = str(out.device)
results["output_matches"] = bool(np.allclose(out.detach().numpy(), ref(x).detach().numpy(), atol=1e-5))

# a batch that does not split evenly runs replicated, same values
x6 = torch.randn(6, 8)
results["uneven_matches"] = bool(np.allclose(dp(x6).detach().numpy(), ref(x6).detach().numpy(), atol=1e-5))

# state_dict carries torch's "module." prefix and loads into the bare module
sd = dp.state_dict()
results["state_dict_keys"] = list(sd)[:2]
plain = mlp()
plain.load_state_dict({k[len("module.") :]: v for k, v in sd.items()})
results["loaded_matches"] = max_diff(plain.parameters(), model.parameters())

# a parameter replaced by a single-device array is replicated again by the next forward
model[0].weight.data = torch.randn(32, 8)
results["replaced_spec"] = spec(model[0].weight)
dp(x)
results["rereplicated"] = sorted({spec(p) for p in model.parameters()})

# compiled training step (torchlike.compile) over the mesh
ref_c, model_c = mlp(), mlp()
train(ref_c, ref_c, 4, compiled=True)
train(model_c, nn.DataParallel(model_c), 4, compiled=True)
results["compiled_max_diff"] = max_diff(ref_c.parameters(), model_c.parameters())
results["compiled_param_specs"] = sorted({spec(p) for p in model_c.parameters()})
print("RESULT " + json.dumps(results))
