"""Spec rows: the fused losses (cross-entropy on logits, binary cross-entropy on
probabilities), called through ``lucid.nn.functional`` as users call them.

References are written by hand in NumPy float64.  Class-weight tensors are captured by the
rows as *free* constants (``.free()``), so the gpu parity run moves them to the op's device;
they get no gradient and are not sample inputs (gradcheck would check them).
"""

from __future__ import annotations

import math

import numpy as np

import lucid
import lucid.nn.functional as F
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand

X34 = rand((3, 4))
X234 = rand((2, 3, 4))

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _t(a):
    return lucid.Tensor(a)


def _log_softmax(a, axis=-1):
    z = a - a.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


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
    ErrorCase(lambda: lucid.cross_entropy(_t(rand((4, 5))), _t(T4.astype(float))),
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


SPECS = CROSS_ENTROPY + BCE
