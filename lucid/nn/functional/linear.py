"""``F.linear(x, weight, bias=None)``: y = x @ weight.T + bias, one fused op.

``weight`` has PyTorch's layout (out_features, in_features).  The op (``lucid.ops.linalg.Linear``)
computes ``x @ weight.T`` without copying the transpose and returns dL/dW directly in
``weight``'s layout (G^T X), so nothing is transposed in the training step's hot path.
"""

from __future__ import annotations

from lucid.ops import linear

__all__ = ["linear"]
