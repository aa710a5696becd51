"""RNN, LSTM, GRU and their cells: each layer and direction is one op whose time loop is a lax.scan."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import numpy as np

from ..._core.tensor import Tensor
from ..._ops import creation
from ..._ops.nn import rnn as R
from ..._ops import shape as S
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from ._module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _permute(hx: Any, perm: Tensor | None, dim: int = 1) -> Any:
    if perm is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(_permute(h, perm, dim) for h in hx)
    return hx[:, perm] if dim == 1 else hx[perm]


class RNNBase(Module):
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]  # fmt: skip

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        real_hidden = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                shapes = [(gate_size, layer_input), (gate_size, real_hidden)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(creation.empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) if hasattr(self, n) else None for n in self._flat_weights_names]

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_flat_weights"] = self._flat_weights  # torch keeps this list as an attribute, and pickles it
        return state

    @property
    def all_weights(self) -> list:
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self) -> None:
        """cuDNN's weight packing: nothing to do on JAX."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        w0 = self._flat_weights[0]
        if input.dtype is not w0.dtype:
            from ...amp import autocast_mode

            if not autocast_mode.is_autocast_enabled():
                raise ValueError(
                    f"RNN input dtype ({input.dtype}) does not match weight dtype ({w0.dtype}). Convert input: "
                    f"input.to({w0.dtype}), or convert model: model.to({input.dtype})"
                )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(
        self, hx: Tensor, expected: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if hx.size() != expected:
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        return _permute(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # --- the stack of layers ----------------------------------------------------------------------

    def _run(self, x: Tensor, hx: Tensor, cx: Tensor | None, lengths: Tensor | None,
             pack_index: np.ndarray | None = None) -> tuple:  # fmt: skip
        """x time-major (T, B, F); hx/cx (layers*dirs, B, H). Returns (output, h_n, c_n).

        ``pack_index`` (packed input): the padded rows ``t*B+b`` of the packed data, in packed order.
        """
        dirs = 2 if self.bidirectional else 1
        weights = self.all_weights
        hs, cs = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                idx = layer * dirs + d
                w = weights[idx]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                res = R._rnn_layer(layer_input, hx[idx], None if cx is None else cx[idx], w_ih, w_hh, b_ih, b_hh,
                                   w_hr, lengths, self.mode, d == 1)  # fmt: skip
                outs.append(res[0])
                hs.append(res[1])
                if cx is not None:
                    cs.append(res[2])
            layer_input = outs[0] if dirs == 1 else S.cat(outs, -1)
            if self.dropout != 0 and self.training and layer < self.num_layers - 1:
                layer_input = self._dropout_between_layers(layer_input, pack_index)
        return layer_input, S.stack(hs, 0), (S.stack(cs, 0) if cx is not None else None)

    def _dropout_between_layers(self, x: Tensor, pack_index: np.ndarray | None) -> Tensor:
        if pack_index is None:
            return F.dropout(x, self.dropout, True)
        # torch: packed input is dropped out as its packed data (sum(lengths), H), which draws
        # sum(lengths)*H numbers in packed order, not T*B*H over the padded layout
        t, b = x.shape[0], x.shape[1]
        inverse = np.full(t * b, -1, np.int64)
        inverse[pack_index] = np.arange(len(pack_index))
        dev = x.device
        data = F.dropout(R._pack_rows(x, creation.tensor(pack_index, device=dev)), self.dropout, True)
        return R._unpack_rows(data, creation.tensor(inverse, device=dev), (t, b), 0)

    def _forward(self, input: Any, hx: Any) -> tuple:
        is_lstm = self.mode == "LSTM"
        dirs = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
        packed = isinstance(input, PackedSequence)
        is_batched = True
        batch_dim = 0 if self.batch_first else 1
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch = int(batch_sizes[0])
            x = data
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                if is_lstm:
                    raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead")
            is_batched = input.dim() == 3
            x = input if is_batched else input.unsqueeze(batch_dim)
            max_batch = x.size(0) if self.batch_first else x.size(1)
        if hx is None:
            h0 = creation.zeros(
                self.num_layers * dirs, max_batch, real_hidden, dtype=x.dtype, device=x.device
            )
            c0 = creation.zeros(
                self.num_layers * dirs, max_batch, self.hidden_size, dtype=x.dtype, device=x.device
            )
            hx = (h0, c0) if is_lstm else h0
        elif not packed:
            if is_lstm:
                d = 3 if is_batched else 2
                if hx[0].dim() != d or hx[1].dim() != d:
                    raise RuntimeError(
                        f"For {'batched 3-D' if is_batched else 'unbatched 2-D'} input, hx and cx should also be "
                        f"{d}-D but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                    )
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            else:
                if not is_batched and hx.dim() != 2:
                    raise RuntimeError(
                        f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor"
                    )
                if is_batched and hx.dim() != 3:
                    raise RuntimeError(
                        f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
                    )
                if not is_batched:
                    hx = hx.unsqueeze(1)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        if is_lstm:
            self.check_input(x, batch_sizes)
            self.check_hidden_size(hx[0], self.get_expected_hidden_size(x, batch_sizes),
                                   "Expected hidden[0] size {}, got {}")  # fmt: skip
            exp_c = self.get_expected_hidden_size(x, batch_sizes)[:2] + (self.hidden_size,)
            self.check_hidden_size(hx[1], exp_c, "Expected hidden[1] size {}, got {}")
            h0, c0 = hx
        else:
            self.check_forward_args(x, hx, batch_sizes)
            h0, c0 = hx, None
        if packed:
            from ..utils.rnn import pad_packed_sequence

            padded, lens = pad_packed_sequence(PackedSequence(x, batch_sizes, None, None))
            lengths = creation.tensor(np.asarray(lens._data()), device=x.device)
            bs = np.asarray(batch_sizes._data())
            b = padded.shape[1]
            index = np.concatenate([t * b + np.arange(n) for t, n in enumerate(bs)])
            out, h_n, c_n = self._run(padded, h0, c0, lengths, index)
            out_data = R._pack_rows(out, creation.tensor(index, device=x.device))
            output: Any = PackedSequence(out_data, batch_sizes, sorted_indices, unsorted_indices)
        else:
            xt = x.transpose(0, 1) if self.batch_first else x
            out, h_n, c_n = self._run(xt, h0, c0, None)
            output = out.transpose(0, 1) if self.batch_first else out
            if not is_batched:
                output = output.squeeze(batch_dim)
        hidden: Any = (h_n, c_n) if is_lstm else h_n
        if not packed and not is_batched:
            hidden = (h_n.squeeze(1), c_n.squeeze(1)) if is_lstm else h_n.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)


class RNN(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple:
        return self._forward(input, hx)


class LSTM(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple:
        return self.get_expected_hidden_size(input, batch_sizes)[:2] + (self.hidden_size,)

    def forward(self, input: Any, hx: tuple | None = None) -> tuple:
        return self._forward(input, hx)


class GRU(RNNBase):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple:
        return self._forward(input, hx)


class RNNCellBase(Module):
    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(
            creation.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype)
        )
        self.weight_hh = Parameter(
            creation.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype)
        )
        if bias:
            self.bias_ih = Parameter(creation.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name: str, input: Tensor, hx: Any, what: str = "hidden") -> tuple:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        return input, is_batched

    def _zeros(self, input: Tensor) -> Tensor:
        return creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        x, batched = self._prepare("RNNCell", input, hx)
        hx = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        ret = R._rnn_cell(x, hx, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, mode)
        return ret if batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple:
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        x, batched = self._prepare("LSTMCell", input, hx)
        if hx is None:
            zeros = self._zeros(x)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = R._rnn_cell(
            x, hx[0], hx[1], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, "LSTM"
        )
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        x, batched = self._prepare("GRUCell", input, hx)
        hx = self._zeros(x) if hx is None else (hx if batched else hx.unsqueeze(0))
        ret = R._rnn_cell(x, hx, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, "GRU")
        return ret if batched else ret.squeeze(0)
