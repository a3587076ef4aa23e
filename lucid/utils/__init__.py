"""lucid.utils: PyTorch's ``torch.utils`` names.  ``lucid.utils.data`` is :mod:`lucid.data`
under PyTorch's spelling (``from lucid.utils.data import DataLoader, TensorDataset``);
``lucid.utils.tensorboard.SummaryWriter`` records what a program logs (as JSON lines)."""

from lucid.utils import data, tensorboard

__all__ = ["data", "tensorboard"]
