"""Recurrent layers: ``RNNCell``, ``LSTMCell``, ``GRUCell`` and the sequence layers ``RNN``,
``LSTM``, ``GRU`` -- PyTorch's parameter names, shapes, gate order and init, so a PyTorch
state dict loads and the outputs match.

One step of each cell, with x the input and h (and c) the state (PyTorch's formulas)::

    RNN:   h' = tanh(W_ih x + b_ih + W_hh h + b_hh)                (or relu)
    LSTM:  i, f, g, o = split(W_ih x + b_ih + W_hh h + b_hh)       (gate order i, f, g, o)
           c' = σ(f) c + σ(i) tanh(g),   h' = σ(o) tanh(c')
    GRU:   r, z, n_x = split(W_ih x + b_ih),  r_h, z_h, n_h = split(W_hh h + b_hh)
           r = σ(r + r_h), z = σ(z + z_h), n = tanh(n_x + r ⊙ n_h),  h' = (1 - z) n + z h

The weights of all gates are stacked in one matrix (``weight_ih`` is (gates·hidden, input)),
so a step costs one GEMM per input; a sequence layer projects *every* time step's input in a
single GEMM before the loop, leaving one GEMM per step for the recurrence.  All parameters
start U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as in PyTorch.  Everything is built from
Lucid ops, so gradients (and second derivatives) come from them.

An LSTM step is one op (``lucid.ops.recurrent.LSTMStep``: W_hh h and the gates).  Drawn or
counted, ``nn.LSTM`` runs step by step, so the picture shows every step and the counts are
per step; otherwise each layer and direction runs as one op over all steps
(``LSTMSequence``, the same step arithmetic in a loop), as PyTorch runs its LSTM: the same
numbers in less time (row B5 of `make bench`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.creation import zeros as lucid_zeros
from lucid.engine.mode import flops_enabled, recording
from lucid.nn import init
from lucid.nn.functional.dropout import dropout
from lucid.nn.layers.linear import _parameter, _size
from lucid.nn.module import Module
from lucid.ops import apply, concatenate, linear, relu, sigmoid, stack, tanh, where
from lucid.ops.recurrent import LSTMSequence, LSTMStep
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]

_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


def _projection(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None,
                b_hh: Tensor | None) -> Tensor:
    """W_ih x + b_ih for every time step of ``x`` at once -- for LSTM, + b_hh too: its gates
    take the two biases only as their sum, so the sum is added once here, not at every step."""
    if mode == "LSTM" and b_ih is not None:
        return linear(x, w_ih, b_ih + b_hh)
    return linear(x, w_ih, b_ih)


def _cell_step(mode: str, nonlinearity: str, xws: Tensor, t: int | None, state: Tensor,
               w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """One step from the input's projection (:func:`_projection`: ``xws[t]``, or ``xws``
    itself when ``t`` is None) and the state: h for RNN and GRU; for LSTM h and c stacked,
    (2, N, H), as its step op takes and gives them.  Returns the new state."""
    if mode == "LSTM":  # W_hh h and the gates as one op (lucid.ops.recurrent.LSTMStep)
        return apply(LSTMStep(t), xws, w_hh, state)
    h = state
    hw = linear(h, w_hh, b_hh)
    xw = xws if t is None else xws[t]
    if mode == "RNN":
        z = xw + hw
        return tanh(z) if nonlinearity == "tanh" else relu(z)
    k = h.shape[-1]
    r = sigmoid(xw[..., :k] + hw[..., :k])
    u = sigmoid(xw[..., k:2 * k] + hw[..., k:2 * k])
    n = tanh(xw[..., 2 * k:] + r * hw[..., 2 * k:])
    return (1 - u) * n + u * h


def _uniform_init(module: Module, hidden_size: int) -> None:
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


class _Cell(Module):
    mode = "RNN"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        kind = type(self).__name__
        self.input_size = _size(kind, "input_size", input_size)
        self.hidden_size = _size(kind, "hidden_size", hidden_size, 1)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"{kind}: nonlinearity must be 'tanh' or 'relu', got "
                             f"{nonlinearity!r}")
        self.nonlinearity = nonlinearity
        self.bias = bias
        rows = _GATES[self.mode] * self.hidden_size
        self.weight_ih = _parameter(kind, (rows, self.input_size), dtype, device)
        self.weight_hh = _parameter(kind, (rows, self.hidden_size), dtype, device)
        if bias:
            self.bias_ih = _parameter(kind, (rows,), dtype, device)
            self.bias_hh = _parameter(kind, (rows,), dtype, device)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_init(self, self.hidden_size)

    def _zeros(self, x: Tensor) -> Tensor:
        return Tensor._wrap(x._data[..., :1] * 0, x.device).broadcast_to(
            (*x.shape[:-1], self.hidden_size)) * 1.0

    def _check(self, x: Tensor) -> None:
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input must be (batch, {self.input_size}) "
                             f"or ({self.input_size},), got {fmt(x.shape)}")

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_Cell):
    """One Elman RNN step: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (``nonlinearity="relu"``
    for relu).  ``forward(x, h=None)`` returns h' (zeros when h is None)."""

    mode = "RNN"

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        self._check(x)
        h = self._zeros(x) if h is None else h
        return _cell_step("RNN", self.nonlinearity, linear(x, self.weight_ih, self.bias_ih),
                          None, h, self.weight_hh, self.bias_hh)


