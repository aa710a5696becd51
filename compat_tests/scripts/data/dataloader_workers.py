"""A DataLoader with worker processes: same batches, in order, as with none."""

import torch
from torch.utils.data import DataLoader, TensorDataset

if __name__ == "__main__":
    data = TensorDataset(torch.arange(20.0).view(10, 2), torch.arange(10))
    torch.manual_seed(1)
    for xb, yb in DataLoader(data, batch_size=4, shuffle=True, num_workers=2):
        print(xb.sum(1), yb)
    for xb, yb in DataLoader(data, batch_size=3, num_workers=2, drop_last=True):
        print(xb.shape, yb)
