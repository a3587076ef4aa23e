"""Tensor creation: zeros, ones, empty, full, eye, arange, linspace and the ``*_like`` family.

These make leaves (no op, no graph).  Each builds a NumPy array with NumPy's own default dtype
(float64 for zeros/ones/empty/eye/linspace; ``full`` and ``arange`` infer it from the values)
and hands it to the ``Tensor`` constructor, so the dtype and device rules (bit-free presets,
Float64 on an MLX GPU, ``requires_grad`` needing a float dtype) live in one place.

``dtype`` accepts a :class:`lucid.types.Numeric` (``lucid.Float32``; bit-free ``lucid.Float``
takes its width from NumPy's default, so it means float64), a builtin (``float``) or a NumPy
dtype.  Anything else raises ``TypeError("Unsupported dtype ...")``.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lucid.tensor import Tensor
from lucid.types import as_numeric

__all__ = [
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "arange",
    "linspace",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
]


def _shape(fn: str, shape: tuple[Any, ...]) -> tuple[int, ...]:
    """``(2, 3)`` from ``zeros(2, 3)`` or ``zeros((2, 3))``; sizes are non-negative ints."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    out = []
    for s in shape:
        if isinstance(s, (bool, np.bool_)):
            raise TypeError(f"{fn}: shape entries must be ints, got {s!r} in {shape}")
        try:
            n = operator.index(s)
        except TypeError:
            raise TypeError(
                f"{fn}: shape entries must be ints, got {s!r} ({type(s).__name__}) in {shape}"
            ) from None
        if n < 0:
            raise ValueError(f"{fn}: negative size {n} in shape {shape}; sizes must be >= 0")
        out.append(n)
    return tuple(out)


def _count(fn: str, name: str, value: Any) -> int:
    """A non-negative int argument (``eye``'s N and M, ``linspace``'s num)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be an int, got {value!r}")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn}: {name} must be an int, got {value!r} ({type(value).__name__})"
        ) from None
    if n < 0:
        raise ValueError(f"{fn}: {name} must be >= 0, got {n}")
    return n


def _check_dtype(dtype: Any) -> None:
    """Reject an unsupported dtype before any array is allocated."""
    if dtype is not None:
        as_numeric(dtype)


def _make(
    arr: np.ndarray, dtype: Any, device: str, requires_grad: bool, keep_grad: bool,
    name: str | None = None,
) -> Tensor:
    return Tensor(arr, requires_grad=requires_grad, keep_grad=keep_grad, dtype=dtype,
                  device=device, name=name)


# --------------------------------------------------------------------------------------------
# from a shape


def zeros(
    *shape: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))`` (float64 unless ``dtype``)."""
    shape = _shape("zeros", shape)
    _check_dtype(dtype)
    return _make(np.zeros(shape), dtype, device, requires_grad, keep_grad, name)


def ones(
    *shape: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))`` (float64 unless ``dtype``)."""
    shape = _shape("ones", shape)
    _check_dtype(dtype)
    return _make(np.ones(shape), dtype, device, requires_grad, keep_grad, name)


def empty(
    *shape: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor whose values are unspecified (whatever memory held): fill it before reading."""
    shape = _shape("empty", shape)
    _check_dtype(dtype)
    return _make(np.empty(shape), dtype, device, requires_grad, keep_grad, name)


def full(
    shape: Any,
    fill_value: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``; the dtype follows the value.

    ``full((2, 2), 7)`` is Int64, ``full((2, 2), 7.0)`` Float64, ``full(3, True)`` Bool.
    """
    shape = _shape("full", shape if isinstance(shape, (tuple, list)) else (shape,))
    _check_dtype(dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _make(np.full(shape, fill_value), dtype, device, requires_grad, keep_grad, name)


def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """An ``N × M`` matrix (``M = N`` by default) with ones on diagonal ``k`` (0 = main)."""
    N = _count("eye", "N", N)
    M = N if M is None else _count("eye", "M", M)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"eye: k must be an int (the diagonal's offset), got {k!r}")
    _check_dtype(dtype)
    return _make(np.eye(N, M, k), dtype, device, requires_grad, keep_grad, name)


# --------------------------------------------------------------------------------------------
# ranges


def arange(
    start: Any,
    stop: Any = None,
    step: Any = 1,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """``start, start + step, ...`` up to (not including) ``stop``; ``arange(n)`` is 0..n-1.

    The dtype follows the arguments: Int64 for ints, Float64 when any is a float.
    """
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    _check_dtype(dtype)
    return _make(np.arange(start, stop, step), dtype, device, requires_grad, keep_grad, name)


def linspace(
    start: float,
    stop: float,
    num: int = 50,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (Float64)."""
    num = _count("linspace", "num", num)
    _check_dtype(dtype)
    return _make(np.linspace(start, stop, num), dtype, device, requires_grad, keep_grad, name)


# --------------------------------------------------------------------------------------------
# *_like: the shape, dtype and device of an existing tensor


def _like(a: Any, dtype: Any, device: str | None) -> tuple[tuple[int, ...], Any, str]:
    if isinstance(a, Tensor):
        return a.shape, (a.dtype if dtype is None else dtype), (device or a.device)
    arr = np.asarray(a)
    return arr.shape, (arr.dtype if dtype is None else dtype), (device or "cpu")


def zeros_like(
    a: Any,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """Zeros with ``a``'s shape, dtype and device (each overridable)."""
    shape, dtype, device = _like(a, dtype, device)
    return zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad,
                 keep_grad=keep_grad, name=name)


def ones_like(
    a: Any,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """Ones with ``a``'s shape, dtype and device (each overridable)."""
    shape, dtype, device = _like(a, dtype, device)
    return ones(shape, dtype=dtype, device=device, requires_grad=requires_grad,
                keep_grad=keep_grad, name=name)


def empty_like(
    a: Any,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """An unfilled tensor with ``a``'s shape, dtype and device (each overridable)."""
    shape, dtype, device = _like(a, dtype, device)
    return empty(shape, dtype=dtype, device=device, requires_grad=requires_grad,
                 keep_grad=keep_grad, name=name)


def full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """``a``'s shape, dtype and device, filled with ``fill_value`` (cast to that dtype)."""
    shape, dtype, device = _like(a, dtype, device)
    return full(shape, fill_value, dtype=dtype, device=device, requires_grad=requires_grad,
                keep_grad=keep_grad, name=name)
