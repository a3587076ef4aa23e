"""``nn.Dropout``: active in training mode, the identity after ``.eval()``."""

from __future__ import annotations

import numbers

from lucid.nn.functional.dropout import drop_path, dropout, dropout1d, dropout2d, dropout3d
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "DropPath"]


class Dropout(Module):
    """Zero each element with probability ``p`` during training, scaling the rest by 1/(1-p)
    (so the expected output equals the input); the identity in evaluation mode.  Masks come
    from ``lucid.random``: ``lucid.random.seed`` makes them reproducible."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be a probability in [0, 1], got {p!r}")
        self.p = p
        # PyTorch's inplace=: accepted; Lucid records no in-place ops, so the result is a new
        # tensor with the same values (the input is left as it was)
        self.inplace = bool(inplace)

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(Dropout):
    """Zero whole channels of (N, C, L) with probability ``p`` during training."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout1d(x, self.p, self.training)


class Dropout2d(Dropout):
    """Zero whole feature maps of (N, C, H, W) with probability ``p`` during training."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout2d(x, self.p, self.training)


class Dropout3d(Dropout):
    """Zero whole channels of (N, C, D, H, W) with probability ``p`` during training."""

    def forward(self, x: Tensor) -> Tensor:
        return dropout3d(x, self.p, self.training)


class DropPath(Module):
    """Stochastic depth: during training, drop a sample's residual branch with probability
    ``drop_prob`` (timm's ``DropPath``; ``scale_by_keep`` rescales the kept ones)."""

    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True) -> None:
        super().__init__()
        if isinstance(drop_prob, bool) or not isinstance(drop_prob, numbers.Real) or \
                not 0.0 <= drop_prob <= 1.0:
            raise ValueError(f"DropPath: drop_prob must be a probability in [0, 1], got "
                             f"{drop_prob!r}")
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x: Tensor) -> Tensor:
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self) -> str:
        return f"drop_prob={self.drop_prob}"
