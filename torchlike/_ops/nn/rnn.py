"""Recurrent layers' JAX bodies: one op per layer and direction, the time loop as one lax.scan.

Inputs are time-major (T, B, F). ``lengths`` (for packed sequences) freezes each sequence's hidden
state after its last step and zeroes its outputs there, as running each sequence alone would.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ..._core import buckets
from ..registry import OptRawTensor, RawTensor, Scalar, TensorList, defop


def _gates(mode: str, xw: Any, h: Any, c: Any, w_hh: Any, b_hh: Any, w_hr: Any) -> tuple:
    """One step: the new (h, c) from the input projection ``xw`` and the previous state."""
    hw = jnp.matmul(h, w_hh.T)
    if b_hh is not None:
        hw = hw + b_hh
    if mode == "RNN_TANH":
        return jnp.tanh(xw + hw), None
    if mode == "RNN_RELU":
        z = xw + hw
        return jnp.where(z > 0, z, jnp.zeros_like(z)), None
    if mode == "LSTM":
        i, f, g, o = jnp.split(xw + hw, 4, axis=-1)
        i, f, g, o = jax.nn.sigmoid(i), jax.nn.sigmoid(f), jnp.tanh(g), jax.nn.sigmoid(o)
        c_new = f * c + i * g
        h_new = o * jnp.tanh(c_new)
        if w_hr is not None:
            h_new = jnp.matmul(h_new, w_hr.T)
        return h_new, c_new
    # GRU
    xr, xz, xn = jnp.split(xw, 3, axis=-1)
    hr, hz, hn = jnp.split(hw, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return (1 - z) * n + z * h, None


def _reverse_index(t: int, lengths: Any) -> Any:
    """(T, B) time indices reversing each sequence within its own length."""
    steps = jnp.arange(t)[:, None]
    return jnp.where(steps < lengths[None, :], lengths[None, :] - 1 - steps, steps)


def _layer_name(static: tuple, dyn: tuple) -> str:
    return "MkldnnRnnLayerBackward0" if static[0] == "LSTM" else "StackBackward0"


def _time_pad(static: tuple, shapes: tuple) -> tuple:
    """The time axis padded: each sequence stops at its length (given, or the exact length for all), so the
    padded steps change neither the outputs kept nor the final states."""
    if shapes[0] is None or len(shapes[0]) != 3:
        return ()
    lengths = buckets.Lengths(0, 0, 1) if shapes[8] is None else None
    return ({0: 0}, None, None, None, None, None, None, None, lengths)


@defop(promote=None, method=False, grad_name=_layer_name, pad=_time_pad)
def _rnn_layer(input: RawTensor, hx: RawTensor, cx: OptRawTensor, w_ih: RawTensor, w_hh: RawTensor,
               b_ih: OptRawTensor, b_hh: OptRawTensor, w_hr: OptRawTensor, lengths: OptRawTensor, mode: str,
               reverse: bool) -> Any:  # fmt: skip
    """Returns (output (T, B, H), h_n) and, for LSTM, c_n too."""
    t = input.shape[0]
    x = input
    if reverse:
        if lengths is None:
            x = jnp.flip(x, 0)
        else:
            rev = _reverse_index(t, lengths)
            x = jnp.take_along_axis(x, rev[:, :, None], axis=0)
    xw = jnp.matmul(x, w_ih.T)
    if b_ih is not None:
        xw = xw + b_ih
    live = None if lengths is None else (jnp.arange(t)[:, None] < lengths[None, :])[:, :, None]

    def step(carry: tuple, inp: tuple) -> tuple:
        h, c = carry
        xw_t, live_t = inp
        h_new, c_new = _gates(mode, xw_t, h, c, w_hh, b_hh, w_hr)
        if live_t is not None:
            h_new = jnp.where(live_t, h_new, h)
            if c is not None:
                c_new = jnp.where(live_t, c_new, c)
            out = jnp.where(live_t, h_new, jnp.zeros_like(h_new))
        else:
            out = h_new
        return (h_new, c_new), out

    (h_n, c_n), out = jax.lax.scan(step, (hx, cx), (xw, live))
    if reverse:
        if lengths is None:
            out = jnp.flip(out, 0)
        else:
            out = jnp.take_along_axis(out, rev[:, :, None], axis=0)
            out = jnp.where(live, out, jnp.zeros_like(out))
    return (out, h_n, c_n) if mode == "LSTM" else (out, h_n)


def _cell_name(static: tuple, dyn: tuple) -> str:
    return {"RNN_TANH": "TanhBackward0", "RNN_RELU": "ReluBackward0", "LSTM": "MulBackward0"}.get(
        static[0], "AddBackward0"
    )


@defop(promote=None, method=False, grad_name=_cell_name)
def _rnn_cell(input: RawTensor, hx: RawTensor, cx: OptRawTensor, w_ih: RawTensor, w_hh: RawTensor,
              b_ih: OptRawTensor, b_hh: OptRawTensor, mode: str) -> Any:  # fmt: skip
    xw = jnp.matmul(input, w_ih.T)
    if b_ih is not None:
        xw = xw + b_ih
    h, c = _gates(mode, xw, hx, cx, w_hh, b_hh, None)
    return (h, c) if mode == "LSTM" else h


# --- packed sequences: rows gathered by host-computed indices ------------------------------------------------


@defop(promote=None, method=False, grad_name="PackPaddedSequenceBackward0", saves=())
def _pack_rows(input: RawTensor, index: RawTensor) -> Any:
    """Rows of ``input`` flattened over its first two dims, taken at ``index``."""
    flat = input.reshape((-1,) + input.shape[2:])
    return jnp.take(flat, index, axis=0)


@defop(promote=None, method=False, grad_name="CopySlices", saves=())
def _unpack_rows(data: RawTensor, index: RawTensor, shape: tuple, padding_value: Scalar) -> Any:
    """A (T, B, *) tensor whose row t*B+b is ``data[index[t*B+b]]``, or padding where index is -1."""
    safe = jnp.where(index < 0, 0, index)
    rows = jnp.take(data, safe, axis=0)
    mask = (index >= 0).reshape((-1,) + (1,) * (data.ndim - 1))
    rows = jnp.where(mask, rows, jnp.asarray(padding_value, data.dtype))
    return rows.reshape(shape + data.shape[1:])


@defop(promote=None, method=False, grad_name="CopySlices", saves=())
def _pad_sequence(sequences: TensorList, batch_first: bool, padding_value: Scalar, padding_side: str) -> Any:
    longest = max(s.shape[0] for s in sequences)
    out = []
    for s in sequences:
        pad = [(0, longest - s.shape[0])] + [(0, 0)] * (s.ndim - 1)
        if padding_side == "left":
            pad[0] = pad[0][::-1]
        out.append(jnp.pad(s, pad, constant_values=jnp.asarray(padding_value, s.dtype)))
    return jnp.stack(out, axis=0 if batch_first else 1)
