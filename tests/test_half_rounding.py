"""Half-precision results round where torch's kernels round them, and those rounding points survive XLA's
fusion (docs/amp.md): one program gives the values of separate ones."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike
from torchlike._ops.registry import round_to

X = np.random.RandomState(0).randn(4096).astype(np.float32)


def _bf16(a: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 and back (round to nearest even), in NumPy."""
    return np.asarray(jnp.asarray(a, jnp.float32).astype(jnp.bfloat16).astype(jnp.float32))


def test_round_to_holds_inside_one_program():
    # a reduction of rounded products, fused into one program: XLA's CPU reduce fusions drop a bare
    # convert(convert(x, bf16), f32) pair; round_to's reduce_precision is kept
    def chain(h, rnd):
        a = rnd(h * jnp.float32(1.37))
        b = rnd(a.astype(jnp.float32) * jnp.float32(1.91))
        return b.astype(jnp.float32).sum()

    rounded = _bf16(_bf16(X * np.float32(1.37)) * np.float32(1.91)).astype(np.float64).sum()
    got = float(jax.jit(lambda h: chain(h, lambda v: round_to(v, jnp.bfloat16)))(X))
    assert got == pytest.approx(rounded, rel=1e-6)


def test_mul_by_number_rounds_once():
    # torch multiplies a bfloat16 tensor by a number's float32 value and rounds once
    x = torchlike.tensor(X).bfloat16()
    want = _bf16(_bf16(X) * np.float32(0.3))
    np.testing.assert_array_equal((x * 0.3).float().numpy(), want)
    np.testing.assert_array_equal((x / 3.3).float().numpy(), _bf16(_bf16(X) / np.float32(3.3)))


@pytest.mark.parametrize("mode", ["eager", "lazy"])
def test_softmax_backward_reads_rounded_result(mode):
    # torch's softmax_backward_data: y * (g - sum(g * y)) in float32 from the rounded y, rounded once
    with torchlike.lazy.mode(mode == "lazy"):
        x = torchlike.tensor(X[:1024].reshape(16, 64)).bfloat16().requires_grad_()
        y = (x * 0.3).softmax(-1)
        (y * 1.7).float().sum().backward()
        yv = y.detach().float().numpy()
        gx = x.grad.float().numpy()
    g = _bf16(np.full_like(yv, 1.7))
    gh = _bf16(yv * (g - (g * yv).sum(-1, keepdims=True)))
    np.testing.assert_array_equal(gx, _bf16(gh * np.float32(0.3)))

