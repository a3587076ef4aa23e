"""Pooling as functions: ``max_pool1d/2d``, ``avg_pool1d/2d``, ``adaptive_avg_pool2d``.

Pooling slides a window like a convolution but has no weights: it reduces each window to one
number (its maximum, or its mean).  The ``max_pool`` and ``avg_pool`` ops of
``lucid/ops/conv.py`` compute it as kh·kw strided slices of the input combined elementwise,
and route the gradient back through the same slices.  Inputs are (N, C, *S) or unbatched
(C, *S); ``stride`` defaults to the kernel size (non-overlapping windows).  Output size per
axis: ``(S + 2·padding - dilation·(k - 1) - 1) // stride + 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.ops import argmax, gather, matmul
from lucid.ops.base import apply
from lucid.ops.conv import AvgPool, MaxPool
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool2d", "adaptive_max_pool2d"]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1) -> Tensor:
    """y[n, c, l] = max of the window of input[n, c, :] at l (padding counts as -inf);
    the gradient flows to each window's maximum."""
    return apply(MaxPool(1, kernel_size, stride, padding, dilation), input)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1) -> Tensor:
    """y[n, c, h, w] = max of the kh x kw window at (h, w) (padding counts as -inf); the
    gradient flows to each window's maximum (the first one on ties)."""
    return apply(MaxPool(2, kernel_size, stride, padding, dilation), input)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1) -> Tensor:
    """y[n, c, d, h, w] = max of the kd x kh x kw window (padding counts as -inf)."""
    return apply(MaxPool(3, kernel_size, stride, padding, dilation), input)


def avg_pool1d(input, kernel_size, stride=None, padding=0) -> Tensor:
    """y[n, c, l] = mean of the window at l (zero padding is included in the mean)."""
    return apply(AvgPool(1, kernel_size, stride, padding), input)


def avg_pool2d(input, kernel_size, stride=None, padding=0) -> Tensor:
    """y[n, c, h, w] = mean of the kh x kw window at (h, w) (zero padding is included in
    the mean, PyTorch's default ``count_include_pad=True``)."""
    return apply(AvgPool(2, kernel_size, stride, padding), input)


def avg_pool3d(input, kernel_size, stride=None, padding=0) -> Tensor:
    """y[n, c, d, h, w] = mean of the kd x kh x kw window (zero padding included)."""
    return apply(AvgPool(3, kernel_size, stride, padding), input)


def _output_size(output_size: Any, size: tuple[int, int],
                 fn: str = "adaptive_avg_pool2d") -> tuple[int, int]:
    """An int or an (h, w) pair (None keeps that axis's input size) -> (oh, ow)."""
    if 0 in size:
        raise ValueError(
            f"{fn}: the input's spatial size (H, W) = {fmt(size)} has an empty axis, so every "
            "output cell would pool no values; give it a non-empty image (PyTorch refuses it "
            "too)"
        )
    if isinstance(output_size, (int, np.integer)) and not isinstance(output_size, bool):
        pair: tuple[Any, Any] = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 2:
        pair = tuple(output_size)  # type: ignore[assignment]
    else:
        raise TypeError(
            f"{fn}: output_size must be an int or an (h, w) pair, got "
            f"{output_size!r}"
        )
    out = []
    for o, s in zip(pair, size):
        o = s if o is None else o
        if isinstance(o, bool) or not isinstance(o, (int, np.integer)) or o < 1:
            raise ValueError(
                f"{fn}: output_size entries must be positive ints or None, "
                f"got {output_size!r}"
            )
        out.append(int(o))
    return out[0], out[1]


