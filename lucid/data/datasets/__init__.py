"""lucid.data.datasets: real image datasets, classroom sequence tasks and a shipped text.

* :class:`MNIST`, :class:`FashionMNIST`, :class:`CIFAR10` -- torchvision's signature
  ``(root, train=True, transform=None, target_transform=None, download=False)``; files
  checked by MD5, downloaded from ``mirrors`` when asked, read offline from ``root``.
* :class:`CopyTask`, :class:`ReverseTask`, :class:`SortTask`, :class:`AdditionTask` --
  token sequences (input, target) for an embedding + RNN/Transformer.
* :func:`tiny_shakespeare` and :class:`CharDataset` -- character-level language modelling.
"""

from lucid.data.datasets.vision import CIFAR10, MNIST, FashionMNIST, read_idx
from lucid.data.datasets.sequences import (
    AdditionTask,
    CopyTask,
    ReverseTask,
    SequenceTask,
    SortTask,
)
from lucid.data.datasets.text import CharDataset, tiny_shakespeare

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "read_idx", "SequenceTask", "CopyTask",
           "ReverseTask", "SortTask", "AdditionTask", "tiny_shakespeare", "CharDataset"]
