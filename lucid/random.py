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
from lucid.creation import _shape, _with_size
from lucid.shapes import broadcasts_to
from lucid.tensor import RANDOM_STREAM, Tensor
from lucid.types import Int64, Numeric, as_numeric, get_default_dtype, to_numeric_type

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
    "manual_seed",
    "Generator",
    "normal",
    "randperm",
    "multinomial",
    "rand_like",
    "randn_like",
    "randint_like",
]

#: The module's single generator.  ``seed`` rewinds it in place (the object never changes, so
#: anything holding a reference to it is reseeded too).
_GENERATOR = RANDOM_STREAM
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
    numeric = get_default_dtype() if dtype is None else as_numeric(dtype)
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
        device = check_device(device)
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
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
    generator: Any = None,
) -> Tensor:
    """Uniform samples from [0, 1): ``rand(2, 3)`` or ``rand((2, 3))``.  ``generator=`` (a
    :class:`Generator`) draws from that stream instead of the module's."""
    shape = _shape("rand", _with_size("rand", shape, size))
    numeric = _float_dtype("rand", dtype)
    stored = _stored("rand", numeric, device)
    values = _below(_rng(generator).random(shape), 1.0, stored)
    return Tensor(values, requires_grad=requires_grad, keep_grad=keep_grad, dtype=numeric,
                  device=device, name=name)


def randn(
    *shape: Any,
    size: Any = None,
    dtype: Any = None,
    device: str = "cpu",
    requires_grad: bool = False,
    keep_grad: bool = False,
    name: str | None = None,
    generator: Any = None,
) -> Tensor:
    """Standard normal samples (mean 0, variance 1): ``randn(2, 3)`` or ``randn((2, 3))``.

    For another mean and spread, scale and shift: ``mu + sigma * lucid.randn(n)``.
    """
    shape = _shape("randn", _with_size("randn", shape, size))
    numeric = _float_dtype("randn", dtype)
    _stored("randn", numeric, device)
    values = _rng(generator).standard_normal(shape)
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
    generator: Any = None,
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
    values = (_rng(generator).random(shape) < probs).astype(np.float64)
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
    generator: Any = None,
) -> Tensor:
    """Integers drawn uniformly from [low, high); ``randint(n)`` draws from [0, n) (NumPy's rule).

    ``size`` follows NumPy: None gives one value (a 0-d tensor), an int or a tuple a shape.
    PyTorch's spellings work too: ``randint(high, size)`` (a tuple or list second, so it is
    the size: ``randint(10, (3,))``) and ``randint(low, high, size)``.
    """
    if isinstance(high, (tuple, list)) and size is None:  # PyTorch's randint(high, size)
        low, high, size = 0, low, high
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
    values = _rng(generator).integers(low, high, size=shape, dtype=np.int64)
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


# --------------------------------------------------------------------------------------------
# PyTorch's spellings: manual_seed, Generator, normal, randperm, multinomial, *_like


class Generator:
    """A random stream of its own, PyTorch's ``lucid.Generator().manual_seed(42)``: for code
    that wants draws independent of the module's stream (``random_split(..., generator=g)``).
    ``g.numpy`` is its NumPy ``Generator``; samplers that take ``generator=`` draw from it."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self.numpy = np.random.default_rng()
        self._seed: int | None = None

    def manual_seed(self, n: int) -> Generator:
        """Restart this stream from ``n``; returns the generator (PyTorch's chaining)."""
        n = _count("manual_seed", "seed", n)
        self.numpy.bit_generator.state = np.random.PCG64(n).state
        self._seed = n
        return self

    def seed(self) -> int:
        """Restart from fresh OS entropy; returns the new seed."""
        n = int(np.random.SeedSequence().entropy % (2**63))
        self.manual_seed(n)
        return n

    def initial_seed(self) -> int | None:
        return self._seed

    def get_state(self) -> dict:
        return copy.deepcopy(self.numpy.bit_generator.state)

    def set_state(self, state: dict) -> Generator:
        self.numpy.bit_generator.state = copy.deepcopy(state)
        return self


def _rng(generator: Generator | None) -> np.random.Generator:
    if generator is None:
        return _GENERATOR
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a lucid.Generator, got {type(generator).__name__}")
    return generator.numpy


def manual_seed(n: int) -> Generator:
    """PyTorch's name for :func:`seed`: restart the module's stream from ``n``.  Returns a
    :class:`Generator` seeded with ``n`` too (PyTorch returns its default generator)."""
    seed(n)
    return Generator().manual_seed(n)


def normal(
    mean: Any = 0.0,
    std: Any = 1.0,
    size: Any = None,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: str | None = None,
    requires_grad: bool = False,
) -> Tensor:
    """Normal samples ``mean + std * z``, ``z ~ N(0, 1)`` (PyTorch's ``normal``).

    ``mean`` and ``std`` are numbers or Tensors (broadcast together; the result has their
    shape); with numbers, ``size`` gives the shape.  ``std`` must be >= 0.  No gradient flows
    into ``mean`` or ``std`` (write ``mean + std * lucid.randn(...)`` for that).
    """
    ref = next((a for a in (mean, std) if isinstance(a, Tensor)), None)
    m = mean.numpy() if isinstance(mean, Tensor) else np.asarray(_real("normal", "mean", mean))
    s = std.numpy() if isinstance(std, Tensor) else np.asarray(_real("normal", "std", std))
    if s.size and np.any(s < 0):
        raise ValueError(f"normal: std must be >= 0, got {s[s < 0].reshape(-1)[0]}")
    try:
        shape = np.broadcast_shapes(m.shape, s.shape)
    except ValueError:
        raise ValueError(f"normal: mean of shape {m.shape} and std of shape {s.shape} do "
                         "not broadcast together") from None
    if size is not None:
        if ref is not None:
            raise TypeError("normal: give size= only with numbers for mean and std")
        shape = _size("normal", size)
    if dtype is None and ref is not None and ref.dtype.is_floating_point:
        dtype = ref.dtype
    numeric = _float_dtype("normal", dtype)
    device = (ref.device if ref is not None else "cpu") if device is None else device
    _stored("normal", numeric, device)
    values = m + s * _rng(generator).standard_normal(shape)
    return Tensor(values, requires_grad=requires_grad, dtype=numeric, device=device)


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: Any = None,
    device: str = "cpu",
) -> Tensor:
    """The integers 0..n-1 in a random order (PyTorch's ``randperm``; Int64 unless ``dtype``)."""
    n = _count("randperm", "n", n)
    numeric = _int_dtype("randperm", dtype, 0, max(n - 1, 0))
    _stored("randperm", numeric, device)
    return Tensor(_rng(generator).permutation(n), dtype=numeric, device=device)


