"""Seed 002, "Train a Simple Network": Sequential model, MSELoss, manual parameter updates."""

import torch
from torch.autograd import Variable

torch.manual_seed(0)
N, D_in, H, D_out = 64, 1000, 100, 10
x = Variable(torch.randn(N, D_in))
y = Variable(torch.randn(N, D_out), requires_grad=False)

model = torch.nn.Sequential(torch.nn.Linear(D_in, H), torch.nn.ReLU(), torch.nn.Linear(H, D_out))
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-4
for t in range(30):
    y_pred = model(x)
    loss = loss_fn(y_pred, y)
    if t % 5 == 0:
        print(t, loss.item())
    model.zero_grad()
    loss.backward()
    for param in model.parameters():
        param.data -= learning_rate * param.grad.data
print(model[0].weight.grad.shape, model[2].bias)
