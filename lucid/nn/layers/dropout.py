"""``nn.Dropout``: active in training mode, the identity after ``.eval()``."""

from __future__ import annotations

import numbers

from lucid.nn.functional.dropout import dropout
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["Dropout"]


class Dropout(Module):
    """Zero each element with probability ``p`` during training, scaling the rest by 1/(1-p)
    (so the expected output equals the input); the identity in evaluation mode.  Masks come
    from ``lucid.random``: ``lucid.random.seed`` makes them reproducible."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be a probability in [0, 1], got {p!r}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"
