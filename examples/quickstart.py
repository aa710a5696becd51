"""torchlike quick start: the seeds' story, written as a plain PyTorch script.

    python examples/quickstart.py            # on torchlike
    python -m torchlike compare examples/quickstart.py   # side by side with real torch

Only the import differs from a torch script (and ``python -m torchlike run`` removes even that).
"""

import argparse

import numpy as np

import torchlike as torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=200)
args = parser.parse_args()

torch.manual_seed(0)

# --- tensors -------------------------------------------------------------------------------------
x = torch.tensor([[1, -1], [-1, 1]])
print("x =", x)
print("x.shape =", x.shape, " x.dtype =", x.dtype)
z = torch.zeros([2, 3])
print("z.unsqueeze(1).shape =", z.unsqueeze(1).shape, " z.transpose(0, 1).shape =", z.transpose(0, 1).shape)
w = torch.cat([torch.zeros([2, 1, 3]), torch.zeros([2, 3, 3])], dim=1)
print("cat along dim 1 ->", w.shape)
print("ones(5, 3).sum(0) =", torch.ones(5, 3, dtype=torch.double).sum(0))

# --- the NumPy bridge shares memory ----------------------------------------------------------------
a = torch.ones(5)
b = a.numpy()
a.add_(1)
print("after a.add_(1): a =", a, " b = a.numpy() =", b)
c = np.ones(5)
d = torch.from_numpy(c)
np.add(c, 1, out=c)
print("after np.add(c, 1, out=c): d = from_numpy(c) =", d)

# --- autograd ---------------------------------------------------------------------------------------
x = torch.ones(2, 2, requires_grad=True)
y = x + 2
out = (y * y * 3).mean()
print("y = x + 2 =", y)
print("out = (3 * y * y).mean() =", out)
out.backward()
print("x.grad after out.backward() =", x.grad)

# --- a tiny training loop: linear regression by hand ------------------------------------------------
X = torch.arange(0.0, 1.0, 0.05).view(-1, 1)
Y = 3 * X + 0.5
wt = torch.zeros(1, 1, requires_grad=True)
bias = torch.zeros(1, requires_grad=True)
lr = 0.5
for step in range(args.steps):
    pred = X @ wt + bias
    loss = ((pred - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        wt -= lr * wt.grad
        bias -= lr * bias.grad
        wt.grad.zero_()
        bias.grad.zero_()
    if step % 50 == 0 or step == args.steps - 1:
        print(f"step {step:3d} loss {loss.item():.6f}")
print(f"fitted Y = w X + b with w = {wt.item():.4f} (true 3), b = {bias.item():.4f} (true 0.5)")
