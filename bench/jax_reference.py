"""Hand-written JAX + optax versions of the workloads: the speed torchlike.compile aims to match.

Each is what a JAX user would write: the same shapes, maths, precision and optimizer settings as
bench/workloads.py, and ONE ``jax.jit`` over forward, loss, gradient and the optax update, with the
parameters and the optimizer state donated (updated in place by XLA). A step is one call of that
program; the host only swaps the returned pytrees in (no transfers, no host-side maths).

Precision matches the torch runs: bench/run.py sets ``jax_default_matmul_precision="highest"``
(torch runs with TF32 off), and the bf16 workloads cast to bfloat16 exactly where torch's autocast
does (matmul inputs), keeping layer norm, the residual stream and the loss in float32.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import optax
from workloads import GPT_CFG, MATMUL_MLP


def _dense(key: Any, n_in: int, n_out: int) -> dict:
    """nn.Linear's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias."""
    bound = 1 / math.sqrt(n_in)
    k1, k2 = jax.random.split(key)
    return {"w": jax.random.uniform(k1, (n_in, n_out), jnp.float32, -bound, bound),
            "b": jax.random.uniform(k2, (n_out,), jnp.float32, -bound, bound)}  # fmt: skip


def _xent(logits: Any, y: Any) -> Any:
    """F.cross_entropy (mean), computed in float32 as autocast does."""
    return optax.softmax_cross_entropy_with_integer_labels(logits.astype(jnp.float32), y).mean()


def _trainer(loss_fn: Any, params: Any, opt: Any, x: Any, y: Any) -> Any:
    """One jitted, donated step: (params, opt_state) -> (params, opt_state, loss)."""

    def train_step(params, state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    step = jax.jit(train_step, donate_argnums=(0, 1))
    state = jax.device_put(opt.init(params), next(iter(x.devices())))
    box = [params, state]

    def run():
        box[0], box[1], loss = step(box[0], box[1], x, y)
        return loss

    run.lower = lambda: step.lower(box[0], box[1], x, y)  # for inspecting the program (bench/profile_*.py)
    return run


def _chain(x: Any) -> Any:
    y = x
    for i in range(100):
        y = jnp.sin(y * 1.01) if i % 2 else y + 0.5
    return y


def make_dispatch_fwd(device: Any) -> tuple:
    x = jax.device_put(jax.random.normal(jax.random.PRNGKey(0), (64, 64)), device)
    f = jax.jit(_chain)
    return (lambda: f(x)), 0


def make_dispatch_fwd_bwd(device: Any) -> tuple:
    x = jax.device_put(jax.random.normal(jax.random.PRNGKey(0), (64, 64)), device)
    f = jax.jit(jax.value_and_grad(lambda z: _chain(z).sum()))
    return (lambda: f(x)[1]), 0


def make_mlp(device: Any) -> tuple:
    ks = jax.random.split(jax.random.PRNGKey(0), 5)
    params = [_dense(ks[0], 784, 1024), _dense(ks[1], 1024, 1024), _dense(ks[2], 1024, 10)]
    x = jax.random.normal(ks[3], (128, 784))
    y = jax.random.randint(ks[4], (128,), 0, 10)

    def loss(p, x, y):
        h = jax.nn.relu(x @ p[0]["w"] + p[0]["b"])
        h = jax.nn.relu(h @ p[1]["w"] + p[1]["b"])
        return _xent(h @ p[2]["w"] + p[2]["b"], y)

    params, x, y = jax.device_put((params, x, y), device)
    return _trainer(loss, params, optax.adam(1e-3), x, y), 6 * 128 * (784 * 1024 + 1024 * 1024 + 1024 * 10)


def _conv(x: Any, w: Any, b: Any, pad: int) -> Any:
    y = jax.lax.conv_general_dilated(x, w, (1, 1), [(pad, pad), (pad, pad)],
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))  # fmt: skip
    return y + b[None, :, None, None]


def _pool(x: Any) -> Any:
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def make_cnn(device: Any) -> tuple:
    ks = jax.random.split(jax.random.PRNGKey(0), 8)
    params = {"c1": {"w": jax.random.normal(ks[0], (6, 1, 5, 5)) * 0.2, "b": jnp.zeros(6)},
              "c2": {"w": jax.random.normal(ks[1], (16, 6, 5, 5)) * 0.08, "b": jnp.zeros(16)},
              "f1": _dense(ks[2], 400, 120), "f2": _dense(ks[3], 120, 84), "f3": _dense(ks[4], 84, 10)}  # fmt: skip
    x = jax.random.normal(ks[5], (64, 1, 28, 28))
    y = jax.random.randint(ks[6], (64,), 0, 10)

    def loss(p, x, y):
        h = _pool(jax.nn.relu(_conv(x, p["c1"]["w"], p["c1"]["b"], 2)))
        h = _pool(jax.nn.relu(_conv(h, p["c2"]["w"], p["c2"]["b"], 0))).reshape(x.shape[0], -1)
        h = jax.nn.relu(h @ p["f1"]["w"] + p["f1"]["b"])
        h = jax.nn.relu(h @ p["f2"]["w"] + p["f2"]["b"])
        return _xent(h @ p["f3"]["w"] + p["f3"]["b"], y)

    params, x, y = jax.device_put((params, x, y), device)
    conv = 2 * 64 * (6 * 28 * 28 * 25 + 16 * 10 * 10 * 25 * 6)
    fc = 2 * 64 * (400 * 120 + 120 * 84 + 84 * 10)
    return _trainer(loss, params, optax.sgd(0.01, momentum=0.9), x, y), 3 * (conv + fc)


