"""Spec rows: one LSTM step's gate arithmetic as one op (``LSTMGates``, what ``nn.LSTM`` and
``nn.LSTMCell`` run), against the textbook formulas in NumPy float64."""

from __future__ import annotations

import numpy as np

import lucid
from lucid.ops.base import apply
from lucid.ops.recurrent import LSTMGates
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand


def _gates(z, c):
    return apply(LSTMGates(), z, c)


def _ref(z, state):
    c = state[1]
    k = c.shape[-1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    i, f, o = sig(z[..., :k]), sig(z[..., k:2 * k]), sig(z[..., 3 * k:])
    c2 = f * c + i * np.tanh(z[..., 2 * k:3 * k])
    return np.stack([o * np.tanh(c2), c2])


SPECS = [
    Spec("lstm_gates", _gates, _ref,
         ((rand((3, 8), -3, 3), rand((2, 3, 2))), (rand((2, 3, 12)), rand((2, 2, 3, 3))),
          (rand((4,)), rand((2, 1)))),
         errors=(ErrorCase(lambda: _gates(lucid.Tensor(rand((3, 8))),
                                          lucid.Tensor(rand((2, 3, 3)))),
                           ValueError, r"lstm_gates: gate pre-activations \(3,8\) and state "
                           r"\(2,3,3\): the state must be h and c stacked, \(2, \.\.\., H\)"),),
         flops=(FlopsCase((rand((3, 8)), rand((2, 3, 2))), 27 * 6, 22 * 6),)),
]
