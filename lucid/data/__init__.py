"""lucid.data: datasets and mini-batch loading; real datasets and image transforms.

    ds = TensorDataset(X, y, dtype=lucid.Float)
    ds.to("gpu")
    loader = DataLoader(ds, batch_size=64, shuffle=True)   # shuffled by lucid.random.seed
    for xb, yb in loader:
        ...
    DataLoader(slow_ds, batch_size=64, num_workers=2)      # batches made in 2 processes

    from lucid.data import datasets, transforms
    train = datasets.MNIST("~/data", download=True, transform=transforms.ToTensor())
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
from lucid.data.worker import get_worker_info
from lucid.data import datasets, transforms

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "DataLoader", "random_split", "default_collate", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DistributedSampler", "get_worker_info", "datasets", "transforms"]
