"""Spec rows: the activation ops (relu, leaky_relu, elu, gelu, silu, sigmoid, softplus, softmax,
log-softmax), called as users call them (``lucid.nn.functional``, or ``lucid.<name>``).

References are written by hand in NumPy float64.
"""

from __future__ import annotations

import math

import numpy as np

import lucid
import lucid.nn.functional as F
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, transposed, unary

X34 = rand((3, 4))
X234 = rand((2, 3, 4))

_erf = np.vectorize(math.erf, otypes=[np.float64])
_SELU_ALPHA = 1.6732632423543772848170429916717  # PyTorch's constants
_SELU_SCALE = 1.0507009873554804934193349852946


def _t(a):
    return lucid.Tensor(a)


# --------------------------------------------------------------------------------------------
# activations


def _act(name, fn, ref, fwd, bwd, label="", errors=()):
    """A row on every shape of ``unary()``, FLOPs hand count (forward, backward) on (3, 4)."""
    return Spec(name, fn, ref, unary(), label=label, errors=errors,
                flops=(FlopsCase((X34,), fwd * 12, bwd * 12),))


def _gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a**3)))


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


ACTIVATIONS = [
    _act("relu", F.relu, lambda a: np.maximum(a, 0.0), 1, 2),
    _act("leaky_relu", F.leaky_relu, lambda a: np.where(a > 0, a, 0.01 * a), 2, 2),
    Spec("leaky_relu", lambda a: F.leaky_relu(a, 0.2), lambda a: np.where(a > 0, a, 0.2 * a),
         unary(), label="slope=0.2"),
    _act("elu", F.elu, lambda a: np.where(a > 0, a, np.exp(a) - 1), 4, 3),
    Spec("elu", lambda a: F.elu(a, 0.5), lambda a: np.where(a > 0, a, 0.5 * (np.exp(a) - 1)),
         unary(), label="alpha=0.5"),
    _act("gelu", F.gelu, lambda a: 0.5 * a * (1 + _erf(a / math.sqrt(2))), 5, 7,
         errors=(ErrorCase(lambda: F.gelu(_t(X34), approximate="fast"), ValueError,
                           r"gelu: approximate must be 'none' or 'tanh', got 'fast'"),)),
    _act("gelu", lambda a: F.gelu(a, approximate="tanh"), _gelu_tanh, 9, 13, label="tanh"),
    _act("silu", F.silu, lambda a: a * _sigmoid(a), 8, 5),
    _act("selu", F.selu, lambda a: _SELU_SCALE * np.where(
        a > 0, a, _SELU_ALPHA * (np.exp(np.minimum(a, 0)) - 1)), 5, 3),
    Spec("relu6", F.relu6, lambda a: np.clip(a, 0.0, 6.0), unary(-3.0, 9.0),
         flops=(FlopsCase((X34,), 2 * 12, 3 * 12),)),
    Spec("hardsigmoid", F.hardsigmoid, lambda a: np.clip(a + 3.0, 0.0, 6.0) / 6.0,
         unary(-5.0, 5.0), flops=(FlopsCase((X34,), 4 * 12, 3 * 12),)),
    Spec("hardswish", F.hardswish, lambda a: a * np.clip(a + 3.0, 0.0, 6.0) / 6.0,
         unary(-5.0, 5.0), flops=(FlopsCase((X34,), 5 * 12, 5 * 12),)),
    _act("mish", F.mish, lambda a: a * np.tanh(np.log1p(np.exp(a))), 8, 9),
    # far tails: the overflow-free softplus inside stays finite
    Spec("mish", F.mish, lambda a: a * np.tanh(np.logaddexp(0.0, a)),
         ((np.array([-800.0, -30.0, 0.0, 30.0, 800.0]),),), label="tails"),
    _act("sigmoid", F.sigmoid, _sigmoid, 7, 3),
    # far tails: the overflow-free forms agree with the reference and stay finite
    Spec("sigmoid", F.sigmoid, _sigmoid, ((np.array([-700.0, -40.0, 0.0, 40.0, 700.0]),),),
         grad=False, label="tails", atol=1e-300, rtol=1e-12),
]


