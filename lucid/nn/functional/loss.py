"""Loss functions: ``F.mse_loss``, ``F.cross_entropy``, ``F.nll_loss``, ``F.binary_cross_entropy``,
``F.binary_cross_entropy_with_logits``, ``F.huber_loss``.

Every loss takes ``reduction``: "mean" (the default), "sum" or "none" (the per-element losses).

Shapes are checked before anything is computed.  The elementwise losses (MSE, BCE, Huber)
need ``input`` and ``target`` of exactly the same shape: a prediction of shape (4, 1) against
targets of shape (4,) would otherwise broadcast to (4, 4) and quietly compare every
prediction with every target -- the classic silent bug, refused here with both shapes named.

``cross_entropy`` with integer targets is one fused op (:class:`lucid.ops.loss.CrossEntropy`);
``nll_loss`` is written from primitives (``gather`` and arithmetic), so
``nll_loss(log_softmax(x), t)`` is the composite the fused op is tested against.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

from lucid import ops as _ops
from lucid.engine.mode import no_grad
from lucid.ops import abs as _abs
from lucid.ops import exp, gather, log, maximum, square, where
from lucid.ops import max as _max
from lucid.ops import min as _min
from lucid.shapes import broadcasts_to, fmt
from lucid.tensor import Tensor

__all__ = [
    "mse_loss",
    "cross_entropy",
    "nll_loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "huber_loss",
    "l1_loss",
    "smooth_l1_loss",
    "kl_div",
]

_REDUCTIONS = ("mean", "sum", "none")


def _tensor(fn: str, name: str, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        return value
    try:
        return Tensor(value)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(value).__name__}") from None


def _check_reduction(fn: str, reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _same_shape(fn: str, input: Tensor, target: Tensor) -> None:
    """Refuse input/target shapes that differ (they would broadcast, or fail, silently)."""
    if input.shape == target.shape:
        return
    hint = "Reshape one of them so the shapes are equal"
    if input.ndim == target.ndim + 1 and input.shape[-1] == 1:
        hint = f"Use input.squeeze(-1) or target.reshape{input.shape}"
    elif target.ndim == input.ndim + 1 and target.shape[-1] == 1:
        hint = f"Use target.squeeze(-1) or input.reshape{target.shape}"
    raise ValueError(
        f"{fn}: input shape {fmt(input.shape)} and target shape {fmt(target.shape)} differ. "
        "A loss compares each prediction with its own target, so the shapes must be equal; "
        "different shapes would broadcast and compare every prediction with every target. "
        f"{hint}."
    )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# --------------------------------------------------------------------------------------------
# regression


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error: l_i = (x_i - y_i)^2, then reduced.   dl_i/dx_i = 2 (x_i - y_i)."""
    fn = "mse_loss"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    return _reduce(square(input - target), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """Huber loss: quadratic near 0, linear beyond ``delta`` (so outliers pull less).

        l_i = d_i^2 / 2                 if |d_i| < delta      (d = x - y)
        l_i = delta (|d_i| - delta / 2)  otherwise
        dl_i/dx_i = d_i, clipped to [-delta, delta]
    """
    fn = "huber_loss"
    _check_reduction(fn, reduction)
    if not delta > 0:
        raise ValueError(f"{fn}: delta must be positive, got {delta!r}")
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    d = input - target
    a = _abs(d)
    loss = where(a < delta, 0.5 * square(d), delta * (a - 0.5 * delta))
    return _reduce(loss, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error: l_i = |x_i - y_i|, then reduced.   dl_i/dx_i = sign(x_i - y_i)
    (0 where they are equal, as PyTorch)."""
    fn = "l1_loss"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    return _reduce(_abs(input - target), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Smooth L1 (PyTorch's, Fast R-CNN's): quadratic below ``beta``, |d| - beta/2 beyond.

        l_i = d_i^2 / (2 beta)   if |d_i| < beta      (d = x - y)
        l_i = |d_i| - beta / 2   otherwise
    It is the Huber loss divided by ``beta``; ``beta=0`` is the L1 loss.
    """
    fn = "smooth_l1_loss"
    _check_reduction(fn, reduction)
    if not beta >= 0:
        raise ValueError(f"{fn}: beta must be >= 0, got {beta!r}")
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    d = input - target
    a = _abs(d)
    if beta == 0:
        return _reduce(a, reduction)
    return _reduce(where(a < beta, (0.5 / beta) * square(d), a - 0.5 * beta), reduction)


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence as PyTorch computes it: ``input`` holds log-probabilities,
    ``target`` probabilities (or log-probabilities with ``log_target=True``), and

        l_i = y_i (log y_i - x_i)   (0 where y_i = 0),   dl_i/dx_i = -y_i

    (with ``log_target=True``: l_i = e^(y_i) (y_i - x_i)).  Where y_i = 0 the gradient with
    respect to the target is 0 here; PyTorch gives NaN there (d(y log y)/dy = log y + 1).

    ``reduction``: "mean" averages over *every element* (PyTorch's default, which it warns is
    not the KL divergence); "batchmean" divides the sum by the batch size (the first axis):
    the true KL divergence per sample; "sum" and "none" as usual.
    """
    fn = "kl_div"
    if reduction not in (*_REDUCTIONS, "batchmean"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got "
                         f"{reduction!r}")
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        safe = where(target > 0, target, 1.0)  # y log y -> 0 as y -> 0
        loss = where(target > 0, target * (log(safe) - input), 0.0 * input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------------------------
# classification with class indices


def _class_axis(fn: str, input: Tensor, target: Tensor) -> int:
    """The class axis (1, or 0 for an unbatched (C,) input) after checking the target shape."""
    if input.ndim == 0:
        raise ValueError(f"{fn}: input must have a class axis, got a 0-d tensor")
    ax = 0 if input.ndim == 1 else 1
    want = () if input.ndim == 1 else (input.shape[0], *input.shape[2:])
    if target.shape != want:
        raise ValueError(
            f"{fn}: input {fmt(input.shape)} and target {fmt(target.shape)}: class-index "
            f"targets must have shape {fmt(want)} (the input's shape without the class axis "
            f"{ax})"
        )
    return ax


def _check_weight(fn: str, weight: Any, n_cls: int) -> None:
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != (n_cls,)):
        got = fmt(weight.shape) if isinstance(weight, Tensor) else type(weight).__name__
        raise ValueError(f"{fn}: weight must be a Tensor of shape ({n_cls},), got {got}")


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross-entropy of logits ``input`` (N, C, ...) against ``target``.

    * Integer class indices (N, ...): l_i = -w_{t_i} log softmax(x_i)_{t_i}, one fused op
      (:class:`lucid.ops.loss.CrossEntropy`); "mean" divides by the sum of the weights of the
      samples not ignored (``ignore_index``), as PyTorch.
    * Class probabilities of the input's shape (floating point): l_i = -sum_c w_c t_ic
      log softmax(x_i)_c, a composite; "mean" averages over the samples.

    ``label_smoothing`` = e mixes the target with the uniform distribution over the C
    classes, as PyTorch: probabilities become (1 - e) t + e/C; with class indices the loss is
    (1 - e) l_i + e u_i, where u_i = -(1/C) sum_c w_c log softmax(x_i)_c is the cross-entropy
    against the uniform target (0 where the sample is ignored, the same "mean" divisor).
    """
    fn = "cross_entropy"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be between 0 and 1, got {label_smoothing}")
    if target.dtype.is_floating_point:
        if input.shape != target.shape:
            raise ValueError(
                f"{fn}: input {fmt(input.shape)} and target {fmt(target.shape)}: a "
                "floating-point target holds class probabilities and must have the input's "
                "shape; for class indices pass an integer target of shape (N, ...)"
            )
        ax = 0 if input.ndim == 1 else 1
        _check_weight(fn, weight, input.shape[ax])
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / input.shape[ax]
        return _reduce(-(target * _weighted_log_softmax(input, weight, ax)).sum(axis=ax),
                       reduction)
    if input.ndim >= 1:
        _check_weight(fn, weight, input.shape[0 if input.ndim == 1 else 1])
    loss = _ops.cross_entropy(input, target, weight, ignore_index, reduction)
    if not label_smoothing:
        return loss
    uniform = _uniform_cross_entropy(input, target, weight, ignore_index, reduction)
    return (1 - label_smoothing) * loss + label_smoothing * uniform


def _weighted_log_softmax(input: Tensor, weight: Tensor | None, ax: int) -> Tensor:
    """log softmax(input) along the class axis ``ax``, each class scaled by its weight."""
    logp = _ops.log_softmax(input, axis=ax)
    if weight is None:
        return logp
    return logp * weight.reshape((-1,) + (1,) * (input.ndim - ax - 1))


def _uniform_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None,
                           ignore_index: int, reduction: str) -> Tensor:
    """u_i = -(1/C) sum_c w_c log softmax(x_i)_c, 0 where ``target`` is ignored, reduced as
    the class-index cross-entropy is ("mean": over the weights of the samples kept)."""
    ax = 0 if input.ndim == 1 else 1
    per_sample = -_weighted_log_softmax(input, weight, ax).sum(axis=ax) / input.shape[ax]
    kept = target != ignore_index
    per_sample = where(kept, per_sample, 0.0)
    if reduction == "none":
        return per_sample
    if reduction == "sum":
        return per_sample.sum()
    if weight is not None:
        return _per_weight(per_sample.sum(), where(kept, weight[where(kept, target, 0)], 0.0))
    return _per_weight(per_sample.sum(), kept)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of log-probabilities ``input`` (N, C, ...) at class ``target``.

        l_i = -w_{t_i} input[i, t_i]      (w_t = 0 where t = ignore_index)

    "mean" divides by the sum of the weights of the samples not ignored.  Written from
    ``gather`` and arithmetic, so its gradient comes from theirs.
    """
    fn = "nll_loss"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    if target.dtype.base_dtype is not int:
        raise TypeError(
            f"{fn}: target must hold integer class indices, got dtype {target.dtype.name}; "
            "convert it with .astype(lucid.Int64)"
        )
    ax = _class_axis(fn, input, target)
    n_cls = input.shape[ax]
    _check_weight(fn, weight, n_cls)
    valid = target != ignore_index
    safe = where(valid, target, 0)
    if safe.size:
        with no_grad():
            lo, hi = int(_min(safe).item()), int(_max(safe).item())
        if lo < 0 or hi >= n_cls:
            bad = lo if lo < 0 else hi
            raise IndexError(
                f"{fn}: target value {bad} is out of range for {n_cls} classes (valid: 0.."
                f"{n_cls - 1}, or ignore_index={ignore_index})"
            )
    picked = gather(input, ax, safe.unsqueeze(ax)).squeeze(ax)
    wt = valid.astype(input.dtype)
    if weight is not None:
        wt = wt * weight[safe]
    loss = -(picked * wt)
    if reduction == "mean":
        return _per_weight(loss.sum(), wt)
    return _reduce(loss, reduction)


def _per_weight(total: Tensor, weights: Tensor) -> Tensor:
    """``total / weights.sum()``, the "mean" of the weighted losses.  With every weight 0
    (every sample ignored) the value is NaN, as PyTorch's, but the gradients are 0: dividing
    by the 0 would make them NaN too (0 * inf)."""
    denom = weights.sum()
    return total / denom if denom.item() else total + float("nan")


# --------------------------------------------------------------------------------------------
# binary classification


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities ``input`` (in [0, 1]) against ``target``:

        l_i = -w_i [t_i log p_i + (1 - t_i) log(1 - p_i)],  logs clamped at -100 (PyTorch).

    One op (:class:`lucid.ops.loss.BinaryCrossEntropy`) so the gradient stays finite where a
    saturated sigmoid gives p = 0 or 1.  ``weight`` broadcasts to the input's shape.  Prefer
    :func:`binary_cross_entropy_with_logits` on raw scores: it is exact where this clamps.
    """
    fn = "binary_cross_entropy"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    if input.size:
        with no_grad():
            lo, hi = _min(input).item(), _max(input).item()
        if not (lo >= 0.0 and hi <= 1.0):  # also catches NaN
            bad = lo if not lo >= 0.0 else hi
            raise ValueError(
                f"{fn}: input values must be probabilities in [0, 1], found {bad}. Apply "
                "sigmoid first, or use binary_cross_entropy_with_logits on the raw scores"
            )
    if weight is not None:
        weight = _tensor(fn, "weight", weight)
        if not broadcasts_to(weight.shape, input.shape):
            raise ValueError(
                f"{fn}: weight of shape {fmt(weight.shape)} does not broadcast to the input's "
                f"shape {fmt(input.shape)}"
            )
    return _ops.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Binary cross-entropy on logits x (sigmoid included), computed without overflow:

        l_i = (1 - t_i) x_i + c_i [log(1 + e^(-|x_i|)) + max(-x_i, 0)]
            = -[c_i t_i log σ(x_i) + (1 - t_i) log(1 - σ(x_i))]
        c_i = 1 + (pos_weight - 1) t_i   (c = 1 without ``pos_weight``)
        dl_i/dx_i = σ(x_i) - t_i  (without pos_weight)

    A composite: every term is bounded (e^(-|x|) <= 1), so no clamp is needed and the gradient
    is exact.  ``weight`` multiplies each element's loss; ``pos_weight`` (one per class, the
    last axis) weights the positive term.
    """
    fn = "binary_cross_entropy_with_logits"
    _check_reduction(fn, reduction)
    input, target = _tensor(fn, "input", input), _tensor(fn, "target", target)
    _same_shape(fn, input, target)
    for name, w in (("weight", weight), ("pos_weight", pos_weight)):
        if w is not None and not broadcasts_to(_tensor(fn, name, w).shape, input.shape):
            raise ValueError(
                f"{fn}: {name} of shape {fmt(w.shape)} does not broadcast to the input's shape "
                f"{fmt(input.shape)}"
            )
    log1p_exp_neg = log(1 + exp(-_abs(input))) + maximum(-input, 0.0)  # log(1 + e^-x)
    if pos_weight is not None:
        log1p_exp_neg = (1 + (pos_weight - 1) * target) * log1p_exp_neg
    loss = (1 - target) * input + log1p_exp_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# --------------------------------------------------------------------------------------------
# PyTorch's legacy size_average= / reduce= (before reduction=; still in old tutorials)


def legacy_reduction(fn: str, size_average: Any, reduce: Any, reduction: str) -> str:
    """The ``reduction`` PyTorch's legacy pair means: ``reduce=False`` -> "none", else
    ``size_average=False`` -> "sum", else "mean"; a warning names the modern spelling."""
    if size_average is None and reduce is None:
        return reduction
    if reduce is not None and not reduce:
        reduction = "none"
    else:
        reduction = "sum" if size_average is not None and not size_average else "mean"
    warnings.warn(f"{fn}: size_average and reduce are PyTorch's old arguments; this is "
                  f"reduction={reduction!r}", UserWarning, stacklevel=3)
    return reduction


def _accept_legacy(fn: Any) -> Any:
    @functools.wraps(fn)
    def accepting(*args: Any, size_average: Any = None, reduce: Any = None,
                  **kwargs: Any) -> Any:
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = legacy_reduction(fn.__name__, size_average, reduce,
                                                   kwargs.get("reduction", "mean"))
        return fn(*args, **kwargs)

    return accepting


for _name in __all__:
    globals()[_name] = _accept_legacy(globals()[_name])
