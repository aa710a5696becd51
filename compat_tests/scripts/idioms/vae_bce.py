"""A VAE with the reconstruction loss written as binary_cross_entropy(reduction='sum'): the data has
pixels that are exactly 0 and 1 and the decoder saturates, so torch's clamp of the log at -100 and its
finite gradient there decide the numbers."""

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(3)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(36, 16)
        self.fc21 = nn.Linear(16, 2)
        self.fc22 = nn.Linear(16, 2)
        self.fc3 = nn.Linear(2, 16)
        self.fc4 = nn.Linear(16, 36)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 36))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    bce = F.binary_cross_entropy(recon_x, x.view(-1, 36), reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


data = (torch.rand(32, 1, 6, 6) > 0.5).float()  # exact 0s and 1s
model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(1, 4):
    model.train()
    train_loss = 0.0
    for batch in data.split(8):
        optimizer.zero_grad()
        recon, mu, logvar = model(batch)
        loss = loss_function(recon, batch, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
    print(f"====> Epoch: {epoch} Average loss: {train_loss / len(data):.4f}")

# a saturated decoder output: the loss is clamped, the gradient finite
p = torch.tensor([0.0, 1.0, 0.5, 1.0], requires_grad=True)
y = torch.tensor([1.0, 0.0, 1.0, 1.0])
loss = nn.BCELoss()(p, y)
loss.backward()
print(loss, p.grad)
print(torch.relu(torch.tensor([float("nan"), -1.0, 2.0])), F.hardtanh(torch.tensor([float("nan"), 3.0])))
with torch.no_grad():
    sample = model.decode(torch.randn(4, 2))
print(sample.shape, sample.min() >= 0, sample.max() <= 1)
