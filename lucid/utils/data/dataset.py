"""``torch.utils.data.dataset``'s names: the datasets of :mod:`lucid.data.dataset`."""

from lucid.data.dataset import (
    ConcatDataset,
    Dataset,
    IterableDataset,
    Subset,
    TensorDataset,
    random_split,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split"]