def _averaging_matrix(out: int, size: int) -> np.ndarray:
    """A (out, size) matrix whose row i averages input[floor(i·size/out) : ceil((i+1)·size/out)]
    (PyTorch's adaptive windows: they cover the input and overlap where size % out != 0)."""
    a = np.zeros((out, size))
    for i in range(out):
        lo, hi = (i * size) // out, -((-(i + 1) * size) // out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average-pool (N, C, H, W) or (C, H, W) down to a fixed (oh, ow), whatever H and W are.

    Output cell (i, j) is the mean of rows floor(i·H/oh)..ceil((i+1)·H/oh) and the matching
    columns.  When oh divides H and ow divides W these are the plain windows of
    ``avg_pool2d(kernel=stride=(H/oh, W/ow))``, which is what runs.  Otherwise averaging is
    still linear and separable, ``y = A_h @ x @ A_w^T`` with fixed averaging matrices, so it
    is two matmuls and its gradient comes from theirs (a composite: no op of its own).
    """
    if not isinstance(input, Tensor):
        input = Tensor(input)
    if input.ndim not in (3, 4):
        raise ValueError(
            f"adaptive_avg_pool2d: input of shape {fmt(input.shape)} has {input.ndim} "
            "dimensions; expected 4 (N, C, H, W) or 3 (C, H, W)"
        )
    h, w = input.shape[-2:]
    oh, ow = _output_size(output_size, (h, w))
    if h % oh == 0 and w % ow == 0:
        return avg_pool2d(input, (h // oh, w // ow))
    rows = Tensor(_averaging_matrix(oh, h), dtype=input.dtype, device=input.device)
    cols = Tensor(_averaging_matrix(ow, w).T, dtype=input.dtype, device=input.device)
    return matmul(matmul(rows, input), cols)


def _adaptive_windows(size: int, out: int) -> np.ndarray:
    """(out, k) input indices of PyTorch's adaptive windows, floor(i·size/out) up to
    ceil((i+1)·size/out), each padded to the widest window k by repeating its last index (a
    repeat comes after the entry it copies, so the first maximum is still a real one)."""
    starts = np.arange(out) * size // out
    ends = -(-(np.arange(out) + 1) * size // out)
    k = int((ends - starts).max())
    return np.minimum(starts[:, None] + np.arange(k)[None, :], ends[:, None] - 1)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False) -> Any:
    """Max-pool (N, C, H, W) or (C, H, W) down to a fixed (oh, ow): output cell (i, j) is the
    maximum of rows floor(i·H/oh)..ceil((i+1)·H/oh) and the matching columns (PyTorch's
    adaptive windows, which overlap where the sizes do not divide).  As in PyTorch, the
    gradient flows to the *first* maximum of each window in row-major order (a window of
    ties, e.g. zeros after a ReLU, sends it to one entry), and ``return_indices=True`` also
    returns where each maximum is, as the flat index h·W + w into its (H, W) plane (Int64).

    When oh divides H and ow divides W it is ``max_pool2d`` with those windows; otherwise
    every window is read at once by fancy indexing (padded to the widest window), and the
    maximum is gathered at the window's ``argmax`` (a composite of indexing ops).
    """
    fn = "adaptive_max_pool2d"
    if not isinstance(input, Tensor):
        input = Tensor(input)
    if input.ndim not in (3, 4):
        raise ValueError(
            f"{fn}: input of shape {fmt(input.shape)} has {input.ndim} "
            "dimensions; expected 4 (N, C, H, W) or 3 (C, H, W)"
        )
    h, w = input.shape[-2:]
    oh, ow = _output_size(output_size, (h, w), fn)
    if h % oh == 0 and w % ow == 0 and not return_indices:
        return max_pool2d(input, (h // oh, w // ow))
    rows, cols = _adaptive_windows(h, oh), _adaptive_windows(w, ow)
    kh, kw = rows.shape[1], cols.shape[1]
    device = input.device
    windows = input[..., Tensor(rows[:, None, :, None], device=device),
                    Tensor(cols[None, :, None, :], device=device)]  # (.., oh, ow, kh, kw)
    windows = windows.reshape(*input.shape[:-2], oh, ow, kh * kw)
    first = argmax(windows, axis=-1, keepdims=True)  # first maximum: PyTorch's tie rule
    out = gather(windows, -1, first).squeeze(-1)
    if not return_indices:
        return out
    flat = (rows[:, None, :, None] * w + cols[None, :, None, :]).reshape(oh, ow, kh * kw)
    pick = first.numpy()[..., 0]
    where = np.take_along_axis(np.broadcast_to(flat, pick.shape + (kh * kw,)),
                               pick[..., None], -1)[..., 0]
    return out, Tensor(where.astype(np.int64), device=device)
