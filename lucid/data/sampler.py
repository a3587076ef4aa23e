"""Samplers: the order in which a :class:`DataLoader` visits a dataset, as PyTorch's.

A *sampler* is an iterable of sample indices; a *batch sampler* an iterable of lists of
indices (one list per batch).  ``DataLoader(ds, batch_size=32, shuffle=True)`` builds a
:class:`RandomSampler` wrapped in a :class:`BatchSampler` for you; pass ``sampler=`` or
``batch_sampler=`` to choose the order yourself:

    weights = 1 / class_counts[labels]                 # rare classes drawn as often as common
    loader = DataLoader(ds, batch_size=64,
                        sampler=WeightedRandomSampler(weights, num_samples=len(ds)))

Random orders are drawn from :mod:`lucid.random` (so ``lucid.random.seed(n)`` repeats them)
or, given ``generator=`` (a ``lucid.Generator``), from that generator.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lucid import random as lucid_random

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _numpy_rng(generator: Any) -> np.random.Generator:
    """The NumPy generator that draws for a sampler: a ``lucid.Generator``'s own (its
    ``.numpy``), a NumPy ``Generator`` itself, or -- for None -- the one behind
    :mod:`lucid.random`."""
    if generator is None:
        return lucid_random._GENERATOR  # the module's stream: lucid.random.seed repeats it
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, lucid_random.Generator):
        return generator.numpy
    raise TypeError(f"sampler: generator must be a lucid.Generator (or None for lucid.random's "
                    f"stream), got {type(generator).__name__}")


def _positive_int(who: str, name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or (
            value < 1):
        raise ValueError(f"{who}: {name} must be a positive int, got {value!r}")
    return int(value)


class Sampler:
    """Base class: define ``__iter__`` (the indices) and, where known, ``__len__``."""

    def __init__(self, data_source: Any = None) -> None:
        # PyTorch accepted (and now ignores) data_source here; so do we
        pass

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``: the order of ``shuffle=False``."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """``RandomSampler(data_source, replacement=False, num_samples=None, generator=None)``.

    Without replacement: a fresh permutation of the indices each pass (``shuffle=True``);
    with replacement: ``num_samples`` indices drawn uniformly, repeats allowed.
    ``num_samples`` (default ``len(data_source)``) may exceed the length only with
    replacement... or without it, as PyTorch: then whole permutations follow one another.
    """

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        if not isinstance(replacement, (bool, np.bool_)):
            raise TypeError(f"RandomSampler: replacement must be True or False, got "
                            f"{replacement!r}")
        self.data_source = data_source
        self.replacement = bool(replacement)
        self._num_samples = (None if num_samples is None else
                             _positive_int("RandomSampler", "num_samples", num_samples))
        self.generator = generator
        _numpy_rng(generator)  # checked now, not at the first pass

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    #: draws made at once with replacement: an "endless" sampler (makemore's
    #: ``num_samples=int(1e10)``) draws as it goes instead of holding 10^10 indices
    CHUNK = 1 << 16

    def __iter__(self) -> Iterator[int]:
        n, rng = len(self.data_source), _numpy_rng(self.generator)
        if self.replacement:
            first = rng.integers(0, n, size=min(self.num_samples, self.CHUNK)).tolist()
            if self.num_samples <= self.CHUNK:
                return iter(first)
            return self._more_draws(rng, n, first)
        full, rest = divmod(self.num_samples, n) if n else (0, 0)
        if full > 1:  # one permutation after another, each drawn when it is reached
            return self._more_permutations(rng, n, rng.permutation(n).tolist(), full, rest)
        order = [rng.permutation(n) for _ in range(full)]
        if rest:
            order.append(rng.permutation(n)[:rest])
        return iter(np.concatenate(order).tolist() if order else [])

    def _more_draws(self, rng: Any, n: int, first: list[int]) -> Iterator[int]:
        yield from first
        left = self.num_samples - len(first)
        while left > 0:
            size = min(left, self.CHUNK)
            yield from rng.integers(0, n, size=size).tolist()
            left -= size

    @staticmethod
    def _more_permutations(rng: Any, n: int, first: list[int], full: int,
                           rest: int) -> Iterator[int]:
        yield from first
        for _ in range(full - 1):
            yield from rng.permutation(n).tolist()
        if rest:
            yield from rng.permutation(n)[:rest].tolist()

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """``SubsetRandomSampler(indices, generator=None)``: the given indices, in a fresh random
    order each pass (e.g. a validation split of one dataset)."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices = list(indices)
        self.generator = generator
        _numpy_rng(generator)

    def __iter__(self) -> Iterator[int]:
        order = _numpy_rng(self.generator).permutation(len(self.indices))
        return iter([self.indices[i] for i in order])

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``WeightedRandomSampler(weights, num_samples, replacement=True, generator=None)``.

    Draws ``num_samples`` indices, index ``i`` with probability ``weights[i] / sum(weights)``
    (the weights need not sum to 1).  Without replacement each index appears at most once.
    """

    def __init__(self, weights: Any, num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        w = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights,
                       dtype=np.float64).reshape(-1)
        if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative and "
                             f"not all zero, got {np.asarray(weights).tolist()[:8]}")
        if not isinstance(replacement, (bool, np.bool_)):
            raise TypeError(f"WeightedRandomSampler: replacement must be True or False, got "
                            f"{replacement!r}")
        self.num_samples = _positive_int("WeightedRandomSampler", "num_samples", num_samples)
        if not replacement and self.num_samples > np.count_nonzero(w):
            raise ValueError(f"WeightedRandomSampler: cannot draw {self.num_samples} distinct "
                             f"indices without replacement from {np.count_nonzero(w)} non-zero "
                             "weights")
        self.weights, self.replacement, self.generator = w, bool(replacement), generator
        _numpy_rng(generator)

    def __iter__(self) -> Iterator[int]:
        rng = _numpy_rng(self.generator)
        p = self.weights / self.weights.sum()
        drawn = rng.choice(p.size, size=self.num_samples, replace=self.replacement, p=p)
        return iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """``BatchSampler(sampler, batch_size, drop_last)``: the sampler's indices in lists of
    ``batch_size``; ``drop_last=True`` drops a last, shorter list.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        self.sampler = sampler
        self.batch_size = _positive_int("BatchSampler", "batch_size", batch_size)
        if not isinstance(drop_last, (bool, np.bool_)):
            raise TypeError(f"BatchSampler: drop_last must be True or False, got {drop_last!r}")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(int(i))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n, b = len(self.sampler), self.batch_size  # type: ignore[arg-type]
        return n // b if self.drop_last else -(-n // b)
