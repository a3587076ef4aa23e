"""torchvision's transforms: those of :mod:`lucid.data.transforms` (``Compose``,
``ToTensor``, ``Normalize``, ``Resize``, ``CenterCrop``, ``RandomCrop``,
``RandomHorizontalFlip``, ``RandomRotation``, ``Lambda``) plus ``RandomVerticalFlip``,
``Pad``, ``Grayscale``, ``RandomResizedCrop`` and ``ToPILImage``.

Images are NumPy arrays ``(H, W[, C])`` (where torchvision has PIL images) or Tensors
``(..., C, H, W)``; each transform gives back the kind it got.  Random choices come from
:mod:`lucid.random`, so ``lucid.random.seed(n)`` repeats a run of augmentations.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from lucid import random as lucid_random
from lucid.data.transforms import (
    CenterCrop,
    Compose,
    Lambda,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    RandomRotation,
    Resize,
    ToTensor,
    _check_fill,
    _check_padding,
    _pad,
    _resize,
    _size_pair,
    _to_dtype,
    _unpack,
)

__all__ = ["Compose", "ToTensor", "Normalize", "Resize", "CenterCrop", "RandomCrop",
           "RandomHorizontalFlip", "RandomVerticalFlip", "RandomRotation", "RandomResizedCrop",
           "Pad", "Grayscale", "ToPILImage", "Lambda"]

Image = Any


def _probability(who: str, p: Any) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{who}: p must be a probability in [0, 1], got {p!r}")
    return float(p)


class RandomVerticalFlip:
    """``RandomVerticalFlip(p=0.5)``: mirror top-bottom when ``u < p``, ``u ~ U[0, 1)`` from
    ``lucid.random`` (one draw per call)."""

    def __init__(self, p: float = 0.5) -> None:
        self.p = _probability("RandomVerticalFlip", p)

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "RandomVerticalFlip")
        if lucid_random.rand().item() < self.p:
            return back(a[..., ::-1, :])
        return back(a)

    def __repr__(self) -> str:
        return f"RandomVerticalFlip(p={self.p})"


class Pad:
    """``Pad(padding, fill=0, padding_mode="constant")``: add a border.  ``padding`` is an
    int (all sides), ``(left/right, top/bottom)`` or ``(left, top, right, bottom)``; the
    modes are :class:`RandomCrop`'s (constant, edge, reflect, symmetric)."""

    def __init__(self, padding: int | Sequence[int], fill: float | Sequence[float] = 0,
                 padding_mode: str = "constant") -> None:
        self.padding = _check_padding("Pad", padding)
        self.fill = _check_fill("Pad", fill)
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError(f"Pad: padding_mode must be 'constant', 'edge', 'reflect' or "
                             f"'symmetric', got {padding_mode!r}")
        self.padding_mode = padding_mode

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "Pad")
        return back(_pad("Pad", a, *self.padding, self.fill, self.padding_mode))

    def __repr__(self) -> str:
        return f"Pad(padding={self.padding}, fill={self.fill}, padding_mode={self.padding_mode})"


class Grayscale:
    """``Grayscale(num_output_channels=1)``: ``L = 0.299 R + 0.587 G + 0.114 B`` (ITU-R 601-2
    luma, torchvision's weights), repeated to 3 channels when asked.  A one-channel image
    passes through (repeated if 3 are asked for)."""

    def __init__(self, num_output_channels: int = 1) -> None:
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got "
                             f"{num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "Grayscale")
        chw = a if a.ndim >= 3 else a[None]
        if chw.shape[-3] == 3:
            weights = np.array([0.299, 0.587, 0.114]).reshape(3, 1, 1)
            luma = _to_dtype((chw.astype(np.float64) * weights).sum(axis=-3, keepdims=True),
                             a.dtype)
        elif chw.shape[-3] == 1:
            luma = chw
        else:
            raise ValueError(f"Grayscale: expects an image of 1 or 3 channels, got "
                             f"{chw.shape[-3]}")
        out = np.repeat(luma, self.num_output_channels, axis=-3)
        if a.ndim == 2 and self.num_output_channels == 1:
            out = out[0]
        return back(out)

    def __repr__(self) -> str:
        return f"Grayscale(num_output_channels={self.num_output_channels})"