def _ln(x: Any, p: dict) -> Any:
    x32 = x.astype(jnp.float32)
    m = x32.mean(-1, keepdims=True)
    v = ((x32 - m) ** 2).mean(-1, keepdims=True)
    return (x32 - m) * jax.lax.rsqrt(v + 1e-5) * p["g"] + p["b"]


def make_gpt(device: Any, cfg: dict = GPT_CFG) -> tuple:
    d, h, L, V, T, B = cfg["d"], cfg["heads"], cfg["layers"], cfg["vocab"], cfg["seq"], cfg["batch"]
    ks = iter(jax.random.split(jax.random.PRNGKey(0), 8 * L + 8))
    ln = lambda: {"g": jnp.ones(d), "b": jnp.zeros(d)}  # noqa: E731
    params = {
        "tok": jax.random.normal(next(ks), (V, d)), "pos": jax.random.normal(next(ks), (T, d)), "ln": ln(),
        "head": jax.random.normal(next(ks), (d, V)) * 0.02,
        "blocks": [{"ln1": ln(), "ln2": ln(), "qkv": _dense(next(ks), d, 3 * d), "proj": _dense(next(ks), d, d),
                    "fc": _dense(next(ks), d, 4 * d), "out": _dense(next(ks), 4 * d, d)} for _ in range(L)],
    }  # fmt: skip
    x = jax.random.randint(next(ks), (B, T), 0, V)
    y = jax.random.randint(next(ks), (B, T), 0, V)
    bf = jnp.bfloat16

    def lin(x, p):
        return x.astype(bf) @ p["w"].astype(bf) + p["b"].astype(bf)

    def loss(p, idx, tgt):
        z = p["tok"][idx] + p["pos"][jnp.arange(T)]
        for blk in p["blocks"]:
            q, k, v = jnp.split(lin(_ln(z, blk["ln1"]), blk["qkv"]), 3, axis=-1)
            q, k, v = (a.reshape(B, T, h, d // h) for a in (q, k, v))
            att = jax.nn.dot_product_attention(q, k, v, is_causal=True)
            z = z + lin(att.reshape(B, T, d), blk["proj"]).astype(jnp.float32)
            z = z + lin(jax.nn.gelu(lin(_ln(z, blk["ln2"]), blk["fc"]), approximate=False), blk["out"]).astype(jnp.float32)
        logits = _ln(z, p["ln"]).astype(bf) @ p["head"].astype(bf)
        return _xent(logits.reshape(-1, V), tgt.reshape(-1))

    params, x, y = jax.device_put((params, x, y), device)
    n_params = sum(a.size for a in jax.tree_util.tree_leaves(params))
    attn = 2 * L * B * h * T**2 * (d // h) * 2
    return _trainer(loss, params, optax.adamw(3e-4, weight_decay=0.01), x, y), 6 * n_params * B * T + 3 * attn


def make_matmul_mlp(device: Any, width: int = MATMUL_MLP["width"], batch: int = MATMUL_MLP["batch"]) -> tuple:
    w, w2 = width, 2 * width
    ks = jax.random.split(jax.random.PRNGKey(0), 5)
    params = [_dense(ks[0], w, w2), _dense(ks[1], w2, w2), _dense(ks[2], w2, w)]
    x = jax.random.normal(ks[3], (batch, w))
    y = jax.random.normal(ks[4], (batch, w))
    bf = jnp.bfloat16

    def loss(p, x, y):
        h = x
        for i, layer in enumerate(p):
            h = h.astype(bf) @ layer["w"].astype(bf) + layer["b"].astype(bf)
            if i < 2:
                h = jax.nn.relu(h)
        return jnp.mean((h.astype(jnp.float32) - y) ** 2)

    params, x, y = jax.device_put((params, x, y), device)
    return _trainer(loss, params, optax.sgd(1e-3), x, y), 6 * batch * (w * w2 + w2 * w2 + w2 * w)


MAKERS = {n: globals()[f"make_{n}"] for n in
          ("dispatch_fwd", "dispatch_fwd_bwd", "mlp", "cnn", "gpt", "matmul_mlp")}  # fmt: skip
