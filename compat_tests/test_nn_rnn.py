"""Recurrent layers, packed sequences, attention and transformers under torch and torchlike."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _harness import assert_same, check_raises
from _nn_harness import build_both, check_module, rand

import torchlike

SEQ = rand(5, 2, 3)  # (T, B, F)
SEQ_BF = rand(2, 5, 3, seed=4)


RNN_CASES = {
    "RNN": (lambda nn: nn.RNN(3, 4), [SEQ]),
    "RNN-relu-2layer-bidir": (lambda nn: nn.RNN(3, 4, 2, nonlinearity="relu", bidirectional=True), [SEQ]),
    "LSTM": (lambda nn: nn.LSTM(3, 4), [SEQ]),
    "LSTM-batch_first-2layer-dropout": (lambda nn: nn.LSTM(3, 4, 2, batch_first=True, dropout=0.5), [SEQ_BF]),
    "LSTM-bidir-proj": (lambda nn: nn.LSTM(3, 5, bidirectional=True, proj_size=2), [SEQ]),
    "LSTM-nobias": (lambda nn: nn.LSTM(3, 4, bias=False), [SEQ]),
    "GRU": (lambda nn: nn.GRU(3, 4), [SEQ]),
    "GRU-bidir-2layer": (lambda nn: nn.GRU(3, 4, 2, bidirectional=True, batch_first=True), [SEQ_BF]),
    "RNN-unbatched": (lambda nn: nn.RNN(3, 4), [SEQ[:, 0]]),
    "RNNCell": (lambda nn: nn.RNNCell(3, 4), [SEQ[0]]),
    "RNNCell-relu": (lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), [SEQ[0]]),
    "LSTMCell": (lambda nn: nn.LSTMCell(3, 4), [SEQ[0]]),
    "GRUCell": (lambda nn: nn.GRUCell(3, 4), [SEQ[0]]),
    "GRUCell-unbatched": (lambda nn: nn.GRUCell(3, 4, bias=False), [SEQ[0, 0]]),
}


@pytest.mark.parametrize("name", list(RNN_CASES))
def test_recurrent_layer(name: str) -> None:
    ctor, inputs = RNN_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_module(ctor, inputs)


def test_lstm_float64_with_initial_state() -> None:
    h0, c0 = rand(2, 2, 4, seed=7), rand(2, 2, 4, seed=8)
    check_module(
        lambda nn: nn.LSTM(3, 4, 2), [SEQ, h0, c0], dtype="float64", call=lambda m, x, h, c: m(x, (h, c))
    )
    check_module(lambda nn: nn.GRU(3, 4), [SEQ, h0[:1]], call=lambda m, x, h: m(x, h))


def _packed_run(t, bidirectional: bool, enforce_sorted: bool):  # noqa: ANN001, ANN202
    t.manual_seed(0)
    lstm = t.nn.LSTM(3, 4, bidirectional=bidirectional)
    x = t.tensor(rand(5, 3, 3), requires_grad=True)
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    packed = t.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    out, (h, c) = lstm(packed)
    padded, lens = t.nn.utils.rnn.pad_packed_sequence(out, total_length=6)
    (padded.sum() + h.sum() * 2 + c.sum()).backward()
    return (packed.data, packed.batch_sizes, out.data, padded, lens, h, c, x.grad,
            [p.grad for p in lstm.parameters()])  # fmt: skip


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences(bidirectional: bool, enforce_sorted: bool) -> None:
    assert_same(
        _packed_run(torch, bidirectional, enforce_sorted),
        _packed_run(torchlike, bidirectional, enforce_sorted),
    )


def _packed_dropout_training(t: object, mode: str, bidirectional: bool) -> list:
    t.manual_seed(0)
    rnn = getattr(t.nn, mode)(4, 6, num_layers=3, dropout=0.3, batch_first=True, bidirectional=bidirectional)
    head = t.nn.Linear(12 if bidirectional else 6, 1)
    opt = t.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
    x, lens = t.randn(3, 5, 4), t.tensor([5, 2, 4])
    out = []
    for _ in range(3):
        packed = t.nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False)
        y, _ = rnn(packed)
        padded, _ = t.nn.utils.rnn.pad_packed_sequence(y, batch_first=True)
        loss = head(padded).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out += [loss.detach(), t.rand(1)]  # the draw after the step checks how many numbers dropout took
    return out


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_sequence_dropout_between_layers(mode: str, bidirectional: bool) -> None:
    # torch drops out the packed data (sum(lengths), H) between layers, not the padded (T, B, H)
    assert_same(_packed_dropout_training(torch, mode, bidirectional),
                _packed_dropout_training(torchlike, mode, bidirectional), rtol=1e-5, atol=1e-6)  # fmt: skip


def test_rnn_utils() -> None:
    def f(t):  # noqa: ANN001, ANN202
        a, b, c = (t.tensor(rand(n, 2, seed=n)) for n in (4, 2, 3))
        p = t.nn.utils.rnn.pad_sequence([a, b, c], batch_first=True, padding_value=-1.0)
        pl = t.nn.utils.rnn.pad_sequence([a, b, c], padding_side="left")
        ps = t.nn.utils.rnn.pack_sequence([a, b, c], enforce_sorted=False)
        un = t.nn.utils.rnn.unpack_sequence(ps)
        return p, pl, ps.data, ps.batch_sizes, ps.sorted_indices, ps.unsorted_indices, un

    assert_same(f(torch), f(torchlike))
    check_raises(lambda t: t.nn.utils.rnn.pack_padded_sequence(t.zeros(3, 2, 1), [2, 3]))


def test_rnn_errors() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_raises(lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 6)))
        check_raises(lambda t: t.nn.GRU(3, 4)(t.zeros(5, 2, 3), t.zeros(1, 3, 4)))
        check_raises(lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 3), (t.zeros(1, 2, 4), t.zeros(1, 2, 5))))
        check_raises(lambda t: t.nn.RNN(3, 4)(t.zeros(5, 3), t.zeros(1, 1, 4)))
        check_raises(lambda t: t.nn.LSTM(3, 4)(t.zeros(5, 2, 3, dtype=t.float64)))
        check_raises(lambda t: t.nn.LSTM(3, 4)(t.zeros(2, 3, 5, 3)))
        check_raises(lambda t: t.nn.RNN(3, 4, nonlinearity="gelu"))
        check_raises(lambda t: t.nn.GRU(3, 4, proj_size=2))
        check_raises(lambda t: t.nn.LSTM(3, 4, proj_size=4))
        check_raises(lambda t: t.nn.LSTMCell(3, 4)(t.zeros(2, 2, 3)))


# --- attention and transformers -------------------------------------------------------------------------------

Q = rand(4, 2, 6, seed=11)  # (L, N, E)
KV = rand(3, 2, 6, seed=12)


def test_multihead_attention() -> None:
    kpm = np.array([[False, False, True], [False, True, True]])
    mask = np.triu(np.ones((4, 3), bool), 1)
    check_module(lambda nn: nn.MultiheadAttention(6, 2), [Q, KV, KV], call=lambda m, q, k, v: m(q, k, v))
    check_module(lambda nn: nn.MultiheadAttention(6, 3, dropout=0.3, bias=False), [Q],
                 call=lambda m, q: m(q, q, q, need_weights=False))  # fmt: skip
    # the other options: forward values in both modes (their gradients use the same ops as above)
    check_module(lambda nn: nn.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True), [Q, KV, kpm],
                 call=lambda m, q, k, p: m(q, k, k, key_padding_mask=p, average_attn_weights=False), grad=False)  # fmt: skip
    check_module(lambda nn: nn.MultiheadAttention(6, 2, kdim=5, vdim=4, batch_first=True),
                 [Q.transpose(1, 0, 2).copy(), rand(2, 3, 5, seed=1), rand(2, 3, 4, seed=2), mask],
                 call=lambda m, q, k, v, am: m(q, k, v, attn_mask=am), grad=False)  # fmt: skip
    check_module(lambda nn: nn.MultiheadAttention(6, 2), [Q[:, 0]], call=lambda m, q: m(q, q, q), grad=False)


def test_transformer_layers() -> None:
    src = rand(2, 5, 8, seed=21)
    tgt = rand(2, 3, 8, seed=22)
    kpm = np.array([[False] * 5, [False, False, False, True, True]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_module(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2, batch_first=True), [src, kpm],
                     call=lambda m, s, k: m(s, src_key_padding_mask=k))  # fmt: skip
        check_module(lambda nn: nn.TransformerDecoderLayer(8, 4, 16, dropout=0.1, batch_first=True), [tgt, src],
                     call=lambda m, t, s: m(t, s, tgt_mask=_causal(m, 3)), modes=("train",))  # fmt: skip
        # compositions of the layers above: forward values (dropout included) in both modes
        check_module(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, activation="gelu", norm_first=True,
                                                           batch_first=True), [src], grad=False)  # fmt: skip
        check_module(lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2,
                                                      norm=nn.LayerNorm(8)), [src], grad=False)  # fmt: skip
        check_module(lambda nn: nn.Transformer(8, 2, 1, 1, 16, dropout=0.1, batch_first=True), [src, tgt],
                     call=lambda m, s, t: m(s, t, tgt_mask=_causal(m, 3)), grad=False)  # fmt: skip


def _causal(m, n: int):  # noqa: ANN001, ANN202
    lib = torch if isinstance(m, torch.nn.Module) else torchlike
    return lib.nn.Transformer.generate_square_subsequent_mask(n)


def test_transformer_encoder_nested_fast_path_zeros_padding() -> None:
    """torch's inference path (nested tensors) returns zeros at padded positions before the final norm."""
    src = rand(2, 5, 8, seed=31)
    kpm = np.array([[False] * 5, [False, False, False, True, True]])

    def f(t):  # noqa: ANN001, ANN202
        t.manual_seed(0)
        layer = t.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        enc = t.nn.TransformerEncoder(layer, 2).eval()
        with t.no_grad():
            return enc(t.tensor(src), src_key_padding_mask=t.tensor(kpm))

    assert_same(f(torch), f(torchlike))


def test_generate_square_subsequent_mask() -> None:
    assert_same(torch.nn.Transformer.generate_square_subsequent_mask(4),
                torchlike.nn.Transformer.generate_square_subsequent_mask(4))  # fmt: skip
    ref, got = build_both(lambda nn: nn.Transformer(8, 2, 2, 1, 16))
    assert repr(got) == repr(ref)
