"""Neural-network ops: activations, softmax, fused linear layer, fused cross-entropy losses.

Every op here *could* be written from the primitives of ``elementwise.py``, ``reduction.py``
and ``linalg.py`` -- and ``tests/test_nn_layers.py`` checks that each one matches that
composite, values and gradients (exact GELU, which needs an erf primitive Lucid does not
have, is checked against its derivative formula instead).  They are single ops because a
training step calls them on every batch: one op means one dispatch, one saved array and one
backward rule instead of five of each, and a backward rule written from the simplified
derivative (softmax minus one-hot for cross-entropy) instead of the chain of small rules
autodiff would compose.

Numerical stability: softmax, log-softmax and cross-entropy subtract the row maximum before
``exp`` (the result is unchanged, since softmax(x) = softmax(x - c), and ``exp`` never
overflows); sigmoid evaluates ``exp(-|x|)``, which never overflows either.

FLOPs convention (n = elements of the input, m = rows, i.e. n / size of the softmax axis):

* elementwise work counts the arithmetic operations and comparisons the rule performs per
  element, a transcendental function (exp, log, tanh, erf) counting as one and a select
  (``where``) as zero; each docstring lists the count;
* reductions count one per input element, as in ``reduction.py``;
* ``linear`` counts its matmul in multiply-accumulates (MACs, as ``linalg.py``) plus one add
  per output element for the bias -- exactly what the composite ``x @ W.T + b`` counts.
  Multiply MACs by 2 for the other common unit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.ops.base import Op, apply
from lucid.shapes import fmt, normalize_axis
from lucid.types import to_numeric_type

__all__ = [
    "relu",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "sigmoid",
    "softmax",
    "log_softmax",
    "linear",
    "cross_entropy",
    "binary_cross_entropy",
]

SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715

# --------------------------------------------------------------------------------------------
# helpers shared by the rules


def _sigmoid(xp: Any, x: Any) -> Any:
    """1 / (1 + e^-x) without overflow, as  e^min(x, 0) / (1 + e^-|x|):

    for x >= 0 that is 1 / (1 + e^-x); for x < 0 it is e^x / (1 + e^x), the same value with
    numerator and denominator multiplied by e^x.  Neither exponent is ever positive, so
    nothing overflows, and no branch (``where``) is needed.
    7 operations per element: min, exp, abs, neg, exp, add, divide.
    """
    return xp.exp(xp.minimum(x, 0)) / (1 + xp.exp(-xp.abs(x)))


# NumPy has no erf (SciPy has, but is no dependency of Lucid); MLX has ``mx.erf``.  Without
# it, Python's exact ``math.erf`` runs once per element: correct to the last bit, but a
# Python call per element -- ``gelu(x, approximate="tanh")`` is the fast form on "cpu".
_math_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erf(xp: Any, x: Any) -> Any:
    erf = getattr(xp, "erf", None)
    if erf is not None:
        return erf(x)
    return _math_erf(x).astype(x.dtype)


class Activation(Op):
    """An elementwise activation ``y = f(x)``: the counts of ``fwd_cost``/``bwd_cost`` per
    element (see the module docstring for what counts)."""

    fwd_cost = 1
    bwd_cost = 1

    def forward_flops(self, out: Any, x: Any) -> int:
        return self.fwd_cost * out.size

    def backward_flops(self, out: Any, x: Any) -> int:
        return self.bwd_cost * out.size


# --------------------------------------------------------------------------------------------
# activations


class ReLU(Activation):
    """y = max(x, 0).   dy/dx = 1 where x > 0, else 0 (0 at x = 0, as PyTorch).

    Backward reads only the output: y > 0 exactly where x > 0.
    FLOPs: forward 1 (max), backward 2 (compare, multiply) per element.
    """

    name = "relu"
    saves_inputs = False
    saves_output = True
    bwd_cost = 2

    def forward(self, xp, x):
        self.y = xp.maximum(x, 0)
        return self.y

    def backward(self, xp, g):
        # g * mask rather than where(mask, g, 0): on NumPy the multiply is several times faster
        return (g * (self.y > 0),)


class LeakyReLU(Activation):
    """y = x for x > 0, a·x otherwise (a = ``negative_slope``).   dy/dx = 1 or a.

    FLOPs: forward 2 (compare, multiply), backward 2 (compare, multiply) per element.
    """

    name = "leaky_relu"
    fwd_cost = 2
    bwd_cost = 2

    def __init__(self, negative_slope: float = 0.01) -> None:
        self.slope = float(negative_slope)

    def forward(self, xp, x):
        self.x = x
        return xp.where(x > 0, x, x * self.slope)

    def backward(self, xp, g):
        return (xp.where(self.x > 0, g, g * self.slope),)


class ELU(Activation):
    """y = x for x > 0, α(e^x - 1) otherwise.   dy/dx = 1 for x > 0, α e^x = y + α otherwise.

    ``expm1`` is evaluated at min(x, 0) so that large positive x (whose branch is not taken)
    never overflow.  FLOPs: forward 4 (min, expm1, multiply, compare), backward 3 (compare,
    add, multiply) per element.
    """

    name = "elu"
    saves_output = True
    fwd_cost = 4
    bwd_cost = 3

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = float(alpha)

    def forward(self, xp, x):
        self.x = x
        self.y = xp.where(x > 0, x, self.alpha * xp.expm1(xp.minimum(x, 0)))
        return self.y

    def backward(self, xp, g):
        return (xp.where(self.x > 0, g, g * (self.y + self.alpha)),)


class GELU(Activation):
    """Gaussian error linear unit, y = x·Φ(x) with Φ the standard normal CDF.

    ``approximate="none"`` (PyTorch's default): Φ(x) = (1 + erf(x/√2)) / 2 and
        dy/dx = Φ(x) + x·φ(x),  φ(x) = e^(-x²/2) / √(2π).
    FLOPs: forward 5, backward 7 per element.  (NumPy has no erf: on "cpu" it is Python's
    ``math.erf`` per element -- exact but slow; use the tanh form for speed.)

    ``approximate="tanh"``: Φ(x) ≈ (1 + tanh(u)) / 2 with u = √(2/π)(x + 0.044715 x³), and
        dy/dx = (1 + t)/2 + (x/2)(1 - t²)·√(2/π)(1 + 3·0.044715 x²),  t = tanh(u).
    FLOPs: forward 9, backward 13 per element.
    """

    name = "gelu"

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise self.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self.fwd_cost, self.bwd_cost = (5, 7) if approximate == "none" else (9, 13)

    def forward(self, xp, x):
        self.x = x
        if self.approximate == "none":
            self.cdf = 0.5 * (1 + _erf(xp, x * SQRT_HALF))
            return x * self.cdf
        self.t = xp.tanh(SQRT_2_OVER_PI * (x + GELU_K * (x * x * x)))
        return 0.5 * x * (1 + self.t)

    def backward(self, xp, g):
        x = self.x
        if self.approximate == "none":
            pdf = xp.exp(-0.5 * (x * x)) * INV_SQRT_2PI
            return (g * (self.cdf + x * pdf),)
        t = self.t
        du = SQRT_2_OVER_PI * (1 + (3 * GELU_K) * (x * x))
        return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du),)


class SiLU(Activation):
    """SiLU (swish), y = x·σ(x).   dy/dx = σ(x)(1 + x(1 - σ(x))).

    FLOPs: forward 8 (the stable sigmoid's 7, one multiply), backward 5 per element.
    """

    name = "silu"
    fwd_cost = 8
    bwd_cost = 5

    def forward(self, xp, x):
        self.x = x
        self.s = _sigmoid(xp, x)
        return x * self.s

    def backward(self, xp, g):
        s = self.s
        return (g * s * (1 + self.x * (1 - s)),)


class Sigmoid(Activation):
    """y = σ(x) = 1 / (1 + e^-x).   dy/dx = σ(x)(1 - σ(x)) = y(1 - y): backward reuses y.

    Computed from exponents that are never positive, so it never overflows.
    FLOPs: forward 7, backward 3 per element.
    """

    name = "sigmoid"
    saves_inputs = False
    saves_output = True
    fwd_cost = 7
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = _sigmoid(xp, x)
        return self.y

    def backward(self, xp, g):
        y = self.y
        return (g * y * (1 - y),)


# --------------------------------------------------------------------------------------------
# softmax and log-softmax along one axis


class _AlongAxis(Op):
    """An op that normalises along one ``axis`` (softmax, log-softmax)."""

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def setup(self, x: Any) -> int:
        if x.ndim == 0:
            raise self.error(
                "needs a tensor with at least 1 dimension, got a 0-d tensor (a scalar); "
                "reshape it first, e.g. x.reshape(1)"
            )
        axis = normalize_axis(self.name, self.axis, x.ndim)
        self.ax = axis
        return axis

    @staticmethod
    def rows(out: Any, ax: int) -> int:
        """m: how many independent rows the axis splits the tensor into."""
        return out.size // out.shape[ax] if out.shape[ax] else 0


class Softmax(_AlongAxis):
    """y_i = e^(x_i) / sum_j e^(x_j) along ``axis`` (computed as e^(x_i - max) / sum ...).

    Jacobian dy_i/dx_j = y_i (δ_ij - y_j), so the vector-Jacobian product is
        dL/dx = y ⊙ (g - sum_j g_j y_j)     (the sum along the axis, broadcast back).
    FLOPs: forward 5n (max, subtract, exp, sum, divide), backward 4n (multiply, sum,
    subtract, multiply).
    """

    name = "softmax"
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        ax = self.setup(x)
        e = xp.exp(x - xp.max(x, axis=ax, keepdims=True))
        self.y = e / xp.sum(e, axis=ax, keepdims=True)
        return self.y

    def backward(self, xp, g):
        y = self.y
        return (y * (g - xp.sum(g * y, axis=self.ax, keepdims=True)),)

    def forward_flops(self, out, x):
        return 5 * out.size

    def backward_flops(self, out, x):
        return 4 * out.size


class LogSoftmax(_AlongAxis):
    """y_i = x_i - log sum_j e^(x_j) along ``axis`` (the log-sum-exp taken after subtracting
    the maximum, so it never overflows).

    dy_i/dx_j = δ_ij - softmax_j, so  dL/dx = g - softmax(x) ⊙ sum_j g_j,  softmax = e^y.
    FLOPs: forward 5n + m (max, subtract, exp, sum, subtract; one log per row), backward 4n
    (exp, sum, multiply, subtract).
    """

    name = "log_softmax"
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        ax = self.setup(x)
        z = x - xp.max(x, axis=ax, keepdims=True)
        self.y = z - xp.log(xp.sum(xp.exp(z), axis=ax, keepdims=True))
        return self.y

    def backward(self, xp, g):
        return (g - xp.exp(self.y) * xp.sum(g, axis=self.ax, keepdims=True),)

    def forward_flops(self, out, x):
        return 5 * out.size + self.rows(out, self.ax)

    def backward_flops(self, out, x):
        return 4 * out.size


# --------------------------------------------------------------------------------------------
# linear: y = x @ W^T + b in one op


class Linear(Op):
    """y = x W^T + b   (x: (..., in), W: (out, in) as PyTorch stores it, b: (out,) or absent).

    With the leading axes of x flattened into M rows, X: (M, in) and G = dL/dy: (M, out):
        dL/dx = G W          (M, in)
        dL/dW = G^T X        (out, in) -- already W's layout, no transpose copy
        dL/db = sum of G over the rows.
    The same values the composite ``x @ W.T + b`` gives, in one op: no transposed view of W
    in the graph and no broadcast gradient to sum down for b.
    FLOPs: forward M·in·out MACs + M·out bias adds; backward M·in·out MACs per operand of
    x and W that requires grad, plus M·out - out adds for b -- exactly the composite's counts.
    """

    name = "linear"
    wants_needs = True

    def forward(self, xp, x, w, b=None):
        if w.ndim != 2:
            raise self.error(
                f"weight must be 2-D (out_features, in_features), got shape {fmt(tuple(w.shape))}"
            )
        if x.ndim == 0 or x.shape[-1] != w.shape[1]:
            raise self.error(
                f"input {fmt(tuple(x.shape))} and weight {fmt(tuple(w.shape))}: the input's "
                f"last axis must equal in_features = {w.shape[1]} (weight is (out_features, "
                "in_features), as in PyTorch)"
            )
        if b is not None and tuple(b.shape) != (w.shape[0],):
            raise self.error(
                f"bias has shape {fmt(tuple(b.shape))}, expected ({w.shape[0]},) "
                f"(one per output feature of weight {fmt(tuple(w.shape))})"
            )
        self.x, self.w, self.has_bias = x, w, b is not None
        y = xp.matmul(x, w.T)
        if b is not None:
            if b.dtype == y.dtype:
                y += b  # y is the GEMM's fresh output: add in place, no second array
            else:
                y = y + b  # promotes (a float64 bias on float32 inputs)
        return y

    def backward(self, xp, g):
        x, w, needs = self.x, self.w, self.needs
        n_in = w.shape[1]
        g2 = g.reshape(-1, w.shape[0])
        gx = gw = gb = None
        if needs[0]:
            gx = xp.matmul(g, w)
        if needs[1]:
            gw = xp.matmul(g2.T, x.reshape(-1, n_in))
        if self.has_bias and needs[2]:
            gb = xp.sum(g2, axis=0)
        return gx, gw, gb

    @staticmethod
    def _sizes(out: Any, w: Any) -> tuple[int, int]:
        rows = out.size // w.shape[0] if w.shape[0] else 0
        return rows, rows * w.shape[0] * w.shape[1]

    def forward_flops(self, out, x, w, b=None):
        rows, macs = self._sizes(out, w)
        return macs + (out.size if b is not None else 0)

    def backward_flops(self, out, x, w, b=None):
        _, macs = self._sizes(out, w)
        flops = macs * (int(self.needs[0]) + int(self.needs[1]))
        if b is not None and self.needs[2]:
            flops += out.size - b.size
        return flops


# --------------------------------------------------------------------------------------------
# cross-entropy on logits with integer class targets


REDUCTIONS = ("mean", "sum", "none")


class CrossEntropy(Op):
    """Cross-entropy of logits x against integer class targets t (log-softmax + NLL in one op).

    Class axis: 1 for x of shape (N, C, d1, ...) with t of shape (N, d1, ...); 0 for x of
    shape (C,) with a 0-d t.  Per sample, with p = softmax(x) along the class axis,

        l_i = -w_{t_i} log p_{i, t_i} = w_{t_i} (logsumexp(x_i) - x_{i, t_i})

    where w are the class weights (all 1 without ``weight``) and samples whose target equals
    ``ignore_index`` get w = 0.  ``reduction``: "none" returns l, "sum" its sum, "mean"
    sum(l) / sum(w) (the weighted mean, as PyTorch; with no weights and nothing ignored, the
    plain mean).  The gradient is the classic simplification

        dl_i/dx_i = w_{t_i} (p_i - onehot(t_i)),

    scaled by the upstream gradient (and by 1 / sum(w) for "mean").  No gradient flows into
    t or into ``weight``.
    FLOPs: forward 4n + 3m (max, subtract, exp and sum per element; log, subtract and weight
    per row) + the reduction (m for "sum", 2m + 1 for "mean"); backward 4n + m (divide,
    compare, subtract, multiply per element; the coefficient per row; + m for "mean").
    """

    name = "cross_entropy"
    saves_inputs = False  # backward reads the saved exponentials, not the logits

    def __init__(self, reduction: str = "mean", ignore_index: int = -100) -> None:
        if reduction not in REDUCTIONS:
            raise self.error(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction
        self.ignore_index = int(ignore_index)

    def _check(self, xp, x, t, w) -> int:
        """Dtypes and shapes; returns the class axis."""
        xs, ts = tuple(x.shape), tuple(t.shape)
        if not to_numeric_type(x.dtype).is_floating_point:
            raise self.error(
                f"input (logits) must be floating point, got {to_numeric_type(x.dtype).name}",
                TypeError,
            )
        if to_numeric_type(t.dtype).base_dtype is not int:
            raise self.error(
                f"target must hold integer class indices, got dtype "
                f"{to_numeric_type(t.dtype).name}. Convert it with .astype(lucid.Int64) (for "
                "class probabilities use lucid.nn.functional.cross_entropy)",
                TypeError,
            )
        if x.ndim == 0:
            raise self.error("input must have a class axis, got a 0-d tensor")
        ax = 0 if x.ndim == 1 else 1
        want = () if x.ndim == 1 else (xs[0], *xs[2:])
        if ts != want:
            raise self.error(
                f"input {fmt(xs)} and target {fmt(ts)}: the target must have shape "
                f"{fmt(want)} (the input's shape without the class axis {ax})"
            )
        n_cls = xs[ax]
        if w is not None and tuple(w.shape) != (n_cls,):
            raise self.error(
                f"weight has shape {fmt(tuple(w.shape))}, expected ({n_cls},): one weight per "
                f"class of input {fmt(xs)}"
            )
        return ax

    def _check_range(self, xp, safe, n_cls: int) -> None:
        """Every target (ignored ones replaced by 0) must be a class index in [0, n_cls)."""
        if safe.size:
            lo, hi = int(xp.min(safe)), int(xp.max(safe))
            if lo < 0 or hi >= n_cls:
                raise self.error(
                    f"target value {lo if lo < 0 else hi} is out of range for {n_cls} classes "
                    f"(valid: 0..{n_cls - 1}, or ignore_index={self.ignore_index})",
                    IndexError,
                )

    def forward(self, xp, x, t, w=None):
        ax = self._check(xp, x, t, w)
        self.ax = ax
        n_cls = x.shape[ax]
        lo, hi = (int(t.min()), int(t.max())) if t.size else (0, 0)
        if w is None and 0 <= lo and hi < n_cls and not lo <= self.ignore_index <= hi:
            safe, wt = t, None  # the usual case: every target a class, none ignored, weight 1
        else:
            valid = t != self.ignore_index
            safe = xp.where(valid, t, 0)  # ignored samples read class 0, then get weight 0
            self._check_range(xp, safe, n_cls)
            wt = valid.astype(x.dtype)
            if w is not None:
                wt = xp.take(w, safe).astype(x.dtype) * wt
        z = x - xp.max(x, axis=ax, keepdims=True)
        self.e = xp.exp(z)
        self.s = xp.sum(self.e, axis=ax, keepdims=True)
        self.safe, self.wt = safe, wt
        if x.ndim == 2:  # (N, C): pick z[i, t_i] by (row, class) pairs
            self.rows = xp.arange(x.shape[0])
            nll = xp.log(self.s[:, 0]) - z[self.rows, safe]
        else:
            idx = xp.expand_dims(safe, ax)
            nll = xp.squeeze(xp.log(self.s) - xp.take_along_axis(z, idx, axis=ax), axis=ax)
        loss = nll if wt is None else nll * wt
        if self.reduction == "none":
            return loss
        total = xp.sum(loss)
        if self.reduction == "sum":
            return total
        self.denom = loss.size if wt is None else xp.sum(wt)
        return total / self.denom

    def backward(self, xp, g):
        coef = g if self.wt is None else g * self.wt
        if self.reduction == "mean":
            coef = coef / self.denom
        ax = self.ax
        p = self.e / self.s  # softmax: a new array, so the one-hot can be subtracted in place
        if p.ndim == 2:
            p[self.rows, self.safe] -= 1
        else:
            n_cls = p.shape[ax]
            classes = xp.arange(n_cls).reshape((n_cls,) + (1,) * (p.ndim - ax - 1))
            p = p - (classes == xp.expand_dims(self.safe, ax))
        if coef.ndim:  # one coefficient per sample: along the class axis
            coef = xp.expand_dims(coef, ax)
        return p * coef, None, None

    def _rows(self, x: Any) -> int:
        return x.size // x.shape[self.ax] if x.shape[self.ax] else 0

    def forward_flops(self, out, x, t, w=None):
        m = self._rows(x)
        extra = {"none": 0, "sum": m, "mean": 2 * m + 1}[self.reduction]
        return 4 * x.size + 3 * m + extra

    def backward_flops(self, out, x, t, w=None):
        m = self._rows(x)
        return 4 * x.size + m + (m if self.reduction == "mean" else 0)



# --------------------------------------------------------------------------------------------
# binary cross-entropy on probabilities


LOG_FLOOR = -100.0
_TINY = math.exp(LOG_FLOOR)  # max(p, _TINY) keeps log away from log(0) = -inf
_GRAD_EPS = 1e-12


class BinaryCrossEntropy(Op):
    """Binary cross-entropy of probabilities p against targets t (same shape), weights w:

        l = -w [t·log p + (1 - t)·log(1 - p)],   each log clamped to >= -100 (PyTorch's rule)

    so that p = 0 or p = 1 (a saturated sigmoid in float32) gives a finite loss.  Its
    derivatives, with the same clamps, are

        dl/dp = w (p - t) / max(p (1 - p), 1e-12)     dl/dt = w (log(1 - p) - log p).

    It is an op rather than a composite of ``log`` and ``clip`` for that reason: the composite's
    backward would divide 0 by 0 where p hits 0 or 1, and return NaN.  No gradient flows into
    ``weight``.  ``reduction``: "none", "sum" or "mean" (over all elements).
    FLOPs: forward 12n (the two guarded, clamped logs 7n; combining them 5n), + n with
    weights, + the reduction (n for "sum", n + 1 for "mean"); backward 6n for dL/dp and 2n for
    dL/dt (each only when wanted), + n with weights, + 1 for the mean's 1/n.
    """

    name = "binary_cross_entropy"
    wants_needs = True

    def __init__(self, reduction: str = "mean") -> None:
        if reduction not in REDUCTIONS:
            raise self.error(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    def forward(self, xp, p, t, w=None):
        if tuple(p.shape) != tuple(t.shape):
            raise self.error(
                f"input {fmt(tuple(p.shape))} and target {fmt(tuple(t.shape))} must have the "
                "same shape"
            )
        self.p, self.t, self.w = p, t, w
        self.lp = xp.maximum(xp.log(xp.maximum(p, _TINY)), LOG_FLOOR)
        self.l1p = xp.maximum(xp.log(xp.maximum(1 - p, _TINY)), LOG_FLOOR)
        loss = -(t * self.lp + (1 - t) * self.l1p)
        if w is not None:
            loss = loss * w
        if self.reduction == "none":
            return loss
        total = xp.sum(loss)
        return total if self.reduction == "sum" else total / p.size

    def backward(self, xp, g):
        p, t = self.p, self.t
        coef = g if self.reduction != "mean" else g * (1.0 / p.size)
        if self.w is not None:
            coef = coef * self.w
        gp = gt = None
        if self.needs[0]:
            gp = coef * (p - t) / xp.maximum(p * (1 - p), _GRAD_EPS)
        if self.needs[1]:
            gt = coef * (self.l1p - self.lp)
        return gp, gt, None

    def forward_flops(self, out, p, t, w=None):
        n = p.size
        extra = {"none": 0, "sum": n, "mean": n + 1}[self.reduction]
        return 12 * n + (n if w is not None else 0) + extra

    def backward_flops(self, out, p, t, w=None):
        n = p.size
        flops = 1 if self.reduction == "mean" else 0  # g / n, once
        if w is not None:
            flops += n
        if self.needs[0]:
            flops += 6 * n  # p - t, 1 - p, p (1 - p), max, divide, times coef
        if self.needs[1]:
            flops += 2 * n  # subtract the logs, times coef
        return flops

# --------------------------------------------------------------------------------------------
# the functions (lucid.nn.functional wraps these with PyTorch's argument names)


def relu(x):
    """max(x, 0), elementwise."""
    return apply(ReLU(), x)


def leaky_relu(x, negative_slope: float = 0.01):
    """x for x > 0, negative_slope·x otherwise."""
    return apply(LeakyReLU(negative_slope), x)


def elu(x, alpha: float = 1.0):
    """x for x > 0, alpha·(e^x - 1) otherwise."""
    return apply(ELU(alpha), x)


def gelu(x, approximate: str = "none"):
    """x·Φ(x) (``approximate="tanh"`` for the tanh approximation)."""
    return apply(GELU(approximate), x)


def silu(x):
    """x·sigmoid(x) (also called swish)."""
    return apply(SiLU(), x)


def sigmoid(x):
    """1 / (1 + e^-x), elementwise and overflow-free."""
    return apply(Sigmoid(), x)


def softmax(x, axis: int = -1):
    """e^x normalised to sum to 1 along ``axis``."""
    return apply(Softmax(axis), x)


def log_softmax(x, axis: int = -1):
    """log(softmax(x)) along ``axis``, computed stably (never log of an underflowed 0)."""
    return apply(LogSoftmax(axis), x)


def linear(x, weight, bias=None):
    """x @ weight.T + bias in one op (weight is (out_features, in_features))."""
    if bias is None:
        return apply(Linear(), x, weight)
    return apply(Linear(), x, weight, bias)


def cross_entropy(logits, target, weight=None, ignore_index: int = -100,
                  reduction: str = "mean"):
    """Fused log-softmax + negative log-likelihood of integer class ``target``."""
    op = CrossEntropy(reduction, ignore_index)
    if weight is None:
        return apply(op, logits, target)
    return apply(op, logits, target, weight)


def binary_cross_entropy(p, target, weight=None, reduction: str = "mean"):
    """-[t log p + (1 - t) log(1 - p)] with PyTorch's clamps (see :class:`BinaryCrossEntropy`)."""
    op = BinaryCrossEntropy(reduction)
    if weight is None:
        return apply(op, p, target)
    return apply(op, p, target, weight)


#: Tensor methods this module provides: name -> function (attached by tensor_methods.py)
METHODS: dict = {
    "relu": relu,
    "sigmoid": sigmoid,
    "softmax": softmax,
    "log_softmax": log_softmax,
}
