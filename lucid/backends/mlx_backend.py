"""The "gpu" device: MLX arrays (``mlx.core``).

MLX runs on Apple silicon's GPU through Metal, on NVIDIA GPUs with ``mlx[cuda]``, and on the
CPU with Linux's ``mlx[cpu]`` wheel.  In that last case there is no GPU, but the MLX code path
-- its dtypes, its laziness -- is the real one, so Lucid keeps going (after one warning) and
tests it there.

MLX is lazy: ``a + b`` records a node of MLX's own graph and computes nothing until a value is
needed or ``mx.eval`` is called.  :func:`evaluate` is what ``Tensor.eval()`` and the optimizers
call so that a training loop's MLX graph never grows from one step to the next.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

from lucid.backends.base import Backend, host_index_error, warn_user
from lucid.backends.lapack import MLXLinalg


class GPUNotAvailableWarning(UserWarning):
    """MLX is installed but has no GPU here; "gpu" tensors run on MLX's CPU device."""


def has_gpu() -> bool:
    """True when MLX's default device is a GPU (Metal on Apple silicon, or CUDA)."""
    return mx.default_device().type == mx.DeviceType.gpu


class MLXBackend(Backend):
    name = "mlx"
    device = "gpu"
    xp = mx
    array_type = mx.array
    float_dtypes = frozenset((mx.float16, mx.float32, mx.float64))
    int_matmul = False
    linalg = MLXLinalg()
    #: MLX indexes elements with 32-bit integers
    max_size = 2**31 - 1

    def __init__(self) -> None:
        super().__init__()
        if not has_gpu():
            warn_user(
                "MLX has no GPU here; gpu tensors run on MLX's CPU device (the MLX code path, "
                "its dtypes and its laziness are the real ones, only slower).",
                GPUNotAvailableWarning
            )

    def asarray(self, data: Any, dtype: Any = None) -> mx.array:
        if isinstance(data, mx.array):
            return data if dtype is None or data.dtype == dtype else data.astype(dtype)
        if isinstance(data, np.generic):  # a NumPy scalar (np.float64(0) from a sum of
            data = np.asarray(data)  # nothing): MLX would read it as a Python float, float32
        if isinstance(data, np.ndarray) and (not data.flags.c_contiguous or not data.size):
            # MLX refuses negative strides (x[::-1]), which NumPy calls contiguous when empty
            data = data.copy(order="C")
        if isinstance(data, np.ndarray) and data.dtype == np.float64 and dtype is None:
            from lucid.types import Float64

            dtype = Float64.gpu  # float64 where MLX's device has it, float32 on a GPU
        return mx.array(data, dtype=dtype) if dtype is not None else mx.array(data)

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.array(array)

    def scatter_add(self, shape, dtype, index, values) -> mx.array:
        out = mx.zeros(shape, dtype=dtype)
        if values.size == 0 or out.size == 0:
            # Nothing to add -- and MLX's scatter kills the process (SIGFPE) on an empty update,
            # so an empty one must never reach it.
            return out
        if not _arrays_apart(index):
            return out.at[index].add(values)
        where = _positions(shape, index)  # by flat position (see _arrays_apart)
        flat = mx.zeros((out.size,), dtype=dtype)
        return flat.at[where.reshape(-1)].add(values.reshape(-1)).reshape(shape)

    def assign(self, array: mx.array, index: Any, value: Any) -> mx.array:
        out = mx.array(array)
        selected = tuple(array[index].shape)  # (MLX infers the shape; nothing is computed)
        if 0 in selected:  # nothing to write -- and MLX's update of nothing may crash
            np.broadcast_shapes(tuple(np.shape(value)), selected)  # ValueError if not
            return out
        if not _arrays_apart(index):
            out[index] = value
            return out
        where = _positions(tuple(array.shape), index)  # by flat position (see _arrays_apart)
        value = mx.broadcast_to(mx.array(value, dtype=out.dtype), where.shape)
        flat = out.reshape(-1)
        flat[where.reshape(-1)] = value.reshape(-1)
        return flat.reshape(array.shape)

    def sum(self, array: mx.array, axes: tuple[int, ...], keepdims: bool) -> mx.array:
        """MLX sums float32 sequentially: 2e7 ones add up to 16,777,216 (2^24, where adding 1
        no longer changes a float32), and a sum over 2^31 or more elements (a broadcast view)
        comes back 0.  So a long float reduction runs in blocks: each axis is summed in runs of
        at most ``SUM_BLOCK`` elements, then the partial sums are summed the same way -- as
        exact as NumPy's pairwise sum, and never one reduction over 2^31 elements.
        """
        if array.dtype not in self.float_dtypes or _count(array.shape, axes) <= SUM_BLOCK:
            return mx.sum(array, axis=axes, keepdims=keepdims)
        out = array
        for ax in axes:
            out = _blocked_sum(out, ax)  # keeps the axis (size 1), so the others keep their place
        return out if keepdims else out.reshape(
            tuple(s for i, s in enumerate(array.shape) if i not in axes))

    def copy(self, array: mx.array) -> mx.array:
        # MLX arrays are values, but ``a += 1`` updates every alias of the same object; a new
        # array object keeps two tensors' gradients independent.
        return mx.array(array)

    def evaluate(self, *arrays: Any) -> None:
        """Force MLX to compute ``arrays`` now (skipping None and non-MLX values)."""
        todo = [a for a in arrays if isinstance(a, mx.array)]
        if todo:
            mx.eval(*todo)

    def stop_gradient(self, array: mx.array) -> mx.array:
        return mx.stop_gradient(array)


