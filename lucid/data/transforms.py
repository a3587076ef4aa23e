"""Image transforms, as torchvision's: ``Compose``, ``ToTensor``, ``Normalize``, ``Resize``,
``CenterCrop``, ``RandomCrop``, ``RandomHorizontalFlip``, ``RandomRotation``, ``Lambda``.

    train_tf = Compose([RandomCrop(32, padding=4), RandomHorizontalFlip(), ToTensor(),
                        Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])
    train = CIFAR10("~/data", train=True, transform=train_tf)

An image is either

* a NumPy array ``(H, W)`` or ``(H, W, C)`` -- what the datasets give, and what torchvision's
  PIL images are -- or
* a Lucid Tensor ``(..., C, H, W)`` (or ``(..., H, W)``), as torchvision's tensors.

The geometric transforms (crop, flip, resize, rotate) give back the same kind, layout and
dtype as they got (an integer image is rounded back to integers); on a Tensor they keep its
device.  They compute in NumPy: a transform prepares data, it is not part of a model, so a
Tensor that requires grad is refused.  ``ToTensor`` turns the array into a float Tensor
``(C, H, W)`` in [0, 1]; ``Normalize`` works on such Tensors.

The geometric transforms follow torchvision's *tensor* code path (the NumPy images too), so
their pixel values match torchvision's on tensors; torchvision's PIL path can differ by a
rounding step at a few pixels.  Random choices come from :mod:`lucid.random`:
``lucid.random.seed(n)`` makes a run of augmentations repeat exactly.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid import random as lucid_random
from lucid.engine.mode import grad_enabled
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomHorizontalFlip", "RandomRotation", "Lambda"]

Image = Any  # a NumPy array (H, W[, C]) or a Tensor (..., C, H, W)


# --------------------------------------------------------------------------------------------
# images in, images out: every geometric transform works on a NumPy array (..., H, W)


def _unpack(img: Image, who: str) -> tuple[np.ndarray, Callable[[np.ndarray], Image]]:
    """``img`` as a NumPy array with the image in its last two axes (channels, if any, in
    axis -3), and the function that turns a result back into ``img``'s kind and layout."""
    if isinstance(img, Tensor):
        if img.ndim < 2:
            raise ValueError(f"{who}: a Tensor image needs at least two dimensions (..., H, W), "
                             f"got shape {img.shape}")
        if img.requires_grad and grad_enabled():
            raise ValueError(f"{who}: the tensor requires grad; transforms prepare data outside "
                             "the graph. Pass x.detach()")
        dtype, device = img.dtype, img.device
        return img.numpy(), lambda out: Tensor(out, dtype=dtype, device=device)
    if isinstance(img, np.ndarray):
        if not (np.issubdtype(img.dtype, np.integer) or np.issubdtype(img.dtype, np.floating)):
            raise TypeError(f"{who}: a NumPy image must hold integers or floats, got {img.dtype}")
        if img.ndim == 2:
            return img, lambda out: out
        if img.ndim == 3:
            return (np.moveaxis(img, -1, 0),
                    lambda out: np.ascontiguousarray(np.moveaxis(out, 0, -1)))
        raise ValueError(f"{who}: a NumPy image must be (H, W) or (H, W, C), got shape "
                         f"{img.shape}")
    raise TypeError(f"{who}: expected a NumPy image (H, W[, C]) or a Tensor (..., C, H, W), "
                    f"got {type(img).__name__}")


