"""``nn.Upsample``: ``F.interpolate`` as a layer."""

from __future__ import annotations

from typing import Any

from lucid.nn.functional.vision import interpolate
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["Upsample"]


class Upsample(Module):
    """Resample the spatial axes to ``size`` or by ``scale_factor`` ("nearest", "linear",
    "bilinear" or "trilinear"; PyTorch's index formulas, see ``F.interpolate``).  No
    parameters; the arguments are PyTorch's, with the same defaults."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = scale_factor
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                           self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"size={self.size}" if self.size is not None else \
            f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"
