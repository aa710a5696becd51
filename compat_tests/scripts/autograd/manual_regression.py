"""Linear regression by gradient descent, gradients computed by hand and by autograd; both agree."""

import torch

torch.manual_seed(0)
X = torch.randn(20, 3)
true_w = torch.tensor([[2.0], [-3.4], [1.5]])
Y = X @ true_w + 4.2 + 0.01 * torch.randn(20, 1)

# by hand
w = torch.zeros(3, 1)
b = torch.zeros(1)
lr = 0.1
for step in range(30):
    pred = X @ w + b
    err = pred - Y
    loss = (err**2).mean()
    grad_w = 2 * X.t() @ err / X.shape[0]
    grad_b = 2 * err.mean(0)
    w -= lr * grad_w
    b -= lr * grad_b
    if step % 5 == 0:
        print(f"manual step {step}: loss {loss.item():.6f}")
print(w.squeeze(), b)

# with autograd
w2 = torch.zeros(3, 1, requires_grad=True)
b2 = torch.zeros(1, requires_grad=True)
for step in range(30):
    loss = ((X @ w2 + b2 - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w2 -= lr * w2.grad
        b2 -= lr * b2.grad
        w2.grad.zero_()
        b2.grad.zero_()
    if step % 5 == 0:
        print(f"autograd step {step}: loss {loss.item():.6f}")
print(w2.squeeze(), b2)
print(torch.allclose(w, w2, atol=1e-5), torch.allclose(b, b2, atol=1e-5))
