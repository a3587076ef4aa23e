"""Lookups by integer index: ``F.embedding`` and ``F.one_hot``."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.creation import arange
from lucid.engine.mode import no_grad
from lucid.ops import max as _max
from lucid.ops import min as _min
from lucid.ops import where
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Int64, as_numeric

__all__ = ["embedding", "one_hot"]


def _int_tensor(fn: str, idx: Any) -> Tensor:
    """``idx`` as a Tensor of integers (a TypeError naming ``fn`` otherwise)."""
    if not isinstance(idx, Tensor):
        idx = Tensor(idx)
    if idx.dtype.base_dtype is not int:
        raise TypeError(
            f"{fn}: indices must be integers, got dtype {idx.dtype.name} (shape "
            f"{fmt(idx.shape)}); convert them with .astype(lucid.Int64)"
        )
    return idx


def _check_indices(fn: str, idx: Any, size: int, what: str) -> Tensor:
    """``idx`` as an integer Tensor whose values lie in [0, size)."""
    idx = _int_tensor(fn, idx)
    if idx.size:
        with no_grad():
            lo, hi = int(_min(idx).item()), int(_max(idx).item())
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise IndexError(f"{fn}: index {bad} is out of range for {what} (valid: 0..{size - 1})")
    return idx


def embedding(idx: Any, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``idx``: y[..., :] = weight[idx[...], :].

    ``max_norm``: as PyTorch, every row ``idx`` picks whose ``norm_type``-norm exceeds it is
    first rescaled *in place* in ``weight`` to norm ``max_norm`` (by max_norm / (norm + 1e-7)),
    outside the graph, and the output reads the rescaled rows.  When a row changes the
    weight's version is bumped, so a graph that saved the old values refuses to run backward
    through them (clone the weight before using it elsewhere, as PyTorch's docs advise).
    PyTorch bumps the version on every call with ``max_norm``; Lucid only when it changes
    something.

    The output has shape ``idx.shape + (embedding_dim,)``.  It is an indexing op, so the
    gradient of ``weight`` is the upstream gradient scatter-*added* into the picked rows (a
    row picked twice receives both gradients).  Rows picked at ``padding_idx`` receive no
    gradient (their values still come through), as in PyTorch.
    """
    if weight.ndim != 2:
        raise ValueError(
            f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape "
            f"{fmt(weight.shape)}"
        )
    n = weight.shape[0]
    idx = _check_indices("embedding", idx, n, f"{n} embeddings")
    if max_norm is not None:
        _renorm_rows(weight, idx, float(max_norm), float(norm_type))
    out = weight[idx]
    if padding_idx is not None:
        keep = (idx != padding_idx).unsqueeze(-1)
        out = where(keep, out, out.detach())  # same values; no gradient reaches the pad row
    return out


def _renorm_rows(weight: Tensor, idx: Tensor, max_norm: float, norm_type: float) -> None:
    """Scale the rows of ``weight`` that ``idx`` picks down to norm ``max_norm`` (in place)."""
    if max_norm <= 0:
        raise ValueError(f"embedding: max_norm must be positive, got {max_norm}")
    values = weight.numpy().astype(np.float64)
    rows = np.unique(np.asarray(idx.numpy()).reshape(-1))
    norms = np.linalg.norm(values[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    if not over.any():
        return
    values[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None]
    with no_grad():
        weight._data = Tensor(values, dtype=weight.dtype, device=weight.device)._data
        weight._version += 1


def one_hot(labels: Any, num_classes: int = -1, dtype: Any = None) -> Tensor:
    """Integer class labels as one-hot vectors: shape ``labels.shape + (num_classes,)``.

    ``out[..., c] = 1 if labels[...] == c else 0``.  ``num_classes=-1`` takes the largest label
    plus one.  ``dtype`` (a :class:`lucid.types.Numeric` such as ``lucid.Float16``, a builtin or
    a NumPy dtype) defaults to Int64 as in PyTorch; the result lives on the labels' device.
    Not differentiable (the labels are integers).

    >>> one_hot(lucid.tensor([0, 2, 1]), num_classes=3, dtype=lucid.Float16)
    """
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"one_hot: num_classes must be an int, got {num_classes!r}")
    numeric = Int64 if dtype is None else as_numeric(dtype)
    labels = _int_tensor("one_hot", labels)
    if num_classes == -1:
        if labels.size == 0:
            raise ValueError("one_hot: cannot infer num_classes from empty labels; pass it")
        with no_grad():
            num_classes = int(_max(labels).item()) + 1
    elif num_classes < 1:
        raise ValueError(f"one_hot: num_classes must be positive (or -1), got {num_classes}")
    labels = _check_indices("one_hot", labels, num_classes, f"num_classes={num_classes}")
    with no_grad():
        classes = arange(num_classes, device=labels.device)
        hot = labels.unsqueeze(-1) == classes
        return hot.astype(numeric)