def _arrays_apart(index: Any) -> bool:
    """True when the index arrays (and ints beside them) are separated by a slice, None or
    Ellipsis (``x[0, :, idx]``, ``x[1, None, idx]``), or meet a None (``x[idx, :, None]``) or
    a reversed slice (``x[idx, :, :, ::-1]``).

    MLX reads such an index with NumPy's layout -- the indexed axes first -- but its updates,
    ``x.at[...].add(v)`` and ``x[...] = v``, want ``v`` in another one: they refuse the value
    the read gave, or, when the shapes happen to fit, write it transposed.  Those updates go
    through the flat positions (:func:`_positions`) instead."""
    if not isinstance(index, tuple) or not any(isinstance(p, mx.array) for p in index):
        return False
    if any(p is None or (isinstance(p, slice) and (p.step or 1) < 0) for p in index):
        return True  # (a reversed slice beside index arrays: MLX's update misreads it too)
    advanced = [isinstance(p, (int, mx.array)) for p in index]
    first = advanced.index(True)
    last = len(advanced) - advanced[::-1].index(True)
    return not all(advanced[first:last])


def _positions(shape: tuple[int, ...], index: Any) -> mx.array:
    """The flat positions ``index`` selects in an array of ``shape``, laid out as
    ``array[index]`` is (NumPy's layout): an update at them needs no layout rule."""
    size = 1
    for s in shape:
        size *= s
    return mx.arange(size).reshape(shape)[index]


#: the longest run MLX sums sequentially (NumPy's pairwise sum works in blocks of 128 too)
SUM_BLOCK = 128


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    n = 1
    for ax in axes:
        n *= shape[ax]
    return n


def _blocked_sum(x: mx.array, ax: int) -> mx.array:
    """The sum of ``x`` over axis ``ax`` (kept, with size 1), in runs of SUM_BLOCK elements."""
    while x.shape[ax] > SUM_BLOCK:
        n = x.shape[ax]
        k, rest = divmod(n, SUM_BLOCK)
        lead = (slice(None),) * ax
        head = x[lead + (slice(0, k * SUM_BLOCK),)]  # a view: a broadcast stays a broadcast
        head = head.reshape(x.shape[:ax] + (k, SUM_BLOCK) + x.shape[ax + 1:])
        parts = [mx.sum(head, axis=ax + 1)]  # (.., k, ..): one partial sum per run
        if rest:
            parts.append(mx.sum(x[lead + (slice(k * SUM_BLOCK, n),)], axis=ax, keepdims=True))
        x = mx.concatenate(parts, axis=ax) if rest else parts[0]
    return mx.sum(x, axis=ax, keepdims=True)


def parse_mlx_indexing(index: Any) -> Any:
    """Bring a NumPy-style index into the form MLX accepts.

    =========================  ==========================================================
    index                      becomes
    =========================  ==========================================================
    ``np.ndarray``             TypeError: a gpu tensor is not indexed by CPU arrays
    tuple holding ndarray      TypeError naming the position
    Python ``bool``            1 or 0
    ``mx.array`` of bools      int32 indices of the True positions (``flatnonzero``)
    list of bools              the same, via a bool mask
    list of ints               ``mx.array(..., dtype=int32)``
    anything else              unchanged (ints, slices, None, Ellipsis, int mx.arrays)
    =========================  ==========================================================
    """
    if isinstance(index, tuple):
        parsed = []
        for i, part in enumerate(index):
            if isinstance(part, np.ndarray):
                raise host_index_error("parse_mlx_indexing", i)
            parsed.append(_parse_one(part))
        return tuple(parsed)
    if isinstance(index, np.ndarray):
        raise host_index_error("parse_mlx_indexing")
    return _parse_one(index)


def _parse_one(part: Any) -> Any:
    if isinstance(part, bool):
        return 1 if part else 0
    if isinstance(part, mx.array) and part.dtype == mx.bool_:
        return mx.array(np.flatnonzero(np.array(part)), dtype=mx.int32)
    if isinstance(part, list) and part and all(isinstance(i, bool) for i in part):
        return mx.array(np.flatnonzero(np.array(part, dtype=bool)), dtype=mx.int32)
    if isinstance(part, list):
        return mx.array(part, dtype=mx.int32)
    return part
