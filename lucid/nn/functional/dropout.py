"""``F.dropout``: inverted dropout, seeded by ``lucid.random``."""

from __future__ import annotations

import numbers

from lucid import random
from lucid.tensor import Tensor

__all__ = ["dropout"]


def dropout(x: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the survivors by 1 / (1 - p).

        y = x ⊙ m / (1 - p),   m_i ~ Bernoulli(1 - p)   (E[y] = x: "inverted" dropout)
        dL/dx = g ⊙ m / (1 - p)

    The mask is drawn from ``lucid.random`` (so ``lucid.random.seed`` makes it reproducible)
    and is a constant of the graph: the product is one ``mul`` op.  Outside training (or with
    p = 0) ``x`` is returned unchanged.
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be a probability in [0, 1], got {p!r}")
    if not isinstance(x, Tensor):
        raise TypeError(f"dropout: expected a Tensor, got {type(x).__name__}")
    if not training or p == 0.0:
        return x
    if not x.dtype.is_floating_point:
        raise TypeError(
            f"dropout: needs a floating-point tensor, got {x.dtype.name} (shape {x.shape}); "
            "convert it with .astype(lucid.Float32)"
        )
    if p == 1.0:
        return x * 0.0  # every element dropped (the scale 1 / (1 - p) would divide by 0)
    keep = random.bernoulli(1.0 - p, size=x.shape, dtype=x.dtype, device=x.device)
    return x * (keep * (1.0 / (1.0 - p)))
