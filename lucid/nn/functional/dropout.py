"""``F.dropout``: inverted dropout, seeded by ``lucid.random``."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from lucid import random
from lucid.tensor import Tensor

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "drop_path"]


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


def _check_p(fn: str, p: Any) -> None:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}: p must be a probability in [0, 1], got {p!r}")


def _masked(fn: str, x: Tensor, p: float, mask_shape: tuple[int, ...], scale: bool) -> Tensor:
    """``x`` times a Bernoulli(1 - p) mask of ``mask_shape`` (broadcast over the rest),
    divided by (1 - p) when ``scale``."""
    if not x.dtype.is_floating_point:
        raise TypeError(f"{fn}: needs a floating-point tensor, got {x.dtype.name} (shape "
                        f"{x.shape}); convert it with .astype(lucid.Float32)")
    if p == 1.0:
        return x * 0.0
    keep = random.bernoulli(1.0 - p, size=mask_shape, dtype=x.dtype, device=x.device)
    return x * (keep * (1.0 / (1.0 - p)) if scale else keep)


def _channel_dropout(fn: str, x: Tensor, p: float, training: bool, spatial: int) -> Tensor:
    """Zero whole channels: (N, C, *S) or (C, *S) with ``spatial`` axes in S."""
    _check_p(fn, p)
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(x).__name__}")
    lead = x.ndim - spatial  # N, C (or C)
    if x.ndim not in (spatial + 1, spatial + 2):
        if spatial == 1 or x.ndim < 2:
            raise ValueError(f"{fn}: expected a (N, C, {spatial} spatial) or (C, {spatial} "
                             f"spatial) input, got shape {x.shape}")
        # PyTorch's dropout2d/3d take any (N, C, ...) with a warning: one draw per sample
        # and channel (on (N, C) that is plain dropout, element by element)
        warnings.warn(f"{fn}: received a {x.ndim}-D input; expected (N, C, "
                      f"{spatial} spatial) or (C, {spatial} spatial). Dropping whole "
                      "(sample, channel) entries as PyTorch does; use F.dropout for a 2-D "
                      "input", UserWarning, stacklevel=3)
        lead = 2
    if not training or p == 0.0:
        return x
    return _masked(fn, x, p, tuple(x.shape[:lead]) + (1,) * (x.ndim - lead), True)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero whole channels of (N, C, L) or (C, L) with probability ``p`` (one draw per sample
    and channel), scaling the rest by 1 / (1 - p)."""
    return _channel_dropout("dropout1d", input, p, training, 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero whole feature maps of (N, C, H, W) or (C, H, W) with probability ``p`` (PyTorch's
    Dropout2d), scaling the rest by 1 / (1 - p).  A 3-D input is one unbatched (C, H, W)
    image: the behaviour PyTorch announces; PyTorch itself still warns and treats it as
    (N, C, L) for now."""
    return _channel_dropout("dropout2d", input, p, training, 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability ``p``, scaling
    the rest by 1 / (1 - p)."""
    return _channel_dropout("dropout3d", input, p, training, 3)


def drop_path(x: Tensor, drop_prob: float = 0.0, training: bool = False,
              scale_by_keep: bool = True) -> Tensor:
    """Stochastic depth (timm's ``drop_path``): drop the whole residual branch ``x`` of a
    sample with probability ``drop_prob`` (one draw per sample, the first axis), scaling the
    kept ones by 1 / (1 - drop_prob) when ``scale_by_keep``."""
    _check_p("drop_path", drop_prob)
    if not training or drop_prob == 0.0:
        return x
    return _masked("drop_path", x, drop_prob, (x.shape[0],) + (1,) * (x.ndim - 1),
                   scale_by_keep)
