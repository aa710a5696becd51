"""Seed 004, "Datasets and Dataloaders" and "Transforms": a Dataset with a transform, batched and
shuffled by a DataLoader."""

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class WineLikeDataset(Dataset):
    def __init__(self, transform=None):
        xy = np.arange(60, dtype=np.float32).reshape(12, 5) / 10
        self.n_samples = xy.shape[0]
        self.x_data = xy[:, 1:]
        self.y_data = xy[:, [0]]
        self.transform = transform

    def __getitem__(self, index):
        sample = self.x_data[index], self.y_data[index]
        if self.transform:
            sample = self.transform(sample)
        return sample

    def __len__(self):
        return self.n_samples


class ToTensor:
    def __call__(self, sample):
        inputs, targets = sample
        return torch.from_numpy(inputs), torch.from_numpy(targets)


class MulTransform:
    def __init__(self, factor):
        self.factor = factor

    def __call__(self, sample):
        inputs, targets = sample
        return inputs * self.factor, targets


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, sample):
        for t in self.transforms:
            sample = t(sample)
        return sample


dataset = WineLikeDataset(transform=ToTensor())
features, labels = dataset[0]
print(type(features), type(labels), features, labels)

dataset = WineLikeDataset(transform=Compose([ToTensor(), MulTransform(2)]))
print(dataset[1])

torch.manual_seed(0)
loader = DataLoader(dataset=dataset, batch_size=5, shuffle=True)
print(len(loader))
for epoch in range(2):
    for i, (inputs, targets) in enumerate(loader):
        print(epoch, i, inputs.shape, targets.view(-1))
