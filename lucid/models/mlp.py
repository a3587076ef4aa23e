"""A multi-layer perceptron: Linear layers with an activation between them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lucid import nn

__all__ = ["MLP"]


class MLP(nn.Sequential):
    """``MLP(784, [512, 512], 10)``: Linear -> ReLU -> ... -> Linear (logits, no activation)."""

    def __init__(self, in_features: int, hidden: Sequence[int], out_features: int,
                 activation: type[nn.Module] | None = None, dtype: Any = None,
                 device: str = "cpu") -> None:
        activation = activation or nn.ReLU
        sizes = [in_features, *hidden, out_features]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            layers.append(nn.Linear(a, b, dtype=dtype, device=device))
            if i < len(sizes) - 2:
                layers.append(activation())
        super().__init__(*layers)
