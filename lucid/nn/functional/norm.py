"""Normalisation: ``F.batch_norm``, ``F.layer_norm``, ``F.group_norm``.

All three compute the same thing over different sets of elements:

    y = (x - mean) / sqrt(var + eps) * weight + bias

with ``mean`` and the biased ``var`` (divide by n, not n - 1) taken over

* batch norm: every axis but the channel axis 1 -- one statistic per channel, shared by the
  batch (so a training step's samples are normalised together);
* layer norm: the last ``len(normalized_shape)`` axes -- one statistic per sample;
* group norm: the channels of each group of ``C / num_groups`` channels and the spatial axes
  -- one statistic per sample and group.

They are composites of ``mean``, ``var`` and elementwise ops, so autodiff derives their (long)
backward from the primitives' rules.
"""

from __future__ import annotations

from typing import Any

from lucid.engine.mode import no_grad
from lucid.ops import evaluate, maximum, sqrt
from lucid.ops import mean as _mean
from lucid.ops import sum as _sum
from lucid.ops import var as _var
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["batch_norm", "layer_norm", "group_norm", "instance_norm", "normalize"]


def _normalize(x: Tensor, axes: tuple[int, ...], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """(x - mean) / sqrt(var + eps) over ``axes``; also returns the mean and variance."""
    if x.size == 0:  # no values to normalise: an empty result, as PyTorch gives
        nothing = _sum(x, axis=axes, keepdims=True)
        return x * 1.0, nothing, nothing
    mu = _mean(x, axis=axes, keepdims=True)
    var = _var(x, axis=axes, keepdims=True)
    return (x - mu) / sqrt(var + eps), mu, var


def _channel_shape(x: Tensor) -> tuple[int, ...]:
    """(1, C, 1, ...): a per-channel vector shaped to broadcast along axis 1 of ``x``."""
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def _affine(y: Tensor, weight: Any, bias: Any, shape: tuple[int, ...]) -> Tensor:
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _update_running(running_mean: Tensor, running_var: Tensor, mean: Tensor, unbiased: Tensor,
                    momentum: float) -> None:
    """``running <- (1 - momentum) running + momentum batch_statistic`` for both statistics,
    outside the graph, all or nothing: both new values are computed before either is stored.

    They are computed now (``evaluate``): on "gpu" MLX would otherwise keep each update as a
    lazy expression of the previous one, and the running statistics would hold a graph (and
    memory) that grows with every training step.
    """
    with no_grad():
        new = [((1.0 - momentum) * running + momentum * stat).astype(running.dtype)
               for running, stat in ((running_mean, mean), (running_var, unbiased))]
    evaluate(*new)
    for buffer, value in zip((running_mean, running_var), new):
        buffer._data = value._data
        buffer._version += 1


def _check_vector(fn: str, name: str, value: Any, n: int) -> None:
    if value is not None and (not isinstance(value, Tensor) or value.shape != (n,)):
        got = fmt(value.shape) if isinstance(value, Tensor) else type(value).__name__
        raise ValueError(f"{fn}: {name} must be a Tensor of shape ({n},), got {got}")


def batch_norm(
    x: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation of ``x`` (N, C, ...) per channel.

    Training: normalise with the batch's mean and biased variance over (N, ...), and -- when
    running statistics are given -- update them in place, outside the graph:

        running_mean <- (1 - momentum) running_mean + momentum mean
        running_var  <- (1 - momentum) running_var  + momentum var · n / (n - 1)

    (the running variance is the unbiased estimate, n = N·prod(...), as in PyTorch).
    Evaluation (``training=False``): normalise with the running statistics, which are
    constants of the graph.
    """
    fn = "batch_norm"
    if x.ndim < 2:
        raise ValueError(
            f"batch_norm: input must be (N, C) or (N, C, ...), got shape {fmt(x.shape)}"
        )
    n_ch = x.shape[1]
    for name, value in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
        _check_vector(fn, name, value, n_ch)
    shape = _channel_shape(x)
    if training:
        if x.size == 0:  # no channels, or an empty batch: nothing to normalise and no
            return _affine(x * 1.0, weight, bias, shape)  # statistics (PyTorch passes it)
        n = x.size // n_ch
        if n <= 1:
            raise ValueError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"of shape {fmt(x.shape)}; use a larger batch, or call .eval() for inference"
            )
        axes = (0, *range(2, x.ndim))
        y, mu, var = _normalize(x, axes, eps)
        out = _affine(y, weight, bias, shape)
        if running_mean is not None and running_var is not None:
            _update_running(running_mean, running_var, mu.reshape(n_ch),
                            var.reshape(n_ch) * (n / (n - 1)), momentum)
        return out
    if running_mean is None or running_var is None:
        raise ValueError(
            "batch_norm: evaluation (training=False) normalises with running_mean and "
            "running_var; pass them, or use training=True for batch statistics"
        )
    with no_grad():  # constants: the running statistics get no gradient
        shift = running_mean.reshape(shape)
        scale = 1.0 / sqrt(running_var.reshape(shape) + eps)
    return _affine((x - shift) * scale, weight, bias, shape)


def layer_norm(
    x: Tensor,
    normalized_shape: int | tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalisation over the last ``len(normalized_shape)`` axes (one mean and variance
    per sample); ``weight`` and ``bias`` have shape ``normalized_shape``."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or x.shape[x.ndim - k:] != shape or x.ndim < k:
        raise ValueError(
            f"layer_norm: input of shape {fmt(x.shape)} does not end with normalized_shape "
            f"{fmt(shape)}; the last {k} axes must match it"
        )
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and value.shape != shape:
            raise ValueError(
                f"layer_norm: {name} must have shape {fmt(shape)}, got {fmt(value.shape)}"
            )
    y, _, _ = _normalize(x, tuple(range(x.ndim - k, x.ndim)), eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def group_norm(
    x: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Group normalisation of ``x`` (N, C, ...): the C channels split into ``num_groups``
    groups, each normalised per sample over its channels and the spatial axes; ``weight`` and
    ``bias`` are per channel (C,)."""
    if x.ndim < 2:
        raise ValueError(
            f"group_norm: input must be (N, C, ...), got shape {fmt(x.shape)}"
        )
    n, n_ch = x.shape[0], x.shape[1]
    if num_groups < 1 or n_ch % num_groups:
        raise ValueError(
            f"group_norm: num_groups={num_groups} must divide the {n_ch} channels of input "
            f"{fmt(x.shape)}"
        )
    for name, value in (("weight", weight), ("bias", bias)):
        _check_vector("group_norm", name, value, n_ch)
    per_group = x.size // (n * num_groups) if n else 0  # named: -1 cannot be inferred for 0
    grouped = x.reshape(n, num_groups, per_group)
    y, _, _ = _normalize(grouped, (2,), eps)
    return _affine(y.reshape(x.shape), weight, bias, _channel_shape(x))


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Instance normalisation of ``input`` (N, C, *S): each channel of each sample normalised
    over its spatial axes S, then scaled and shifted per channel (style transfer's
    normalisation):

        y[n, c] = (x[n, c] - mean(x[n, c])) / sqrt(var(x[n, c]) + eps) * weight[c] + bias[c]

    with the biased variance; ``weight`` and ``bias`` are (C,) or None.  PyTorch's signature
    and order of arguments; Lucid keeps no running statistics, so ``running_mean`` and
    ``running_var`` must be None and ``use_input_stats`` True (``momentum`` is unused).
    Like PyTorch, it refuses a single spatial element (its variance is 0: every output
    would be 0)."""
    fn = "instance_norm"
    x = input
    if not isinstance(x, Tensor):
        x = Tensor(x)
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError(f"{fn}: running statistics are not supported; pass "
                                  "running_mean=None, running_var=None, use_input_stats=True")
    if x.ndim < 3:
        raise ValueError(f"{fn}: input must be (N, C, *spatial) with at least one "
                         f"spatial axis, got shape {fmt(x.shape)}")
    spatial = 1
    for s in x.shape[2:]:
        spatial *= s
    if spatial == 1:
        raise ValueError(f"{fn}: expected more than 1 spatial element per channel, got input "
                         f"of shape {fmt(x.shape)} (the variance of one value is 0)")
    for name, value in (("weight", weight), ("bias", bias)):
        _check_vector(fn, name, value, x.shape[1])
    y, _, _ = _normalize(x, tuple(range(2, x.ndim)), eps)
    return _affine(y, weight, bias, _channel_shape(x))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, *,
              ord: float | None = None, axis: int | None = None) -> Tensor:  # noqa: A002
    """y = x / max(||x||_p, eps) along ``dim`` (PyTorch's ``F.normalize``): unit vectors, and
    no division by zero: an all-zero vector stays 0 (its gradient is 1 / eps, as PyTorch's).
    ``ord=`` and ``axis=`` are Lucid 2.x's names for ``p`` and ``dim``."""
    p = p if ord is None else ord
    dim = dim if axis is None else axis
    x = input if isinstance(input, Tensor) else Tensor(input)
    norm = x.norm(p, axis=dim, keepdims=True)
    return x / maximum(norm, eps)
