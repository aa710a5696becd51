"""The benchmark workloads, written once against a torch-like module ``lib`` (torch or torchlike).

Each ``make_<name>(lib, device)`` returns ``(step, flops_per_step)`` where ``step()`` runs one
training step (or forward pass) and returns a tensor to synchronise on.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable

# name -> description, used in reports
WORKLOADS = {
    "dispatch_fwd": "100-op elementwise chain on 64x64, forward only",
    "dispatch_fwd_bwd": "100-op elementwise chain on 64x64, forward + backward",
    "mlp": "MLP 784-1024-1024-10, batch 128, Adam",
    "cnn": "LeNet-style CNN, 1x28x28, batch 64, SGD momentum",
    "gpt": "GPT decoder, 6 layers, d=512, 8 heads, seq 256, batch 16, bf16 autocast, AdamW",
    "matmul_mlp": "MLP 4096-8192-8192-4096, batch 2048, bf16 autocast, SGD",
    "gpt_fp32": "the GPT decoder in float32 (no autocast): the memory baseline for bf16",
}


def _chain(lib: Any, x: Any) -> Any:
    y = x
    for i in range(100):
        y = (y * 1.01).sin() if i % 2 else y + 0.5
    return y


def make_dispatch_fwd(lib: Any, device: str, compiled: Callable | None = None) -> tuple:
    lib.manual_seed(0)
    x = lib.randn(64, 64, device=device)
    f = (lambda: _chain(lib, x)) if compiled is None else compiled(lambda: _chain(lib, x))
    return f, 0


def make_dispatch_fwd_bwd(lib: Any, device: str, compiled: Callable | None = None) -> tuple:
    lib.manual_seed(0)
    x = lib.randn(64, 64, device=device, requires_grad=True)

    def step():
        x.grad = None
        y = _chain(lib, x).sum()
        y.backward()
        return y

    return (step if compiled is None else compiled(step)), 0


def _train_step(lib: Any, model: Any, opt: Any, loss_fn: Callable, x: Any, y: Any, dtype: Any = None,
                device: str = "cpu") -> Callable:
    def step():
        opt.zero_grad(set_to_none=True)
        if dtype is not None:
            with lib.autocast(device_type=device, dtype=dtype):
                loss = loss_fn(model(x), y)
        else:
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def make_mlp(lib: Any, device: str, compiled: Callable | None = None) -> tuple:
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10))
    model.to(device)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.randn(128, 784, device=device)
    y = lib.randint(0, 10, (128,), device=device)
    step = _train_step(lib, model, opt, nn.functional.cross_entropy, x, y)
    flops = 6 * 128 * (784 * 1024 + 1024 * 1024 + 1024 * 10)
    return (step if compiled is None else compiled(step)), flops


class _LeNetBuilder:
    @staticmethod
    def build(lib: Any) -> Any:
        nn = lib.nn
        F = nn.functional

        class LeNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv1(x)), 2)
                x = F.max_pool2d(F.relu(self.conv2(x)), 2)
                x = x.flatten(1)
                return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))

        return LeNet()


def make_cnn(lib: Any, device: str, compiled: Callable | None = None) -> tuple:
    nn = lib.nn
    lib.manual_seed(0)
    model = _LeNetBuilder.build(lib).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = lib.randn(64, 1, 28, 28, device=device)
    y = lib.randint(0, 10, (64,), device=device)
    step = _train_step(lib, model, opt, nn.functional.cross_entropy, x, y)
    conv = 2 * 64 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 25 * 6)
    fc = 2 * 64 * (400 * 120 + 120 * 84 + 84 * 10)
    return (step if compiled is None else compiled(step)), 3 * (conv + fc)


# BENCH_SMALL=1 shrinks the large workloads (a CPU dry run of bench/gpu_matrix.sh checks the scripts, not speed)
SMALL = os.environ.get("BENCH_SMALL", "0") == "1"
GPT_CFG = dict(layers=2, d=64, heads=4, seq=32, batch=4, vocab=128) if SMALL else \
    dict(layers=6, d=512, heads=8, seq=256, batch=16, vocab=4096)  # fmt: skip
MATMUL_MLP = dict(width=256, batch=64) if SMALL else dict(width=4096, batch=2048)


def build_gpt(lib: Any, cfg: dict = GPT_CFG) -> Any:
    nn = lib.nn
    F = nn.functional
    d, h = cfg["d"], cfg["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, h, d // h).transpose(1, 2)
            k = k.view(b, t, h, d // h).transpose(1, 2)
            v = v.view(b, t, h, d // h).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(cfg["vocab"], d)
            self.pos = nn.Embedding(cfg["seq"], d)
            self.blocks = nn.ModuleList([Block() for _ in range(cfg["layers"])])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, cfg["vocab"], bias=False)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tok(idx) + self.pos(lib.arange(t, device=idx.device))
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return GPT()


def make_gpt(lib: Any, device: str, compiled: Callable | None = None, cfg: dict = GPT_CFG,
             autocast: bool = True) -> tuple:
    nn = lib.nn
    lib.manual_seed(0)
    model = build_gpt(lib, cfg).to(device)
    opt = lib.optim.AdamW(model.parameters(), lr=3e-4)
    x = lib.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device=device)
    y = lib.randint(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), device=device)

    def loss_fn(logits, target):
        return nn.functional.cross_entropy(logits.reshape(-1, cfg["vocab"]), target.reshape(-1))

    dtype = lib.bfloat16 if autocast else None
    step = _train_step(lib, model, opt, loss_fn, x, y, dtype, device.split(":")[0])
    n_params = sum(p.numel() for p in model.parameters())
    tokens = cfg["batch"] * cfg["seq"]
    attn = 2 * cfg["layers"] * cfg["batch"] * cfg["heads"] * cfg["seq"] ** 2 * (cfg["d"] // cfg["heads"]) * 2
    return (step if compiled is None else compiled(step)), 6 * n_params * tokens + 3 * attn


def make_matmul_mlp(lib: Any, device: str, compiled: Callable | None = None, width: int = MATMUL_MLP["width"],
                    batch: int = MATMUL_MLP["batch"]) -> tuple:
    nn = lib.nn
    lib.manual_seed(0)
    w, w2 = width, 2 * width
    model = nn.Sequential(nn.Linear(w, w2), nn.ReLU(), nn.Linear(w2, w2), nn.ReLU(), nn.Linear(w2, w))
    model.to(device)
    opt = lib.optim.SGD(model.parameters(), lr=1e-3)
    x = lib.randn(batch, w, device=device)
    y = lib.randn(batch, w, device=device)
    step = _train_step(lib, model, opt, nn.functional.mse_loss, x, y, lib.bfloat16, device.split(":")[0])
    flops = 6 * batch * (w * w2 + w2 * w2 + w2 * w)
    return (step if compiled is None else compiled(step)), flops


def make_gpt_fp32(lib: Any, device: str, compiled: Callable | None = None) -> tuple:
    return make_gpt(lib, device, compiled, autocast=False)


MAKERS = {name: globals()[f"make_{name}"] for name in WORKLOADS}
_ = math
