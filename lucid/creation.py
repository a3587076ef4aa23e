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
from lucid.types import as_numeric, get_default_dtype, to_numeric_type

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
    "from_numpy",
    "as_tensor",
    "is_tensor",
    "FloatTensor",
    "DoubleTensor",
    "HalfTensor",
    "LongTensor",
    "IntTensor",
    "BoolTensor",
    "ByteTensor",
]


def _with_size(fn: str, shape: tuple[Any, ...], size: Any) -> tuple[Any, ...]:
    """The shape given positionally, or by PyTorch's keyword ``size=`` (``empty(size=(2,
    3))``, as examples/gat writes it) -- not both."""
    if size is None:
        return shape
    if shape:
        raise TypeError(f"{fn}: give the shape once, positionally ({fn}(2, 3)) or as "
                        f"size=(2, 3), not both")
    return (size,)


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
    if dtype is None and arr.dtype == np.float64:
        dtype = get_default_dtype()  # Float64 unless lucid.set_default_dtype changed it
    return Tensor(arr, requires_grad=requires_grad, keep_grad=keep_grad, dtype=dtype,
                  device=device, name=name)


# --------------------------------------------------------------------------------------------
# from a shape


def zeros(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of zeros: ``zeros(2, 3)`` or ``zeros((2, 3))`` (float64 unless ``dtype``)."""
    shape = _shape("zeros", _with_size("zeros", shape, size))
    _check_dtype(dtype)
    return _make(np.zeros(shape), dtype, device, requires_grad, keep_grad, name)


def ones(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor of ones: ``ones(2, 3)`` or ``ones((2, 3))`` (float64 unless ``dtype``)."""
    shape = _shape("ones", _with_size("ones", shape, size))
    _check_dtype(dtype)
    return _make(np.ones(shape), dtype, device, requires_grad, keep_grad, name)


def empty(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A tensor whose values are unspecified (whatever memory held): fill it before reading."""
    shape = _shape("empty", _with_size("empty", shape, size))
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
    *,
    steps: int | None = None,
) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop``, both included (Float64).
    ``steps=`` is PyTorch's name for ``num``."""
    num = _count("linspace", "num", num if steps is None else steps)
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


# --------------------------------------------------------------------------------------------
# from existing data (PyTorch's names)


def from_numpy(arr: np.ndarray) -> Tensor:
    """A "cpu" tensor on ``arr``'s memory, with its dtype (float64 stays Float64), as PyTorch's:
    a write into ``arr`` (``np.add(arr, 1, out=arr)``) shows in the tensor.

    The sharing lasts until an in-place op on the tensor: Lucid's in-place ops (``t.add_(1)``,
    ``t += 1``) give the tensor a new array instead of writing into the old one, so values
    saved for backward stay valid; from then on ``arr`` and the tensor are separate.
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy: expected a NumPy array, got {type(arr).__name__}; "
                        "lucid.tensor(data) builds a tensor from anything else")
    to_numeric_type(arr.dtype)  # refuses strings, objects, ... with a clear error
    return Tensor._wrap(arr, "cpu")


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """``data`` as a Tensor: a Tensor already of that dtype and device is returned as it is;
    anything else is converted (as :func:`lucid.tensor`)."""
    if isinstance(data, Tensor):
        if (dtype is None or data.dtype == as_numeric(dtype)) and device in (None, data.device):
            return data
        out = data if dtype is None else data.astype(dtype)
        return out if device is None else out.to(device)
    return Tensor(data, dtype=dtype, device="cpu" if device is None else device)


def is_tensor(obj: Any) -> bool:
    """True for a :class:`lucid.Tensor` (a Parameter included)."""
    return isinstance(obj, Tensor)


def _legacy(name: str, dtype: Any) -> Any:
    def constructor(*args: Any, device: str = "cpu") -> Tensor:
        if not args or all(isinstance(a, (int, np.integer)) and not isinstance(a, bool)
                           for a in args):
            return zeros(*args, dtype=dtype, device=device)  # a shape: PyTorch leaves it unset
        if len(args) != 1:
            raise TypeError(f"{name}: give a shape (ints) or one sequence of values")
        return Tensor(args[0], dtype=dtype, device=device)

    constructor.__name__ = constructor.__qualname__ = name
    constructor.__doc__ = f"""PyTorch's legacy ``{name}(data)`` (values as
    {as_numeric(dtype).name}) or ``{name}(2, 3)`` (a shape; filled with zeros).  Prefer
    ``lucid.tensor(data, dtype=...)``."""
    return constructor


FloatTensor = _legacy("FloatTensor", "float32")
DoubleTensor = _legacy("DoubleTensor", "float64")
HalfTensor = _legacy("HalfTensor", "float16")
LongTensor = _legacy("LongTensor", "int64")
IntTensor = _legacy("IntTensor", "int32")
BoolTensor = _legacy("BoolTensor", "bool")
ByteTensor = _legacy("ByteTensor", "uint8")
