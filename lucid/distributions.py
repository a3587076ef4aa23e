"""``lucid.distributions``: PyTorch's ``Categorical``, ``Bernoulli`` and ``Normal`` -- what
REINFORCE and actor-critic programs sample actions with, and what a VAE's loss can be
written with -- composed of Lucid ops, so ``log_prob`` and ``rsample`` carry gradients.
Draws come from ``lucid.random`` (``lucid.manual_seed`` makes them reproducible).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid import ops, random
from lucid.tensor import Tensor

__all__ = ["Distribution", "Categorical", "Bernoulli", "Normal", "kl_divergence"]


def _tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(np.asarray(value, dtype=np.float64))


class Distribution:
    """The shared interface: ``sample``, ``log_prob``, ``entropy``, ``mean``."""

    def sample(self, sample_shape: Any = ()) -> Tensor:
        raise NotImplementedError

    def log_prob(self, value: Any) -> Tensor:
        raise NotImplementedError


class Categorical(Distribution):
    """K outcomes with probabilities ``probs`` (normalised along the last axis) or
    ``logits`` (log-probabilities up to a constant): P(i) = softmax(logits)_i."""

    def __init__(self, probs: Any = None, logits: Any = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Categorical: give probs or logits (one of them)")
        if probs is not None:
            probs = _tensor(probs)
            self.probs = probs / probs.sum(axis=-1, keepdims=True)
            self.logits = ops.log(self.probs)
        else:
            logits = _tensor(logits)
            self.logits = logits - ops.logsumexp(logits, axis=-1, keepdims=True)
            self.probs = ops.exp(self.logits)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Outcome indices (Int64) of shape ``sample_shape + batch shape``."""
        shape = tuple(sample_shape) if isinstance(sample_shape, (tuple, list)) else \
            (int(sample_shape),)
        p = self.probs.detach().numpy().astype(np.float64)
        k = p.shape[-1]
        flat = p.reshape(-1, k)
        n = int(np.prod(shape)) if shape else 1
        u = random.rand(n, flat.shape[0], dtype="float64").numpy()  # one uniform per draw
        cdf = np.cumsum(flat, axis=1)
        cdf /= cdf[:, -1:]
        picks = (u[..., None] > cdf[None]).sum(-1).clip(0, k - 1)  # inverse CDF
        return Tensor(picks.reshape(shape + p.shape[:-1]).astype(np.int64))

    def log_prob(self, value: Any) -> Tensor:
        """log P(value) for outcome indices ``value``."""
        idx = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
        logits = self.logits
        if logits.ndim == 1:
            return logits[idx]
        shape = tuple(idx.shape)
        idx = idx.reshape(-1, 1) if idx.ndim else idx.reshape(1, 1)
        return ops.gather(logits.reshape(-1, logits.shape[-1]), 1, idx).reshape(shape)

    def entropy(self) -> Tensor:
        return -(self.probs * self.logits).sum(axis=-1)


class Bernoulli(Distribution):
    """1 with probability ``probs`` (or sigmoid(``logits``)), else 0."""

    def __init__(self, probs: Any = None, logits: Any = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Bernoulli: give probs or logits (one of them)")
        self.probs = _tensor(probs) if probs is not None else ops.sigmoid(_tensor(logits))

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = tuple(sample_shape) + tuple(self.probs.shape)
        u = random.rand(*shape, dtype="float64").numpy() if shape else \
            random.rand(1, dtype="float64").numpy()[0]
        return Tensor((u < self.probs.detach().numpy()).astype(np.float64))

    def log_prob(self, value: Any) -> Tensor:
        v = _tensor(value)
        eps = 1e-12
        return v * ops.log(self.probs + eps) + (1 - v) * ops.log(1 - self.probs + eps)

    def entropy(self) -> Tensor:
        p = self.probs
        return -(p * ops.log(p) + (1 - p) * ops.log(1 - p))


class Normal(Distribution):
    """N(loc, scale^2): density exp(-(x - loc)^2 / (2 scale^2)) / (scale sqrt(2 pi))."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self.loc, self.scale = _tensor(loc), _tensor(scale)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def _shape(self, sample_shape: Any) -> tuple[int, ...]:
        batch = np.broadcast_shapes(tuple(self.loc.shape), tuple(self.scale.shape))
        return tuple(sample_shape) + tuple(batch)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + scale * eps, eps ~ N(0, 1): the reparameterised draw (gradients reach loc
        and scale)."""
        shape = self._shape(sample_shape)
        eps = random.randn(*shape, dtype="float64") if shape else random.randn(1)[0]
        return self.loc + self.scale * eps

    def log_prob(self, value: Any) -> Tensor:
        v = _tensor(value)
        return (-((v - self.loc) ** 2) / (2 * self.scale ** 2) - ops.log(self.scale)
                - 0.5 * math.log(2 * math.pi))

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + ops.log(self.scale)


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) for two Normals or two Categoricals, in closed form."""
    if isinstance(p, Normal) and isinstance(q, Normal):
        var_ratio = (p.scale / q.scale) ** 2
        t1 = ((p.loc - q.loc) / q.scale) ** 2
        return 0.5 * (var_ratio + t1 - 1 - ops.log(var_ratio))
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        return (p.probs * (p.logits - q.logits)).sum(axis=-1)
    raise NotImplementedError(f"kl_divergence: no closed form here for {type(p).__name__} and "
                              f"{type(q).__name__} (Normal-Normal and Categorical-Categorical)")