class LSTMCell(_Cell):
    """One LSTM step (gates i, f, g, o stacked in that order, as PyTorch):
    ``forward(x, (h, c)=None)`` returns (h', c')."""

    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(input_size, hidden_size, bias, dtype=dtype, device=device)

    def forward(self, x: Tensor, state: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        self._check(x)
        h, c = (self._zeros(x), self._zeros(x)) if state is None else state
        xw = _projection("LSTM", x, self.weight_ih, self.bias_ih, self.bias_hh)
        hc = _cell_step("LSTM", "tanh", xw, None, stack([h, c]), self.weight_hh, None)
        return hc[0], hc[1]

    def extra_repr(self) -> str:
        return super().extra_repr()


class GRUCell(_Cell):
    """One GRU step (gates r, z, n stacked in that order, as PyTorch):
    ``forward(x, h=None)`` returns h'."""

    mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(input_size, hidden_size, bias, dtype=dtype, device=device)

    def forward(self, x: Tensor, h: Tensor | None = None) -> Tensor:
        self._check(x)
        h = self._zeros(x) if h is None else h
        return _cell_step("GRU", "tanh", linear(x, self.weight_ih, self.bias_ih), None, h,
                          self.weight_hh, self.bias_hh)


class PackedSequence:
    """PyTorch's packed batch of variable-length sequences (``nn.utils.rnn.
    pack_padded_sequence``), as Lucid holds it: the padded batch, time first, and each
    sequence's length.  A recurrent layer given one runs with ``lengths=`` (each state stops
    at its sequence's end) and returns one; ``pad_packed_sequence`` gives the padded batch
    back.  ``data`` and ``batch_sizes`` are PyTorch's packed layout (valid steps, time by
    time, longest sequences first)."""

    def __init__(self, padded: Tensor, lengths: Any) -> None:
        self.padded = padded  # (L, N, *)
        self.lengths = np.asarray(lengths, dtype=np.int64)

    @property
    def order(self) -> np.ndarray:
        """Sequences by length, longest first (PyTorch's sorted_indices)."""
        return np.argsort(-self.lengths, kind="stable")

    @property
    def batch_sizes(self) -> Tensor:
        steps = self.padded.shape[0]
        return Tensor(np.array([(self.lengths > t).sum() for t in range(steps)]))

    @property
    def data(self) -> Tensor:
        order = Tensor(self.order)
        rows = [self.padded[t][order][:int((self.lengths > t).sum())]
                for t in range(self.padded.shape[0]) if (self.lengths > t).any()]
        return concatenate(rows, axis=0)

    @property
    def sorted_indices(self) -> Tensor:
        return Tensor(self.order)

    @property
    def unsorted_indices(self) -> Tensor:
        return Tensor(np.argsort(self.order, kind="stable"))

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return PackedSequence(self.padded.to(*args, **kwargs), self.lengths)

    def __repr__(self) -> str:
        return f"PackedSequence(padded shape {fmt(self.padded.shape)}, lengths " \
               f"{self.lengths.tolist()})"


class _RNNBase(Module):
    mode = "RNN"

    def flatten_parameters(self) -> None:
        """PyTorch's call to pack cuDNN's weights into one buffer; Lucid keeps no such buffer,
        so there is nothing to do (accepted so that PyTorch programs run)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, dtype: Any = Float32,
                 device: str = "cpu") -> None:
        super().__init__()
        kind = type(self).__name__
        self.input_size = _size(kind, "input_size", input_size)
        self.hidden_size = _size(kind, "hidden_size", hidden_size, 1)
        self.num_layers = _size(kind, "num_layers", num_layers, 1)
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"{kind}: nonlinearity must be 'tanh' or 'relu', got "
                             f"{nonlinearity!r}")
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"{kind}: dropout must be a probability in [0, 1], got {dropout!r}")
        self.nonlinearity, self.bias, self.batch_first = nonlinearity, bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        rows = _GATES[self.mode] * self.hidden_size
        dirs = 2 if bidirectional else 1
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.hidden_size * dirs
            for suffix in ("", "_reverse")[:dirs]:
                # PyTorch's names: weight_ih_l0, weight_hh_l0, bias_ih_l0, ..., *_reverse
                setattr(self, f"weight_ih_l{layer}{suffix}",
                        _parameter(kind, (rows, width), dtype, device))
                setattr(self, f"weight_hh_l{layer}{suffix}",
                        _parameter(kind, (rows, self.hidden_size), dtype, device))
                if bias:
                    setattr(self, f"bias_ih_l{layer}{suffix}",
                            _parameter(kind, (rows,), dtype, device))
                    setattr(self, f"bias_hh_l{layer}{suffix}",
                            _parameter(kind, (rows,), dtype, device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _uniform_init(self, self.hidden_size)

    def _weights(self, layer: int, suffix: str) -> tuple[Any, ...]:
        get = self._parameters.get
        return (get(f"weight_ih_l{layer}{suffix}"), get(f"bias_ih_l{layer}{suffix}"),
                get(f"weight_hh_l{layer}{suffix}"), get(f"bias_hh_l{layer}{suffix}"))

    def forward(self, x: Tensor, state: Any = None, lengths: Any = None) -> tuple[Tensor, Any]:
        """``x``: (L, N, input_size), or (N, L, input_size) with ``batch_first``, or unbatched
        (L, input_size).  ``state``: h0 (and c0 for LSTM) of shape (layers·directions, N,
        hidden_size), zeros when None.  ``lengths`` (N ints, optional): each sequence's true
        length in a padded batch; a sequence's state stops changing after its last step (the
        reverse direction starts at its last step), Lucid's stand-in for packed sequences.

        Returns (output, h_n) -- (output, (h_n, c_n)) for LSTM -- with output (L, N,
        directions·hidden_size) (batch-first if asked) and padded steps set to zero."""
        kind = type(self).__name__
        if isinstance(x, PackedSequence):  # run on the padded batch, stopping at each length
            padded = x.padded.swapaxes(0, 1) if self.batch_first else x.padded
            out, state = self.forward(padded, state, lengths=x.lengths.tolist())
            return PackedSequence(out.swapaxes(0, 1) if self.batch_first else out,
                                  x.lengths), state
        unbatched = x.ndim == 2
        if x.ndim not in (2, 3) or x.shape[-1] != self.input_size:
            raise ValueError(f"{kind}: input must be (L, N, {self.input_size}) (or batch-first, "
                             f"or unbatched (L, {self.input_size})), got {fmt(x.shape)}")
        seq = x.unsqueeze(1) if unbatched else (x.swapaxes(0, 1) if self.batch_first else x)
        steps, batch = seq.shape[0], seq.shape[1]
        dirs = 2 if self.bidirectional else 1
        h0, c0 = self._initial(state, seq, dirs, unbatched)
        valid = self._valid(lengths, steps, batch, seq)
        layer_in = seq
        h_n, c_n = [], []
        rec = recording()  # recording (a drawing, summarize): each time step is marked
        for layer in range(self.num_layers):
            outs = []
            for d, suffix in enumerate(("", "_reverse")[:dirs]):
                k = layer * dirs + d
                w_ih, b_ih, w_hh, b_hh = self._weights(layer, suffix)
                # every time step's input projection in one GEMM: (L, N, gates·hidden)
                xw = _projection(self.mode, layer_in, w_ih, b_ih, b_hh)
                # the state a step passes on: h, or for LSTM h and c stacked (2, N, H)
                state = h0[k] if c0 is None else stack([h0[k], c0[k]])
                loop = "" if rec is None else " ".join(  # names the steps: "layer 1 reverse"
                    [f"layer {layer}"] * (self.num_layers > 1)
                    + [("forward", "reverse")[d]] * (dirs > 1))
                out, state = self._direction(xw, state, w_hh, b_hh, bool(d), valid, loop)
                outs.append(out)
                h_n.append(state if c0 is None else state[0])
                if c0 is not None:
                    c_n.append(state[1])
            layer_in = outs[0] if dirs == 1 else _concat_last(outs)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = dropout(layer_in, self.dropout, True)
        out = layer_in
        h_last = stack(h_n, axis=0)
        if unbatched:
            out, h_last = out.squeeze(1), h_last.squeeze(1)
        elif self.batch_first:
            out = out.swapaxes(0, 1)
        if self.mode == "LSTM":
            c_last = stack(c_n, axis=0)
            return out, (h_last, c_last.squeeze(1) if unbatched else c_last)
        return out, h_last

    def _direction(self, xw: Tensor, state: Tensor, w_hh: Tensor, b_hh: Tensor | None,
                   reverse: bool, valid: Any, loop: str) -> tuple[Tensor, Tensor]:
        """One layer and direction over every time step: (output (L, N, H), last state).

        Step by step, one op (or a few) per step, each step marked for the drawing -- or,
        for an LSTM that nobody is drawing or counting, all steps as one op
        (:class:`~lucid.ops.recurrent.LSTMSequence`, the same arithmetic), as PyTorch runs
        its LSTM.  Padded sequences (``lengths``) go step by step."""
        steps = xw.shape[0]
        rec = recording()
        lstm = self.mode == "LSTM"
        if lstm and valid is None and rec is None and not flops_enabled():
            states = apply(LSTMSequence(reverse), xw, w_hh, state)  # (2, L, N, H)
            last = 0 if reverse else steps - 1
            return states[0], states[:, last]
        out_steps: list[Any] = [None] * steps
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            if rec is not None:  # the ops from here to the next mark are step t
                rec.begin_step(t, loop)
            state2 = _cell_step(self.mode, self.nonlinearity, xw, t, state, w_hh, b_hh)
            if valid is None:  # an LSTM's h are taken from its states after the loop
                out_steps[t] = state2
            else:  # padded steps keep the state, output zero
                state2 = where(valid[t], state2, state)
                h = state2[0] if lstm else state2
                out_steps[t] = where(valid[t], h, 0.0 * h)
            state = state2
        if rec is not None:
            rec.end_step()
        if lstm and valid is None:  # (2, L, N, H): the h of every step
            return stack(out_steps, axis=1)[0], state
        return stack(out_steps, axis=0), state

    def _initial(self, state: Any, seq: Tensor, dirs: int, unbatched: bool
                 ) -> tuple[Any, Any]:
        kind = type(self).__name__
        want = (self.num_layers * dirs, seq.shape[1], self.hidden_size)
        zeros = lucid_zeros(want, dtype=seq.dtype, device=seq.device)  # h0 (and c0) = 0
        zeros.name = "zero state"
        if state is None:
            return zeros, (zeros if self.mode == "LSTM" else None)
        parts = state if self.mode == "LSTM" else (state,)
        if self.mode == "LSTM" and (not isinstance(state, tuple) or len(state) != 2):
            raise ValueError(f"{kind}: the state must be a pair (h0, c0)")
        fixed = []
        for p in parts:
            p = p.unsqueeze(1) if unbatched else p
            if p.shape != want:
                raise ValueError(f"{kind}: initial state of shape {fmt(p.shape)}, expected "
                                 f"{fmt(want)} (num_layers·directions, batch, hidden_size)")
            fixed.append(p)
        return fixed[0], (fixed[1] if self.mode == "LSTM" else None)

    def _valid(self, lengths: Any, steps: int, batch: int, seq: Tensor) -> Any:
        if lengths is None:
            return None
        n = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths)
        if n.shape != (batch,) or (n < 1).any() or (n > steps).any():
            raise ValueError(f"{type(self).__name__}: lengths must hold {batch} ints in "
                             f"1..{steps}, got {n.tolist()}")
        mask = np.arange(steps)[:, None, None] < n[None, :, None]  # (L, N, 1)
        return Tensor(mask, device=seq.device)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.batch_first:
            text += ", batch_first=True"
        if self.dropout:
            text += f", dropout={self.dropout}"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text


def _concat_last(parts: list[Tensor]) -> Tensor:
    return concatenate(parts, axis=-1)


class RNN(_RNNBase):
    """A stack of Elman RNN layers over a sequence (``nonlinearity`` "tanh" or "relu")."""

    mode = "RNN"


class LSTM(_RNNBase):
    """A stack of LSTM layers over a sequence; the state is (h, c)."""

    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(input_size, hidden_size, num_layers, "tanh", bias, batch_first,
                         dropout, bidirectional, dtype=dtype, device=device)


class GRU(_RNNBase):
    """A stack of GRU layers over a sequence."""

    mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(input_size, hidden_size, num_layers, "tanh", bias, batch_first,
                         dropout, bidirectional, dtype=dtype, device=device)

