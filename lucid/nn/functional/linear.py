"""``F.linear(x, weight, bias=None)``: y = x @ weight.T + bias, one fused op.

``weight`` has PyTorch's layout (out_features, in_features).  The op
(``lucid.ops.contraction.Linear``) computes ``x @ weight.T`` without copying the transpose and
returns dL/dW directly in ``weight``'s layout (G^T X), so nothing is transposed in the training
step's hot path.
"""

from __future__ import annotations

from typing import Any

from lucid.ops import einsum, linear
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["linear", "bilinear"]


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Any = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]
    (PyTorch's ``F.bilinear``: weight (out, in1, in2), bias (out,)); one ``einsum``."""
    if weight.ndim != 3:
        raise ValueError(f"bilinear: weight must be (out, in1, in2), got shape "
                         f"{fmt(weight.shape)}")
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2] or \
            input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"bilinear: inputs {fmt(input1.shape)} and {fmt(input2.shape)} do not "
                         f"fit weight {fmt(weight.shape)}: the last axes must be "
                         f"{weight.shape[1]} and {weight.shape[2]}, the others equal")
    if bias is not None and (not isinstance(bias, Tensor) or bias.shape != (weight.shape[0],)):
        got = fmt(bias.shape) if isinstance(bias, Tensor) else type(bias).__name__
        raise ValueError(f"bilinear: bias must be a Tensor of shape ({weight.shape[0]},) for "
                         f"weight {fmt(weight.shape)}, got {got}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias
