"""Losses fused into one op: cross-entropy on logits, binary cross-entropy on probabilities.

Both could be written from primitives (log-softmax and a gather; log, clip and arithmetic),
and ``tests/test_nn_layers.py`` checks them against those composites.  They are single ops for
speed (one dispatch and a backward rule written from the simplified derivative, softmax minus
one-hot) and, for binary cross-entropy, for correctness at p = 0 and p = 1, where the
composite's backward divides 0 by 0.  ``lucid.nn.functional`` wraps them with PyTorch's
argument names and the probability-target and label-smoothing forms.

FLOPs convention (n = elements of the input, m = rows): as in ``activation.py`` -- the
arithmetic and comparisons per element, a transcendental function counting as one -- plus the
reduction.
"""

from __future__ import annotations

import math
from typing import Any

from lucid.ops.base import Op, apply
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

# --------------------------------------------------------------------------------------------
# cross-entropy on logits with integer class targets


REDUCTIONS = ("mean", "sum", "none")


class CrossEntropy(Op):
    """Cross-entropy of logits x against integer class targets t (log-softmax + NLL in one op).

    Class axis: 1 for x of shape (N, C, d1, ...) with t of shape (N, d1, ...); 0 for x of
    shape (C,) with a 0-d t.  Per sample, with p = softmax(x) along the class axis,

        l_i = -w_{t_i} log p_{i, t_i} = w_{t_i} (log sum_j e^(x_ij) - x_{i, t_i})

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
    inputs = ("logits", "target")
    saves_inputs = (1,)  # the targets; backward reads the saved exponentials, not the logits

    def __init__(self, reduction: str = "mean", ignore_index: int = -100) -> None:
        if reduction not in REDUCTIONS:
            raise self.error(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction
        self.ignore_index = int(ignore_index)

    @classmethod
    def call(cls, logits: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Any:
        op = cls(reduction, ignore_index)
        if weight is None:
            return apply(op, logits, target)
        return apply(op, logits, target, weight)

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
        if self.reduction == "mean" and self.denom:  # (every sample ignored: the weights and
            coef = coef / self.denom  # so the gradients are 0, as PyTorch's; 0/0 were NaN)
        ax = self.ax
        p = self.e / self.s  # softmax: a new array, so the one-hot can be subtracted in place
        if p.ndim == 2 and not isinstance(p, Tensor):  # (Tensors: the general form below)
            if p.size:  # (MLX refuses an empty scatter)
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
    inputs = ("p", "target")
    wants_needs = True

    def __init__(self, reduction: str = "mean") -> None:
        if reduction not in REDUCTIONS:
            raise self.error(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
        self.reduction = reduction

    @classmethod
    def call(cls, p: Any, target: Any, weight: Any = None, reduction: str = "mean") -> Any:
        op = cls(reduction)
        if weight is None:
            return apply(op, p, target)
        return apply(op, p, target, weight)

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
        coef = g if self.reduction != "mean" else g * (1.0 / max(p.size, 1))  # (empty: no grad)
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
