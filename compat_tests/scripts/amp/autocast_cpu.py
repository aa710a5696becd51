"""Autocast on the CPU: matmuls and linear layers run in bfloat16, reductions stay float32."""
# compare: --rtol 1e-2 --atol 1e-2
# (bfloat16 keeps 8 bits of mantissa: one rounding step is ~0.4% of the value)

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
x = torch.randn(2, 4)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    y = model(x)
    z = x @ x.T
    s = torch.softmax(y.float(), dim=1)
print(y.dtype, z.dtype, s.dtype)
print(y)
print(z)
print(model(x).dtype)
print(torch.is_autocast_enabled("cpu"))
loss = y.float().sum()
loss.backward()
print(model.weight.grad.dtype, model.weight.grad)
