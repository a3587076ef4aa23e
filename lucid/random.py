"""Random tensors: ``lucid.random.seed``, ``rand``, ``randn``, ``randint``, ``uniform``,
``bernoulli`` and ``permutation``.

Every sample comes from **one** NumPy ``Generator`` owned by this module, and is only then placed
on its device with ``Tensor(values, dtype=..., device=...)``.  Two things follow:

* ``seed(n)`` makes a whole program reproducible (weight inits, dropout masks and data
  shuffling alike, as long as they draw here);
* the same seed gives the same numbers on "cpu" and on "gpu": MLX never draws a value, it only
  receives them.  (Where the stored width differs -- Float64 kept as float32 on an MLX GPU --
  the values are the same numbers rounded to that width.)

Samplers of real numbers (``rand``, ``randn``, ``uniform``, ``bernoulli``) default to
``Float64`` and accept ``requires_grad``; samplers of integers (``randint``, ``permutation``)
default to ``Int64``.  ``dtype`` takes a :class:`lucid.types.Numeric` (``lucid.Float16``), a
builtin (``float``) or a NumPy dtype.  Arguments are checked before anything is drawn, so a
call that raises leaves the generator's state untouched.
"""

from __future__ import annotations

import copy
import math
import operator
from typing import Any

import numpy as np

from lucid.backends import check_device, get_backend
from lucid.creation import _shape
from lucid.shapes import broadcasts_to
from lucid.tensor import Tensor
from lucid.types import Float64, Int64, Numeric, as_numeric, to_numeric_type

__all__ = [
    "seed",
    "get_seed",
    "get_state",
    "set_state",
    "rand",
    "randn",
    "randint",
    "uniform",
    "bernoulli",
    "permutation",
]

#: The module's single generator.  ``seed`` rewinds it in place (the object never changes, so
#: anything holding a reference to it is reseeded too).
_GENERATOR = np.random.default_rng()
#: the last seed given to ``seed`` (None: the stream started from OS entropy)
_SEED: int | None = None


# --------------------------------------------------------------------------------------------
# the generator's state


def seed(n: int | None) -> None:
    """Restart the random stream from ``n`` (a non-negative int; None draws fresh OS entropy).

    >>> lucid.random.seed(0); a = lucid.random.rand(3)
    >>> lucid.random.seed(0); b = lucid.random.rand(3)   # a and b hold the same values
    """
    global _SEED
    if n is not None:
        n = _count("seed", "n", n)
    _GENERATOR.bit_generator.state = np.random.PCG64(n).state
    _SEED = n


def get_seed() -> int | None:
    """The seed the stream last restarted from (``seed(n)``'s n), or None when it started from
    OS entropy (no ``seed`` call yet, or ``seed(None)``).  Lucid 2.x's name.  Draws since
    then do not change it: to rewind to *this moment*, use ``get_state`` / ``set_state``."""
    return _SEED


def get_state() -> dict:
    """A snapshot of the generator (a plain dict); ``set_state`` rewinds to it."""
    return copy.deepcopy(_GENERATOR.bit_generator.state)


def set_state(state: dict) -> None:
    """Rewind the generator to a snapshot taken with :func:`get_state`."""
    try:
        _GENERATOR.bit_generator.state = copy.deepcopy(state)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(
            f"set_state: not a state returned by lucid.random.get_state() ({exc})"
        ) from None


# --------------------------------------------------------------------------------------------
# argument checks (run before anything is drawn)


def _count(fn: str, name: str, value: Any) -> int:
    """A non-negative int argument."""
    n = _int(fn, name, value)
    if n < 0:
        raise ValueError(f"{fn}: {name} must be >= 0, got {n}")
    return n


def _int(fn: str, name: str, value: Any) -> int:
    """An int argument (NumPy ints too; bools and floats are refused, not truncated)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}: {name} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{fn}: {name} must be an int, got {value!r} ({type(value).__name__})"
        ) from None


def _real(fn: str, name: str, value: Any) -> float:
    if isinstance(value, Tensor):
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{fn}: {name} must be a real number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{fn}: {name} must be finite, got {value}")
    return value


def _size(fn: str, size: Any) -> tuple[int, ...]:
    """NumPy's ``size=``: None (one value, a 0-d tensor), an int, or a tuple of ints."""
    if size is None:
        return ()
    return _shape(fn, size if isinstance(size, (tuple, list)) else (size,))


