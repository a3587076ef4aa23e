"""Ops whose result's size depends on the values: nonzero, unique, histogram, histogram2d,
histogramdd.  None is differentiable (their outputs are indices, counts and bin edges), and
MLX has none of them, so on "gpu" they run with NumPy and move back (``fallback``, with a
one-time warning).

Several return more than one tensor (``unique(x, return_counts=True)``, ``histogram``'s
counts and edges): the op's own output is the first, and ``call`` wraps the others, which
``forward`` hands over in ``self.extras``, on the same device.

FLOPs: one per input element forward (a test, a comparison or a bin lookup each), plus the
comparisons of the sort ``unique`` needs (n·log2 n); backward 0.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from lucid.backends import BACKENDS
from lucid.ops.base import Op, apply
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type


class _Counting(Op):
    """A non-differentiable op with a value-dependent result, run with NumPy on every device."""

    differentiable = False
    saves_inputs = False
    fallback = True

    def forward_flops(self, out: Any, *xs: Any) -> int:
        return xs[0].size

    def backward_flops(self, out: Any, *xs: Any) -> int:
        return 0

    def extra_tensors(self, out: Tensor) -> list[Tensor]:
        """The further results ``forward`` left in ``self.extras``, on ``out``'s device."""
        backend = BACKENDS[out.device]
        return [Tensor._wrap(backend.asarray(np.ascontiguousarray(e)), out.device)
                for e in self.__dict__.pop("extras")]


class Nonzero(_Counting):
    """The indices of the nonzero (True) entries of x, in row-major order.

    ``as_tuple=False`` (PyTorch's default): one Int64 tensor of shape (N, x.ndim), a row of
    indices per nonzero entry.  ``as_tuple=True``: NumPy's form, a tuple of x.ndim Int64
    tensors of shape (N,), one per axis (``x[lucid.nonzero(x, as_tuple=True)]`` picks the
    entries).  Not differentiable.
    """

    name = "nonzero"
    method = True

    def __init__(self, as_tuple: bool = False) -> None:
        self.as_tuple = bool(as_tuple)

    @classmethod
    def call(cls, x: Any, as_tuple: bool = False) -> Any:
        op = cls(as_tuple)
        out = apply(op, x)
        if not as_tuple:
            return out
        return (out, *op.extra_tensors(out))

    def forward(self, xp, x):
        if x.ndim == 0:
            raise self.error(
                "input () is a 0-d tensor; nonzero needs at least one axis to index. "
                "Reshape it to (1,) first.",
                ValueError,
            )
        where = np.nonzero(x)
        if self.as_tuple:
            self.extras = [w.astype(np.int64) for w in where[1:]]
            return where[0].astype(np.int64)
        return np.stack(where, axis=1).astype(np.int64)


class Unique(_Counting):
    """The distinct values of x, sorted ascending (NumPy's ``unique``).

    ``axis=None`` flattens x first; an int axis finds the distinct slices along it.
    ``return_inverse=True`` also returns the Int64 indices that rebuild x from the values
    (``values[inverse]`` equals x; for ``axis=None`` inverse has x's shape, as in NumPy 2 and
    PyTorch), ``return_counts=True`` how often each value occurs.  The results come in that
    order: ``values, inverse, counts``.  Not differentiable.
    """

    name = "unique"
    method = True

    def __init__(self, return_inverse: bool = False, return_counts: bool = False,
                 axis: int | None = None) -> None:
        if axis is not None:
            try:
                axis = operator.index(axis)
            except TypeError:
                raise self.error(f"axis must be an int or None, got {axis!r}", TypeError) from None
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)
        self.axis = axis

    @classmethod
    def call(cls, x: Any, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
             return_counts: bool = False, axis: int | None = None) -> Any:
        """The values come sorted whatever ``sorted`` says (PyTorch allows either order)."""
        op = cls(return_inverse, return_counts, axis)
        out = apply(op, x)
        if not (return_inverse or return_counts):
            return out
        return (out, *op.extra_tensors(out))

    def forward(self, xp, x):
        if self.axis is not None and not -x.ndim <= self.axis < x.ndim:
            raise self.error(
                f"axis {self.axis} is out of range for a tensor with {x.ndim} dimension(s) "
                f"(shape {fmt(tuple(x.shape))})",
                IndexError,
            )
        self.n = x.size
        found = np.unique(x, return_inverse=self.return_inverse,
                          return_counts=self.return_counts, axis=self.axis)
        if not (self.return_inverse or self.return_counts):
            return found
        values, *extras = found
        if self.return_inverse and self.axis is None:
            extras[0] = extras[0].reshape(x.shape)
        self.extras = [e.astype(np.int64) for e in extras]
        return values

    def forward_flops(self, out, x):
        n = x.size
        return n + (round(n * math.log2(n)) if n > 1 else 0)  # the sort, then one pass


def _edges(op: Op, bins: Any) -> Any:
    """``bins`` as NumPy takes it: an int, or a 1-D sequence of edges (a Tensor welcome)."""
    if isinstance(bins, Tensor):
        return bins.numpy()
    if isinstance(bins, (list, tuple)) and any(isinstance(b, Tensor) for b in bins):
        return [b.numpy() if isinstance(b, Tensor) else b for b in bins]
    return bins


