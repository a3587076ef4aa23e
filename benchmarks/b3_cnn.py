"""B3: one CNN training step, lucid on NumPy vs PyTorch CPU, with peak memory.

The network (a small MNIST classifier)::

    conv 1->32 3x3 pad 1, ReLU, maxpool 2,  conv 32->64 3x3 pad 1, ReLU, maxpool 2,
    flatten, linear 3136->10,  cross-entropy;   batch 64 of 1x28x28, float32

See ``train_step.py`` for how the step, its time and its peak memory are measured.
"""

from __future__ import annotations

import sys

import numpy as np

import lucid
import lucid.nn as nn
from benchmarks import train_step

BATCH = 64


def data(batch: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    return x, rng.integers(0, 10, batch)


def lucid_model():
    lucid.random.seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 10),
    )


def torch_model(torch):
    tnn = torch.nn
    return tnn.Sequential(
        tnn.Conv2d(1, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(32, 64, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Flatten(), tnn.Linear(3136, 10),
    )


def run(quick: bool = False):
    return train_step.compare(sys.modules[__name__], "B3 CNN train step, batch 64 1x28x28 f32",
                              "lucid <= 2x torch", quick)
