"""PyTorch's sparse spellings, on dense tensors: Lucid has no sparse layout.

``torch.spmm(adj, x)`` (a graph convolution, examples/gcn), ``x.to_sparse()`` and
``torch.sparse_coo_tensor(indices, values, size)`` run on Lucid with the same values and
gradients as in PyTorch; the tensors are dense, so a large, mostly-zero matrix costs its full
size in memory and in FLOPs (``lucid.count_flops`` counts the dense product).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.ops.base import FUNCTIONS, public
from lucid.tensor import Tensor


@public
def spmm(sparse: Any, dense: Any) -> Tensor:
    """``sparse @ dense`` (PyTorch's sparse-dense product; dense here, see the module)."""
    return FUNCTIONS["matmul"](sparse, dense)


def to_sparse(self: Tensor, sparse_dim: Any = None) -> Tensor:
    """``x`` itself: Lucid keeps every tensor dense (see the module)."""
    return self


def to_dense(self: Tensor) -> Tensor:
    """``x`` itself: Lucid's tensors are dense already."""
    return self


def is_sparse(self: Tensor) -> bool:
    return False


@public
def sparse_coo_tensor(indices: Any, values: Any, size: Any = None, dtype: Any = None,
                      device: str = "cpu", requires_grad: bool = False) -> Tensor:
    """The dense tensor of ``size`` holding ``values`` at ``indices`` ((ndim, nnz) integer
    coordinates); repeated coordinates add up, as when PyTorch coalesces.  ``size`` defaults
    to the smallest shape that holds every coordinate."""
    idx = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    vals = np.asarray(values.numpy() if isinstance(values, Tensor) else values)
    if idx.ndim != 2 or not np.issubdtype(idx.dtype, np.integer):
        raise ValueError(f"sparse_coo_tensor: indices must be an (ndim, nnz) integer array, "
                         f"got shape {idx.shape} of {idx.dtype}")
    shape = tuple(int(n) for n in size) if size is not None else tuple(
        int(m) + 1 for m in idx.max(axis=1))
    out = np.zeros(shape, dtype=vals.dtype)
    np.add.at(out, tuple(idx), vals)
    return Tensor(out, dtype=dtype, device=device, requires_grad=requires_grad)


for _method in (to_sparse, to_dense, is_sparse):  # Tensor methods (the catalogue is attached)
    setattr(Tensor, _method.__name__, _method)