def _to_dtype(out: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A float result in the image's dtype: integers rounded (half to even) and clipped."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype, copy=False)


def _channels(a: np.ndarray) -> int:
    return a.shape[-3] if a.ndim >= 3 else 1


def _fill_array(who: str, fill: Any, a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``fill`` (a number, or one per channel) shaped to broadcast over ``a``'s image axes."""
    values = np.asarray(fill, dtype=np.float64).reshape(-1)
    if values.size == 0 or values.size not in (1, _channels(a)):
        raise ValueError(f"{who}: fill must be a number or one value per channel "
                         f"({_channels(a)}), got {fill!r}")
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        if np.any(values != np.round(values)) or values.min() < info.min or (
                values.max() > info.max):
            raise ValueError(f"{who}: fill {fill!r} is not a value of a {np.dtype(dtype)} image "
                             f"(integers {info.min}..{info.max})")
    return values.reshape(-1, 1, 1) if values.size > 1 else values.reshape(())


def _size_pair(who: str, size: Any, name: str = "size") -> tuple[int, int]:
    """torchvision's ``size``: an int (a square), or a sequence (h, w) or (s,)."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        values = [size, size]
    elif isinstance(size, Sequence) and len(size) in (1, 2):
        values = [size[0], size[0]] if len(size) == 1 else list(size)
    else:
        raise ValueError(f"{who}: {name} must be an int or a sequence (h, w), got {size!r}")
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0
               for v in values):
        raise ValueError(f"{who}: {name} must hold positive ints, got {size!r}")
    return int(values[0]), int(values[1])


# --------------------------------------------------------------------------------------------
# the operations, on arrays (..., H, W)


def _pad(who: str, a: np.ndarray, left: int, top: int, right: int, bottom: int, fill: Any,
         mode: str) -> np.ndarray:
    h, w = a.shape[-2:]
    if mode == "reflect" and (max(left, right) >= w or max(top, bottom) >= h):
        raise ValueError(f"{who}: reflect padding must be smaller than the image side it "
                         f"extends: padding (left, top, right, bottom) = ({left}, {top}, "
                         f"{right}, {bottom}) on an image of {h}x{w} (height x width)")
    if mode == "symmetric" and (max(left, right) > w or max(top, bottom) > h):
        raise ValueError(f"{who}: symmetric padding must be at most the image side it "
                         f"extends: padding ({left}, {top}, {right}, {bottom}) on an image of "
                         f"{h}x{w} (height x width)")
    if mode != "constant":
        widths = [(0, 0)] * (a.ndim - 2) + [(top, bottom), (left, right)]
        return np.pad(a, widths, mode=mode)
    out = np.empty(a.shape[:-2] + (h + top + bottom, w + left + right), dtype=a.dtype)
    out[...] = _fill_array(who, fill, a, a.dtype)
    out[..., top:top + h, left:left + w] = a
    return out


def _resize_weights(n_in: int, n_out: int, antialias: bool) -> np.ndarray:
    """The (n_out, n_in) matrix of a bilinear resize along one axis.

    Output pixel ``i`` is centred at ``c = (i + 0.5) * s`` in input coordinates
    (``s = n_in / n_out``; pixel ``j`` covers [j, j+1)) and takes
    ``w_ij = max(0, 1 - |j + 0.5 - c| / k)``, normalised to sum to 1 over the pixels inside
    the image.  ``k = 1`` is plain bilinear interpolation between the two nearest pixels
    (PyTorch's ``align_corners=False``: at the border it repeats the edge pixel).  When
    shrinking with ``antialias``, ``k = s`` widens the triangle to cover every input pixel
    that falls in the output pixel, so none is skipped (Pillow's and PyTorch's
    ``antialias=True`` filter).
    """
    scale = n_in / n_out
    support = scale if (antialias and scale > 1.0) else 1.0
    centres = (np.arange(n_out) + 0.5) * scale
    weights = np.maximum(0.0, 1.0 - np.abs(np.arange(n_in) + 0.5 - centres[:, None]) / support)
    return weights / weights.sum(axis=1, keepdims=True)


def _resize(a: np.ndarray, size: tuple[int, int], interpolation: str,
            antialias: bool) -> np.ndarray:
    (h, w), (oh, ow) = a.shape[-2:], size
    if interpolation == "nearest":
        # PyTorch's "nearest": output pixel i takes input pixel floor(i * n_in / n_out)
        rows = np.minimum(np.floor(np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
        cols = np.minimum(np.floor(np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
        return a[..., rows[:, None], cols]
    wh, ww = _resize_weights(h, oh, antialias), _resize_weights(w, ow, antialias)
    out = np.einsum("ij,...jk,lk->...il", wh, a.astype(np.float64), ww, optimize=True)
    return _to_dtype(out, a.dtype)


def _rotation_matrix(angle: float, center: tuple[float, float] | None, h: int,
                     w: int) -> list[float]:
    """The inverse map of a rotation by ``angle`` degrees counter-clockwise, as torchvision's
    ``_get_inverse_affine_matrix``: output point (x, y) -> source point, both measured from
    the image centre (y pointing down), plus the offset of ``center`` from that centre."""
    cx, cy = (0.0, 0.0) if center is None else (center[0] - 0.5 * w, center[1] - 0.5 * h)
    t = math.radians(angle)
    m = [math.cos(t), -math.sin(t), 0.0, math.sin(t), math.cos(t), 0.0]
    m[2] = cx - m[0] * cx - m[1] * cy
    m[5] = cy - m[3] * cx - m[4] * cy
    return m


def _expanded_size(m: list[float], h: int, w: int) -> tuple[int, int]:
    """(height, width) that holds the whole rotated image (torchvision's rule, which rounds
    the corners to 1e-4 first so that 89.99999 does not become 91)."""
    corners = np.array([[-0.5 * w, -0.5 * h], [-0.5 * w, 0.5 * h], [0.5 * w, 0.5 * h],
                        [0.5 * w, -0.5 * h]])
    pts = corners @ np.array([[m[0], m[3]], [m[1], m[4]]]) + [m[2], m[5]]
    lo, hi = pts.min(axis=0) + [0.5 * w, 0.5 * h], pts.max(axis=0) + [0.5 * w, 0.5 * h]
    tol = 1e-4
    size = np.ceil(np.trunc(hi / tol) * tol) - np.floor(np.trunc(lo / tol) * tol)
    return int(size[1]), int(size[0])


def _rotate(who: str, a: np.ndarray, angle: float, interpolation: str, expand: bool,
            center: tuple[float, float] | None, fill: Any) -> np.ndarray:
    """Sample the rotated image: each output pixel looks up its source point (the inverse
    map) in the input, as ``grid_sample(align_corners=False)``; points outside take ``fill``.
    """
    h, w = a.shape[-2:]
    m = _rotation_matrix(angle, center, h, w)
    oh, ow = _expanded_size(m, h, w) if expand else (h, w)
    x = np.arange(ow) - 0.5 * ow + 0.5            # output pixel centres, from the centre
    y = (np.arange(oh) - 0.5 * oh + 0.5)[:, None]
    sx = m[0] * x + m[1] * y + m[2] + 0.5 * (w - 1)   # source, in input pixel indices
    sy = m[3] * x + m[4] * y + m[5] + 0.5 * (h - 1)
    fill_value = _fill_array(who, fill, a, a.dtype)
    if interpolation == "nearest":
        ix, iy = np.rint(sx).astype(np.int64), np.rint(sy).astype(np.int64)   # half to even
        inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
        values = a[..., np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]
        return np.where(inside, values, fill_value).astype(a.dtype)
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    fx, fy = sx - x0, sy - y0
    total = np.zeros(a.shape[:-2] + (oh, ow))
    covered = np.zeros((oh, ow))   # the weight that fell inside the image
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            ix, iy = x0 + dx, y0 + dy
            weight = wy * wx * ((ix >= 0) & (ix < w) & (iy >= 0) & (iy < h))
            total += weight * a[..., np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]
            covered += weight
    # torchvision's blend at the border, kept as it is so values match: the sampled value
    # (already weighted by ``covered``) is weighted by it once more.
    return _to_dtype(total * covered + (1.0 - covered) * fill_value, a.dtype)


# --------------------------------------------------------------------------------------------
# the transforms


class Compose:
    """``Compose([t1, t2, ...])(img) = ...t2(t1(img))``: the transforms in order."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        if isinstance(transforms, (str, bytes)) or not isinstance(transforms, Sequence):
            raise TypeError(f"Compose: transforms must be a list of callables, got "
                            f"{type(transforms).__name__}")
        for i, t in enumerate(transforms):
            if not callable(t):
                raise TypeError(f"Compose: transform {i} ({type(t).__name__}) is not callable")
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"Compose({inner}\n)"


class ToTensor:
    """A NumPy image (H, W) or (H, W, C) -> a Tensor (C, H, W); uint8 values scaled to [0, 1].

    ``x / 255`` in Float32 for a uint8 array, as torchvision; arrays of other dtypes keep
    their values and dtype (only the axes move), as torchvision.
    """

    def __call__(self, pic: np.ndarray) -> Tensor:
        if not isinstance(pic, np.ndarray):
            hint = " (it is one already)" if isinstance(pic, Tensor) else ""
            raise TypeError(f"ToTensor: expects a NumPy image (H, W) or (H, W, C), got "
                            f"{type(pic).__name__}{hint}")
        if pic.ndim not in (2, 3):
            raise ValueError(f"ToTensor: a NumPy image must be (H, W) or (H, W, C), got "
                             f"shape {pic.shape}")
        chw = (pic[None] if pic.ndim == 2 else pic.transpose(2, 0, 1))
        if pic.dtype == np.uint8:
            return Tensor(chw.astype(np.float32) / np.float32(255), dtype=Float32)
        return Tensor(chw)

    def __repr__(self) -> str:
        return "ToTensor()"


class Normalize:
    """``Normalize(mean, std, inplace=False)``: ``out[c] = (x[c] - mean[c]) / std[c]``.

    For a float Tensor (..., C, H, W); ``mean`` and ``std`` hold one number per channel (or
    one for all).  With ``inplace=True`` the tensor itself is overwritten.  Computed with
    Lucid ops, so it keeps the device and, on a tensor that requires grad, the graph.
    """

    def __init__(self, mean: Sequence[float] | float, std: Sequence[float] | float,
                 inplace: bool = False) -> None:
        self.mean = self._numbers("mean", mean)
        self.std = self._numbers("std", std)
        if np.any(self.std == 0):
            raise ValueError(f"Normalize: std {std!r} contains a zero, which would divide by "
                             "zero")
        self.inplace = bool(inplace)

    @staticmethod
    def _numbers(name: str, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
        if arr.size == 0 or not np.all(np.isfinite(arr)):
            raise ValueError(f"Normalize: {name} must be finite numbers, got {values!r}")
        return arr

    def __call__(self, tensor: Tensor) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Normalize: expects a Tensor (..., C, H, W), got "
                            f"{type(tensor).__name__}; apply ToTensor() first")
        if tensor.ndim < 3:
            raise ValueError(f"Normalize: expects a Tensor image (..., C, H, W), got shape "
                             f"{tensor.shape}")
        if not tensor.dtype.is_floating_point:
            raise TypeError(f"Normalize: expects a float Tensor, got {tensor.dtype.name}; "
                            "apply ToTensor() (which scales uint8 to [0, 1]) first")
        c = tensor.shape[-3]
        for name, arr in (("mean", self.mean), ("std", self.std)):
            if arr.size not in (1, c):
                raise ValueError(f"Normalize: {name} has {arr.size} values for an image of "
                                 f"{c} channels (shape {tensor.shape}); give one per channel")
        mean = Tensor(self.mean.reshape(-1, 1, 1), dtype=tensor.dtype, device=tensor.device)
        std = Tensor(self.std.reshape(-1, 1, 1), dtype=tensor.dtype, device=tensor.device)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean.tolist()}, std={self.std.tolist()})"


class Resize:
    """``Resize(size, interpolation="bilinear", max_size=None, antialias=True)``.

    * ``size`` an int: the *smaller* edge becomes ``size`` and the other keeps the aspect
      ratio, ``int(size * long / short)``; then, if ``max_size`` is given and the longer edge
      would exceed it, the longer edge becomes ``max_size`` instead.
    * ``size`` a sequence ``(h, w)``: exactly that size.

    Bilinear resampling (see ``_resize_weights``), with torchvision's default
    ``antialias=True`` (shrinking averages every covered pixel); ``"nearest"`` copies the
    pixel ``floor(i * in / out)``.
    """

    def __init__(self, size: int | Sequence[int], interpolation: str = "bilinear",
                 max_size: int | None = None, antialias: bool = True) -> None:
        if interpolation not in ("bilinear", "nearest"):
            raise ValueError(f"Resize: interpolation must be 'bilinear' or 'nearest', got "
                             f"{interpolation!r}")
        self.smaller_edge = isinstance(size, numbers.Integral) or (
            isinstance(size, Sequence) and len(size) == 1)
        self.size = _size_pair("Resize", size)
        if max_size is not None:
            if not self.smaller_edge:
                raise ValueError(f"Resize: max_size applies only when size is one number (the "
                                 f"smaller edge), got size={size!r}")
            if not isinstance(max_size, numbers.Integral) or max_size <= self.size[0]:
                raise ValueError(f"Resize: max_size ({max_size!r}) must be an int larger than "
                                 f"size ({self.size[0]})")
        self.max_size = max_size
        self.interpolation = interpolation
        self.antialias = bool(antialias)

    def output_size(self, h: int, w: int) -> tuple[int, int]:
        """The (height, width) an image of ``h`` x ``w`` is resized to."""
        if not self.smaller_edge:
            return self.size
        short, long = (h, w) if h <= w else (w, h)
        new_short, new_long = self.size[0], int(self.size[0] * long / short)
        if self.max_size is not None and new_long > self.max_size:
            new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
        return (new_short, new_long) if h <= w else (new_long, new_short)

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "Resize")
        return back(_resize(a, self.output_size(*a.shape[-2:]), self.interpolation,
                            self.antialias))

    def __repr__(self) -> str:
        size = self.size[0] if self.smaller_edge else self.size
        return (f"Resize(size={size}, interpolation={self.interpolation}, "
                f"max_size={self.max_size}, antialias={self.antialias})")


