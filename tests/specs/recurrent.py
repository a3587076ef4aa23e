"""Spec rows: one LSTM step as one op (``LSTMStep``: W_hh·h and the gate arithmetic, what
``nn.LSTMCell`` runs and ``nn.LSTM`` while drawn or counted) and all steps of a layer as one
op (``LSTMSequence``, what ``nn.LSTM`` runs otherwise), against the textbook formulas in NumPy
float64."""

from __future__ import annotations

import numpy as np

import lucid
from lucid.ops.base import apply
from lucid.ops.recurrent import LSTMSequence, LSTMStep
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand


def _step(xw, w, state):
    return apply(LSTMStep(), xw, w, state)


def _step_t(xws, w, state):
    return apply(LSTMStep(1), xws, w, state)


def _ref(xw, w, state, t=None):
    h, c = state[0], state[1]
    z = (xw if t is None else xw[t]) + h @ w.T
    k = c.shape[-1]
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    i, f, o = sig(z[..., :k]), sig(z[..., k:2 * k]), sig(z[..., 3 * k:])
    c2 = f * c + i * np.tanh(z[..., 2 * k:3 * k])
    return np.stack([o * np.tanh(c2), c2])


def _sequence(reverse):
    return lambda xw, w, state: apply(LSTMSequence(reverse), xw, w, state)


def _sequence_ref(reverse):
    def ref(xw, w, state):
        hs, cs = [None] * len(xw), [None] * len(xw)
        for t in (range(len(xw) - 1, -1, -1) if reverse else range(len(xw))):
            state = _ref(xw, w, state, t=t)
            hs[t], cs[t] = state
        return np.stack([np.stack(hs), np.stack(cs)])
    return ref


# one step of 3 samples with H = 2: 3·8·2 = 48 MACs each way per product; FLOPs per hidden
# value (6 of them): forward 25, backward 26
FLOPS = FlopsCase((rand((3, 8)), rand((8, 2), seed=2), rand((2, 3, 2))),
                  48 + 25 * 6, 26 * 6 + 2 * 48)

SPECS = [
    Spec("lstm_step", _step, _ref,
         ((rand((3, 8), -3, 3), rand((8, 2), seed=2), rand((2, 3, 2))),
          (rand((2, 3, 12)), rand((12, 3), seed=2), rand((2, 2, 3, 3))),
          (rand((4,)), rand((4, 1), seed=2), rand((2, 1)))),
         errors=(ErrorCase(lambda: _step(lucid.Tensor(rand((3, 8))), lucid.Tensor(rand((8, 3))),
                                         lucid.Tensor(rand((2, 3, 3)))),
                           ValueError, r"lstm_step: projection \(3,8\) \(step None\), weight "
                           r"\(8,3\) and state \(2,3,3\): the state must be h and c stacked"),
                 ErrorCase(lambda: _step(lucid.Tensor(rand((3, 8))), lucid.Tensor(rand((8, 3))),
                                         lucid.Tensor(rand((2, 3, 2)))),
                           ValueError, r"and the weight \(4·H, H\)")),
         flops=(FLOPS,)),
    # inside nn.LSTM: step t of the whole sequence's input projection
    Spec("lstm_step", _step_t, lambda xws, w, state: _ref(xws, w, state, t=1),
         ((rand((4, 3, 8), -3, 3), rand((8, 2), seed=2), rand((2, 3, 2))),),
         label="step 1 of 4",
         flops=(FlopsCase((rand((4, 3, 8)), rand((8, 2), seed=2), rand((2, 3, 2))),
                          FLOPS.forward, FLOPS.backward),)),
    # all steps of one layer and direction: 3 steps of 2 samples with H = 2, so each step
    # has 2·8·2 = 32 MACs per product and 4 hidden values
    *[Spec("lstm_sequence", _sequence(rev), _sequence_ref(rev),
           ((rand((3, 2, 8), -3, 3), rand((8, 2), seed=2), rand((2, 2, 2))),
            (rand((1, 8)), rand((8, 2), seed=2), rand((2, 2))),
            (rand((4, 2, 1, 12)), rand((12, 3), seed=2), rand((2, 2, 1, 3)))),
           label="reverse" if rev else "",
           errors=(ErrorCase(lambda: _sequence(False)(lucid.Tensor(rand((3, 2, 8))),
                                                     lucid.Tensor(rand((8, 3))),
                                                     lucid.Tensor(rand((2, 2, 3)))),
                             ValueError, r"lstm_sequence: projection \(3,2,8\) \(T steps\), "
                             r"weight \(8,3\) and state \(2,2,3\)"),),
           # forward 3 steps of (32 + 25·4); backward: 26 per hidden value at the two later
           # steps, 26 at the first (its state needs a gradient here), products dh at every
           # step and dW_hh at every step
           flops=(FlopsCase((rand((3, 2, 8)), rand((8, 2), seed=2), rand((2, 2, 2))),
                            3 * (32 + 25 * 4), 4 * (26 * 3) + 32 * (3 + 3)),))
      for rev in (False, True)],
]
