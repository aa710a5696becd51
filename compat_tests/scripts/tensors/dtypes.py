"""dtype conversions and torch's type promotion rules."""

import torch

i = torch.tensor([1, 2, 3])
f = torch.tensor([0.5, 1.5, 2.5])
d = torch.tensor([0.5, 1.5, 2.5], dtype=torch.float64)
b = torch.tensor([True, False, True])

print(i + f, (i + f).dtype)
print(i + 1.5, (i + 1.5).dtype)
print(i * 2, (i * 2).dtype)
print(i / 2, (i / 2).dtype)
print(i // 2, (i // 2).dtype)
print(f + d, (f + d).dtype)
print(f + torch.tensor(1.0, dtype=torch.float64), (f + torch.tensor(1.0, dtype=torch.float64)).dtype)
print(b + b, (b + b).dtype)
print(b + 1, (b + 1).dtype)
print(i.float(), i.double(), f.long(), f.int(), f.bool(), i.half())
print(f.to(torch.int64), f.type(torch.int16), f.to(dtype=torch.float16))
print(torch.tensor([1, 2], dtype=torch.uint8) + torch.tensor([1, 2], dtype=torch.int8))
print(
    torch.tensor([1, 2], dtype=torch.int32) + torch.tensor(1),
    (torch.tensor([1, 2], dtype=torch.int32) + 1).dtype,
)
print(f.dtype.is_floating_point, i.dtype.is_floating_point, i.is_floating_point())
print(torch.float32, torch.float, torch.double, torch.long, torch.int, torch.bool, torch.half)
print(f.element_size(), d.element_size(), i.element_size())