def _check_padding(who: str, padding: Any) -> tuple[int, int, int, int]:
    """torchvision's ``padding``: an int (all sides), (left/right, top/bottom), or
    (left, top, right, bottom); non-negative ints."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        values = [padding] * 4
    elif isinstance(padding, Sequence) and len(padding) in (1, 2, 4):
        values = list(padding)
        values = values * 4 if len(values) == 1 else (values * 2 if len(values) == 2
                                                      else values)
    else:
        raise ValueError(f"{who}: padding must be an int or a sequence of 1, 2 or 4 ints, got "
                         f"{padding!r}")
    if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0
               for v in values):
        raise ValueError(f"{who}: padding must hold non-negative ints, got {padding!r}")
    return tuple(int(v) for v in values)  # type: ignore[return-value]


def _check_fill(who: str, fill: Any) -> Any:
    ok = isinstance(fill, numbers.Real) and not isinstance(fill, bool)
    if not ok and isinstance(fill, Sequence) and len(fill) > 0:
        ok = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in fill)
    if not ok:
        raise TypeError(f"{who}: fill must be a number or a sequence of numbers (one per "
                        f"channel), got {fill!r}")
    return fill


class CenterCrop:
    """``CenterCrop(size)``: the central ``size`` region (int: a square; or (h, w)).

    The top-left corner is ``(round((H - h) / 2), round((W - w) / 2))`` with Python's
    rounding (half to even), as torchvision; an image smaller than ``size`` is first padded
    with zeros on all sides (the odd pixel going to the bottom/right).
    """

    def __init__(self, size: int | Sequence[int]) -> None:
        self.size = _size_pair("CenterCrop", size)

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "CenterCrop")
        (h, w), (th, tw) = a.shape[-2:], self.size
        if th > h or tw > w:
            left, top = max(tw - w, 0) // 2, max(th - h, 0) // 2
            right, bottom = (max(tw - w, 0) + 1) // 2, (max(th - h, 0) + 1) // 2
            a = _pad("CenterCrop", a, left, top, right, bottom, 0, "constant")
            h, w = a.shape[-2:]
        top, left = int(round((h - th) / 2.0)), int(round((w - tw) / 2.0))
        return back(a[..., top:top + th, left:left + tw])

    def __repr__(self) -> str:
        return f"CenterCrop(size={self.size})"


class RandomCrop:
    """``RandomCrop(size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant")``.

    1. ``padding`` pads every image first: an int (all sides), ``(left/right, top/bottom)``
       or ``(left, top, right, bottom)``;
    2. ``pad_if_needed`` pads a side shorter than ``size`` by the shortfall on *both* ends;
    3. a ``size`` window is cut at a random corner, ``top ~ U{0..H-h}``, ``left ~ U{0..W-w}``
       (drawn from ``lucid.random``, top first; nothing is drawn when the image already has
       that size), as torchvision.

    ``padding_mode`` (a row ``1 2 3`` padded by 2 on each side):

    * ``"constant"``: ``f f | 1 2 3 | f f`` with ``fill`` (a number or one per channel);
    * ``"edge"``: ``1 1 | 1 2 3 | 3 3``;
    * ``"reflect"``: ``3 2 | 1 2 3 | 2 1`` (mirrored about the edge pixel);
    * ``"symmetric"``: ``2 1 | 1 2 3 | 3 2`` (mirrored about the edge, which repeats it).
    """

    def __init__(self, size: int | Sequence[int], padding: int | Sequence[int] | None = None,
                 pad_if_needed: bool = False, fill: float | Sequence[float] = 0,
                 padding_mode: str = "constant") -> None:
        self.size = _size_pair("RandomCrop", size)
        self.padding = None if padding is None else _check_padding("RandomCrop", padding)
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"RandomCrop: padding_mode must be 'constant', 'edge', 'reflect' "
                             f"or 'symmetric', got {padding_mode!r}")
        self.pad_if_needed = bool(pad_if_needed)
        self.fill = _check_fill("RandomCrop", fill)
        self.padding_mode = padding_mode

    @staticmethod
    def get_params(h: int, w: int, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(top, left, height, width)`` of a random crop of ``output_size`` from h x w."""
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: the crop size {(th, tw)} (height, width) is larger "
                             f"than the image {(h, w)}; pass padding or pad_if_needed=True")
        if (h, w) == (th, tw):
            return 0, 0, h, w
        top = int(lucid_random.randint(0, h - th + 1).item())
        left = int(lucid_random.randint(0, w - tw + 1).item())
        return top, left, th, tw

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "RandomCrop")
        if self.padding is not None:
            a = _pad("RandomCrop", a, *self.padding, self.fill, self.padding_mode)
        th, tw = self.size
        if self.pad_if_needed and a.shape[-1] < tw:
            d = tw - a.shape[-1]
            a = _pad("RandomCrop", a, d, 0, d, 0, self.fill, self.padding_mode)
        if self.pad_if_needed and a.shape[-2] < th:
            d = th - a.shape[-2]
            a = _pad("RandomCrop", a, 0, d, 0, d, self.fill, self.padding_mode)
        top, left, h, w = self.get_params(*a.shape[-2:], self.size)
        return back(a[..., top:top + h, left:left + w])

    def __repr__(self) -> str:
        return (f"RandomCrop(size={self.size}, padding={self.padding}, "
                f"pad_if_needed={self.pad_if_needed}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class RandomHorizontalFlip:
    """``RandomHorizontalFlip(p=0.5)``: mirror left-right when ``u < p``, ``u ~ U[0, 1)`` from
    ``lucid.random`` (one draw per call)."""

    def __init__(self, p: float = 0.5) -> None:
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"RandomHorizontalFlip: p must be a probability in [0, 1], got "
                             f"{p!r}")
        self.p = float(p)

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "RandomHorizontalFlip")
        if lucid_random.rand().item() < self.p:
            return back(a[..., ::-1])
        return back(a)

    def __repr__(self) -> str:
        return f"RandomHorizontalFlip(p={self.p})"


