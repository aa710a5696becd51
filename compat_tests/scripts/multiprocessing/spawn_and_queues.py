"""torch.multiprocessing beyond Hogwild: spawn with a process index, tensors through queues into
shared memory, a Pool mapping over tensors, and an error raised in a worker reported in the parent."""

import torch
import torch.multiprocessing as mp


def fill_row(rank, table, done):
    table[rank] = torch.arange(3.0) + 10 * rank  # writes into the parent's shared tensor
    done.put(rank)


def producer(queue, n, consumed):
    for i in range(n):
        queue.put(torch.full((2,), float(i)))
    queue.put(None)
    consumed.wait()  # torch: a process that shares tensors must outlive their reception


def norm(t):
    return round(t.norm().item(), 4)


def broken(rank):
    if rank == 1:
        raise ValueError(f"worker {rank} found a bad batch")


if __name__ == "__main__":
    mp.set_start_method("spawn")
    print("start method:", mp.get_start_method())

    table = torch.zeros(2, 3)
    table.share_memory_()
    done = mp.Queue()
    mp.spawn(fill_row, args=(table, done), nprocs=2)
    print("finished:", sorted(done.get() for _ in range(2)))
    print(table)

    queue, consumed = mp.Queue(), mp.Event()
    p = mp.Process(target=producer, args=(queue, 3, consumed))
    p.start()
    received = []
    while (item := queue.get()) is not None:
        received.append(item)
    consumed.set()
    p.join()
    print("received:", [t.tolist() for t in received], "shared:", [t.is_shared() for t in received])

    with mp.Pool(1) as pool:
        print("norms:", pool.map(norm, [torch.ones(4), torch.arange(5.0), torch.eye(3)]))

    try:
        mp.spawn(broken, nprocs=2)
    except mp.ProcessRaisedException as e:
        lines = str(e).strip().splitlines()
        print("worker failed:", lines[0], "|", lines[-1])
