"""CIFAR-10 training the usual way: torchvision's CIFAR10 read from local files, RandomCrop + flip + Normalize,
a CIFAR-style resnet18, SGD with momentum and a cosine learning-rate schedule. Plain torch + torchvision code:

    python -m torchlike run examples/cifar_resnet.py --steps 5      # torchlike (torchvision -> torchlike.vision)
    python examples/cifar_resnet.py --steps 5                       # torch + torchvision, same printout

Without --data it trains on a tiny fake CIFAR-10 folder written (once) to ./runs/cifar_resnet/data in the
real file format, so it runs anywhere in seconds. Point --data at a folder holding cifar-10-batches-py to
train on the real dataset.
"""

import argparse
import os
import pickle

import numpy as np
import torch
import torch.nn as nn
import torchvision
from torchvision import datasets, transforms

parser = argparse.ArgumentParser()
parser.add_argument("--data", default=None, help="folder holding cifar-10-batches-py (default: a fake one)")
parser.add_argument("--steps", type=int, default=20, help="training steps (batches)")
parser.add_argument("--batch-size", type=int, default=32)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--lr", type=float, default=0.01)
args = parser.parse_args()

MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)


def write_fake_cifar(root, n_train=256, n_test=64):
    """Class-dependent colour blobs with noise, pickled exactly like the real CIFAR-10 python batches."""
    folder = os.path.join(root, "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    palette = rng.integers(40, 216, (10, 3))
    for name, n in (("data_batch_1", n_train), ("test_batch", n_test)):
        labels = rng.integers(0, 10, n)
        yy, xx = np.mgrid[0:32, 0:32]
        imgs = np.empty((n, 32, 32, 3), np.uint8)
        for i, c in enumerate(labels):
            cy, cx = rng.integers(8, 24, 2)
            blob = ((yy - cy) ** 2 + (xx - cx) ** 2 < 60)[..., None]
            noise = rng.normal(0, 20, (32, 32, 3))
            imgs[i] = np.clip(np.where(blob, palette[c], 255 - palette[c]) + noise, 0, 255)
        data = imgs.transpose(0, 3, 1, 2).reshape(n, -1)  # CIFAR stores rows of R, G, B planes
        with open(os.path.join(folder, name), "wb") as f:
            pickle.dump({"data": data, "labels": labels.tolist()}, f)
    with open(os.path.join(folder, "batches.meta"), "wb") as f:
        pickle.dump({"label_names": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                                     "ship", "truck"]}, f)  # fmt: skip


class FakeCIFAR10(datasets.CIFAR10):
    """The fake folder has one train batch and no checksums: torchvision skips the md5 check when it is None."""

    train_list = [["data_batch_1", None]]
    test_list = [["test_batch", None]]
    meta = {"filename": "batches.meta", "key": "label_names", "md5": None}


if args.data is None:
    root = os.path.join("runs", "cifar_resnet", "data")
    if not os.path.isdir(os.path.join(root, "cifar-10-batches-py")):
        write_fake_cifar(root)
    CIFAR = FakeCIFAR10
else:
    root, CIFAR = args.data, datasets.CIFAR10

train_tf = transforms.Compose([
    transforms.RandomCrop(32, padding=4),
    transforms.RandomHorizontalFlip(),
    transforms.ToTensor(),
    transforms.Normalize(MEAN, STD),
])  # fmt: skip
test_tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])

torch.manual_seed(0)
train_set = CIFAR(root, train=True, transform=train_tf)
test_set = CIFAR(root, train=False, transform=test_tf)
print(f"train {len(train_set)} test {len(test_set)} classes {train_set.classes[:3]}...")
train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                                           num_workers=args.workers, drop_last=True)  # fmt: skip
test_loader = torch.utils.data.DataLoader(test_set, batch_size=64, num_workers=0)

model = torchvision.models.resnet18(num_classes=10)
model.conv1 = nn.Conv2d(3, 64, kernel_size=3, stride=1, padding=1, bias=False)  # CIFAR stem: 32x32 inputs
model.maxpool = nn.Identity()
optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
criterion = nn.CrossEntropyLoss()

step = 0
while step < args.steps:
    model.train()
    for images, labels in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        scheduler.step()
        step += 1
        print(f"step {step:3d}  loss {loss.item():.4f}  lr {scheduler.get_last_lr()[0]:.5f}")
        if step == args.steps:
            break

model.eval()
correct = total = 0
with torch.no_grad():
    for images, labels in test_loader:
        correct += (model(images).argmax(1) == labels).sum().item()
        total += labels.numel()
print(f"test accuracy {correct / total:.3f} ({correct}/{total})")
