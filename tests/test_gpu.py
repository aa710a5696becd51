"""GPU behaviour (JAX's GPU backend). Skipped unless JAX sees a GPU; run on the GPU machine with
``python -m pytest -m gpu tests/test_gpu.py``."""

import numpy as np
import pytest

import torchlike as torch
import torchlike.nn as nn

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU visible to JAX")]


def test_device_queries_and_placement():
    assert torch.cuda.device_count() >= 1
    assert isinstance(torch.cuda.get_device_name(0), str)
    x = torch.ones(3, device="cuda")
    assert x.is_cuda and str(x.device) == "cuda:0"
    assert next(iter(x._data().devices())).platform == "gpu"
    y = x.cpu()
    assert not y.is_cuda and y.tolist() == [1.0, 1.0, 1.0]
    z = torch.ones(3).cuda() + x
    assert z.is_cuda
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.ones(3) + x
    assert (torch.tensor(2.0) * x).is_cuda  # a 0-dim CPU tensor may join CUDA tensors
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()


def test_float32_matmul_is_full_precision_by_default():
    rng = np.random.RandomState(0)
    a = rng.randn(256, 256).astype(np.float32)
    b = rng.randn(256, 256).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = (torch.tensor(a, device="cuda") @ torch.tensor(b, device="cuda")).cpu().numpy()
    assert np.abs(got - ref).max() < 1e-3  # TF32 would be ~1e-1 off
    torch.set_float32_matmul_precision("high")
    try:
        tf32 = (torch.tensor(a, device="cuda") @ torch.tensor(b, device="cuda")).cpu().numpy()
        assert np.abs(tf32 - ref).max() > 1e-3
    finally:
        torch.set_float32_matmul_precision("highest")


def test_memory_stats_and_sync():
    x = torch.randn(1024, 1024, device="cuda")
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() >= 4 * 1024 * 1024
    assert torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated()
    del x


def test_random_on_cuda_is_reproducible_per_seed():
    torch.manual_seed(3)
    a = torch.randn(5, device="cuda")
    torch.manual_seed(3)
    b = torch.randn(5, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())
    torch.cuda.manual_seed_all(4)
    c = torch.rand(5, device="cuda")
    assert not torch.equal(a.cpu(), c.cpu())


def test_autocast_bf16_dtypes_and_grad_dtypes():
    model = nn.Linear(8, 4).cuda()
    x = torch.randn(2, 8, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = model(x)
        s = y.float().softmax(-1)
        z = y.exp()
        w = torch.cat([y, x[:, :4]], 1)
    assert y.dtype is torch.bfloat16 and s.dtype is torch.float32 and z.dtype is torch.float32
    assert w.dtype is torch.float32
    y.float().sum().backward()
    assert model.weight.grad.dtype is torch.float32


def test_grad_scaler_fp16_training_converges():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cuda")
    x = torch.randn(64, 16, device="cuda")
    y = x.sum(1, keepdim=True)
    first = None
    for _ in range(100):
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x).float(), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        first = first if first is not None else loss.item()
    assert loss.item() < 0.2 * first
    assert scaler.get_scale() > 0


def test_compile_training_step_on_cuda():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(32, 8, device="cuda")
    y = torch.randint(0, 2, (32,), device="cuda")

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    f = torch.compile(step)
    losses = [f().item() for _ in range(20)]
    assert losses[-1] < losses[0]
    assert next(iter(model[0].weight._data().devices())).platform == "gpu"


def test_save_and_load_cuda_tensors(tmp_path):
    x = torch.arange(6.0, device="cuda")
    torch.save({"x": x}, tmp_path / "c.pt")
    assert torch.load(tmp_path / "c.pt")["x"].is_cuda
    assert not torch.load(tmp_path / "c.pt", map_location="cpu")["x"].is_cuda


def test_results_of_ops_stay_on_the_gpu():
    # arrays behind CUDA tensors must be committed to the GPU, or XLA moves work to the default (CPU) device
    a = torch.ones(8, 8, device="cuda")
    b = torch.zeros(8, 8, device="cuda")
    for t in (a, b, a + b, a * 2, a @ b, a.sum(1), torch.rand(3, device="cuda"), a[torch.tensor([1, 2], device="cuda")]):
        arr = t._data()
        assert next(iter(arr.devices())).platform == "gpu"
        assert arr.committed
