"""``DataLoader``: iterate over a dataset in (shuffled) mini-batches, as PyTorch's."""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from lucid.data.dataset import Dataset, IterableDataset, default_collate
from lucid.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader"]


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"DataLoader: {name} must be True or False, got {value!r}")
    return bool(value)


class DataLoader:
    """``DataLoader(dataset, batch_size=1, shuffle=False, sampler=None, batch_sampler=None,
    num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
    worker_init_fn=None, multiprocessing_context=None, generator=None, *,
    prefetch_factor=None, persistent_workers=False)`` -- PyTorch's arguments, in its order.

    Each pass (``for xb, yb in loader``) visits every sample once, ``batch_size`` at a time:

    * ``shuffle=True`` draws a fresh order for every pass from ``lucid.random`` (or from
      ``generator``), so ``lucid.random.seed(n)`` makes the whole run repeatable;
    * ``drop_last=True`` skips a last batch smaller than ``batch_size``;
    * ``sampler`` (an iterable of indices) or ``batch_sampler`` (an iterable of index lists)
      choose the order instead (see :mod:`lucid.data.sampler`); ``batch_size=None`` yields the
      samples one by one, unbatched;
    * a batch is made by ``dataset.gather(indices)`` -- for a :class:`TensorDataset` one
      fancy-indexing step per tensor, on the tensors' device -- or, given ``collate_fn``, by
      ``collate_fn([dataset[i] for i in indices])``.

    ``num_workers > 0`` makes the batches in that many worker processes (see
    :mod:`lucid.data.worker`): each worker is seeded (``base_seed + worker_id``, the base drawn
    from ``lucid.random``), batches come back in the order of the sampler, and an exception in
    a worker is raised here with the worker's traceback.  Workers pay off when making a batch
    is slow Python (decoding, augmenting); a :class:`TensorDataset` already batches in one
    NumPy step, which no process can beat.  Keep datasets on "cpu" when using workers: a
    worker sends NumPy arrays back to this process.

    ``pin_memory`` (and ``pin_memory_device``) are accepted and do nothing: pinned memory
    speeds CUDA host-to-device copies, and NumPy has no device to copy to while MLX shares
    memory between CPU and GPU.
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Iterable[int] | None = None,
                 batch_sampler: Iterable[list[int]] | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        self.iterable = isinstance(dataset, IterableDataset)
        if not self.iterable and not (hasattr(dataset, "__len__")
                                      and hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"DataLoader: dataset must support len() and indexing (or be an "
                f"IterableDataset), got {type(dataset).__name__}"
            )
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(
                batch_size, numbers.Integral) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be an int >= 1 (or None: samples one "
                             f"by one), got {batch_size!r}")
        shuffle = _flag("shuffle", False if shuffle is None else shuffle)
        drop_last = _flag("drop_last", drop_last)
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError("DataLoader: collate_fn must be callable")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle; "
                             "a sampler chooses the order itself (RandomSampler shuffles)")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                             "batch_size, shuffle, sampler, and drop_last; the batch sampler "
                             "decides them all")
        if self.iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader: an IterableDataset is read in its own order: "
                             "shuffle, sampler and batch_sampler do not apply to it")
        if self.iterable and num_workers:
            raise ValueError("DataLoader: num_workers > 0 with an IterableDataset is not "
                             "supported; use num_workers=0, or a map-style Dataset")
        self.dataset = dataset
        self.batch_size = None if batch_size is None else int(batch_size)
        self.shuffle, self.drop_last = shuffle, drop_last
        self.collate_fn = collate_fn
        self.generator = generator
        if sampler is None and not self.iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        self.sampler = sampler
        if batch_sampler is not None:  # PyTorch's attributes then say "the sampler decides"
            self.batch_size, self.drop_last = None, False
        elif self.batch_size is not None and not self.iterable:
            batch_sampler = BatchSampler(sampler, self.batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self._set_workers(num_workers, timeout, worker_init_fn, multiprocessing_context,
                          prefetch_factor, persistent_workers, in_order)
        self.pin_memory = _flag("pin_memory", pin_memory)  # no effect: see the docstring
        self.pin_memory_device = pin_memory_device
        self._pool: Any = None

    def _set_workers(self, num_workers: Any, timeout: Any, worker_init_fn: Any, context: Any,
                     prefetch_factor: Any, persistent_workers: Any, in_order: Any) -> None:
        if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral) or (
                num_workers < 0):
            raise ValueError(f"DataLoader: num_workers must be an int >= 0 (0 loads in this "
                             f"process), got {num_workers!r}")
        if not isinstance(timeout, numbers.Real) or timeout < 0:
            raise ValueError(f"DataLoader: timeout must be a number >= 0 (seconds; 0 waits "
                             f"forever), got {timeout!r}")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError("DataLoader: worker_init_fn must be callable (it gets the worker id)")
        if num_workers == 0 and (prefetch_factor is not None or persistent_workers):
            raise ValueError("DataLoader: prefetch_factor and persistent_workers need "
                             "num_workers > 0 (worker processes to prefetch with or to keep)")
        if prefetch_factor is not None and (isinstance(prefetch_factor, bool) or not isinstance(
                prefetch_factor, numbers.Integral) or prefetch_factor < 1):
            raise ValueError(f"DataLoader: prefetch_factor must be an int >= 1, got "
                             f"{prefetch_factor!r}")
        self.num_workers = int(num_workers)
        self.timeout = float(timeout)
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = context
        self.prefetch_factor = 2 if prefetch_factor is None else int(prefetch_factor)
        self.persistent_workers = _flag("persistent_workers", persistent_workers)
        self.in_order = _flag("in_order", in_order)

    def __len__(self) -> int:
        """The number of batches in one pass (of samples, with ``batch_size=None``)."""
        if self.iterable:
            n = len(self.dataset)  # a TypeError when the stream has no length, as PyTorch
            b = self.batch_size
            return n if b is None else (n // b if self.drop_last else -(-n // b))
        if self.batch_sampler is not None:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]

    def order(self) -> np.ndarray:
        """The sample order of a new pass: ``0..n-1``, or a permutation when shuffling."""
        return np.fromiter(iter(self.sampler), dtype=np.int64)

    def index_batches(self) -> Iterator[Any]:
        """The indices of each batch of one pass (single indices with ``batch_size=None``)."""
        return iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def fetch(self, indices: Any) -> Any:
        """One batch: the samples at ``indices``, collated (the sample itself when unbatched)."""
        if self.batch_sampler is None:  # batch_size=None: one sample, converted only if asked
            sample = self.dataset[indices]
            return sample if self.collate_fn is None else self.collate_fn(sample)
        if self.collate_fn is not None:
            return self.collate_fn([self.dataset[int(i)] for i in indices])
        if isinstance(self.dataset, Dataset):
            return self.dataset.gather(indices)
        return default_collate([self.dataset[int(i)] for i in indices])

    def __iter__(self) -> Iterator[Any]:
        if self.iterable:
            return self._stream()
        if self.num_workers == 0:
            return (self.fetch(indices) for indices in self.index_batches())
        from lucid.data.worker import WorkerPool  # multiprocessing: loaded only when used

        return WorkerPool.iterate(self)

    def _stream(self) -> Iterator[Any]:
        """The batches of an IterableDataset: consecutive samples, collated."""
        collate = self.collate_fn or default_collate
        if self.batch_size is None:
            for sample in self.dataset:
                yield sample if self.collate_fn is None else self.collate_fn(sample)
            return
        batch: list[Any] = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield collate(batch)
                batch = []
        if batch and not self.drop_last:
            yield collate(batch)

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()

    def __repr__(self) -> str:
        workers = f", num_workers={self.num_workers}" if self.num_workers else ""
        return (f"DataLoader({type(self.dataset).__name__}, batch_size={self.batch_size}, "
                f"shuffle={self.shuffle}, drop_last={self.drop_last}{workers}, "
                f"{len(self)} batches)")

