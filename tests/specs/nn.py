"""Spec rows: the nn ops (activations, softmax, log-softmax, linear, cross-entropy, binary
cross-entropy), called through ``lucid.nn.functional`` as users call them.

References are written by hand in NumPy float64.  Class-weight tensors are captured by the
rows as *free* constants (``.free()``), so the gpu parity run moves them to the op's device;
they get no gradient and are not sample inputs (gradcheck would check them).
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
    _act("sigmoid", F.sigmoid, _sigmoid, 7, 3),
    # far tails: the overflow-free forms agree with the reference and stay finite
    Spec("sigmoid", F.sigmoid, _sigmoid, ((np.array([-700.0, -40.0, 0.0, 40.0, 700.0]),),),
         grad=False, label="tails", atol=1e-300, rtol=1e-12),
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


# --------------------------------------------------------------------------------------------
# linear


W53 = rand((5, 3), seed=1)
B5 = rand((5,), seed=2)


def _linear_ref(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


LINEAR = [
    Spec("linear", F.linear, _linear_ref,
         ((rand((4, 3)), W53, B5), (rand((2, 4, 3)), W53, B5), (rand((3,)), W53, B5),
          (transposed((3, 4)), W53, B5)),
         errors=(
             ErrorCase(lambda: F.linear(_t(rand((4, 2))), _t(W53)), ValueError,
                       r"linear: input \(4,2\) and weight \(5,3\): the input's last axis must "
                       r"equal in_features = 3"),
             ErrorCase(lambda: F.linear(_t(rand((4, 3))), _t(B5)), ValueError,
                       r"linear: weight must be 2-D \(out_features, in_features\), got shape "
                       r"\(5,\)"),
             ErrorCase(lambda: F.linear(_t(rand((4, 3))), _t(W53), _t(rand((3,)))), ValueError,
                       r"linear: bias has shape \(3,\), expected \(5,\)"),
         ),
         # 4·3·5 = 60 MACs + 20 bias adds; backward 60 MACs for x, 60 for W, 20 - 5 for b
         flops=(FlopsCase((rand((4, 3)), W53, B5), 80, 135),)),
    Spec("linear", F.linear, _linear_ref, ((rand((4, 3)), W53), (rand((2, 4, 3)), W53)),
         label="no-bias", flops=(FlopsCase((rand((4, 3)), W53), 60, 120),)),
]


# --------------------------------------------------------------------------------------------
# cross-entropy


def _ce_ref(x, t, weight=None, ignore_index=-100, reduction="mean"):
    """Per sample -w_t log softmax(x)_t along axis 1 (axis 0 for a 1-D x), then reduced."""
    ax = 0 if x.ndim == 1 else 1
    logp = _log_softmax(x, ax)
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    picked = np.squeeze(np.take_along_axis(logp, np.expand_dims(safe, ax), axis=ax), axis=ax)
    w = np.ones(x.shape[ax]) if weight is None else weight
    wt = w[safe] * valid
    loss = -picked * wt
    if reduction == "none":
        return loss
    if reduction == "sum":
        return np.sum(loss)
    return np.sum(loss) / np.sum(wt)


T4 = np.array([0, 3, 4, 1])
CE_SAMPLES = (
    (rand((4, 5)), T4),
    (rand((2, 3, 4)), np.array([[0, 1, 2, 1], [2, 2, 0, 1]])),  # (N, C, d): classes on axis 1
    (rand((5,)), np.array(3)),  # unbatched: (C,) logits, a 0-d target
    (np.array([[1000.0, -1000.0, 0.0], [-5.0, 2.0, 700.0]]), np.array([1, 2])),  # large
)
CW = rand((5,), 0.5, 2.0, seed=3)
CW_T = lucid.Tensor(CW).free()  # a free constant: follows the logits to "gpu" in parity runs


def _ce_row(label, kw, samples=CE_SAMPLES, flops=None, errors=()):
    return Spec("cross_entropy", lambda x, t: F.cross_entropy(x, t, **kw),
                lambda x, t: _ce_ref(x, t, **{k: CW if k == "weight" else v
                                             for k, v in kw.items()}),
                samples, label=label, errors=errors,
                flops=() if flops is None else (FlopsCase((rand((4, 5)), T4), *flops),))


_CE_ERRORS = (
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(T4.astype(np.float64))), ValueError,
              r"cross_entropy: input \(4,5\) and target \(4,\): a floating-point target holds "
              r"class probabilities"),
    ErrorCase(lambda: lucid.ops.nn.cross_entropy(_t(rand((4, 5))), _t(T4.astype(float))),
              TypeError, r"cross_entropy: target must hold integer class indices"),
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(np.array([0, 1, 2]))), ValueError,
              r"cross_entropy: input \(4,5\) and target \(3,\): the target must have shape "
              r"\(4,\)"),
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(np.array([0, 1, 5, 2]))),
              IndexError, r"cross_entropy: target value 5 is out of range for 5 classes"),
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(np.array([0, -1, 2, 2]))),
              IndexError, r"cross_entropy: target value -1 is out of range"),
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(T4), reduction="avg"), ValueError,
              r"cross_entropy: reduction must be 'mean', 'sum' or 'none', got 'avg'"),
    ErrorCase(lambda: F.cross_entropy(_t(rand((4, 5))), _t(T4), weight=_t(rand((4,)))),
              ValueError, r"cross_entropy: weight must be a Tensor of shape \(5,\), got \(4,\)"),
)

CROSS_ENTROPY = [
    # n = 20 logits, m = 4 rows: forward 4n + 3m + (2m + 1 | m | 0), backward 4n + m (+ m)
    _ce_row("", {}, flops=(101, 88), errors=_CE_ERRORS),
    _ce_row("sum", {"reduction": "sum"}, flops=(96, 84)),
    _ce_row("none", {"reduction": "none"}, flops=(92, 84)),
    _ce_row("weight", {"weight": CW_T},
            samples=CE_SAMPLES[:1] + ((rand((2, 5, 3)), np.array([[0, 4, 2], [1, 1, 3]])),)),
    _ce_row("weight,none", {"weight": CW_T, "reduction": "none"}, samples=CE_SAMPLES[:1]),
    _ce_row("ignore_index", {"ignore_index": 3},
            samples=((rand((4, 5)), T4), (rand((4, 5)), np.array([3, 0, 3, 1])))),
    _ce_row("ignore_index=-100", {}, samples=((rand((4, 5)), np.array([-100, 3, 4, -100])),)),
]


# --------------------------------------------------------------------------------------------
# binary cross-entropy


def _bce_ref(p, t, weight=None, reduction="mean"):
    with np.errstate(divide="ignore"):
        loss = -(t * np.maximum(np.log(p), -100) + (1 - t) * np.maximum(np.log(1 - p), -100))
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    return np.sum(loss) if reduction == "sum" else np.mean(loss)


def _probs(shape, seed=0):
    return rand(shape, 0.05, 0.95, seed), rand(shape, 0.0, 1.0, seed + 10)


BCE_SAMPLES = (_probs((3, 4)), _probs((5,), 1), _probs((2, 3, 4), 2), _probs((), 3))
BW = rand((4,), 0.5, 2.0, seed=4)
BW_T = lucid.Tensor(BW).free()


def _bce_row(label, kw, samples=BCE_SAMPLES, flops=None, grad=True, errors=()):
    return Spec("binary_cross_entropy", lambda p, t: F.binary_cross_entropy(p, t, **kw),
                lambda p, t: _bce_ref(p, t, **{k: BW if k == "weight" else v
                                              for k, v in kw.items()}),
                samples, label=label, grad=grad, errors=errors,
                flops=() if flops is None else (FlopsCase(_probs((3, 4)), *flops),))


_BCE_ERRORS = (
    ErrorCase(lambda: F.binary_cross_entropy(_t(rand((4, 1), 0.1, 0.9)), _t(rand((4,), 0, 1))),
              ValueError, r"binary_cross_entropy: input shape \(4,1\) and target shape \(4,\) "
                          r"differ"),
    ErrorCase(lambda: F.binary_cross_entropy(_t(np.array([0.5, 1.5])), _t(np.array([0., 1.]))),
              ValueError, r"binary_cross_entropy: input values must be probabilities in "
                          r"\[0, 1\], found 1.5"),
)

BCE = [
    # n = 12: forward 12n (+ n + 1 for the mean), backward 6n for p, 2n for t (+ 1 for the mean)
    _bce_row("", {}, flops=(157, 97), errors=_BCE_ERRORS),
    _bce_row("sum", {"reduction": "sum"}, flops=(156, 96)),
    _bce_row("none", {"reduction": "none"}, flops=(144, 96)),
    _bce_row("weight", {"weight": BW_T}, samples=BCE_SAMPLES[:1] + BCE_SAMPLES[2:3]),
    # p = 0 and p = 1 hit the clamps: finite losses (forward only: no finite differences there)
    _bce_row("clamped", {"reduction": "none"}, grad=False,
             samples=((np.array([0.0, 1.0, 0.0, 1.0, 0.5]),
                       np.array([0.0, 1.0, 1.0, 0.0, 0.3])),)),
]

SPECS = ACTIVATIONS + SOFTMAX + LINEAR + CROSS_ENTROPY + BCE
