"""Spec rows: one LSTM step's gate arithmetic as one op (``LSTMGates``, what ``nn.LSTM`` and
``nn.LSTMCell`` run), against the textbook formulas in NumPy float64."""

from __future__ import annotations

import numpy as np

import lucid
from lucid.ops.base import apply
from lucid.ops.recurrent import LSTMGates
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand


def _gates(xw, hw, state):
    return apply(LSTMGates(), xw, hw, state)


def _gates_step(xws, hw, state):
    return apply(LSTMGates(1), xws, hw, state)


def _ref(xw, hw, state, t=None):
    z = (xw if t is None else xw[t]) + hw
    c = state[1]
    k = c.shape[-1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    i, f, o = sig(z[..., :k]), sig(z[..., k:2 * k]), sig(z[..., 3 * k:])
    c2 = f * c + i * np.tanh(z[..., 2 * k:3 * k])
    return np.stack([o * np.tanh(c2), c2])


SPECS = [
    Spec("lstm_gates", _gates, _ref,
         ((rand((3, 8), -3, 3), rand((3, 8), seed=1), rand((2, 3, 2))),
          (rand((2, 3, 12)), rand((2, 3, 12), seed=1), rand((2, 2, 3, 3))),
          (rand((4,)), rand((4,), seed=1), rand((2, 1)))),
         errors=(ErrorCase(lambda: _gates(lucid.Tensor(rand((3, 8))), lucid.Tensor(rand((3, 8))),
                                          lucid.Tensor(rand((2, 3, 3)))),
                           ValueError, r"lstm_gates: projections \(3,8\) \(step None\) and "
                           r"\(3,8\), state \(2,3,3\): the state must be h and c stacked"),),
         flops=(FlopsCase((rand((3, 8)), rand((3, 8)), rand((2, 3, 2))), 22 * 6, 22 * 6),)),
    # inside nn.LSTM: step t of the whole sequence's input projection
    Spec("lstm_gates", _gates_step, lambda xws, hw, state: _ref(xws, hw, state, t=1),
         ((rand((4, 3, 8), -3, 3), rand((3, 8), seed=1), rand((2, 3, 2))),),
         label="step 1 of 4",
         flops=(FlopsCase((rand((4, 3, 8)), rand((3, 8)), rand((2, 3, 2))), 22 * 6, 22 * 6),)),
]
