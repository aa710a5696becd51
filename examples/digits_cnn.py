"""A CNN classifier on the 8x8 handwritten digits (bundled in examples/data, CC BY 4.0): DataLoader,
tqdm progress bar, accuracy per epoch, a saved checkpoint, and the loss curve as a PNG. Files go to
runs/digits_cnn/ (relative to the current folder; --out changes it). The progress bar and the plot
need the `examples` extra: pip install -e '.[examples]'.

    python examples/digits_cnn.py [--epochs 10] [--device cuda]
    python -m torchlike compare examples/digits_cnn.py --epochs 2
"""

import argparse
import os

import numpy as np

import torchlike as torch
import torchlike.nn as nn
import torchlike.nn.functional as F
from torchlike.utils.data import DataLoader, TensorDataset

try:
    from tqdm import tqdm
except ImportError:  # the progress bar is optional
    print("tqdm not installed (pip install -e '.[examples]'): no progress bar")

    def tqdm(it, **kwargs):
        return it


parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--batch-size", type=int, default=64)
parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
parser.add_argument("--out", default=os.path.join("runs", "digits_cnn"), help="folder for the checkpoint and plot")
args = parser.parse_args()

torch.manual_seed(0)
data = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "digits.npz"))
images = torch.from_numpy(data["images"].astype(np.float32) / 16.0).unsqueeze(1)  # N x 1 x 8 x 8
labels = torch.from_numpy(data["labels"].astype(np.int64))
perm = torch.randperm(len(labels))
train_idx, test_idx = perm[:1500], perm[1500:]
train = TensorDataset(images[train_idx], labels[train_idx])
test = TensorDataset(images[test_idx], labels[test_idx])
train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
test_loader = DataLoader(test, batch_size=256)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1)
        self.dropout = nn.Dropout(0.25)
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = self.dropout(x.flatten(1))
        return F.log_softmax(self.fc(x), dim=1)


model = Net().to(args.device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
print(model)

losses = []
for epoch in range(args.epochs):
    model.train()
    for x, y in tqdm(train_loader, desc=f"epoch {epoch}", leave=False):
        x, y = x.to(args.device), y.to(args.device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in test_loader:
            pred = model(x.to(args.device)).argmax(dim=1)
            correct += (pred == y.to(args.device)).sum().item()
    print(f"epoch {epoch}: last loss {losses[-1]:.4f}, test accuracy {correct / len(test):.4f}")

os.makedirs(args.out, exist_ok=True)
ckpt = os.path.join(args.out, "checkpoint.pt")
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": args.epochs}, ckpt)
restored = Net()
restored.load_state_dict(torch.load(ckpt)["model"])
print(f"checkpoint (model, optimizer, epoch): {ckpt}")
print("checkpoint restored:", all(torch.equal(a.cpu(), b) for a, b in zip(model.state_dict().values(),
                                                                          restored.state_dict().values())))

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.figure(figsize=(6, 3))
    plt.plot(losses)
    plt.xlabel("step")
    plt.ylabel("training loss")
    plt.tight_layout()
    plot = os.path.join(args.out, "loss.png")
    plt.savefig(plot)
    print(f"loss curve: {plot}")
except ImportError:
    print("matplotlib not installed (pip install -e '.[examples]'): no loss curve")
