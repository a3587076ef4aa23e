"""Datasets: indexable collections of samples.

* :class:`Dataset` -- the interface: ``len(ds)`` and ``ds[i]`` (one sample), plus ``gather``
  (a whole batch at once; by default one sample at a time, collated).
* :class:`TensorDataset` -- samples are rows of tensors that share their first dimension:
  ``TensorDataset(X, y)[i] == (X[i], y[i])``.  Its ``gather`` picks a batch's rows from each
  tensor with *one* fancy-indexing step, the fast path :class:`DataLoader` takes.
* :class:`Subset` and :func:`random_split` -- views of a dataset through a list of indices.
* :class:`ConcatDataset` -- several datasets one after another, as one.
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from lucid import random as lucid_random
from lucid.backends import get_backend
from lucid.data.sampler import _numpy_rng
from lucid.engine.mode import grad_enabled
from lucid.ops import stack
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "default_collate"]


class Dataset:
    """Base class of datasets: define ``__len__`` and ``__getitem__(i)`` (one sample)."""

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def gather(self, indices: Sequence[int] | np.ndarray) -> Any:
        """The samples at ``indices``, collated into one batch.

        This default fetches them one at a time and stacks them (:func:`default_collate`);
        datasets that can fetch a batch in one step (:class:`TensorDataset`) override it.
        """
        return default_collate([self[int(i)] for i in indices])


class IterableDataset(Dataset):
    """A dataset read as a stream: define ``__iter__`` (yielding samples), no ``[i]``.

    For data that is generated or read sequentially (a text file line by line, an endless
    sampler).  ``DataLoader(stream, batch_size=32)`` collates consecutive samples; there is
    no shuffling, sampler or ``len`` (unless you define ``__len__``).
    """

    def __iter__(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __len__(self) -> int:
        # a TypeError (not NotImplementedError): list(loader) then simply does not pre-size
        raise TypeError(f"{type(self).__name__} is an IterableDataset with no __len__")

    def __getitem__(self, index: int) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it has no [i]; iterate "
                        "over it (for sample in dataset) or give it to a DataLoader")


def _index_array(indices: Any, n: int, who: str) -> np.ndarray:
    """Batch indices as an int64 array, each checked to lie in [-n, n) (MLX does not check)."""
    idx = np.asarray(indices)
    if idx.dtype == bool or not (idx.size == 0 or np.issubdtype(idx.dtype, np.integer)):
        raise TypeError(f"{who}: indices must be integers, got {idx.dtype}")
    idx = idx.astype(np.int64, copy=False).reshape(-1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(f"{who}: index {bad} is out of range for a dataset of {n} samples")
    return np.where(idx < 0, idx + n, idx)


def _check_index(index: Any, n: int, who: str) -> int:
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"{who}: a sample index must be an int, got {type(index).__name__}")
    index = int(index)
    if not -n <= index < n:
        raise IndexError(f"{who}: index {index} is out of range for a dataset of {n} samples")
    return index + n if index < 0 else index


def _rows(t: Tensor, index: int | np.ndarray) -> Tensor:
    """``t[index]`` along axis 0 -- straight on the backend array (no graph, no checks)
    unless ``t`` takes part in autograd."""
    if t.requires_grad and grad_enabled():
        return t[index] if isinstance(index, int) else t[Tensor(index, device=t.device)]
    backend = get_backend(t.device)
    if isinstance(index, int):
        data = t._data[index]
    else:
        data = backend.xp.take(t._data, backend.asarray(index), axis=0)
    out = Tensor._wrap(data, t.device)
    out._dtype = t._dtype
    return out


class TensorDataset(Dataset):
    """``TensorDataset(*tensors, dtype=None)``: sample ``i`` is ``(t[i] for t in tensors)``.

    Each argument is a Tensor, a NumPy array or a (nested) list; all must have the same length
    (first dimension).  ``dtype`` converts every one of them (as Lucid 2.x:
    ``TensorDataset(X, y, dtype=lucid.Float)``).  ``ds.to("gpu")`` moves them all and returns
    the dataset, so batches come out on that device.
    """

    def __init__(self, *tensors: Any, dtype: Any = None) -> None:
        if not tensors:
            raise ValueError("TensorDataset: give at least one tensor")
        converted = []
        for i, t in enumerate(tensors):
            if isinstance(t, Tensor):
                if dtype is not None:
                    t = t.astype(dtype)
            else:
                t = Tensor(t, dtype=dtype)
            if t.ndim == 0:
                raise ValueError(
                    f"TensorDataset: tensor {i} is 0-d; every tensor needs a first dimension "
                    "indexing the samples"
                )
            converted.append(t)
        lengths = {t.shape[0] for t in converted}
        if len(lengths) > 1:
            shapes = ", ".join(fmt(t.shape) for t in converted)
            raise ValueError(
                f"TensorDataset: all tensors must have the same first dimension (the number "
                f"of samples), got shapes {shapes}"
            )
        self.tensors: tuple[Tensor, ...] = tuple(converted)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def __getitem__(self, index: int | slice) -> tuple[Tensor, ...]:
        """Sample ``index``, or with a slice (``ds[:64]``) those samples, stacked: each
        tensor's rows, as PyTorch's TensorDataset gives them."""
        if isinstance(index, slice):
            return self.gather(np.arange(len(self))[index])
        i = _check_index(index, len(self), "TensorDataset")
        return tuple(_rows(t, i) for t in self.tensors)

    def gather(self, indices: Sequence[int] | np.ndarray) -> tuple[Tensor, ...]:
        """A batch: every tensor indexed by ``indices`` in one step (``X[idx], y[idx]``)."""
        idx = _index_array(indices, len(self), "TensorDataset.gather")
        return tuple(_rows(t, idx) for t in self.tensors)

    def to(self, device: str) -> TensorDataset:
        """Move every tensor to ``device``; returns the dataset itself."""
        self.tensors = tuple(t.to(device) for t in self.tensors)
        return self

    @property
    def device(self) -> str:
        devices = {t.device for t in self.tensors}
        return devices.pop() if len(devices) == 1 else "mixed"

    def __repr__(self) -> str:
        shapes = ", ".join(f"{fmt(t.shape)} {t.dtype.name}" for t in self.tensors)
        return f"TensorDataset({len(self)} samples: {shapes}; device={self.device!r})"


class Subset(Dataset):
    """``Subset(dataset, indices)``: the samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int] | np.ndarray) -> None:
        self.dataset = dataset
        self.indices = _index_array(indices, len(dataset), "Subset")

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: int) -> Any:
        i = _check_index(index, len(self), "Subset")
        return self.dataset[int(self.indices[i])]

    def gather(self, indices: Sequence[int] | np.ndarray) -> Any:
        idx = self.indices[_index_array(indices, len(self), "Subset.gather")]
        if isinstance(self.dataset, Dataset):
            return self.dataset.gather(idx)
        return default_collate([self.dataset[int(i)] for i in idx])

    def __repr__(self) -> str:
        return f"Subset({len(self)} of {len(self.dataset)} samples)"


