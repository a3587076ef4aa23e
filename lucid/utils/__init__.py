"""lucid.utils: PyTorch's ``torch.utils`` names.  ``lucid.utils.data`` is :mod:`lucid.data`
under PyTorch's spelling (``from lucid.utils.data import DataLoader, TensorDataset``)."""

from lucid.utils import data

__all__ = ["data"]
