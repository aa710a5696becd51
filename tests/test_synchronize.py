"""torchlike.cuda.synchronize() is a real barrier: it waits for dispatched computations."""

import time

import jax
import jax.numpy as jnp
import pytest

import torchlike as torch
from torchlike.cuda import device_barrier


@jax.jit
def _slow(x):
    for _ in range(12):
        x = jnp.tanh(x @ x) * 0.5
    return x


def test_device_barrier_waits_on_the_cpu():
    dev = jax.devices("cpu")[0]
    x = jax.device_put(jnp.full((600, 600), 0.01, jnp.float32), dev)
    _slow(x).block_until_ready()  # compiled and warm
    y = _slow(x)
    if y.is_ready():
        pytest.skip("the CPU ran the program synchronously: nothing to wait for")
    device_barrier(dev)
    assert y.is_ready()


def test_device_barrier_asks_the_devices_own_backend(monkeypatch):
    # On a GPU host jax.live_arrays() lists the GPU backend's arrays only, so a barrier on the CPU
    # device that asked the default backend waited for nothing (the H200 failure of the test above).
    real = jax.live_arrays
    monkeypatch.setattr(jax, "live_arrays", lambda platform=None: real(platform) if platform == "cpu" else [])
    dev = jax.devices("cpu")[0]
    x = jax.device_put(jnp.full((600, 600), 0.01, jnp.float32), dev)
    _slow(x).block_until_ready()
    y = _slow(x)
    if y.is_ready():
        pytest.skip("the CPU ran the program synchronously: nothing to wait for")
    device_barrier(dev)
    assert y.is_ready()


def test_device_barrier_ignores_donated_arrays():
    dev = jax.devices("cpu")[0]
    f = jax.jit(lambda a: a + 1, donate_argnums=0)
    a = jax.device_put(jnp.ones(8), dev)
    b = f(a)
    assert a.is_deleted()
    device_barrier(dev)
    assert b.is_ready()


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU visible to JAX")
def test_synchronize_waits_for_gpu_work():
    x = torch.randn(8192, 8192, device="cuda")
    y = x @ x
    torch.cuda.synchronize()  # compiled and idle

    def timed(sync: bool) -> tuple:
        t0 = time.perf_counter()
        z = x
        for _ in range(20):
            z = torch.tanh(z @ x)
        if sync:
            torch.cuda.synchronize()
        return time.perf_counter() - t0, z

    t_async, z = timed(False)
    torch.cuda.synchronize()
    t_sync, z2 = timed(True)
    assert z2._data().is_ready()
    assert t_async < 0.5 * t_sync, (t_async, t_sync)
    del y, z