def multinomial(
    input: Tensor,  # noqa: A002 -- PyTorch's name
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """``num_samples`` indices drawn from the categories 0..k-1 with probabilities proportional
    to the k weights in ``input`` (each row of a 2-D ``input`` is one distribution).

    The weights need not sum to one (they are normalised), must be >= 0 and finite, with a
    positive sum.  Without ``replacement`` each index appears at most once per row, so
    ``num_samples`` may not exceed the number of nonzero weights.  Returns Int64 on
    ``input``'s device, shape ``(num_samples,)`` or ``(rows, num_samples)``.
    """
    if not isinstance(input, Tensor):
        input = Tensor(input)  # noqa: A001
    num_samples = _count("multinomial", "num_samples", num_samples)
    w = input.numpy().astype(np.float64)
    if w.ndim not in (1, 2) or w.shape[-1] == 0:
        raise ValueError(f"multinomial: input must be 1-D or 2-D with at least one category, "
                         f"got shape {input.shape}")
    rows = w.reshape(-1, w.shape[-1])
    if not np.all(np.isfinite(rows)) or np.any(rows < 0) or np.any(rows.sum(axis=1) <= 0):
        raise ValueError("multinomial: weights must be finite, >= 0 and have a positive sum "
                         "in every row")
    if not replacement and num_samples > int((rows > 0).sum(axis=1).min()):
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement "
                         f"from a row with only {int((rows > 0).sum(axis=1).min())} nonzero "
                         "weights; pass replacement=True or draw fewer")
    rng = _rng(generator)
    out = np.stack([rng.choice(len(r), size=num_samples, replace=bool(replacement),
                               p=r / r.sum()) for r in rows]).astype(np.int64)
    out = out.reshape(num_samples) if w.ndim == 1 else out
    return Tensor(out, device=input.device)


def _like(fn: str, a: Any, dtype: Any, device: str | None) -> tuple[tuple[int, ...], Any, str]:
    if not isinstance(a, Tensor):
        raise TypeError(f"{fn}: expected a Tensor, got {type(a).__name__}")
    return a.shape, (a.dtype if dtype is None else dtype), (device or a.device)


def rand_like(a: Tensor, dtype: Any = None, device: str | None = None,
              requires_grad: bool = False) -> Tensor:
    """:func:`rand` with ``a``'s shape, dtype and device (each overridable)."""
    shape, dtype, device = _like("rand_like", a, dtype, device)
    return rand(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randn_like(a: Tensor, dtype: Any = None, device: str | None = None,
               requires_grad: bool = False) -> Tensor:
    """:func:`randn` with ``a``'s shape, dtype and device (each overridable)."""
    shape, dtype, device = _like("randn_like", a, dtype, device)
    return randn(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(a: Tensor, low: int, high: int | None = None, dtype: Any = None,
                 device: str | None = None) -> Tensor:
    """:func:`randint` with ``a``'s shape, dtype and device; ``randint_like(a, high)`` draws
    from [0, high) as PyTorch's."""
    shape, dtype, device = _like("randint_like", a, dtype, device)
    return randint(low, high, size=shape, dtype=dtype, device=device)
