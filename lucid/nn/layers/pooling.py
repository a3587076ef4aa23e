"""Pooling layers: ``MaxPool1d/2d``, ``AvgPool1d/2d``, ``AdaptiveAvgPool2d``.

No parameters: each layer stores its window settings and calls the matching function of
``lucid.nn.functional`` (see ``lucid/ops/conv.py`` for how the windows are computed)::

    MaxPool2d:          y[n, c, h, w] = max  of the kh x kw window at (h, w)
    AvgPool2d:          y[n, c, h, w] = mean of the kh x kw window at (h, w)
    AdaptiveAvgPool2d:  the windows are chosen so that the output is (oh, ow)

``stride`` defaults to ``kernel_size`` (windows side by side, no overlap).
"""

from __future__ import annotations

from typing import Any

from lucid.nn.functional.pooling import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "AdaptiveAvgPool2d", "AdaptiveMaxPool2d"]


class _Pool(Module):
    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_Pool):
    """Max over windows of length ``kernel_size`` along the last axis of (N, C, L)."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1) -> None:
        super().__init__(kernel_size, stride, padding)
        self.dilation = dilation

    def forward(self, x: Tensor) -> Tensor:
        return max_pool1d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", dilation={self.dilation}"


class MaxPool2d(MaxPool1d):
    """Max over kh x kw windows of (N, C, H, W); the gradient goes to each window's max."""

    def forward(self, x: Tensor) -> Tensor:
        return max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)


class AvgPool1d(_Pool):
    """Mean over windows of length ``kernel_size`` along the last axis of (N, C, L)."""

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool1d(x, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool):
    """Mean over kh x kw windows of (N, C, H, W) (zero padding counts in the mean)."""

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool2d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveAvgPool2d(Module):
    """Average-pool (N, C, H, W) to a fixed (oh, ow) for any H, W (``AdaptiveAvgPool2d(1)`` is
    global average pooling, the head of ResNet)."""

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return adaptive_avg_pool2d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool3d(MaxPool1d):
    """Max over kd x kh x kw windows of (N, C, D, H, W)."""

    def forward(self, x: Tensor) -> Tensor:
        return max_pool3d(x, self.kernel_size, self.stride, self.padding, self.dilation)


class AvgPool3d(_Pool):
    """Mean over kd x kh x kw windows of (N, C, D, H, W) (zero padding counts in the mean)."""

    def forward(self, x: Tensor) -> Tensor:
        return avg_pool3d(x, self.kernel_size, self.stride, self.padding)


class AdaptiveMaxPool2d(AdaptiveAvgPool2d):
    """Max-pool (N, C, H, W) to a fixed (oh, ow) for any H, W (PyTorch's adaptive windows;
    ``return_indices=True`` also returns where each maximum is, see
    ``F.adaptive_max_pool2d``)."""

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x: Tensor) -> Any:
        return adaptive_max_pool2d(x, self.output_size, self.return_indices)
