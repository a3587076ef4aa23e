"""lucid.data: datasets and mini-batch loading; real datasets and image transforms.

    ds = TensorDataset(X, y, dtype=lucid.Float)
    ds.to("gpu")
    loader = DataLoader(ds, batch_size=64, shuffle=True)   # shuffled by lucid.random.seed
    for xb, yb in loader:
        ...

    from lucid.data import datasets, transforms
    train = datasets.MNIST("~/data", download=True, transform=transforms.ToTensor())
"""

from lucid.data.dataset import (
    ConcatDataset,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from lucid.data.dataloader import DataLoader
from lucid.data.distributed import DistributedSampler
from lucid.data import datasets, transforms

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "DataLoader", "random_split",
           "default_collate", "DistributedSampler", "datasets", "transforms"]
