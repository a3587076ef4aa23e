"""``DistributedSampler``: each rank its own share of a dataset's indices.

Data-parallel training gives every rank a different part of every epoch.  The sampler deals
the (shuffled) indices round the ranks like cards: rank r takes positions r, r + N, r + 2N, ...
The shards are disjoint, and together they cover the dataset.  When the dataset does not
split evenly, the list is first padded with its own first indices (so every rank takes the
same number of steps -- a rank that ran out early would leave the others waiting in an
all-reduce), or, with ``drop_last=True``, trimmed.  These are PyTorch's rules.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from lucid import distributed as dist

__all__ = ["DistributedSampler"]


class DistributedSampler:
    """``DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
    drop_last=False)``: the indices of ``dataset`` that rank ``rank`` of ``num_replicas``
    visits in one epoch (defaults: this process's rank and world size).

    ``shuffle=True`` permutes with a generator seeded by ``seed + epoch``, the same on every
    rank; call ``set_epoch(epoch)`` before each epoch for a new order.  Give it to a
    ``DataLoader(dataset, batch_size, sampler=sampler)``.
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if not (isinstance(num_replicas, int) and num_replicas >= 1):
            raise ValueError(f"DistributedSampler: num_replicas must be an int >= 1, got "
                             f"{num_replicas!r}")
        if not (isinstance(rank, int) and 0 <= rank < num_replicas):
            raise ValueError(f"DistributedSampler: rank must be in 0..{num_replicas - 1}, got "
                             f"{rank!r}")
        self.dataset = dataset
        self.num_replicas, self.rank = num_replicas, rank
        self.shuffle, self.seed, self.drop_last = bool(shuffle), int(seed), bool(drop_last)
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Shuffle differently in epoch ``epoch`` (the same way on every rank)."""
        self.epoch = int(epoch)

    def indices(self) -> np.ndarray:
        """This rank's indices for the current epoch."""
        n = len(self.dataset)
        if self.shuffle:
            order = np.random.default_rng(self.seed + self.epoch).permutation(n)
        else:
            order = np.arange(n)
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:  # pad with the first indices, repeated if need be
            order = np.resize(order, self.total_size)
        return order[self.rank:self.total_size:self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices().tolist())

    def __len__(self) -> int:
        return self.num_samples

    def __repr__(self) -> str:
        return (f"DistributedSampler(rank {self.rank} of {self.num_replicas}, "
                f"{self.num_samples} samples, shuffle={self.shuffle}, epoch={self.epoch})")