class RandomResizedCrop:
    """``RandomResizedCrop(size, scale=(0.08, 1.0), ratio=(3/4, 4/3), interpolation=
    "bilinear", antialias=True)``: cut a random window and resize it to ``size``.

    The window covers a fraction ``s ~ U(scale)`` of the image's area with aspect ratio
    ``r = exp(U(log ratio))`` (width / height): ``w = round(sqrt(s A r))``,
    ``h = round(sqrt(s A / r))``, at a random corner; up to ten tries, then the largest
    centred window within ``ratio`` (torchvision's rule, drawn from ``lucid.random``).
    """

    def __init__(self, size: int | Sequence[int], scale: Sequence[float] = (0.08, 1.0),
                 ratio: Sequence[float] = (3 / 4, 4 / 3), interpolation: str = "bilinear",
                 antialias: bool = True) -> None:
        self.size = _size_pair("RandomResizedCrop", size)
        for name, pair in (("scale", scale), ("ratio", ratio)):
            if len(pair) != 2 or not 0 < pair[0] <= pair[1]:
                raise ValueError(f"RandomResizedCrop: {name} must be (min, max) with "
                                 f"0 < min <= max, got {pair!r}")
        if interpolation not in ("bilinear", "nearest"):
            raise ValueError(f"RandomResizedCrop: interpolation must be 'bilinear' or "
                             f"'nearest', got {interpolation!r}")
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.interpolation, self.antialias = interpolation, bool(antialias)

    def get_params(self, height: int, width: int) -> tuple[int, int, int, int]:
        """``(top, left, h, w)`` of the window."""
        area = height * width
        log_lo, log_hi = math.log(self.ratio[0]), math.log(self.ratio[1])
        for _ in range(10):
            target = area * (self.scale[0] + (self.scale[1] - self.scale[0])
                             * float(lucid_random.rand().item()))
            aspect = math.exp(log_lo + (log_hi - log_lo) * float(lucid_random.rand().item()))
            w = int(round(math.sqrt(target * aspect)))
            h = int(round(math.sqrt(target / aspect)))
            if 0 < w <= width and 0 < h <= height:
                top = int(lucid_random.randint(0, height - h + 1).item())
                left = int(lucid_random.randint(0, width - w + 1).item())
                return top, left, h, w
        in_ratio = width / height
        if in_ratio < self.ratio[0]:
            w, h = width, int(round(width / self.ratio[0]))
        elif in_ratio > self.ratio[1]:
            h, w = height, int(round(height * self.ratio[1]))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def __call__(self, img: Image) -> Image:
        a, back = _unpack(img, "RandomResizedCrop")
        top, left, h, w = self.get_params(*a.shape[-2:])
        window = a[..., top:top + h, left:left + w]
        return back(_resize(window, self.size, self.interpolation, self.antialias))

    def __repr__(self) -> str:
        return (f"RandomResizedCrop(size={self.size}, scale={self.scale}, ratio={self.ratio}, "
                f"interpolation={self.interpolation})")


class ToPILImage:
    """``ToPILImage(mode=None)``: a Tensor image ``(C, H, W)`` (or ``(H, W)``) -> the NumPy image
    that stands for a PIL image here, ``(H, W, C)`` uint8 (``(H, W)`` for one channel).

    Float tensors are scaled as torchvision does, ``byte(x * 255)`` (truncated; values are
    expected in [0, 1]); integer tensors keep their values.  A NumPy image passes through.
    ``mode`` is accepted for torchvision's sake and must agree with the channels if given.
    """

    _MODES = {"L": 1, "RGB": 3, "RGBA": 4}

    def __init__(self, mode: str | None = None) -> None:
        if mode is not None and mode not in self._MODES:
            raise ValueError(f"ToPILImage: mode must be one of {sorted(self._MODES)} or None, "
                             f"got {mode!r}")
        self.mode = mode

    def __call__(self, pic: Any) -> np.ndarray:
        if isinstance(pic, np.ndarray):
            return pic
        a, _ = _unpack(pic, "ToPILImage")
        chw = a if a.ndim == 3 else a[None] if a.ndim == 2 else None
        if chw is None or chw.shape[0] not in (1, 3, 4):
            raise ValueError(f"ToPILImage: expects an image (C, H, W) with 1, 3 or 4 channels, "
                             f"or (H, W); got shape {a.shape}")
        if self.mode is not None and chw.shape[0] != self._MODES[self.mode]:
            raise ValueError(f"ToPILImage: mode {self.mode!r} needs {self._MODES[self.mode]} "
                             f"channels, the image has {chw.shape[0]}")
        if np.issubdtype(chw.dtype, np.floating):
            chw = (chw * 255).astype(np.uint8)  # torchvision's pic.mul(255).byte()
        hwc = np.ascontiguousarray(chw.transpose(1, 2, 0).astype(np.uint8))
        return hwc[:, :, 0] if hwc.shape[2] == 1 else hwc

    def __repr__(self) -> str:
        return f"ToPILImage(mode={self.mode})"
