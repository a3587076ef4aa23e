"""The "cpu" device: NumPy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends.base import Backend
from lucid.backends.lapack import NumpyLinalg


class NumpyBackend(Backend):
    name = "numpy"
    device = "cpu"
    xp = np
    array_type = np.ndarray
    linalg = NumpyLinalg()

    def asarray(self, data: Any, dtype: Any = None) -> np.ndarray:
        return np.asarray(data, dtype=dtype)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def scatter_add(self, shape, dtype, index, values) -> np.ndarray:
        out = np.zeros(shape, dtype=dtype)
        np.add.at(out, index, values)
        return out

    # sum: NumPy's own sum is already pairwise (the base class's)

    def copy(self, array: np.ndarray) -> np.ndarray:
        return array.copy()

    def own(self, array: np.ndarray) -> np.ndarray:
        if not isinstance(array, np.ndarray):  # a NumPy scalar: 0-d arithmetic gives those
            return np.array(array)
        flags = array.flags
        return array if flags.owndata and flags.writeable else array.copy()
