"""torchvision's ``transforms.v2`` for one image at a time: every transform of
:mod:`lucid.vision.transforms`, plus ``ToImage`` and ``ToDtype``, v2's replacement for
``ToTensor``:

    tf = v2.Compose([v2.ToImage(), v2.ToDtype(lucid.float32, scale=True),
                     v2.Normalize((0.5,), (0.5,))])

(v2's joint transforms of an image with its boxes or masks are not provided: a transform here
takes and returns one image.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.tensor import Tensor
from lucid.types import as_numeric
from lucid.vision.transforms import *  # noqa: F403  (v2 keeps v1's transforms)
from lucid.vision.transforms import __all__ as _V1

__all__ = [*_V1, "ToImage", "ToDtype"]


class ToImage:
    """A NumPy image ``(H, W[, C])`` -> a Tensor ``(C, H, W)`` of the same dtype (uint8 stays
    uint8: scaling is ``ToDtype``'s job).  A Tensor passes through."""

    def __call__(self, pic: Any) -> Tensor:
        if isinstance(pic, Tensor):
            return pic
        if not isinstance(pic, np.ndarray) or pic.ndim not in (2, 3):
            raise TypeError(f"ToImage: expects a NumPy image (H, W) or (H, W, C), got "
                            f"{type(pic).__name__} {getattr(pic, 'shape', '')}")
        return Tensor(np.ascontiguousarray(pic[None] if pic.ndim == 2 else
                                           pic.transpose(2, 0, 1)))

    def __repr__(self) -> str:
        return "ToImage()"


class ToDtype:
    """``ToDtype(dtype, scale=False)``: convert a Tensor image's dtype; with ``scale=True`` an
    integer image's range ``[0, max]`` (255 for uint8) becomes ``[0, 1]`` in a float dtype,
    as torchvision's."""

    def __init__(self, dtype: Any, scale: bool = False) -> None:
        self.dtype = as_numeric(dtype)
        self.scale = bool(scale)

    def __call__(self, img: Tensor) -> Tensor:
        if not isinstance(img, Tensor):
            raise TypeError(f"ToDtype: expects a Tensor image, got {type(img).__name__}; apply "
                            "ToImage() first")
        a = img.numpy()
        if self.scale and np.issubdtype(a.dtype, np.integer) and self.dtype.is_floating_point:
            a = a / np.iinfo(a.dtype).max
        return Tensor(a, dtype=self.dtype, device=img.device)

    def __repr__(self) -> str:
        return f"ToDtype({self.dtype.name}, scale={self.scale})"
