"""Saving and loading a model's state_dict (to an in-memory file)."""

import io

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)
buffer.seek(0)

clone = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
print(clone.load_state_dict(torch.load(buffer)))
x = torch.randn(2, 3)
print(model(x))
print(clone(x))
print(torch.equal(model(x), clone(x)))
