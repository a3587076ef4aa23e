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

from lucid.ops import clip as _clip
from lucid.ops import matmul as _matmul
from lucid.ops import pad as _constant_pad
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["pad", "interpolate", "pixel_shuffle", "pixel_unshuffle", "affine_grid", "grid_sample"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_constant(x: Tensor, widths: list[tuple[int, int]], value: float) -> Tensor:
    """Constant padding; a negative width crops (a slice) before the rest is padded."""
    crop = []
    for axis, (before, after) in enumerate(widths):
        n = x.shape[axis]
        if n + before + after < 0:
            raise ValueError(f"pad: axis {axis} of size {n} padded by ({before}, {after}) "
                             "would have a negative size")
        crop.append(slice(max(-before, 0), n - max(-after, 0)))
    if any(b < 0 or a < 0 for b, a in widths):
        x = x[tuple(crop)]
    return _constant_pad(x, tuple((max(b, 0), max(a, 0)) for b, a in widths),
                         constant_values=value)


def _take(x: Tensor, axis: int, index: np.ndarray) -> Tensor:
    """x's entries at ``index`` along ``axis`` (an index array on x's device: a "gpu" tensor
    takes no NumPy index)."""
    return x[(slice(None),) * axis + (Tensor(index, device=x.device),)]


def pad(input: Tensor, pad: tuple[int, ...] | list[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad ``input`` as PyTorch's ``F.pad``: ``pad`` lists (before, after) pairs starting from
    the *last* axis -- ``(left, right)`` pads the last axis, ``(left, right, top, bottom)`` the
    last two.  ``mode``: "constant" (``value``, 0 by default), "reflect" (mirror without
    repeating the edge: needs pad < size), "replicate" (repeat the edge) or "circular" (wrap
    around: needs pad <= size).  A negative size in "constant" mode crops that many entries,
    as in PyTorch.  Unlike PyTorch, the non-constant modes take any number of axes.
    Differentiable: the gradient of each output entry flows back to the entry it copies."""
    if not isinstance(input, Tensor):
        input = Tensor(input)
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(_PAD_MODES)}, got {mode!r}")
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: pad must hold (before, after) pairs for at most {input.ndim} "
                         f"axes of an input of shape {fmt(input.shape)}, got {pad}")
    if any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) for p in pad):
        raise TypeError(f"pad: pad sizes must be ints, got {pad}")
    if mode != "constant" and min(pad, default=0) < 0:
        raise ValueError(f"pad: negative pad sizes crop only in 'constant' mode, got {pad} "
                         f"with mode {mode!r}")
    if value is not None and not isinstance(value, (int, float, np.number)):
        raise TypeError(f"pad: value must be a number, got {type(value).__name__}")
    widths = [(0, 0)] * input.ndim
    for k in range(len(pad) // 2):
        widths[input.ndim - 1 - k] = (int(pad[2 * k]), int(pad[2 * k + 1]))
    if mode == "constant":
        return _pad_constant(input, widths, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f"pad: value applies only to mode 'constant', got value={value!r} "
                         f"with mode {mode!r}")
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


def _sizes(fn: str, x: Tensor, size: Any, scale_factor: Any,
           recompute_scale_factor: bool | None) -> tuple[list[int], list[float | None]]:
    """Output sizes, and the scale factors the index formulas use (None: from the sizes),
    per spatial axis -- as ``torch.nn.functional.interpolate`` works them out."""
    spatial = x.shape[2:]
    k = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{fn}: give exactly one of size and scale_factor")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"{fn}: recompute_scale_factor is not meaningful with an explicit "
                             "size (it applies to scale_factor)")
        out = [int(size)] * k if isinstance(size, (int, np.integer)) else [int(s) for s in size]
        if len(out) != k or min(out) < 1:
            raise ValueError(f"{fn}: size must be {k} positive int(s) for an input of shape "
                             f"{fmt(x.shape)}, got {size!r}")
        return out, [None] * k
    sf = [float(scale_factor)] * k if isinstance(scale_factor, (int, float)) else \
        [float(s) for s in scale_factor]
    if len(sf) != k or min(sf) <= 0:
        raise ValueError(f"{fn}: scale_factor must be {k} positive number(s), got "
                         f"{scale_factor!r}")
    out = [int(math.floor(s * f)) for s, f in zip(spatial, sf)]
    if min(out) < 1:
        raise ValueError(f"{fn}: scale_factor {scale_factor!r} leaves no output for an input "
                         f"of shape {fmt(x.shape)} (output sizes {out})")
    # recompute_scale_factor=True: the factor only sets the size; the formulas use in / out
    return out, [None] * k if recompute_scale_factor else sf


def _scale(n_in: int, n_out: int, factor: float | None, real: type) -> Any:
    """PyTorch's scale from output to input positions: 1 / scale_factor when one was given,
    else in / out, in the precision ``real``."""
    return real(1.0 / factor) if factor is not None else real(n_in) / real(n_out)


def _nearest_index(n_in: int, n_out: int, factor: float | None, real: type,
                   two_d: bool) -> np.ndarray:
    """Input index read by each output position in "nearest" mode: floor(i · scale), at most
    n_in - 1.  PyTorch takes the floor of a float32 (``floorf``), so the product is rounded
    to float32 first; its 2-D kernel also computes the scale in float32 and copies (out = in)
    or halves (out = 2·in) the index outright.  Matching these roundings matters: 55·18/66 is
    14.99... in float64 but 15 in float32, and PyTorch reads row 15."""
    dst = np.arange(n_out)
    if two_d:
        if n_out == n_in:
            return dst
        if n_out == 2 * n_in:
            return dst // 2
        real = np.float32
    src = (dst.astype(real) * _scale(n_in, n_out, factor, real)).astype(np.float32)
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def _linear_weights(n_in: int, n_out: int, factor: float | None, align_corners: bool,
                    real: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two input indices each output position mixes and the weight of the second:
    y_i = (1 - w_i) x[i0] + w_i x[i1], as PyTorch's linear kernels compute them."""
    dst = np.arange(n_out)
    if n_out == n_in:  # PyTorch copies (whatever the scale_factor was)
        return dst, dst, np.zeros(n_out, real)
    if align_corners:
        ratio = real(n_in - 1) / real(n_out - 1) if n_out > 1 else real(0)
        src = ratio * dst.astype(real)
    else:
        src = _scale(n_in, n_out, factor, real) * (dst.astype(real) + real(0.5)) - real(0.5)
        src = np.maximum(src, real(0))
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    w = np.clip(src - i0.astype(real), 0, 1).astype(real)
    return i0, np.minimum(i0 + 1, n_in - 1), w


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None) -> Tensor:
    """Resample the spatial axes of ``input`` (N, C, *spatial) to ``size`` (or by
    ``scale_factor``: out = floor(in · scale_factor)), with PyTorch's index formulas, axis by
    axis.  With scale = 1 / scale_factor when one is given (unless
    ``recompute_scale_factor=True``), else in / out:

    * "nearest": output position i reads input floor(i · scale), at most in - 1 (PyTorch's
      legacy "nearest", OpenCV's INTER_NEAREST; not "nearest-exact");
    * "linear" (1 spatial axis), "bilinear" (2), "trilinear" (3): a mix of the two inputs
      around the source position s, y_i = (1 - w) x[floor(s)] + w x[floor(s) + 1] with
      w = s - floor(s), where s = (i + 0.5) · scale - 0.5 (clamped at 0) or, with
      ``align_corners=True``, s = i · (in - 1) / (out - 1), so the corner pixels stay put.
      An axis whose size does not change is copied.

    Positions are computed in float32 for float16/float32 inputs and float64 otherwise, and
    floored as float32, as PyTorch does (see ``_nearest_index``).  The result is made of
    indexing and arithmetic ops, so it is differentiable.  Known difference: PyTorch's 2-D
    "nearest" on float64 inputs rounds a few positions differently from its float32 path;
    Lucid uses the float32 path's positions for both.
    """
    fn = "interpolate"
    if not isinstance(input, Tensor):
        input = Tensor(input)
    if input.ndim < 3:
        raise ValueError(f"{fn}: input must be (N, C, *spatial), got shape {fmt(input.shape)}")
    if mode not in ("nearest", *_LINEAR_MODES):
        raise ValueError(f"{fn}: mode must be 'nearest', 'linear', 'bilinear' or 'trilinear', "
                         f"got {mode!r}")
    if mode in _LINEAR_MODES and input.ndim - 2 != _LINEAR_MODES[mode]:
        raise ValueError(f"{fn}: mode {mode!r} needs {_LINEAR_MODES[mode]} spatial axis(es), "
                         f"got an input of shape {fmt(input.shape)}")
    if mode == "nearest" and align_corners is not None:
        raise ValueError(f"{fn}: align_corners only applies to the linear modes")
    out_sizes, factors = _sizes(fn, input, size, scale_factor, recompute_scale_factor)
    real = np.float32 if (input.dtype.bits or 64) <= 32 else np.float64
    y = input
    for k, (n_out, factor) in enumerate(zip(out_sizes, factors)):
        axis = 2 + k
        n_in = input.shape[axis]
        if mode == "nearest":
            y = _take(y, axis, _nearest_index(n_in, n_out, factor, real, input.ndim == 4))
            continue
        i0, i1, w = _linear_weights(n_in, n_out, factor, bool(align_corners), real)
        if n_out == n_in:  # a copy of the axis
            y = _take(y, axis, i0)
            continue
        w = Tensor(w.reshape((n_out,) + (1,) * (y.ndim - axis - 1)), dtype=y.dtype,
                   device=y.device)
        y = _take(y, axis, i0) * (1.0 - w) + _take(y, axis, i1) * w
    return y


def _check_pixel_shuffle(fn: str, x: Any, factor: Any) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    if isinstance(factor, bool) or not isinstance(factor, int) or factor < 1:
        raise ValueError(f"{fn}: the factor must be a positive int, got {factor!r}")
    if x.ndim < 3:
        raise ValueError(f"{fn}: expected a (*, C, H, W) input, got shape {fmt(x.shape)}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange (*, C r^2, H, W) into (*, C, H r, W r) (PyTorch's ``F.pixel_shuffle``, the
    "sub-pixel convolution" of super-resolution networks):

        out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w]

    A reshape and a permutation, so the gradient is the inverse rearrangement."""
    _check_pixel_shuffle("pixel_shuffle", input, upscale_factor)
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise ValueError(f"pixel_shuffle: {c} channels (shape {fmt(input.shape)}) do not divide "
                         f"into upscale_factor**2 = {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """The inverse of :func:`pixel_shuffle`: (*, C, H r, W r) -> (*, C r^2, H, W)."""
    _check_pixel_shuffle("pixel_unshuffle", input, downscale_factor)
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise ValueError(f"pixel_unshuffle: height and width of shape {fmt(input.shape)} must "
                         f"be multiples of downscale_factor = {r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# --------------------------------------------------------------------------------------------
# spatial transformers: a sampling grid from an affine map, and sampling an image at it


def _base_coords(n: int, align_corners: bool, dtype: Any) -> np.ndarray:
    """The normalised coordinates (-1 .. 1) of ``n`` pixel centres (align_corners=False) or
    of the first and last pixels' centres at -1 and 1 (align_corners=True), computed in
    ``dtype`` as PyTorch computes them (its linspace runs from both ends), so that a grid
    point on a pixel edge lands on the same side of it -- an identity ``theta`` gives points
    exactly on pixel centres, where bilinear sampling's gradient changes."""
    one = dtype.type(1)
    if n <= 1:
        return np.zeros(max(n, 0), dtype=dtype)
    step = np.float64((one + one) / dtype.type(n - 1))  # rounded to dtype, as PyTorch's
    i = np.arange(n, dtype=np.float64)  # start + step i as one fused multiply-add
    lin = np.where(i < n // 2, -1.0 + step * i, 1.0 - step * (n - 1 - i)).astype(dtype)
    if align_corners:
        return lin
    return (lin * dtype.type(n - 1) / dtype.type(n)).astype(dtype)


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of an affine map, PyTorch's ``F.affine_grid`` for 2-D images:
    ``theta`` (N, 2, 3) maps each output pixel's normalised coordinates (x, y, 1) to the
    input's, ``size`` is the output's (N, C, H, W); the grid is (N, H, W, 2), last axis
    (x, y).  A product with ``theta``, so gradients reach it.  ``align_corners`` is False by
    default, as in PyTorch."""
    if not isinstance(theta, Tensor) or theta.ndim != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ValueError(f"affine_grid: theta must be an (N, 2, 3) tensor, got "
                         f"{fmt(tuple(getattr(theta, 'shape', ())))}")
    n, _, h, w = (int(v) for v in size)
    if theta.shape[0] != n:
        raise ValueError(f"affine_grid: theta holds {theta.shape[0]} maps but size asks for "
                         f"N = {n}")
    dtype = np.dtype(theta.dtype.cpu)
    xs = _base_coords(w, bool(align_corners), dtype)
    ys = _base_coords(h, bool(align_corners), dtype)
    base = np.stack([np.tile(xs, h), np.repeat(ys, w), np.ones(h * w, dtype=dtype)], axis=1)
    base = Tensor(base, dtype=theta.dtype, device=theta.device)  # (H W, 3): x, y, 1
    return _matmul(base, theta.transpose(1, 2)).reshape(n, h, w, 2)


def _corner(input: Tensor, xs: np.ndarray, ys: np.ndarray) -> tuple[Tensor, np.ndarray]:
    """input[n, :, ys, xs] for integer pixel positions (N, Ho, Wo) as (N, C, Ho, Wo), zero
    where the position is outside the image; and the mask of positions inside."""
    n, _, h, w = input.shape
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    batch = np.arange(n).reshape(n, 1, 1) * np.ones_like(xs)
    picked = input[(Tensor(batch, device=input.device), slice(None),
                    Tensor(np.clip(ys, 0, h - 1), device=input.device),
                    Tensor(np.clip(xs, 0, w - 1), device=input.device))]  # (N, Ho, Wo, C)
    return picked.permute(0, 3, 1, 2), inside


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at ``grid`` (N, Ho, Wo, 2) -- normalised (x, y) in
    [-1, 1] -- as PyTorch's ``F.grid_sample``: "bilinear" mixes the four pixels around each
    point with weights (1 - dx)(1 - dy), dx (1 - dy), ...; "nearest" takes the closest
    pixel.  ``padding_mode`` "zeros" reads 0 outside the image, "border" the edge pixel.
    Composed of Lucid ops: gradients reach ``input`` (added back where it was read) and,
    for "bilinear", ``grid`` (through the weights)."""
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"grid_sample: mode must be 'bilinear' or 'nearest', got {mode!r}")
    if padding_mode not in ("zeros", "border"):
        raise ValueError(f"grid_sample: padding_mode must be 'zeros' or 'border' in Lucid, "
                         f"got {padding_mode!r}")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or \
            grid.shape[0] != input.shape[0]:
        raise ValueError(f"grid_sample: expected input (N, C, H, W) and grid (N, Ho, Wo, 2), "
                         f"got {fmt(input.shape)} and {fmt(grid.shape)}")
    _, _, h, w = input.shape
    gx, gy = grid[..., 0], grid[..., 1]
    if align_corners:
        ix, iy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
    else:
        ix, iy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
    if padding_mode == "border":
        ix, iy = _clip(ix, 0, w - 1), _clip(iy, 0, h - 1)
    if mode == "nearest":  # PyTorch rounds half to even (nearbyint), as NumPy's rint
        xs, ys = (np.rint(a.detach().numpy()).astype(np.int64) for a in (ix, iy))
        picked, inside = _corner(input, xs, ys)
        return picked * Tensor(inside[:, None], dtype=input.dtype, device=input.device)
    x0 = np.floor(ix.detach().numpy()).astype(np.int64)
    y0 = np.floor(iy.detach().numpy()).astype(np.int64)
    dx = ix - Tensor(x0, dtype=ix.dtype, device=ix.device)  # in [0, 1): the weights' source
    dy = iy - Tensor(y0, dtype=iy.dtype, device=iy.device)
    out = None
    for xs, ys, weight in ((x0, y0, (1 - dx) * (1 - dy)), (x0 + 1, y0, dx * (1 - dy)),
                           (x0, y0 + 1, (1 - dx) * dy), (x0 + 1, y0 + 1, dx * dy)):
        picked, inside = _corner(input, xs, ys)
        weight = weight * Tensor(inside, dtype=weight.dtype, device=weight.device)
        term = picked * weight.reshape(weight.shape[0], 1, *weight.shape[1:])
        out = term if out is None else out + term
    return out
