"""Hogwild training: worker processes update one model's shared parameters in place, with no locks
(the mnist_hogwild pattern on a synthetic two-class problem). The interleaving of the workers'
updates differs from run to run, so only what does not depend on it is printed."""

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

NUM_PROCESSES = 2
EPOCHS = 3


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 2)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    y = (x[:, :4].sum(1) > x[:, 4:].sum(1)).long()
    return TensorDataset(x, y)


def train(rank, model, results):
    torch.manual_seed(1 + rank)  # each worker its own shuffling, as in the example
    loader = DataLoader(make_data(256, 10 + rank), batch_size=32, shuffle=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    steps = 0
    model.train()
    for _ in range(EPOCHS):
        for data, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()  # writes straight into the shared parameters
            steps += 1
    results.put((rank, steps, all(p.is_shared() for p in model.parameters())))


def evaluate(model, data):
    model.eval()
    with torch.no_grad():
        x, y = data.tensors
        out = model(x)
        loss = F.nll_loss(out, y).item()
        accuracy = (out.argmax(1) == y).float().mean().item()
    return loss, accuracy


if __name__ == "__main__":
    # as in torch's Hogwild example: one intra-op thread per process, so the workers share the cores
    # (torch's forked children also avoid inheriting a busy thread pool)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Net()
    model.share_memory()  # gradients are allocated lazily, so they are not shared
    test = make_data(512, 99)
    loss0, acc0 = evaluate(model, test)
    print(f"initial loss {loss0:.4f} accuracy {acc0:.3f}")
    print("parameters shared:", all(p.is_shared() for p in model.parameters()))
    print("weight sum before:", round(model.fc1.weight.sum().item(), 4))

    results = mp.Queue()
    processes = []
    for rank in range(NUM_PROCESSES):
        p = mp.Process(target=train, args=(rank, model, results))
        p.start()
        processes.append(p)
    reports = sorted(results.get() for _ in processes)
    for p in processes:
        p.join()
    print("exit codes:", [p.exitcode for p in processes])
    for rank, steps, shared in reports:
        print(f"worker {rank}: {steps} steps, saw shared parameters: {shared}")

    loss1, acc1 = evaluate(model, test)
    print("the parent sees the workers' updates:", round(model.fc1.weight.sum().item(), 4) != round(
        float(torch.tensor(0.0)), 4) and loss1 < loss0)
    print("trained well:", acc1 > 0.85, loss1 < 0.5 * loss0)
