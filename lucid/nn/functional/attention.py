"""``F.scaled_dot_product_attention``: softmax(Q K^T · scale + mask) V.

For queries Q (..., L, E), keys K (..., S, E) and values V (..., S, Ev):

    scores  = Q K^T · scale              (..., L, S), scale = 1/sqrt(E) unless given
    weights = softmax(scores + mask)     each query's weights over the S keys sum to 1
    output  = weights V                  (..., L, Ev)

A composite of ``matmul``, ``softmax`` and elementwise ops: its gradient, and its FLOPs (the
two matmuls' MACs plus the softmax), come from theirs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.nn.functional.dropout import dropout
from lucid.ops import logical_not, masked_fill, softmax
from lucid.shapes import broadcasts_to, fmt
from lucid.tensor import Tensor

__all__ = ["scaled_dot_product_attention"]


def _check_qkv(fn: str, q: Tensor, k: Tensor, v: Tensor) -> None:
    for name, t in (("query", q), ("key", k), ("value", v)):
        if not isinstance(t, Tensor) or t.ndim < 2:
            got = fmt(t.shape) if isinstance(t, Tensor) else type(t).__name__
            raise ValueError(f"{fn}: {name} must be a Tensor with at least 2 axes, got {got}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"{fn}: query {fmt(q.shape)} and key {fmt(k.shape)} must have the same last axis "
            "(the dimension the dot products run over)"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"{fn}: key {fmt(k.shape)} and value {fmt(v.shape)} must have the same number of "
            "positions (axis -2): each key has one value"
        )


def causal_mask(length: int, source: int, device: str) -> Tensor:
    """Bool (L, S), True where query i may attend to key j, i.e. j <= i (lower triangle)."""
    return Tensor(np.tril(np.ones((length, source), dtype=bool)), device=device)


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    add_mask: Tensor | None = None,
    block: Tensor | None = None,
    dropout_p: float = 0.0,
    training: bool = True,
    scale: float | None = None,
) -> tuple[Tensor, Tensor]:
    """(output, weights) of scaled dot-product attention.

    ``add_mask`` is added to the scores (float; -inf forbids a pair); ``block`` is a bool mask,
    True where a query may *not* attend to a key (its score becomes -inf).  Dropout, when
    ``training`` and ``dropout_p > 0``, is applied to the weights (as PyTorch does).
    """
    if scale is None:
        dim = q.shape[-1]
        # no features: every score is an empty dot product, 0, and each query's weights are
        # uniform (PyTorch: the mean of the values), whatever the scale -- but not inf * 0
        scale = 1.0 / math.sqrt(dim) if dim else 1.0
    scores = (q @ k.mT) * scale
    if add_mask is not None:
        scores = scores + add_mask
    if block is not None:
        scores = masked_fill(scores, block, float("-inf"))
    dead = _dead_rows(scores) if add_mask is not None or block is not None else None
    if dead is not None:  # softmax of a row of -inf only is 0/0: give it finite scores first
        scores = masked_fill(scores, dead, 0.0)
    weights = softmax(scores, axis=-1)
    if dead is not None:
        weights = masked_fill(weights, dead, 0.0)
    if dropout_p > 0.0 and training:
        weights = dropout(weights, dropout_p, True)
    return weights @ v, weights


def _dead_rows(scores: Tensor) -> Tensor | None:
    """Bool (..., L, 1), True for the queries whose every key is masked (all scores -inf), or
    None when there is none.  Such a query attends to nothing: PyTorch gives it zero weights
    and a zero output (and zero gradients), where softmax alone would give NaN."""
    if scores.size == 0:
        return None
    xp = get_backend(scores.device).xp
    dead = xp.all(scores._data == -math.inf, axis=-1, keepdims=True)
    return Tensor(dead, device=scores.device) if bool(xp.any(dead)) else None


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """softmax(query key^T · scale + mask) value, PyTorch's semantics:

    * ``attn_mask`` bool: True where a query **may** attend to a key; float: added to the
      scores.  It broadcasts to (..., L, S).
    * ``is_causal``: query i attends to keys 0..i only (no ``attn_mask`` with it).
    * ``dropout_p``: dropout on the attention weights (pass 0.0 in evaluation).
    """
    fn = "scaled_dot_product_attention"
    _check_qkv(fn, query, key, value)
    length, source = query.shape[-2], key.shape[-2]
    add_mask = block = None
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{fn}: pass either attn_mask or is_causal=True, not both")
        block = logical_not(causal_mask(length, source, query.device))
    elif attn_mask is not None:
        block, add_mask = _split_mask(fn, attn_mask, length, source)
        if block is not None:
            block = logical_not(block)  # SDPA's bool masks say where attention is *allowed*
    return attention(query, key, value, add_mask, block, dropout_p, True, scale)[0]


def _split_mask(fn: str, mask: Any, length: int, source: int) -> tuple[Any, Any]:
    """(bool mask, None) or (None, float mask), after checking it ends with (L, S)."""
    if not isinstance(mask, Tensor):
        mask = Tensor(mask)
    tail = mask.shape[-2:]
    if mask.ndim == 0 or not broadcasts_to(tail, (length, source)[-len(tail):]):
        raise ValueError(
            f"{fn}: attn_mask of shape {fmt(mask.shape)} must broadcast to (..., L, S) = "
            f"(..., {length}, {source})"
        )
    if mask.dtype.base_dtype is bool:
        return mask, None
    return None, mask
