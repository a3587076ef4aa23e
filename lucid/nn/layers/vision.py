"""``nn.Upsample``, ``nn.PixelShuffle``, ``nn.PixelUnshuffle``: the functions as layers."""

from __future__ import annotations

from typing import Any

from lucid.nn.functional.vision import interpolate, pixel_shuffle, pixel_unshuffle
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["Upsample", "PixelShuffle", "PixelUnshuffle"]


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


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r): see ``F.pixel_shuffle``.  No parameters."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W): see ``F.pixel_unshuffle``.  No parameters."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
