"""Row types of the op spec table and the sample generators rows share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class ErrorCase:
    """Calling ``call()`` must raise ``exc`` with a message matching the regex ``match``."""

    call: Callable[[], Any]
    exc: type[BaseException]
    match: str


@dataclass(frozen=True)
class FlopsCase:
    """Hand-counted FLOPs of the row's op on ``inputs``: forward and backward."""

    inputs: tuple[np.ndarray, ...]
    forward: int
    backward: int


@dataclass(frozen=True)
class Spec:
    """One row: how to call the op, what NumPy says it should give, where it is defined.

    ``fn`` takes Tensors (one per sample array) and returns a Tensor; ``ref`` takes the same
    samples as float64 NumPy arrays.  Float sample arrays become ``requires_grad`` inputs for
    gradcheck; int/bool ones (indices, masks) stay constant.
    """

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any]
    samples: tuple[tuple[np.ndarray, ...], ...]
    grad: bool = True
    errors: tuple[ErrorCase, ...] = ()
    flops: tuple[FlopsCase, ...] = ()
    label: str = ""
    atol: float = 1e-12
    rtol: float = 1e-10
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.label}]" if self.label else self.name


# -- sample generators -----------------------------------------------------------------------

SHAPES = ((), (5,), (3, 4), (2, 3, 4))


def rand(shape: tuple[int, ...], low: float = -2.0, high: float = 2.0, seed: int = 0) -> np.ndarray:
    """Deterministic float64 samples in [low, high)."""
    rng = np.random.default_rng(abs(hash((shape, low, high, seed))) % 2**32)
    return rng.uniform(low, high, size=shape)


def transposed(shape: tuple[int, int] = (4, 3), low: float = -2.0, high: float = 2.0) -> np.ndarray:
    """A non-contiguous (transposed) float64 array."""
    arr = rand(shape, low, high, seed=7).T
    assert not arr.flags.c_contiguous
    return arr


def unary(low: float = -2.0, high: float = 2.0) -> tuple[tuple[np.ndarray, ...], ...]:
    """Shapes (), (5,), (3,4), (2,3,4) and a transposed (3,4) input."""
    return tuple((rand(s, low, high),) for s in SHAPES) + ((transposed(low=low, high=high),),)


def binary(
    low: float = -2.0, high: float = 2.0, low_b: float | None = None, high_b: float | None = None
) -> tuple[tuple[np.ndarray, ...], ...]:
    """Equal shapes, a broadcast pair (3,1,4)+(2,4), array+scalar and a transposed pair."""
    lb = low if low_b is None else low_b
    hb = high if high_b is None else high_b
    same = tuple((rand(s, low, high, 1), rand(s, lb, hb, 2)) for s in SHAPES)
    return same + (
        (rand((3, 1, 4), low, high, 3), rand((2, 4), lb, hb, 4)),
        (rand((3, 4), low, high, 5), rand((), lb, hb, 6)),
        (transposed(low=low, high=high), rand((3, 4), lb, hb, 8)),
    )
