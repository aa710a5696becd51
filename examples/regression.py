"""Tabular regression, HW1-style: features -> target, train/valid split, DataLoader, Adam,
early stopping on validation MSE, checkpoint of the best model (written to runs/regression/best.pt,
relative to the current folder; --out changes the folder).

    python examples/regression.py                   # torchlike
    python -m torchlike compare examples/regression.py --epochs 20   # against real torch
"""

import argparse
import math
import os

import torchlike as torch
import torchlike.nn as nn
from torchlike.utils.data import DataLoader, Dataset, random_split

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=200)
parser.add_argument("--patience", type=int, default=20)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--out", default=os.path.join("runs", "regression"), help="folder for the checkpoint")
args = parser.parse_args()

torch.manual_seed(42)

# A synthetic "COVID cases"-like table: 16 features, a smooth nonlinear target plus noise.
N, F = 1200, 16
features = torch.randn(N, F)
weights = torch.linspace(-1.0, 1.0, F)
target = features @ weights + 0.5 * torch.sin(3 * features[:, 0]) + 0.1 * torch.randn(N)


class TableDataset(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


full = TableDataset(features, target)
train_set, valid_set = random_split(full, [0.8, 0.2], generator=torch.Generator().manual_seed(0))
train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
valid_loader = DataLoader(valid_set, batch_size=args.batch_size)

model = nn.Sequential(nn.Linear(F, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
print(model)

best, bad_epochs = math.inf, 0
os.makedirs(args.out, exist_ok=True)
ckpt = os.path.join(args.out, "best.pt")
for epoch in range(args.epochs):
    model.train()
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x).squeeze(1), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
    train_mse = total / len(train_set)

    model.eval()
    with torch.no_grad():
        valid_mse = sum(criterion(model(x).squeeze(1), y).item() * len(x) for x, y in valid_loader) / len(valid_set)
    if epoch % 10 == 0:
        print(f"epoch {epoch:3d}  train mse {train_mse:.4f}  valid mse {valid_mse:.4f}")
    if valid_mse < best:
        best, bad_epochs = valid_mse, 0
        torch.save(model.state_dict(), ckpt)
    else:
        bad_epochs += 1
        if bad_epochs >= args.patience:
            print(f"early stop at epoch {epoch}")
            break

model.load_state_dict(torch.load(ckpt))
with torch.no_grad():
    final = criterion(model(features).squeeze(1), target).item()
print(f"best valid mse {best:.4f}  full-data mse of the best model {final:.4f}")
print(f"best model's checkpoint: {ckpt}")
