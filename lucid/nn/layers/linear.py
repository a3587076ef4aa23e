"""``nn.Linear``, ``nn.Identity`` and ``nn.Flatten``.

Layer weights default to ``dtype=lucid.Float32`` (as PyTorch's default float32): float32 is
what the training hot path is tuned for.  Pass ``dtype=lucid.Float64`` for gradient checks.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lucid.nn import init
from lucid.nn.functional.linear import bilinear, linear
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.ops import flatten
from lucid.tensor import Tensor
from lucid.types import Float32, as_numeric

__all__ = ["Identity", "Linear", "Bilinear", "Flatten", "Unflatten"]


def _size(layer: str, name: str, value: Any, minimum: int = 0) -> int:
    """A non-negative (or >= ``minimum``) int constructor argument."""
    if isinstance(value, bool):
        raise TypeError(f"{layer}: {name} must be an int, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{layer}: {name} must be an int, got {value!r}") from None
    if n < minimum:
        raise ValueError(f"{layer}: {name} must be >= {minimum}, got {n}")
    return n


def _parameter(layer: str, shape: tuple[int, ...], dtype: Any, device: str) -> Parameter:
    """An uninitialised Parameter of a floating-point ``dtype`` (filled by an nn.init call)."""
    numeric = as_numeric(Float32 if dtype is None else dtype)
    if not numeric.is_floating_point:
        raise TypeError(
            f"{layer}: dtype must be a floating-point type (lucid.Float32, lucid.Float64, ...) "
            f"for learnable weights, got {numeric.name}"
        )
    return Parameter(np.zeros(shape), dtype=numeric, device=device)


class Identity(Module):
    """y = x (a placeholder; arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """y = x W^T + b  with W: (out_features, in_features), b: (out_features,) -- PyTorch's layout.

    Init (PyTorch's): W ~ kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)), and
    b ~ U(-1/sqrt(in), 1/sqrt(in)).  The forward pass is one fused op (``F.linear``): one
    matmul against W's transposed *view* plus the bias add; the weight gradient comes back
    in W's own layout, so no transpose is ever copied.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.in_features = _size("Linear", "in_features", in_features)
        self.out_features = _size("Linear", "out_features", out_features)
        self.weight = _parameter("Linear", (self.out_features, self.in_features), dtype, device)
        if bias:
            self.bias = _parameter("Linear", (self.out_features,), dtype, device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.in_features
            if fan_in > 0:
                bound = 1.0 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)
            else:
                init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A_o x2 + b_o for each output o: weight (out_features, in1_features,
    in2_features), bias (out_features,) -- PyTorch's layout and init, U(-1/sqrt(in1),
    1/sqrt(in1)) for both."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.in1_features = _size("Bilinear", "in1_features", in1_features, 1)
        self.in2_features = _size("Bilinear", "in2_features", in2_features, 1)
        self.out_features = _size("Bilinear", "out_features", out_features)
        self.weight = _parameter("Bilinear", (self.out_features, self.in1_features,
                                              self.in2_features), dtype, device)
        if bias:
            self.bias = _parameter("Bilinear", (self.out_features,), dtype, device)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class Flatten(Module):
    """Flatten axes ``start_axis..end_axis`` into one (by default all but the batch axis)."""

    def __init__(self, start_axis: int = 1, end_axis: int = -1, *,
                 start_dim: int | None = None, end_dim: int | None = None) -> None:
        super().__init__()
        # start_dim= / end_dim=: PyTorch's names
        self.start_axis = start_axis if start_dim is None else start_dim
        self.end_axis = end_axis if end_dim is None else end_dim

    def forward(self, x: Tensor) -> Tensor:
        return flatten(x, self.start_axis, self.end_axis)

    def extra_repr(self) -> str:
        return f"start_axis={self.start_axis}, end_axis={self.end_axis}"


class Unflatten(Module):
    """Split axis ``dim`` into the axes of ``unflattened_size`` (the inverse of Flatten):
    (N, 12) with ``Unflatten(1, (3, 4))`` becomes (N, 3, 4)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        d = self.dim % x.ndim
        return x.reshape(x.shape[:d] + self.unflattened_size + x.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
