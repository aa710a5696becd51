"""A GAN of two small MLPs learning a 2-D ring of Gaussians: the generator ends in Tanh, the discriminator in
Sigmoid, both trained with BCELoss and Adam(betas=(0.5, 0.999)), one generator step after each
discriminator step, losses printed every few steps, as the classic DCGAN-style training loops do."""

import math

import torch
import torch.nn as nn

torch.manual_seed(0)
latent_dim, batch, steps = 8, 64, 60


def real_batch(n):
    # 8 Gaussians on a circle of radius 0.8 (inside Tanh's range)
    k = torch.randint(0, 8, (n,))
    angle = k.float() * (2 * math.pi / 8)
    centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1) * 0.8
    return centers + 0.05 * torch.randn(n, 2)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(latent_dim, 32),
            nn.LeakyReLU(0.2),
            nn.Linear(32, 32),
            nn.LeakyReLU(0.2),
            nn.Linear(32, 2),
            nn.Tanh(),
        )

    def forward(self, z):
        return self.net(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(2, 32),
            nn.LeakyReLU(0.2),
            nn.Linear(32, 32),
            nn.LeakyReLU(0.2),
            nn.Linear(32, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.net(x)


G, D = Generator(), Discriminator()
criterion = nn.BCELoss()
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
ones = torch.ones(batch, 1)
zeros = torch.zeros(batch, 1)

for step in range(1, steps + 1):
    # discriminator: real -> 1, fake -> 0
    real = real_batch(batch)
    z = torch.randn(batch, latent_dim)
    fake = G(z)
    opt_d.zero_grad()
    d_real = D(real)
    d_fake = D(fake.detach())
    loss_d = criterion(d_real, ones) + criterion(d_fake, zeros)
    loss_d.backward()
    opt_d.step()

    # generator: make D call the fakes real
    opt_g.zero_grad()
    loss_g = criterion(D(fake), ones)
    loss_g.backward()
    opt_g.step()

    if step % 10 == 0:
        print(
            f"step {step:3d}  loss_D {loss_d.item():.4f}  loss_G {loss_g.item():.4f}  "
            f"D(x) {d_real.mean().item():.4f}  D(G(z)) {d_fake.mean().item():.4f}"
        )

with torch.no_grad():
    samples = G(torch.randn(512, latent_dim))
    radius = samples.norm(dim=1)
    print(
        "sample mean",
        [round(v, 3) for v in samples.mean(0).tolist()],
        "std",
        [round(v, 3) for v in samples.std(0).tolist()],
    )
    print(f"mean radius {radius.mean().item():.3f} (real: 0.8)")
