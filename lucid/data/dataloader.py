"""``DataLoader``: iterate over a dataset in (shuffled) mini-batches."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lucid import random as lucid_random
from lucid.data.dataset import Dataset, default_collate

__all__ = ["DataLoader"]


class DataLoader:
    """``DataLoader(dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
    sampler=None)``.

    Each pass (``for xb, yb in loader``) visits every sample once, ``batch_size`` at a time:

    * ``shuffle=True`` draws a fresh order for every pass from ``lucid.random``, so
      ``lucid.random.seed(n)`` makes the whole run repeatable;
    * ``sampler`` (any iterable of indices with a length, e.g. a ``DistributedSampler``)
      chooses the samples and their order instead (then ``shuffle`` must stay False);
    * ``drop_last=True`` skips a last batch smaller than ``batch_size``;
    * a batch is made by ``dataset.gather(indices)`` -- for a :class:`TensorDataset` one
      fancy-indexing step per tensor, on the tensors' device -- or, given ``collate_fn``, by
      ``collate_fn([dataset[i] for i in indices])``.
    """

    def __init__(self, dataset: Any, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False,
                 collate_fn: Callable[[list[Any]], Any] | None = None,
                 sampler: Any = None) -> None:
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"DataLoader: dataset must support len() and indexing, got "
                f"{type(dataset).__name__}"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or (
                batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be an int >= 1, got {batch_size!r}")
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last)):
            if not isinstance(flag, (bool, np.bool_)):
                raise TypeError(f"DataLoader: {name} must be True or False, got {flag!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError("DataLoader: collate_fn must be callable")
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self.shuffle = bool(shuffle)
        self.drop_last = bool(drop_last)
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler and shuffle=True both choose the order; "
                             "pass one (a DistributedSampler shuffles itself)")
        self.collate_fn = collate_fn
        self.sampler = sampler

    def __len__(self) -> int:
        """The number of batches in one pass."""
        n = len(self.dataset) if self.sampler is None else len(self.sampler)
        b = self.batch_size
        return n // b if self.drop_last else -(-n // b)

    def order(self) -> np.ndarray:
        """The sample order of a new pass: ``0..n-1``, or a permutation when shuffling."""
        if self.sampler is not None:
            return np.fromiter(self.sampler, dtype=np.int64)
        n = len(self.dataset)
        if self.shuffle:
            return lucid_random.permutation(n).numpy()
        return np.arange(n)

    def __iter__(self) -> Iterator[Any]:
        order = self.order()
        b = self.batch_size
        stop = len(self) * b
        for start in range(0, stop, b):
            yield self._batch(order[start:start + b])

    def _batch(self, indices: np.ndarray) -> Any:
        if self.collate_fn is not None:
            return self.collate_fn([self.dataset[int(i)] for i in indices])
        if isinstance(self.dataset, Dataset):
            return self.dataset.gather(indices)
        return default_collate([self.dataset[int(i)] for i in indices])

    def __repr__(self) -> str:
        return (f"DataLoader({type(self.dataset).__name__}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}, {len(self)} batches)")
