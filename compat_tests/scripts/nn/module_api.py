"""The nn.Module API: parameters, buffers, children, state_dict, train/eval, apply, hooks, init."""

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Linear(4, 8),
    nn.BatchNorm1d(8),
    nn.ReLU(),
    nn.Dropout(0.5),
    nn.Linear(8, 2),
)
print(model)
print([name for name, _ in model.named_parameters()])
print([name for name, _ in model.named_buffers()])
print(sum(p.numel() for p in model.parameters() if p.requires_grad))
print(model.training, model.eval().training, model[3].training)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


model.apply(init_weights)
print(model[0].weight)
x = torch.randn(5, 4)
model.train()
print(model(x))
print(model[1].running_mean, model[1].num_batches_tracked)
model.eval()
print(model(x))

seen = []
handle = model[2].register_forward_hook(lambda mod, inp, out: seen.append(out.shape))
model(x)
handle.remove()
model(x)
print(seen)
model.requires_grad_(False)
print(any(p.requires_grad for p in model.parameters()))
print(list(model.state_dict().keys()))