class ConcatDataset(Dataset):
    """``ConcatDataset(datasets)``: the samples of each dataset in turn, as one dataset.

    ``cumulative_sizes[k]`` is the number of samples in datasets ``0..k``; sample ``i`` comes
    from the first dataset ``k`` with ``i < cumulative_sizes[k]``, at position
    ``i - cumulative_sizes[k - 1]``.  Negative indices count from the end, as in a list.
    (PyTorch raises ValueError for a negative index beyond the length; Lucid raises
    IndexError for any index out of range, as its other datasets do.)

        train = ConcatDataset([TensorDataset(X1, y1), TensorDataset(X2, y2)])
    """

    def __init__(self, datasets: Sequence[Any]) -> None:
        if isinstance(datasets, Dataset) or not isinstance(datasets, Iterable):
            raise TypeError(f"ConcatDataset: datasets must be a list of datasets, got "
                            f"{type(datasets).__name__}; wrap one in a list")
        self.datasets: list[Any] = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable; give "
                             "at least one dataset")
        for i, ds in enumerate(self.datasets):
            if not (hasattr(ds, "__len__") and hasattr(ds, "__getitem__")):
                raise TypeError(f"ConcatDataset: dataset {i} is of type {type(ds).__name__}, which "
                                "has no len() and [i]; give datasets (or lists)")
        self.cumulative_sizes: list[int] = np.cumsum([len(ds) for ds in self.datasets],
                                                     dtype=np.int64).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        n = len(self)
        i = _check_index(index, n, f"ConcatDataset of {len(self.datasets)} datasets")
        k = bisect.bisect_right(self.cumulative_sizes, i)
        return self.datasets[k][i - (self.cumulative_sizes[k - 1] if k else 0)]

    def __repr__(self) -> str:
        sizes = ", ".join(str(len(ds)) for ds in self.datasets)
        return f"ConcatDataset({len(self)} samples from {len(self.datasets)} datasets: {sizes})"


