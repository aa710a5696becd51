"""JAX interop: from_jax / Tensor.jax(), DLPack, and func.to_jax for training a model with optax."""

import jax
import jax.numpy as jnp
import numpy as np

import torchlike as torch


def test_from_jax_and_back():
    a = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    t = torch.from_jax(a)
    assert t.shape == (2, 3) and t.dtype is torch.float32
    assert t.jax() is a
    assert (t * 2).jax().tolist() == (a * 2).tolist()


def test_dlpack_round_trip():
    t = torch.arange(5.0)
    cap = torch.utils.dlpack.to_dlpack(t)
    back = torch.utils.dlpack.from_dlpack(cap)
    assert back.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    n = np.arange(3.0)
    assert torch.from_dlpack(n).tolist() == [0.0, 1.0, 2.0]


def test_to_jax_trains_with_jax_grad():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    apply, params = torch.func.to_jax(model)
    x = jnp.linspace(-1, 1, 30, dtype=jnp.float32).reshape(10, 3)
    y = x.sum(1, keepdims=True)
    expected = model(torch.from_jax(x)).detach().jax()
    assert np.allclose(apply(params, x), expected, atol=1e-6)

    def loss(p):
        return jnp.mean((apply(p, x) - y) ** 2)

    step = jax.jit(lambda p: jax.tree_util.tree_map(lambda w, g: w - 0.1 * g, p, jax.grad(loss)(p)))
    l0 = loss(params)
    for _ in range(50):
        params = step(params)
    assert loss(params) < l0 * 0.5
