"""Recurrent cells as single ops: one LSTM step's gate arithmetic.

An LSTM step made of the catalogue's elementwise ops is sixteen ops (four slices, three
sigmoids, two tanh, products and sums), each with its own backward and its own gradient
arrays to add up.  :class:`LSTMGates` does the same arithmetic in one op, and its backward
writes the four gates' gradients straight into one array: ``nn.LSTM`` spends about a third
less time per training step.  The result is the same as the composite's (a test holds them
together, values and gradients), and the step's two matrix products stay ``linear`` ops of
their own, so the drawing still shows where the multiply-adds are.
"""

from __future__ import annotations

from lucid.autograd.engine import PartGrad
from lucid.backends import backend_for
from lucid.ops.base import Op
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["LSTMGates"]


def _sigmoid_by_tanh(xp, x):
    """σ(x) = (1 + tanh(x/2)) / 2, an identity: three passes over x where the exponential
    form takes seven, and never overflows.  Its error is at most a unit in the last place of 1
    (6e-8 in float32), so a gate of 1e-9 may come out 0 -- for a gate's product with a
    bounded value, the absolute error is what counts."""
    return 0.5 * xp.tanh(0.5 * x) + 0.5


class LSTMGates(Op):
    """One LSTM step: z = xw + hw;  i, f, g, o = σ(z_i), σ(z_f), tanh(z_g), σ(z_o);
    c' = f⊙c + i⊙g;  h' = o⊙tanh(c').  Takes and returns the state (h, c) stacked, (2, …, H).

    ``xw`` (…, 4H) is the input's projection W_ih·x + b_ih -- or, with ``t``, the projections
    of every time step at once, (T, …, 4H), of which step ``t`` is read; ``hw`` (…, 4H) the
    hidden state's W_hh·h + b_hh; the gates in PyTorch's order (input, forget, cell, output).
    ``state`` holds the previous h and c, of which only c is read here (h went into hw).
    Backward, with t = tanh(c') and the incoming gradients gh, gc of h' and c':

        dc' = gc + gh⊙o⊙(1 - t²);   dc = dc'⊙f   (dh is 0 here: h reached hw through W_hh)
        dz = [dc'⊙g⊙i(1-i),  dc'⊙c⊙f(1-f),  dc'⊙i⊙(1-g²),  gh⊙t⊙o(1-o)] = dxw (step t) = dhw

    FLOPs per hidden value: forward 22 (z 4, three sigmoids by tanh at 4, two tanh, three
    products, a sum), backward 22 (dc' 5, each gate's gradient 4, dc 1; only the gradients of
    the inputs that need one are computed).
    """

    name = "lstm_gates"
    function = None  # nn.LSTM and nn.LSTMCell call it; no lucid.lstm_gates
    inputs = ("xw", "hw", "state")
    saves_inputs = (2,)  # the state, for c (the gates are kept as computed)
    wants_needs = True  # a gradient only for the inputs that need one

    def __init__(self, t: int | None = None) -> None:
        self.step = t

    def forward(self, xp, xw, hw, state):
        shape = tuple(state.shape)
        k = shape[-1]
        want = (*shape[1:-1], 4 * k)
        xw_t = xw if self.step is None else xw[self.step]
        if len(shape) < 2 or shape[0] != 2 or tuple(xw_t.shape) != want or \
                tuple(hw.shape) != want:
            raise self.error(f"projections {fmt(tuple(xw.shape))} (step {self.step}) and "
                             f"{fmt(tuple(hw.shape))}, state {fmt(shape)}: the state must be h "
                             "and c stacked, (2, ..., H), and both projections (..., 4·H)")
        self.c = c = state[1]
        self.shape, self.dtype = shape, state.dtype
        self.xw_shape, self.xw_dtype = tuple(xw.shape), xw.dtype
        z = xw_t + hw
        self.i = _sigmoid_by_tanh(xp, z[..., :k])
        self.f = _sigmoid_by_tanh(xp, z[..., k:2 * k])
        self.g = xp.tanh(z[..., 2 * k:3 * k])
        self.o = _sigmoid_by_tanh(xp, z[..., 3 * k:])
        c2 = self.f * c + self.i * self.g
        self.t = xp.tanh(c2)
        return xp.stack([self.o * self.t, c2])

    def backward(self, xp, g):
        i, f, gg, o, t = self.i, self.f, self.g, self.o, self.t
        gh, gc = g[0], g[1]
        graph = isinstance(g, Tensor)  # create_graph: whole arrays, as Lucid ops
        dc2 = gc + gh * o * (1 - t * t)
        dxw = dhw = dstate = None
        if self.needs[0] or self.needs[1]:
            dz = xp.concatenate([dc2 * gg * i * (1 - i), dc2 * self.c * f * (1 - f),
                                 dc2 * i * (1 - gg * gg), gh * t * o * (1 - o)], axis=-1)
            dhw = dz if self.needs[1] else None
            if self.needs[0]:
                dxw = dz if self.step is None else self._part(xp, graph, self.xw_shape,
                                                              self.xw_dtype, self.step, dz)
        if self.needs[2]:
            dstate = self._part(xp, graph, self.shape, self.dtype, 1, dc2 * f)
        return (dxw, dhw, dstate)

    @staticmethod
    def _part(xp, graph, shape, dtype, index, value):
        """The gradient of a whole array that is ``value`` at ``[index]`` and 0 elsewhere."""
        if graph:
            return backend_for(xp).scatter_add(shape, dtype, (index,), value)
        return PartGrad(shape, dtype, (index,), value)  # the walk adds it into place

    def forward_flops(self, out, xw, hw, state):
        return 22 * state.size // 2

    def backward_flops(self, out, xw, hw, state):
        needs = self.needs
        return (5 + 16 * (needs[0] or needs[1]) + needs[2]) * state.size // 2