def random_split(dataset: Any, lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random :class:`Subset` s.

    ``lengths`` are sample counts summing to ``len(dataset)``, or fractions summing to 1
    (``[0.8, 0.2]``): each part gets ``floor(fraction * n)`` samples and the leftover ones go,
    one each, to the first parts.  The order comes from ``lucid.random``, so
    ``lucid.random.seed`` makes the split reproducible -- or, given ``generator``, from that
    generator (PyTorch's ``generator=torch.Generator().manual_seed(42)``).
    """
    n = len(dataset)
    lengths = list(lengths)
    if not lengths:
        raise ValueError("random_split: give at least one length")
    if all(isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in lengths):
        counts = [int(x) for x in lengths]
        if any(c < 0 for c in counts) or sum(counts) != n:
            raise ValueError(
                f"random_split: lengths {counts} must be non-negative and sum to the dataset's "
                f"length {n}"
            )
    elif all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in lengths):
        if any(not 0 <= x <= 1 for x in lengths) or not math.isclose(sum(lengths), 1.0,
                                                                     abs_tol=1e-6):
            raise ValueError(
                f"random_split: fractions {lengths} must each lie in [0, 1] and sum to 1"
            )
        counts = [math.floor(n * x) for x in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
    else:
        raise TypeError(f"random_split: lengths must be ints or fractions, got {lengths!r}")
    if generator is None:
        order = lucid_random.permutation(n).numpy()
    else:
        order = _numpy_rng(generator).permutation(n)
    bounds = np.cumsum([0, *counts])
    return [Subset(dataset, order[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def default_collate(samples: Sequence[Any]) -> Any:
    """Stack a list of samples into a batch, keeping their structure.

    Tensors are stacked along a new first axis (on their device); numbers and NumPy arrays
    become a Tensor; tuples/lists are collated position by position (a tuple comes back),
    dicts key by key; strings stay a list.
    """
    if not samples:
        raise ValueError("default_collate: no samples to collate")
    first = samples[0]
    if isinstance(first, Tensor):
        return _stack(samples)
    if isinstance(first, (np.ndarray, np.generic, numbers.Number)):
        arrays = [np.asarray(s) for s in samples]
        _same_shapes([a.shape for a in arrays])
        return Tensor(np.stack(arrays))
    if isinstance(first, str):
        return list(samples)
    if isinstance(first, dict):
        keys = list(first)
        if any(not isinstance(s, dict) or list(s) != keys for s in samples):
            raise ValueError(f"default_collate: samples are dicts with different keys: "
                             f"expected {keys}")
        return {k: default_collate([s[k] for s in samples]) for k in keys}
    if isinstance(first, (tuple, list)):
        if any(not isinstance(s, (tuple, list)) or len(s) != len(first) for s in samples):
            raise ValueError(
                f"default_collate: samples have different lengths (the first has {len(first)} "
                "fields); every sample must have the same structure"
            )
        return tuple(default_collate(list(col)) for col in zip(*samples))
    raise TypeError(
        f"default_collate: cannot batch samples of type {type(first).__name__}; return "
        "Tensors, arrays, numbers, or tuples/dicts of them, or pass collate_fn"
    )


def _same_shapes(shapes: list[tuple[int, ...]]) -> None:
    if len(set(shapes)) > 1:
        raise ValueError(
            "default_collate: samples of different shapes cannot be stacked into one batch: "
            + ", ".join(fmt(s) for s in dict.fromkeys(shapes))
        )


def _stack(tensors: Sequence[Tensor]) -> Tensor:
    devices = {t.device for t in tensors if isinstance(t, Tensor)}
    if len(devices) != 1 or not all(isinstance(t, Tensor) for t in tensors):
        raise ValueError(f"default_collate: samples mix devices or types ({sorted(devices)})")
    _same_shapes([t.shape for t in tensors])
    if any(t.requires_grad for t in tensors) and grad_enabled():
        return stack(list(tensors))  # the differentiable op
    first = tensors[0]
    xp = get_backend(first.device).xp
    out = Tensor._wrap(xp.stack([t._data for t in tensors]), first.device)
    out._dtype = first._dtype
    return out
