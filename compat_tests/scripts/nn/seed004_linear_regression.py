"""Seed 004, "Training Pipeline": nn.Linear, nn.MSELoss and optim.SGD on a 1-feature regression."""

import torch
import torch.nn as nn

X = torch.tensor([[1], [2], [3], [4]], dtype=torch.float32)
Y = torch.tensor([[2], [4], [6], [8]], dtype=torch.float32)
X_test = torch.tensor([5], dtype=torch.float32)
n_samples, n_features = X.shape
print(n_samples, n_features)

torch.manual_seed(0)
input_size = output_size = n_features
model = nn.Linear(input_size, output_size)
print(f"Prediction before training: f(5) = {model(X_test).item():.3f}")

learning_rate = 0.01
loss = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
for epoch in range(100):
    y_predicted = model(X)
    cost = loss(Y, y_predicted)
    cost.backward()
    optimizer.step()
    optimizer.zero_grad()
    if epoch % 10 == 0:
        [w, b] = model.parameters()
        print(f"epoch {epoch + 1}: w = {w[0][0].item():.3f}, loss = {cost.item():.8f}")
print(f"Prediction after training: f(5) = {model(X_test).item():.3f}")
print(list(model.parameters()))
