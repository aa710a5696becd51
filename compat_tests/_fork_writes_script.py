"""DataLoader workers that write into tensors (padding collates, in-place normalisation), per start method.

Run as ``python _fork_writes_script.py torch|torchlike CONTEXT...`` (``main`` runs the collate in the main
process first); prints each context's batches.
"""

import importlib
import os
import sys

if __name__ == "__main__":
    os.environ["FORK_WRITES_LIB"] = sys.argv[1]  # spawned and forkserver children import this file again
LIB = os.environ["FORK_WRITES_LIB"]


def collate(batch):
    torch = importlib.import_module(LIB)
    out = torch.zeros(len(batch), 4)
    for j, b in enumerate(batch):
        out[j, :2] = b
    return out


def pad_collate(batch):
    torch = importlib.import_module(LIB)
    n = max(len(x) for x in batch)
    out = torch.full((len(batch), n), -1.0)
    mask = torch.zeros(len(batch), n, dtype=torch.bool)
    for j, x in enumerate(batch):
        out[j, : len(x)] = x
        mask[j, : len(x)] = True
    out[:, 0] -= 0.5
    out.sub_(out.mean()).div_(2.0)
    out[~mask] = 0.0
    out.masked_fill_(out > 1.5, 1.5)
    idx = torch.tensor([0, len(batch) - 1])
    out[idx, 1] = torch.tensor([9.0, 8.0])
    return out.flip(1), mask.sum(1)


class Ragged:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        torch = importlib.import_module(LIB)
        x = torch.arange(1 + i % 3, dtype=torch.float32) * (i + 1)
        x[0] = x[0] + 0.25
        return x


if __name__ == "__main__":
    torch = importlib.import_module(LIB)
    from_lib = importlib.import_module(LIB + ".utils.data")
    data = [torch.ones(2) * i for i in range(8)]
    for ctx in sys.argv[2:]:
        workers, mp = (0, None) if ctx == "main" else (2, ctx)
        a = [x.tolist() for x in from_lib.DataLoader(data, batch_size=4, num_workers=workers, collate_fn=collate,
                                                     multiprocessing_context=mp)]  # fmt: skip
        b = [(x.tolist(), m.tolist()) for x, m in from_lib.DataLoader(
            Ragged(), batch_size=3, num_workers=workers, collate_fn=pad_collate, multiprocessing_context=mp)]
        print(ctx, a, b, flush=True)