def _float_dtype(fn: str, dtype: Any) -> Numeric:
    """The dtype of a sampler of real numbers: Float64 by default, floating point only."""
    numeric = Float64 if dtype is None else as_numeric(dtype)
    if not numeric.is_floating_point:
        raise TypeError(
            f"{fn}: dtype must be a floating-point type (lucid.Float16/32/64), got "
            f"{numeric.name}"
        )
    return numeric.resolve_bits(np.float64)


def _int_dtype(fn: str, dtype: Any, lo: int, hi: int) -> Numeric:
    """The dtype of a sampler of integers: Int64 by default; every value in [lo, hi] must fit.

    A float dtype is allowed (as in PyTorch) as long as it holds those integers exactly.
    """
    numeric = Int64 if dtype is None else as_numeric(dtype)
    if numeric.base_dtype not in (int, float):
        raise TypeError(
            f"{fn}: dtype must be an integer or floating-point type, got {numeric.name}"
        )
    numeric = numeric.resolve_bits(np.int64)
    if numeric.base_dtype is int:
        info = np.iinfo(numeric.cpu)
        if lo < info.min or hi > info.max:
            raise ValueError(
                f"{fn}: values {lo}..{hi} do not fit in {numeric.name} "
                f"({info.min}..{info.max}); choose a wider dtype"
            )
    else:
        exact = 2 ** (np.finfo(numeric.cpu).nmant + 1)  # beyond this, integers are rounded
        if max(abs(lo), abs(hi)) > exact:
            raise ValueError(
                f"{fn}: {numeric.name} holds integers exactly only up to {exact}, but the "
                f"values reach {max(abs(lo), abs(hi))}; choose a wider dtype"
            )
    return numeric


def _stored(fn: str, numeric: Numeric, device: str) -> Numeric:
    """The width ``numeric`` is stored with on ``device`` (Float64 is float32 on an MLX GPU).

    Also checks the device, and that its backend is installed, before anything is drawn.
    """
    try:
        check_device(device)
    except ValueError as exc:
        raise ValueError(f"{fn}: {exc}") from None
    if device == "cpu":
        return numeric
    get_backend(device)  # raises, with install instructions, when MLX is missing
    return to_numeric_type(numeric.parse(device))


def _below(values: np.ndarray, high: float, stored: Numeric) -> np.ndarray:
    """``values`` (float64, all < high) rounded to their stored width, still all < ``high``.

    Rounding to a narrower float can turn 0.99999999 into exactly 1.0; a sample from
    [low, high) must never equal ``high``, so such values step down to the largest number of
    that width below ``high``.
    """
    dt = stored.cpu
    out = values.astype(dt)
    top = np.nextafter(dt.type(high), dt.type(-np.inf))
    return np.minimum(out, top) if out.size and out.max() >= high else out


# --------------------------------------------------------------------------------------------
# samplers of real numbers


