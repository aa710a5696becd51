"""Seed 004, "Gradient Calculation": grad_fn, backward, no_grad updates, zeroing gradients, and
gradient descent written by hand."""

import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x + 2
print(y)
z = y * y * 2
print(z)
z = z.mean()
print(z)
z.backward()
print(x.grad)

v = torch.tensor([0.1, 1.0, 0.001])
x.grad.zero_()
(x * x).backward(v)
print(x.grad)

# requires_grad_ / detach / no_grad
print(x.detach())
with torch.no_grad():
    print(x + 2)

# Gradients accumulate until zeroed
weights = torch.ones(4, requires_grad=True)
for epoch in range(3):
    model_output = (weights * 3).sum()
    model_output.backward()
    print(weights.grad)
    weights.grad.zero_()

# Linear regression f = w * x by gradient descent, all by hand
X = torch.tensor([1, 2, 3, 4], dtype=torch.float32)
Y = torch.tensor([2, 4, 6, 8], dtype=torch.float32)
w = torch.tensor(0.0, dtype=torch.float32, requires_grad=True)


def forward(x):
    return w * x


def loss(y, y_predicted):
    return ((y_predicted - y) ** 2).mean()


print(f"Prediction before training: f(5) = {forward(5).item():.3f}")
learning_rate = 0.01
for epoch in range(20):
    y_pred = forward(X)
    cost = loss(Y, y_pred)
    cost.backward()
    with torch.no_grad():
        w -= learning_rate * w.grad
    w.grad.zero_()
    if epoch % 2 == 0:
        print(f"epoch {epoch + 1}: w = {w.item():.3f}, loss = {cost.item():.8f}")
print(f"Prediction after training: f(5) = {forward(5).item():.3f}")
print(w)
