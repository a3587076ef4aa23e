"""B2: one MLP training step (784-512-512-10, ReLU, cross-entropy, batch 128, SGD, float32),
lucid on NumPy vs PyTorch CPU, with peak memory.  See ``train_step.py`` for the method."""

from __future__ import annotations

import sys

import numpy as np

import lucid
import lucid.nn as nn
from benchmarks import train_step

BATCH = 128


def data(batch: int):
    rng = np.random.default_rng(0)
    return rng.standard_normal((batch, 784)).astype(np.float32), rng.integers(0, 10, batch)


def lucid_model():
    lucid.random.seed(0)
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                         nn.Linear(512, 10))


def torch_model(torch):
    tnn = torch.nn
    return tnn.Sequential(tnn.Linear(784, 512), tnn.ReLU(), tnn.Linear(512, 512), tnn.ReLU(),
                          tnn.Linear(512, 10))


def run(quick: bool = False):
    return train_step.compare(sys.modules[__name__], "B2 MLP train step, 784-512-512-10 b128",
                              "lucid <= 1.25x torch", quick)