def rand(
    *shape: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """Uniform samples from [0, 1): ``rand(2, 3)`` or ``rand((2, 3))``."""
    shape = _shape("rand", shape)
    numeric = _float_dtype("rand", dtype)
    stored = _stored("rand", numeric, device)
    values = _below(_GENERATOR.random(shape), 1.0, stored)
    return Tensor(values, requires_grad=requires_grad, keep_grad=keep_grad, dtype=numeric,
                  device=device, name=name)


def randn(
    *shape: Any,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """Standard normal samples (mean 0, variance 1): ``randn(2, 3)`` or ``randn((2, 3))``.

    For another mean and spread, scale and shift: ``mu + sigma * lucid.randn(n)``.
    """
    shape = _shape("randn", shape)
    numeric = _float_dtype("randn", dtype)
    _stored("randn", numeric, device)
    values = _GENERATOR.standard_normal(shape)
    return Tensor(values, requires_grad=requires_grad, keep_grad=keep_grad, dtype=numeric,
                  device=device, name=name)


def uniform(
    low: float = 0.0,
    high: float = 1.0,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """Uniform samples from [low, high):  ``low + (high - low) * u`` with ``u ~ U[0, 1)``.

    ``size`` follows NumPy: None gives one value (a 0-d tensor), an int or a tuple a shape.
    """
    low = _real("uniform", "low", low)
    high = _real("uniform", "high", high)
    if not high > low:
        raise ValueError(f"uniform: high ({high}) must be greater than low ({low})")
    shape = _size("uniform", size)
    numeric = _float_dtype("uniform", dtype)
    stored = _stored("uniform", numeric, device)
    values = _below(low + (high - low) * _GENERATOR.random(shape), high, stored)
    return Tensor(values, requires_grad=requires_grad, keep_grad=keep_grad, dtype=numeric,
                  device=device, name=name)


def bernoulli(
    p: Any,
    size: Any = None,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """1.0 with probability ``p`` and 0.0 otherwise (a coin flip per element): ``u < p``.

    ``p`` is a number or a Tensor of probabilities (one per element).  The shape is ``size``
    when given (``p`` must broadcast to it), else ``p``'s shape.  The dtype defaults to that of
    a floating-point ``p`` Tensor, else Float64; the device to ``p``'s, else "cpu".  No
    gradient flows into ``p`` (the draw is not differentiable).
    """
    if isinstance(p, Tensor):
        probs = p.numpy()
        if dtype is None and p.dtype.is_floating_point:
            dtype = p.dtype
        if device is None:
            device = p.device
    else:
        probs = np.asarray(_real("bernoulli", "p", p))
    if probs.size and not (np.all(probs >= 0.0) and np.all(probs <= 1.0)):
        bad = probs[~((probs >= 0.0) & (probs <= 1.0))].reshape(-1)[0]
        raise ValueError(f"bernoulli: probabilities must lie in [0, 1], got {bad}")
    shape = tuple(probs.shape) if size is None else _size("bernoulli", size)
    if size is not None and not broadcasts_to(probs.shape, shape):
        raise ValueError(
            f"bernoulli: p of shape {tuple(probs.shape)} does not broadcast to size {shape}"
        )
    numeric = _float_dtype("bernoulli", dtype)
    device = "cpu" if device is None else device
    _stored("bernoulli", numeric, device)
    values = (_GENERATOR.random(shape) < probs).astype(np.float64)
    return Tensor(values, requires_grad=requires_grad, keep_grad=keep_grad, dtype=numeric,
                  device=device, name=name)


# --------------------------------------------------------------------------------------------
# samplers of integers


def randint(
    low: int,
    high: int | None = None,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    name: str | None = None,
) -> Tensor:
    """Integers drawn uniformly from [low, high); ``randint(n)`` draws from [0, n) (NumPy's rule).

    ``size`` follows NumPy: None gives one value (a 0-d tensor), an int or a tuple a shape.
    """
    low = _int("randint", "low", low)
    if high is None:
        low, high = 0, low
    else:
        high = _int("randint", "high", high)
    if not high > low:
        raise ValueError(
            f"randint: high ({high}) must be greater than low ({low}); the range [low, high) "
            "is empty"
        )
    shape = _size("randint", size)
    numeric = _int_dtype("randint", dtype, low, high - 1)
    _stored("randint", numeric, device)
    values = _GENERATOR.integers(low, high, size=shape, dtype=np.int64)
    return Tensor(values, dtype=numeric, device=device, name=name)


def permutation(x: int | Tensor, dtype: Any = None, device: str | None = None) -> Tensor:
    """A random ordering.

    * ``permutation(n)``: the integers 0..n-1 shuffled (Int64 unless ``dtype``);
    * ``permutation(t)``: the rows of Tensor ``t`` shuffled along axis 0, i.e. ``t[perm]``.
      This is an indexing op, so gradients flow back to ``t``; dtype and device stay ``t``'s
      unless given.

    The device defaults to ``t``'s, else "cpu".
    """
    if isinstance(x, Tensor):
        if x.ndim == 0:
            raise ValueError("permutation: a 0-d tensor has no axis 0 to shuffle")
        if device is not None or dtype is not None:
            numeric = x.dtype if dtype is None else as_numeric(dtype)
            _stored("permutation", numeric, x.device if device is None else device)
        order = _GENERATOR.permutation(x.shape[0])
        out = x[Tensor(order, device=x.device)]
        if device is not None:
            out = out.to(device)
        return out if dtype is None else out.astype(dtype)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(
            f"permutation: expected an int n or a Tensor to shuffle, got {type(x).__name__}"
        )
    n = _count("permutation", "n", x)
    numeric = _int_dtype("permutation", dtype, 0, max(n - 1, 0))
    device = "cpu" if device is None else device
    _stored("permutation", numeric, device)
    return Tensor(_GENERATOR.permutation(n), dtype=numeric, device=device)
