"""lucid.utils.data: PyTorch's ``torch.utils.data``, on :mod:`lucid.data`.

    from lucid.utils.data import DataLoader, Dataset, TensorDataset, random_split

    train, val = random_split(TensorDataset(X, y), [0.8, 0.2])
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=2)

Everything here is :mod:`lucid.data`'s (one implementation, two spellings): datasets
(:class:`Dataset`, :class:`IterableDataset`, :class:`TensorDataset`, :class:`Subset`,
:class:`ConcatDataset`), :func:`random_split`, the samplers (:class:`DistributedSampler`
too), :class:`DataLoader` (with worker processes) and :func:`get_worker_info`.
"""

from lucid.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from lucid.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from lucid.data.dataloader import DataLoader
from lucid.data.distributed import DistributedSampler
from lucid.data.worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split", "default_collate", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
           "DataLoader",
           "get_worker_info", "WorkerInfo"]
