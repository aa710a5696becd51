"""Complex numbers: real/imag/view_as_real/view_as_complex/conj views (reads, writes, numpy sharing,
gradients) and angle."""

import torch

torch.manual_seed(0)
z = torch.tensor([[1 + 2j, 3 - 1j, 0.5j]], requires_grad=True)
views = {
    "real": lambda: z.real,
    "imag": lambda: z.imag,
    "view_as_real": lambda: torch.view_as_real(z),
    "conj": lambda: z.conj(),
    "resolve_conj": lambda: z.conj().resolve_conj(),
    "conj_physical": lambda: z.conj_physical(),
    "angle": lambda: z.angle(),
    "torch.real": lambda: torch.real(z),
}
for name, make in views.items():
    r = make()
    print(name, r.dtype, tuple(r.shape), r.stride(), r.storage_offset(), r.grad_fn.name(), r.is_conj())
    print(r._base is z, r)

x = torch.randn(2, 3, 2, requires_grad=True)
c = torch.view_as_complex(x)
print(c.dtype, c.shape, c.stride(), c.grad_fn.name(), c)
(c * c).abs().sum().backward()
print(x.grad)

(z.real * 2 + z.imag**2).sum().backward()
print(z.grad)
w = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
(w.conj() * w).real.sum().backward()
print(w.grad)
w2 = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
torch.view_as_real(w2 * 2).pow(2).sum().backward()
print(w2.grad)
w3 = torch.tensor([1 + 2j, 3 - 1j], requires_grad=True)
(w3.angle() * 2).sum().backward()
print(w3.grad)

r = torch.randn(3)
print(r.real is r, r.conj() is r, r.angle(), r.is_conj(), torch.tensor([-1, 0, 2]).angle())
errors = [
    lambda: r.imag,
    lambda: torch.view_as_real(r),
    lambda: torch.view_as_complex(torch.randn(3, 3)),
    lambda: torch.view_as_complex(torch.randn(3, 2).t().contiguous().t()),
    lambda: torch.view_as_complex(torch.ones(3, 2, dtype=torch.long)),
    lambda: torch.view_as_real(torch.tensor([1j]).conj()),
    lambda: torch.tensor([1j]).conj().numpy(),
]
for bad in errors:
    try:
        bad()
    except Exception as e:
        print(type(e).__name__, e)
print(torch.view_as_complex(torch.randn(4, 3, 2)[:, 1:]))

# writes go through to the complex tensor
zz = torch.tensor([1 + 2j, 3 - 1j])
zr = zz.real
zr[0] = 9
print(zz)
zz.imag.mul_(10)
print(zz)
zc = zz.conj()
print(zc, zc.is_conj(), zz.conj().conj().is_conj(), zc[1:].is_conj())
zc[0] = 1 + 1j
print(zz)
zz.real = torch.tensor([5.0, 6.0])
print(zz)
v = torch.view_as_real(zz)
v[1, 1] = -7
print(zz, v.numpy(), zz.real.numpy())
f = torch.zeros(2, 2)
fc = torch.view_as_complex(f)
fc[1] = 3 + 4j
print(f)
print(torch.conj_physical(zz), zz.is_conj(), torch.is_conj(zz.conj()))
