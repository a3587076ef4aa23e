"""Distances and the losses built on them, and a few more activations, as PyTorch spells
them: ``cosine_similarity``, ``pairwise_distance``, ``triplet_margin_loss``,
``margin_ranking_loss``, ``cosine_embedding_loss``; ``logsigmoid``, ``softsign``,
``hardtanh``, ``glu``, ``softmin``, ``threshold``, ``prelu``.  Each is composed of Lucid
ops, so gradients and FLOPs are the ops' own."""

from __future__ import annotations

from typing import Any

from lucid import ops
from lucid.ops import relu, softmax
from lucid.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "triplet_margin_loss",
           "margin_ranking_loss", "cosine_embedding_loss", "logsigmoid", "softsign",
           "hardtanh", "glu", "softmin", "threshold", "prelu"]


def _reduce(fn: str, loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / max(|x1| |x2|, eps) along ``dim`` (PyTorch clamps the product of the norms)."""
    dot = (x1 * x2).sum(axis=dim)
    norms = ops.sqrt((x1 * x1).sum(axis=dim) * (x2 * x2).sum(axis=dim))
    return dot / ops.clip(norms, eps, None)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """|x1 - x2 + eps|_p along the last axis (PyTorch adds eps to the difference)."""
    diff = ops.abs(x1 - x2 + eps)
    return (diff ** p).sum(axis=-1, keepdims=keepdim) ** (1.0 / p)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                        swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0), d the pairwise distance."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce("triplet_margin_loss", relu(d_pos - d_neg + margin), reduction)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """max(-y (x1 - x2) + margin, 0), y = 1 or -1 saying which input should rank higher."""
    return _reduce("margin_ranking_loss", relu(-target * (input1 - input2) + margin), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where y = 1, max(cos(x1, x2) - margin, 0) where y = -1."""
    cos = cosine_similarity(input1, input2, dim=-1, eps=1e-8)
    loss = ops.where(target == 1, 1 - cos, relu(cos - margin))
    return _reduce("cosine_embedding_loss", loss, reduction)


def logsigmoid(input: Tensor) -> Tensor:
    """log(1 / (1 + e^-x)) = -softplus(-x), computed without overflow."""
    return -(relu(-input) + ops.log1p(ops.exp(-ops.abs(input))))


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (1 + ops.abs(input))


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """x clipped to [min_val, max_val]."""
    return ops.clip(input, min_val, max_val)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of ``input`` along ``dim``."""
    a, b = ops.split(input, 2, axis=dim)
    return a * ops.sigmoid(b)


def softmin(input: Tensor, dim: int | None = None, **kwargs: Any) -> Tensor:
    """softmax(-x) along ``dim``."""
    return softmax(-input, dim=dim if dim is not None else -1)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value``."""
    return ops.where(input > threshold, input, value)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(x, 0) + a min(x, 0), ``a`` one slope or one per channel (axis 1)."""
    if weight.size > 1 and input.ndim > 1:
        weight = weight.reshape((1, -1) + (1,) * (input.ndim - 2))
    return relu(input) - weight * relu(-input)
