"""The pruning tutorial's steps (prune, inspect masks and buffers, iterate, remove, global pruning),
then the profiler recipe's record_function ranges and a gradcheck of a custom autograd Function."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune
from torch.profiler import ProfilerActivity, profile, record_function

torch.manual_seed(7)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(torch.flatten(x, 1))))


model = LeNet()
module = model.conv1
prune.random_unstructured(module, name="weight", amount=0.3)
print(list(module.named_parameters())[0][0], [n for n, _ in module.named_buffers()])
print(module.weight_mask.sum(), module._forward_pre_hooks)
prune.l1_unstructured(module, name="bias", amount=3)
print(module.bias)
prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
hook = [h for h in module._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
print([type(m).__name__ for m in hook])
print(module.weight_mask.sum(dim=(1, 2, 3)))
prune.remove(module, "weight")
print([n for n, _ in module.named_parameters()])
print(float(torch.sum(module.weight == 0)))

parameters_to_prune = ((model.conv2, "weight"), (model.fc1, "weight"), (model.fc2, "weight"))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
for m, name in parameters_to_prune:
    print(f"Sparsity in {type(m).__name__}.{name}: {100.0 * float(torch.sum(getattr(m, name) == 0)) / getattr(m, name).nelement():.2f}%")
print(prune.is_pruned(model))

inputs = torch.randn(2, 1, 28, 28)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    with record_function("model_inference"):
        for _ in range(3):
            with record_function("forward"):
                out = model(inputs)
print(out.shape)
print(sorted((e.key, e.count) for e in prof.key_averages() if e.is_user_annotation))


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 3 * x**2 * grad


x = torch.randn(4, dtype=torch.double, requires_grad=True)
print(torch.autograd.gradcheck(Cube.apply, (x,)), torch.autograd.gradgradcheck(Cube.apply, (x,)))
