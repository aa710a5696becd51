"""The NumPy jaxpr evaluator that forked DataLoader workers run kernels with, against JAX itself."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from torchlike.utils.data import _numpy_eval

X = np.array([[-3.5, 2.5, 0.5, -0.5], [1.5, -2.5, 7.0, 3.25], [0.0, -1.0, 4.5, 2.0]], np.float32)
I = np.array([[-7, 7, 3, -3], [9, -9, 2, 5], [0, 1, -4, 8]], np.int32)
IDX = np.array([2, 0, -1, 5], np.int32)

CASES = {
    "int_div_rem": (lambda a, b: (lax.div(a, b), lax.rem(a, b), a // b, a % b), [I, np.full_like(I, -2)]),
    "float_ops": (lambda x: (jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.tanh(x), jax.nn.sigmoid(x), lax.rsqrt(x * x + 1)), [X]),
    "round": (lambda x: (jnp.round(x), lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), jnp.floor(x), jnp.ceil(x)), [X]),
    "compare_select": (lambda x: (jnp.where(x > 0, x, -x), jnp.clip(x, -1, 1), jnp.maximum(x, 0.5), x == 0.5), [X]),
    "shape": (lambda x: (x.T, x.reshape(4, 3), x[None, :, 1], jnp.flip(x, 1), x[::2, 1:3], jnp.tile(x, (2, 1))), [X]),
    "concat_stack_split": (lambda x: (jnp.concatenate([x, x], 1), jnp.stack([x, x]), *jnp.split(x, [1, 3], axis=1)), [X]),
    "pad": (lambda x: (jnp.pad(x, ((1, 2), (0, 1))), lax.pad(x, np.float32(0), ((1, -1, 1), (-1, 2, 0)))), [X]),
    "reductions": (lambda x: (x.sum(0), x.max(1), x.min(), x.prod(1), jnp.argmax(x, 1), jnp.argmin(x, 0), (x > 0).all(1)), [X]),
    "cumulative": (lambda x: (jnp.cumsum(x, 1), jnp.cumprod(x, 0), lax.cummax(x, 1), lax.cummin(x, 0, reverse=True)), [X]),
    "dot": (lambda x: (x @ x.T, jnp.einsum("ij,kj->ik", x, x), lax.dot_general(x[None], x[None], (((2,), (2,)), ((0,), (0,))))), [X]),
    "sort": (lambda x: (jnp.sort(x, 1), jnp.argsort(x, 0), lax.sort((x[0], x[1]), num_keys=1)), [X]),
    "gather": (lambda x, i: (x[:, i % 4], x[i[:3] % 3], jnp.take(x, i, axis=1, mode="clip"), jnp.take(x, i, axis=1, mode="fill", fill_value=-1)), [X, IDX]),
    "scatter": (lambda x, i: (x.at[0, i % 4].set(9.0), x.at[:, i % 4].add(1.0), x.at[i[:2] % 3].mul(2.0), x.at[0, i].min(0.0, mode="drop")), [X, IDX]),
    "dynamic": (lambda x, i: (lax.dynamic_slice(x, (i[0], i[1]), (2, 2)), lax.dynamic_update_slice(x, x[:1, :2], (i[3], i[0]))), [X, IDX]),
    "control": (lambda x: (lax.cond(x[0, 0] > 0, lambda v: v * 2, lambda v: v - 1, x), lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]), [X]),
    "convert": (lambda x: (x.astype(jnp.int32), x.astype(jnp.float16), x.astype(jnp.bfloat16) * 3, lax.bitcast_convert_type(x, jnp.int32)), [X]),
    "iota_broadcast": (lambda x: (jnp.arange(4).astype(x.dtype) + x, jnp.broadcast_to(x[:, :1], (3, 5)), jax.nn.one_hot(jnp.arange(3), 4)), [X]),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(name):
    fn, args = CASES[name]
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    got = jax.tree_util.tree_leaves(_numpy_eval.compiled(fn, RuntimeError)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g.astype(np.float64), np.asarray(w).astype(np.float64), rtol=1e-6, atol=1e-6)


def test_unsupported_primitive_raises_the_given_error():
    f = _numpy_eval.compiled(lambda x: jnp.fft.fft(x), lambda what: ValueError(f"no {what}"))
    with pytest.raises(ValueError, match="no the JAX primitive 'fft'"):
        f(X[0])


def test_top_k_matches_jax():
    x = np.array([[1.0, 3.0, 3.0, np.nan, -0.0, 2.0], [0.0, 0.0, 5.0, 1.0, 1.0, 1.0]], np.float32)
    want = jax.lax.top_k(jnp.asarray(x), 4)
    got = _numpy_eval.compiled(lambda a: jax.lax.top_k(a, 4), RuntimeError)(x)
    np.testing.assert_array_equal(got[1], np.asarray(want[1]))
    np.testing.assert_array_equal(got[0], np.asarray(want[0]))
