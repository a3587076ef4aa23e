"""``F.pad`` and ``F.interpolate``: reshaping images by padding and resampling, as PyTorch does.

Both are composites: padding other than constant and every resampling pick input positions by
integer index arrays (an indexing op, whose gradient scatter-adds back), and linear
interpolation mixes two picks with fixed weights.  So their gradients come from the ops they
are made of.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.ops import pad as _constant_pad
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["pad", "interpolate"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _take(x: Tensor, axis: int, index: np.ndarray) -> Tensor:
    return x[(slice(None),) * axis + (index,)]


def pad(input: Tensor, pad: tuple[int, ...] | list[int], mode: str = "constant",
        value: float = 0.0) -> Tensor:
    """Pad ``input`` as PyTorch's ``F.pad``: ``pad`` lists (before, after) pairs starting from
    the *last* axis -- ``(left, right)`` pads the last axis, ``(left, right, top, bottom)`` the
    last two.  ``mode``: "constant" (``value``), "reflect" (mirror without repeating the edge:
    needs pad < size), "replicate" (repeat the edge) or "circular" (wrap around)."""
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: pad must hold (before, after) pairs for at most {input.ndim} "
                         f"axes of an input of shape {fmt(input.shape)}, got {pad}")
    if any(not isinstance(p, (int, np.integer)) or p < 0 for p in pad):
        raise ValueError(f"pad: pad sizes must be non-negative ints, got {pad} (crop with "
                         "indexing instead)")
    widths = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        widths[input.ndim - 1 - k] = (int(pad[2 * k]), int(pad[2 * k + 1]))
    if mode == "constant":
        return _constant_pad(input, tuple(widths), constant_values=value)
    out = input
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        n = input.shape[axis]
        pos = np.arange(-before, n + after)
        if mode == "reflect":
            if before >= n or after >= n:
                raise ValueError(f"pad: reflect padding ({before}, {after}) must be smaller "
                                 f"than the axis it pads (size {n}, axis {axis})")
            pos = np.abs(pos)
            pos = np.where(pos > n - 1, 2 * (n - 1) - pos, pos)
        elif mode == "replicate":
            pos = np.clip(pos, 0, n - 1)
        else:  # circular
            if before > n or after > n:
                raise ValueError(f"pad: circular padding ({before}, {after}) may not exceed "
                                 f"the axis it pads (size {n}, axis {axis})")
            pos = pos % n
        out = _take(out, axis, pos)
    return out


def _sizes(fn: str, x: Tensor, size: Any, scale_factor: Any) -> tuple[list[int], list[float]]:
    """Output sizes and the scales from output to input positions (per spatial axis)."""
    spatial = x.shape[2:]
    k = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fn}: give exactly one of size and scale_factor")
    if size is not None:
        out = [int(size)] * k if isinstance(size, (int, np.integer)) else [int(s) for s in size]
        if len(out) != k or min(out) < 1:
            raise ValueError(f"{fn}: size must be {k} positive int(s) for an input of shape "
                             f"{fmt(x.shape)}, got {size!r}")
        return out, [s / o for s, o in zip(spatial, out)]
    sf = [float(scale_factor)] * k if isinstance(scale_factor, (int, float)) else \
        [float(s) for s in scale_factor]
    if len(sf) != k or min(sf) <= 0:
        raise ValueError(f"{fn}: scale_factor must be {k} positive number(s), got "
                         f"{scale_factor!r}")
    return [int(math.floor(s * f)) for s, f in zip(spatial, sf)], [1.0 / f for f in sf]


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Resample the spatial axes of ``input`` (N, C, *spatial) to ``size`` (or by
    ``scale_factor``), with PyTorch's index formulas:

    * "nearest": output position i reads input floor(i · scale), scale = in / out (or
      1 / scale_factor);
    * "linear" (1 spatial axis) / "bilinear" (2): a mix of the two nearest inputs, read at
      (i + 0.5) · scale - 0.5 (clamped at 0), or, with ``align_corners=True``, at
      i · (in - 1) / (out - 1), so the corner pixels stay where they are.
    """
    fn = "interpolate"
    if not isinstance(input, Tensor):
        input = Tensor(input)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must be (N, C, *spatial), got shape {fmt(input.shape)}")
    linear_modes = {"linear": 1, "bilinear": 2}
    if mode not in ("nearest", *linear_modes):
        raise ValueError(f"{fn}: mode must be 'nearest', 'linear' or 'bilinear', got {mode!r}")
    if mode in linear_modes and input.ndim - 2 != linear_modes[mode]:
        raise ValueError(f"{fn}: mode {mode!r} needs {linear_modes[mode]} spatial axis(es), got "
                         f"an input of shape {fmt(input.shape)}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError(f"{fn}: align_corners only applies to the linear modes")
    out_sizes, scales = _sizes(fn, input, size, scale_factor)
    y = input
    for k, (n_out, scale) in enumerate(zip(out_sizes, scales)):
        axis = 2 + k
        n_in = input.shape[axis]
        dst = np.arange(n_out, dtype=np.float64)
        if mode == "nearest":
            y = _take(y, axis, np.minimum(np.floor(dst * scale).astype(np.int64), n_in - 1))
            continue
        if align_corners:
            src = dst * ((n_in - 1) / (n_out - 1)) if n_out > 1 else np.zeros(n_out)
        else:
            src = np.maximum((dst + 0.5) * scale - 0.5, 0.0)
        i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
        i1 = np.minimum(i0 + 1, n_in - 1)
        w = (src - i0).reshape((n_out,) + (1,) * (y.ndim - axis - 1))
        w = Tensor(w, dtype=y.dtype, device=y.device)
        y = _take(y, axis, i0) * (1.0 - w) + _take(y, axis, i1) * w
    return y
