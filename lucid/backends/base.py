"""The interface every backend provides."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

_LUCID_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def warn_user(message: str, category: type[Warning]) -> None:
    """``warnings.warn`` pointing at the first line outside Lucid: the user's own code (a
    notebook cell), not the internal line that noticed the problem."""
    level, frame = 2, sys._getframe(1)  # level 2: the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_LUCID_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def host_index_error(where: str, position: int | None = None) -> TypeError:
    """Lucid's rule, shared by ``parse_mlx_indexing`` and tensor indexing: a NumPy array
    (host memory) never silently indexes a gpu tensor."""
    at = "" if position is None else f" (a NumPy array at position {position} of the index)"
    return TypeError(
        f"{where}: GPU tensors do not support CPU tensor or NumPy array indexing{at}; make the "
        "index a lucid Tensor on 'gpu' (lucid.Tensor(idx, device='gpu')) or a list"
    )


class Backend:
    """A device's array library plus the handful of helpers whose spelling differs.

    ``xp`` is the array namespace ops compute with.  Everything else here exists because NumPy
    and MLX really disagree on it.
    """

    name: str
    device: str
    xp: Any
    array_type: type
    #: whether matmul accepts integer operands (MLX multiplies floats only)
    int_matmul: bool = True
    #: this backend's floating-point dtypes (a set test is cheaper than building a Numeric)
    float_dtypes: frozenset = frozenset()
    #: the matrix factorisations (inv, solve, qr, svd, eigh, ...) behind one spelling
    #: (lucid/backends/lapack.py)
    linalg: Any
    #: the most elements an array may have here; a backend with a limit (MLX) is also never
    #: handed an empty array (lucid/backends/fallback.py, ``run_within_limits``).  None: no
    #: limit, and empty arrays are fine (NumPy).
    max_size: int | None = None

    def __init__(self) -> None:
        # Read on every op: as the instance's own attributes they are found at once (Python
        # 3.11 looks class attributes read through an instance up the slow way each time).
        self.xp = type(self).xp
        self.max_size = type(self).max_size

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        raise NotImplementedError

    def to_numpy(self, array: Any) -> Any:
        raise NotImplementedError

    def scatter_add(self, shape: tuple[int, ...], dtype: Any, index: Any, values: Any) -> Any:
        """``out = zeros(shape); out[index] += values`` with repeated indices accumulating."""
        raise NotImplementedError

    def assign(self, array: Any, index: Any, value: Any) -> Any:
        """A copy of ``array`` with ``value`` written at ``index`` (``copy[index] = value``)."""
        out = self.copy(array)
        out[index] = value
        return out

    def sum(self, array: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        """The sum over ``axes``, accurate to the float rounding of a pairwise sum."""
        return self.xp.sum(array, axis=axes, keepdims=keepdims)

    def copy(self, array: Any) -> Any:
        raise NotImplementedError

    def own(self, array: Any) -> Any:
        """``array`` if it owns writable memory no other tensor can see, else a copy."""
        return self.copy(array)

    def evaluate(self, *arrays: Any) -> None:
        """Compute lazy arrays now (MLX); eager backends have nothing to do."""

    def stop_gradient(self, array: Any) -> Any:
        """Cut the backend's own autodiff graph behind ``array`` (MLX); identity otherwise."""
        return array