def _softplus(a, beta=1.0, threshold=20.0):
    """log(1 + e^(βa)) / β in float64, literally (fine on these samples), x where βa > 20."""
    return np.where(beta * a > threshold, a, np.log1p(np.exp(beta * a)) / beta)


SOFTPLUS = [
    _act("softplus", lucid.softplus, _softplus, 8, 9,
         errors=(ErrorCase(lambda: lucid.softplus(_t(X34), beta=0.0), ValueError,
                           r"softplus: beta must be nonzero"),)),
    Spec("softplus", lambda a: lucid.softplus(a, beta=2.0), lambda a: _softplus(a, 2.0),
         unary(), label="beta=2"),
    # a negative beta (PyTorch allows it): log(1 + e^(-x)) / -1 = -softplus(-x)
    Spec("softplus", lambda a: lucid.softplus(a, beta=-1.0), lambda a: _softplus(a, -1.0),
         unary(-5.0, 5.0), label="beta=-1"),
    Spec("softplus", lambda a: lucid.softplus(a, beta=-0.5, threshold=1.0),
         lambda a: _softplus(a, -0.5, 1.0), ((np.array([-9.0, -2.5, -1.0, 0.5, 3.0]),),),
         label="beta=-0.5,threshold=1"),
    # far tails: y = x (and dy/dx = 1) above the threshold, e^x below; never inf or NaN
    Spec("softplus", lucid.softplus, lambda a: np.where(a > 20, a, np.log1p(np.exp(a))),
         ((np.array([-700.0, -40.0, -1.0, 0.0, 30.0, 700.0]),),), grad=False, label="tails",
         atol=1e-300, rtol=1e-12),
    Spec("softplus", lucid.softplus, _softplus, ((np.array([-30.0, -5.0, 19.0, 21.0, 50.0]),),),
         label="tails-grad"),
]


# --------------------------------------------------------------------------------------------
# softmax, log-softmax


def _softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(a, axis=-1):
    z = a - a.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


ND1 = ((rand((5,)),), (X34,), (X234,), (transposed(),))
_SOFTMAX_ERRORS = (
    ErrorCase(lambda: F.softmax(_t(np.array(1.0))), ValueError,
              r"softmax: needs a tensor with at least 1 dimension, got a 0-d tensor"),
    ErrorCase(lambda: F.softmax(_t(X34), axis=2), IndexError,
              r"softmax: axis 2 is out of range for a tensor with 2 dimension\(s\)"),
)

SOFTMAX = [
    Spec("softmax", F.softmax, _softmax, ND1, errors=_SOFTMAX_ERRORS,
         flops=(FlopsCase((X34,), 60, 48),)),
    Spec("softmax", lambda a: F.softmax(a, axis=0), lambda a: _softmax(a, 0), ND1,
         label="axis=0"),
    Spec("softmax", lambda a: F.softmax(a, axis=1), lambda a: _softmax(a, 1), ND1[1:],
         label="axis=1"),
    # large logits: exp(1000) would overflow without the max subtraction
    Spec("softmax", F.softmax, _softmax, ((np.array([[1000.0, 999.0, -1000.0]]),),),
         label="large"),
    Spec("log_softmax", F.log_softmax, _log_softmax, ND1,
         errors=(ErrorCase(lambda: F.log_softmax(_t(np.array(1.0))), ValueError,
                           r"log_softmax: needs a tensor with at least 1 dimension"),),
         flops=(FlopsCase((X34,), 63, 48),)),
    Spec("log_softmax", lambda a: F.log_softmax(a, axis=0), lambda a: _log_softmax(a, 0), ND1,
         label="axis=0"),
    Spec("log_softmax", F.log_softmax, _log_softmax,
         ((np.array([[1000.0, 999.0, -1000.0]]),),), label="large"),
]


SPECS = ACTIVATIONS + SOFTPLUS + SOFTMAX
