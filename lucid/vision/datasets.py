"""torchvision's datasets: ``MNIST``, ``FashionMNIST``, ``CIFAR10`` (from
:mod:`lucid.data.datasets`, with torchvision's ``(root, train=True, transform=None,
target_transform=None, download=False)``) and ``FakeData`` (random images: no files at all).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid.data.dataset import Dataset, _check_index
from lucid.data.datasets import CIFAR10, MNIST, FashionMNIST

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "FakeData"]


class FakeData(Dataset):
    """``FakeData(size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
    target_transform=None, random_offset=0)``: ``size`` random images and labels, for trying
    a pipeline or a model without downloading anything (torchvision's signature).

    Sample ``i`` is always the same: it is drawn from a generator seeded with
    ``i + random_offset`` (whatever ``lucid.random`` holds).  The image is a uint8 NumPy
    array ``(H, W, C)`` -- ``(H, W)`` for one channel -- as the other datasets give (where
    torchvision gives a PIL image), so ``transforms.ToTensor()`` turns it into a float Tensor
    ``(C, H, W)`` in [0, 1]; the label is an int in ``[0, num_classes)``.  The pixel values
    are not torchvision's (it draws with its own generator).
    """

    def __init__(self, size: int = 1000, image_size: Sequence[int] = (3, 224, 224),
                 num_classes: int = 10, transform: Callable | None = None,
                 target_transform: Callable | None = None, random_offset: int = 0) -> None:
        for name, value, low in (("size", size, 0), ("num_classes", num_classes, 1),
                                 ("random_offset", random_offset, 0)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"FakeData: {name} must be an int >= {low}, got {value!r}")
        shape = tuple(image_size)
        if len(shape) != 3 or not all(isinstance(s, numbers.Integral) and s > 0 for s in shape):
            raise ValueError(f"FakeData: image_size must be (C, H, W) of positive ints, got "
                             f"{image_size!r}")
        for name, fn in (("transform", transform), ("target_transform", target_transform)):
            if fn is not None and not callable(fn):
                raise TypeError(f"FakeData: {name} must be callable or None")
        self.size, self.image_size, self.num_classes = int(size), shape, int(num_classes)
        self.transform, self.target_transform = transform, target_transform
        self.random_offset = int(random_offset)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        i = _check_index(index, len(self), "FakeData")
        rng = np.random.default_rng(i + self.random_offset)
        c, h, w = self.image_size
        image = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
        if c == 1:
            image = image[:, :, 0]
        target = int(rng.integers(0, self.num_classes))
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self) -> str:
        return (f"FakeData({self.size} samples, image_size={self.image_size}, "
                f"num_classes={self.num_classes})")
