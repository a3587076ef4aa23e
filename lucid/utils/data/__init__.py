"""lucid.utils.data: PyTorch's ``torch.utils.data``, on :mod:`lucid.data`.

    from lucid.utils.data import DataLoader, Dataset, TensorDataset, random_split

    train, val = random_split(TensorDataset(X, y), [0.8, 0.2])
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=2)

Everything here is :mod:`lucid.data`'s (one implementation, two spellings): datasets
(:class:`Dataset`, :class:`IterableDataset`, :class:`TensorDataset`, :class:`Subset`,
:class:`ConcatDataset`), :func:`random_split`, the samplers (:class:`DistributedSampler`
too), :class:`DataLoader` (with worker processes) and :func:`get_worker_info`.
"""

from lucid.data import *
from lucid.data import __all__ as _data_names
from lucid.data.worker import WorkerInfo

del datasets, transforms  # noqa: F821  (torchvision's names: lucid.vision.datasets, .transforms)
__all__ = [n for n in _data_names if n not in ("datasets", "transforms")] + ["WorkerInfo"]