class RandomRotation:
    """``RandomRotation(degrees, interpolation="nearest", expand=False, center=None, fill=0)``.

    Rotates by an angle ``a ~ U[d0, d1)`` degrees counter-clockwise (``degrees`` = d gives
    ``(-d, d)``), drawn from ``lucid.random``.  Each output pixel, at ``(x, y)`` from the
    rotation centre (y pointing down), takes the input at the point the rotation carries
    there, ``(x cos a - y sin a, x sin a + y cos a)``; ``"nearest"`` (torchvision's default)
    rounds that point to a pixel, ``"bilinear"`` blends the four around it.  Points outside
    the input take ``fill`` (a number or one per channel).  ``expand=True`` enlarges the
    output to hold the whole rotated image (torchvision's size rule); ``center=(x, y)``
    rotates about that pixel position instead of the image centre.

    Where a source point falls exactly halfway between two pixels (a quarter turn of an
    image whose height and width differ in parity), ``"nearest"`` rounds half to even in
    float64; torchvision's float32 grid can land on the other pixel there.
    """

    def __init__(self, degrees: float | Sequence[float], interpolation: str = "nearest",
                 expand: bool = False, center: Sequence[float] | None = None,
                 fill: float | Sequence[float] = 0) -> None:
        if isinstance(degrees, numbers.Real) and not isinstance(degrees, bool):
            if degrees < 0:
                raise ValueError(f"RandomRotation: degrees given as one number must be >= 0 "
                                 f"(it means the range (-degrees, degrees)), got {degrees}")
            self.degrees = (-float(degrees), float(degrees))
        elif isinstance(degrees, Sequence) and len(degrees) == 2 and all(
                isinstance(d, numbers.Real) and not isinstance(d, bool) for d in degrees):
            if degrees[0] > degrees[1]:
                raise ValueError(f"RandomRotation: degrees (min, max) must have min <= max, "
                                 f"got {degrees!r}")
            self.degrees = (float(degrees[0]), float(degrees[1]))
        else:
            raise ValueError(f"RandomRotation: degrees must be a number or a sequence (min, "
                             f"max) in degrees, got {degrees!r}")
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"RandomRotation: interpolation must be 'nearest' or 'bilinear', "
                             f"got {interpolation!r}")
        if center is not None and not (isinstance(center, Sequence) and len(center) == 2):
            raise ValueError(f"RandomRotation: center must be (x, y) in pixels, got {center!r}")
        self.interpolation = interpolation
        self.expand = bool(expand)
        self.center = None if center is None else (float(center[0]), float(center[1]))
        self.fill = _check_fill("RandomRotation", fill)

    def get_params(self) -> float:
        """One angle in degrees, uniform in ``[d0, d1)`` (one draw from ``lucid.random``)."""
        d0, d1 = self.degrees
        return d0 + (d1 - d0) * float(lucid_random.rand().item())

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "RandomRotation")
        angle = self.get_params()
        return back(_rotate("RandomRotation", a, angle, self.interpolation, self.expand,
                            self.center, self.fill))

    def __repr__(self) -> str:
        return (f"RandomRotation(degrees={list(self.degrees)}, interpolation="
                f"{self.interpolation}, expand={self.expand}, fill={self.fill})")


class Lambda:
    """``Lambda(fn)``: a function used as a transform (``Lambda(lambda x: x * 2)``)."""

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Lambda: the argument must be callable, got "
                            f"{type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"Lambda({getattr(self.lambd, '__name__', repr(self.lambd))})"
