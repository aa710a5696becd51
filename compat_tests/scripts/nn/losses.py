"""Loss functions, module and functional forms, with their gradients."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
logits = torch.randn(4, 3, requires_grad=True)
target = torch.tensor([0, 2, 1, 2])
pred = torch.randn(4, 3, requires_grad=True)
real = torch.randn(4, 3)
prob = torch.rand(4, 3)

print(nn.CrossEntropyLoss()(logits, target))
print(F.cross_entropy(logits, target, reduction="none"))
print(F.cross_entropy(logits, target, label_smoothing=0.1))
print(F.nll_loss(F.log_softmax(logits, dim=1), target))
print(nn.MSELoss()(pred, real), F.mse_loss(pred, real, reduction="sum"))
print(nn.L1Loss()(pred, real), F.smooth_l1_loss(pred, real), F.huber_loss(pred, real, delta=0.5))
print(nn.BCELoss()(torch.sigmoid(pred), prob))
print(nn.BCEWithLogitsLoss()(pred, prob))
print(F.kl_div(F.log_softmax(pred, 1), F.softmax(real, 1), reduction="batchmean"))

loss = F.cross_entropy(logits, target) + F.mse_loss(pred, real)
loss.backward()
print(logits.grad)
print(pred.grad)