def _float_result(op: Op, *xs: Any) -> None:
    for x in xs:
        kind = to_numeric_type(x.dtype)
        if kind.is_complex:
            raise op.error(f"needs real values, got {kind.name} {fmt(tuple(x.shape))}",
                           TypeError)


class Histogram(_Counting):
    """Counts of x's values in ``bins`` bins (NumPy's ``histogram``): returns
    ``(hist, bin_edges)``.

    ``bins`` is a number of equal-width bins over ``range`` (default: x's min to max) or the
    sequence of edges; every bin is half open [e_i, e_i+1) except the last, which includes
    its right edge.  ``weights`` (x's shape) counts each value with its weight;
    ``density=True`` divides by the total and the bin widths, so the histogram integrates to
    1.  hist is Int64 counts, Float64 with weights or density; edges are Float64.  Not
    differentiable.
    """

    name = "histogram"
    inputs = ("x",)

    def __init__(self, bins: Any = 10, range: Any = None, density: bool = False) -> None:  # noqa: A002
        self.bins = _edges(self, bins)
        self.range = range
        self.density = bool(density)

    @classmethod
    def call(cls, x: Any, bins: Any = 10, range: Any = None, density: bool = False,  # noqa: A002
             weights: Any = None) -> tuple[Tensor, Tensor]:
        op = cls(bins, range, density)
        out = apply(op, x) if weights is None else apply(op, x, weights)
        return (out, *op.extra_tensors(out))

    def forward(self, xp, x, weights=None):
        _float_result(self, x)
        if weights is not None and tuple(weights.shape) != tuple(x.shape):
            raise self.error(
                f"weights have shape {fmt(tuple(weights.shape))} but x {fmt(tuple(x.shape))}; "
                "give one weight per value",
                ValueError,
            )
        try:
            hist, edges = np.histogram(x, self.bins, self.range, density=self.density,
                                       weights=weights)
        except ValueError as exc:
            raise self.error(f"input {fmt(tuple(x.shape))}: {exc}", ValueError) from None
        self.extras = [edges]
        return hist


class Histogram2d(_Counting):
    """The joint histogram of points (x_k, y_k) (NumPy's ``histogram2d``): returns
    ``(H, x_edges, y_edges)`` with H[i, j] the count of points in x bin i and y bin j.

    ``bins``: an int (both axes), a pair of ints, edges, or a pair of edge sequences;
    ``range``: [[xmin, xmax], [ymin, ymax]]; ``density`` and ``weights`` as in
    :func:`histogram`.  H is Float64 (NumPy's).  Not differentiable.
    """

    name = "histogram2d"
    inputs = ("x", "y")

    def __init__(self, bins: Any = 10, range: Any = None, density: bool = False) -> None:  # noqa: A002
        self.bins = _edges(self, bins)
        self.range = range
        self.density = bool(density)

    @classmethod
    def call(cls, x: Any, y: Any, bins: Any = 10, range: Any = None,  # noqa: A002
             density: bool = False, weights: Any = None) -> tuple[Tensor, Tensor, Tensor]:
        op = cls(bins, range, density)
        out = apply(op, x, y) if weights is None else apply(op, x, y, weights)
        return (out, *op.extra_tensors(out))

    def forward(self, xp, x, y, weights=None):
        _float_result(self, x, y)
        if x.ndim != 1 or tuple(x.shape) != tuple(y.shape):
            raise self.error(
                f"x {fmt(tuple(x.shape))} and y {fmt(tuple(y.shape))} must be 1-D and of one "
                "length: the coordinates of the points",
                ValueError,
            )
        try:
            hist, ex, ey = np.histogram2d(x, y, self.bins, self.range, density=self.density,
                                          weights=weights)
        except ValueError as exc:
            raise self.error(f"{exc}", ValueError) from None
        self.extras = [ex, ey]
        return hist


class HistogramDD(_Counting):
    """The histogram of N points in D dimensions (NumPy's ``histogramdd``): ``sample`` has
    shape (N, D); returns ``(H, edges)`` with H of D axes and ``edges`` a list of D Float64
    tensors.  ``bins``, ``range``, ``density`` and ``weights`` as in :func:`histogram2d`,
    one entry per dimension.  Not differentiable.
    """

    name = "histogramdd"
    inputs = ("sample",)

    def __init__(self, bins: Any = 10, range: Any = None, density: bool = False) -> None:  # noqa: A002
        self.bins = _edges(self, bins)
        self.range = range
        self.density = bool(density)

    @classmethod
    def call(cls, sample: Any, bins: Any = 10, range: Any = None,  # noqa: A002
             density: bool = False, weights: Any = None) -> tuple[Tensor, list[Tensor]]:
        op = cls(bins, range, density)
        out = apply(op, sample) if weights is None else apply(op, sample, weights)
        return out, op.extra_tensors(out)

    def forward(self, xp, sample, weights=None):
        _float_result(self, sample)
        if sample.ndim != 2:
            raise self.error(
                f"sample has shape {fmt(tuple(sample.shape))}; give the points as rows of a "
                "2-D (N, D) tensor",
                ValueError,
            )
        try:
            hist, edges = np.histogramdd(sample, self.bins, self.range, density=self.density,
                                         weights=weights)
        except ValueError as exc:
            raise self.error(f"{exc}", ValueError) from None
        self.extras = list(edges)
        return hist
