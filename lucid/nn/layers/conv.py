"""Convolution layers: ``Conv1d``, ``Conv2d``, ``ConvTranspose2d`` (PyTorch-shaped weights).

A convolution layer holds a weight and an optional bias and calls ``F.conv*d`` on them::

    Conv2d:           y[n, o] = bias[o] + sum_c  weight[o, c] ⋆ x[n, g(o)·C/groups + c]
    weight            (out_channels, in_channels/groups, kh, kw)
    ConvTranspose2d   weight (in_channels, out_channels/groups, kh, kw): the adjoint map

Initialisation (PyTorch's default): ``kaiming_uniform(a=sqrt(5))``, i.e. gain
sqrt(2 / (1 + a²)) = sqrt(1/3), std = gain / sqrt(fan_in), and a uniform bound
sqrt(3)·std = **1/sqrt(fan_in)**; the bias is uniform in the same ±1/sqrt(fan_in).  fan_in is
``weight.shape[1] · kh · kw``: the inputs one output sums over (for the transposed layer,
PyTorch's formula on its weight layout, out_channels/groups · kh · kw).  Values are drawn from
``lucid.random`` (weight first, then bias), so ``lucid.random.seed`` reproduces them.
"""

from __future__ import annotations

import math
from typing import Any

from lucid import random
from lucid.nn.functional.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    fold,
    unfold,
)
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.ops.conv import ntuple
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "Unfold", "Fold"]


class _ConvNd(Module):
    """Arguments, parameters and repr shared by the convolution layers."""

    d = 2
    transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 output_padding: Any = 0, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        name, d = type(self).__name__, self.d
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels),
                            ("groups", groups)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}: {what} must be a positive int, got {value!r}")
        for what, value in (("in_channels", in_channels), ("out_channels", out_channels)):
            if value % groups:
                raise ValueError(f"{name}: {what} ({value}) must be divisible by groups "
                                 f"({groups})")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(name, "kernel_size", kernel_size, d, 1)
        self.stride = ntuple(name, "stride", stride, d, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid") or self.transposed:
                raise ValueError(f"{name}: padding={padding!r} is not supported; use an int "
                                 "or a tuple" + ("" if self.transposed else ", 'same' or "
                                                 "'valid'"))
            self.padding: Any = padding
        else:
            self.padding = ntuple(name, "padding", padding, d, 0)
        self.dilation = ntuple(name, "dilation", dilation, d, 1)
        self.output_padding = ntuple(name, "output_padding", output_padding, d, 0)

        if self.transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        bound = 1.0 / math.sqrt(shape[1] * math.prod(self.kernel_size))
        self.weight = Parameter(_uniform(bound, shape, dtype, device))
        if bias:
            self.bias = Parameter(_uniform(bound, (out_channels,), dtype, device))
        else:
            self.register_parameter("bias", None)

    def extra_repr(self) -> str:
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
               f"stride={self.stride}"
        if self.padding != (0,) * self.d:
            text += f", padding={self.padding}"
        if self.dilation != (1,) * self.d:
            text += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self.d:
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


def _uniform(bound: float, shape: tuple[int, ...], dtype: Any, device: str) -> Tensor:
    # dtype=None means the layers' default, Float32 (as for every other layer)
    return random.uniform(-bound, bound, shape, dtype=Float32 if dtype is None else dtype,
                          device=device)


class _Conv(_ConvNd):
    """What Conv1d/2d/3d share: PyTorch's arguments, and ``conv``, the function of their d."""

    conv: Any = None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, dtype=dtype, device=device)

    def forward(self, x: Tensor) -> Tensor:
        return self.conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                         self.groups)


class Conv1d(_Conv):
    """1-D convolution over (N, in_channels, L): weight (out_channels, in_channels/groups, k)."""

    d = 1
    conv = staticmethod(conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, in_channels, H, W): weight (out_channels, in_channels/groups,
    kh, kw), bias (out_channels,).  Output (N, out_channels, Ho, Wo) with
    ``Ho = (H + 2·padding - dilation·(kh - 1) - 1) // stride + 1`` (likewise Wo)."""

    d = 2
    conv = staticmethod(conv2d)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution ("deconvolution", the adjoint of Conv2d): weight
    (in_channels, out_channels/groups, kh, kw).  Output size
    ``Ho = (H - 1)·stride - 2·padding + dilation·(kh - 1) + output_padding + 1``: with
    matching arguments it undoes a Conv2d's change of shape (not of values)."""

    d = 2
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, output_padding, dtype=dtype, device=device)

    def forward(self, x: Tensor) -> Tensor:
        return conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


class Conv3d(_Conv):
    """3-D convolution over (N, in_channels, D, H, W): weight (out_channels,
    in_channels/groups, kd, kh, kw), bias (out_channels,); sizes as Conv2d's, per axis."""

    d = 3
    conv = staticmethod(conv3d)


class ConvTranspose1d(ConvTranspose2d):
    """1-D transposed convolution over (N, in_channels, L): weight (in_channels,
    out_channels/groups, k); sizes as ConvTranspose2d's."""

    d = 1

    def forward(self, x: Tensor) -> Tensor:
        return conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


class ConvTranspose3d(ConvTranspose2d):
    """3-D transposed convolution over (N, in_channels, D, H, W): weight (in_channels,
    out_channels/groups, kd, kh, kw); sizes as ConvTranspose2d's, per axis."""

    d = 3

    def forward(self, x: Tensor) -> Tensor:
        return conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


class Unfold(Module):
    """im2col as a layer: (N, C, H, W) -> (N, C·kh·kw, L) sliding windows as columns."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Unfold):
    """col2im as a layer: (N, C·kh·kw, L) -> (N, C, *output_size), overlaps added."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return fold(x, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()
