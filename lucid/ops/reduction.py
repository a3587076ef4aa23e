"""Reductions (sum, mean, var, std, prod, the vector norm ``x.norm()``, logsumexp, max, min,
argmax, argmin, any, all) and scans (cumsum, cumprod).

``axis`` is an int, a tuple of ints or None (every axis), as in NumPy; argmax/argmin take an
int or None.  An axis out of range raises IndexError naming the op.  ``keepdims=True`` keeps
each reduced axis with size 1, so the result broadcasts against the input.

The backward rule of every reduction has the same shape: put the gradient back on the input's
shape -- reshape ``g`` to the keepdims shape, then ``broadcast_to`` the input's shape -- and
weight it by how much each input element influenced the output (1 for sum, 1/n for mean, the
mask of maxima for max ...).  Backward always returns a gradient of the input's exact shape.

FLOPs convention (in = input elements, out = output elements):

* forward: one FLOP per input element for every reduction and scan (an add, a comparison or a
  multiply each); ops that finish with a division per output (mean, var) add ``out``.
* backward: the elementwise arithmetic and comparisons the rule performs; reshapes, broadcasts
  and selects (``where``) move data and are free.  So sum's backward costs 0 (a broadcast).
* argmax, argmin, any and all are not differentiable: backward 0.
"""

from __future__ import annotations

import math
import typing

import numpy as np

from lucid.backends import backend_for
from lucid.ops.base import FUNCTIONS, Op, apply, numel, public
from lucid.shapes import fmt, normalize_axes, normalize_axis
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

# NB: this module defines functions called sum, max, min, any and all (NumPy's names), which
# shadow Python's builtins everywhere below -- including inside the classes, because methods
# look globals up when they run.  The code here therefore never uses those builtins.  (The
# class ``Any`` is the op; type hints say ``typing.Any``.)


# --------------------------------------------------------------------------------------------
# reductions


class Reduce(Op):
    """A reduction over ``axis`` (int, tuple or None = all axes), optionally keeping dims.

    ``forward`` calls :meth:`setup` first: it checks the axes against the input and records
    the shapes backward needs (``self.axes``, ``self.in_shape``, ``self.kshape`` -- the
    keepdims shape -- and ``self.n``, how many elements each output reduces).
    """

    method = True  # x.sum(), x.max(axis=0), ...

    def __init__(self, axis: typing.Any = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = bool(keepdims)

    def setup(self, x: typing.Any) -> None:
        shape = tuple(x.shape)
        if not shape and type(self.axis) is int and self.axis in (0, -1):
            axes: tuple[int, ...] = ()  # a 0-d tensor's "axis 0" (NumPy and PyTorch): itself
        else:
            axes = normalize_axes(self.name, self.axis, len(shape))
        self.axes = axes
        self.in_shape = shape
        self.kshape = tuple(1 if i in axes else s for i, s in enumerate(shape))
        self.n = numel(tuple(shape[i] for i in axes))

    def spread(self, xp: typing.Any, g: typing.Any) -> typing.Any:
        """``g`` (output shape) put back on the input's shape: reshape to keepdims, broadcast."""
        return xp.broadcast_to(g.reshape(self.kshape), self.in_shape)

    def check_nonempty(self) -> None:
        """max/min/argmax/argmin of no elements has no value (sum and mean have identities)."""
        if self.n == 0:
            raise self.error(
                f"input {fmt(self.in_shape)} has no elements along axis {self._axis_text()}, "
                "and an empty reduction has no value. Check the shape, or reduce over an "
                "axis of nonzero size.",
                ValueError,
            )

    def _axis_text(self) -> str:
        return str(self.axis) if self.axis is None or isinstance(self.axis, int) else str(
            tuple(self.axis))

    def forward_flops(self, out: typing.Any, x: typing.Any) -> int:
        return x.size


class Sum(Reduce):
    """y = sum of x over the axes.   dy/dx_i = 1, so backward broadcasts g back to x's shape."""

    name = "sum"
    saves_inputs = False

    def forward(self, xp, x):
        self.setup(x)
        return backend_for(xp).sum(x, self.axes, self.keepdims)  # (MLX's: in blocks)

    def backward(self, xp, g):
        return (self.spread(xp, g),)

    def backward_flops(self, out, x):
        return 0  # a broadcast: no arithmetic


class Mean(Reduce):
    """y = (1/n) sum of x over the axes (n = elements per output).   dy/dx_i = 1/n."""

    name = "mean"
    saves_inputs = False

    def forward(self, xp, x):
        self.setup(x)
        if self.n == 0:  # the mean of no elements is 0/0: NaN (MLX would say inf)
            return xp.sum(x, axis=self.axes, keepdims=self.keepdims) * math.nan
        if x.dtype not in backend_for(xp).float_dtypes:
            return xp.mean(x, axis=self.axes, keepdims=self.keepdims)  # ints: NumPy's dtype rule
        return backend_for(xp).sum(x, self.axes, self.keepdims) / self.n

    def backward(self, xp, g):
        return (self.spread(xp, g * (1.0 / max(self.n, 1))),)  # n = 0: x is empty, so is dx

    def forward_flops(self, out, x):
        return x.size + out.size  # the sum, then one division per output

    def backward_flops(self, out, x):
        return out.size  # g / n, then a broadcast


class Var(Reduce):
    """y = sum (x - mu)^2 / (n - ddof), mu the mean over the axes.
    dy/dx_i = 2 (x_i - mu) / (n - ddof)   (the terms through mu sum to zero: sum (x - mu) = 0).

    ``ddof=0`` is the population variance, ``ddof=1`` the unbiased sample variance (Bessel's
    correction).  PyTorch's spellings are accepted too: ``correction=1`` is ``ddof=1``, and
    ``unbiased=True`` / ``False`` is ``ddof=1`` / ``0``.  The public ``lucid.var`` /
    ``x.var()`` default to PyTorch's ``correction=1``, except that NumPy's keyword ``axis=``
    keeps NumPy's ``ddof=0`` (lucid/ops/pytorch.py says why); the op itself takes ``ddof``.
    Forward keeps the centred values ``d = x - mu``, which is all backward needs.
    """

    name = "var"
    saves_inputs = False  # backward reads the saved centred values, not x

    def __init__(self, axis: typing.Any = None, keepdims: bool = False, ddof: int = 0, *,
                 correction: int | None = None, unbiased: bool | None = None) -> None:
        super().__init__(axis, keepdims)
        self.ddof = _ddof(self, ddof, correction, unbiased)

    def forward(self, xp, x):
        self.setup(x)
        dof = self.n - self.ddof
        if dof <= 0 and numel(self.kshape):  # (an empty result needs no dof)
            raise self.error(
                f"input {fmt(self.in_shape)} has {self.n} element(s) along axis "
                f"{self._axis_text()}, which leaves no degrees of freedom with ddof={self.ddof}"
                f" (n - ddof = {dof}). Use a smaller ddof or reduce over more elements.",
                ValueError,
            )
        total = backend_for(xp).sum  # (MLX's: in blocks)
        self.d = x - total(x, self.axes, True) / self.n
        return total(self.d * self.d, self.axes, self.keepdims) / dof

    def backward(self, xp, g):
        dof = self.n - self.ddof  # (<= 0 only for an empty result: then g is empty too)
        scale = g * (2.0 / dof if dof > 0 else 0.0)
        return (self.d * self.spread(xp, scale),)

    def forward_flops(self, out, x):
        # mean (in + out), subtract (in), square (in), sum (in), divide by n - ddof (out)
        return 4 * x.size + 2 * out.size

    def backward_flops(self, out, x):
        return x.size + out.size  # g * 2/(n - ddof) per output, times d per input


def _ddof(op: Op, ddof: typing.Any, correction: typing.Any, unbiased: typing.Any) -> int:
    """One ddof from NumPy's ``ddof`` and PyTorch's ``correction`` / ``unbiased``."""
    given = []
    if correction is not None:
        given.append(("correction", correction, correction))
    if unbiased is not None:
        given.append(("unbiased", unbiased, 1 if unbiased else 0))
    if ddof != 0:
        given.append(("ddof", ddof, ddof))
    if len(given) > 1:
        names = " and ".join(f"{n}={v!r}" for n, v, _ in given)
        raise op.error(f"{names} both set the degrees-of-freedom correction; give one of them",
                       TypeError)
    value = given[0][2] if given else 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise op.error(f"ddof/correction must be an int >= 0, got {value!r}", TypeError)
    return int(value)


class Std(Var):
    """y = sqrt(var(x)) = sqrt(sum (x - mu)^2 / (n - ddof)), the standard deviation.
    dy/dx_i = (x_i - mu) / ((n - ddof) y)   (the chain rule through sqrt: dvar / (2 y)).

    ``ddof``, ``correction`` and ``unbiased`` as in :func:`var` (default: PyTorch's
    correction=1, or NumPy's ddof=0 when the keyword ``axis=`` is used).  Where y = 0 (all
    values equal) the formula is 0/0; the gradient there is 0, as in PyTorch (a constant
    feature, or a std over one element).
    """

    name = "std"
    saves_output = True

    def forward(self, xp, x):
        self.y = xp.sqrt(super().forward(xp, x))
        return self.y

    def backward(self, xp, g):
        zero = self.y == 0
        safe = xp.where(zero, 1.0, self.y)  # no 0 in a denominator, at any order
        return super().backward(xp, xp.where(zero, 0.0, g / (2 * safe)))

    def forward_flops(self, out, x):
        return super().forward_flops(out, x) + out.size  # the square root

    def backward_flops(self, out, x):
        return super().backward_flops(out, x) + 2 * out.size  # g / (2 y)


def _others(x: Tensor, axes: tuple[int, ...]) -> Tensor:
    """For each element of ``x``, the product of the *other* elements of its product over
    ``axes``, built from ops only (create_graph): the n reduced values are laid out n times in
    an (n, n) block with the element itself replaced by 1, and each row multiplied out (prod,
    whose own backward does the same again at the next order).  Exact at zeros; O(n^2)."""
    keep = [i for i in range(x.ndim) if i not in axes]
    moved = x.transpose((*keep, *axes))
    lead = tuple(moved.shape[:len(keep)])
    n = numel(tuple(moved.shape[len(keep):]))
    flat = moved.reshape((*lead, 1, n))
    mask = Tensor(np.eye(n, dtype=bool), device=x.device)
    others = FUNCTIONS["prod"](FUNCTIONS["where"](mask, 1.0, flat), axis=-1)
    back = others.reshape(tuple(moved.shape))
    inverse = [0] * x.ndim
    for position, axis in enumerate((*keep, *axes)):
        inverse[axis] = position
    return back.transpose(tuple(inverse))


class Prod(Reduce):
    """y = product of x over the axes (1 for no elements).
    dy/dx_i = product of the other elements = y / x_i where x_i != 0.

    Dividing by zero is wrong, so backward counts the zeros of each product instead:
    no zero -- dy/dx_i = y / x_i;  one zero, at x_z -- dy/dx_z = product of the others
    (the nonzero ones), every other dy/dx_i = 0 (each still contains the factor x_z);
    two or more zeros -- every dy/dx_i = 0.  All three from one product of the nonzero entries
    and masks, no data-dependent branch.
    FLOPs: forward one multiply per input element; backward 5 per input element (zero test,
    product of the nonzero entries, zero count, division, multiply by g).
    """

    name = "prod"

    def forward(self, xp, x):
        self.setup(x)
        self.x = x
        if self.n == 0:  # the empty product is 1 (MLX reads uninitialised memory here)
            shape = self.kshape if self.keepdims else tuple(
                s for i, s in enumerate(self.in_shape) if i not in self.axes)
            kind = xp.prod(xp.ones((1,), dtype=x.dtype)).dtype  # a product's: Bool -> Int64
            return xp.ones(shape, dtype=kind)
        return xp.prod(x, axis=self.axes, keepdims=self.keepdims)

    def backward(self, xp, g):
        x = self.x
        if isinstance(x, Tensor):  # create_graph: the masks' derivative would be wrong
            return (g.reshape(self.kshape) * _others(x, self.axes),)
        zero = x == 0
        safe = xp.where(zero, 1, x)
        p = xp.prod(safe, axis=self.axes, keepdims=True)  # product of the nonzero entries
        zeros = xp.sum(zero.astype(x.dtype), axis=self.axes, keepdims=True)
        d = xp.where(zeros == 0, p / safe, xp.where(xp.logical_and(zero, zeros == 1), p, 0))
        return (g.reshape(self.kshape) * d,)

    def backward_flops(self, out, x):
        return 5 * x.size


class VectorNorm(Reduce):
    """y = ||x||_p over the axes, every axis together as one vector (all by default):

    * p > 0:   y = (sum |x_i|^p)^(1/p);  dy/dx_i = sign(x_i) |x_i|^(p-1) / y^(p-1)
      (p = 2: x_i / y, the Euclidean / Frobenius norm;  p = 1: sign(x_i));
    * p = inf: y = max |x_i|;  -inf: min |x_i|;  the gradient goes to the extreme entries,
      ties split evenly (as max/min);
    * p = 0:   y = the number of nonzero entries (a count: gradient 0).

    Where y = 0 (x is all zeros) the gradient is taken as 0, PyTorch's choice (the norm has
    no derivative there); for p < 1 the same holds at every x_i = 0.  ``p="fro"`` is p = 2.
    Float inputs only.  Published as the method ``x.norm(p, axis, keepdims)``.
    FLOPs: forward 3 per input element (|x|, power, sum) + 1 per output (root); backward
    5 per input element.
    """

    name = "pnorm"
    saves_output = True
    function = None  # the method x.norm() publishes it (lucid.linalg has the matrix norms)

    def __init__(self, p: typing.Any = 2, axis: typing.Any = None,
                 keepdims: bool = False) -> None:
        super().__init__(axis, keepdims)
        if p == "fro":
            p = 2
        if isinstance(p, (str, bool)) or not isinstance(p, (int, float, np.number)) or (
                p < 0 and p != -math.inf) or math.isnan(p):
            raise self.error(
                f"p must be a number >= 0, inf, -inf or 'fro', got {p!r} (matrix norms such "
                "as 'nuc' or the spectral norm belong to lucid.linalg.norm)",
                ValueError,
            )
        self.p = float(p)

    def forward(self, xp, x):
        kind = to_numeric_type(x.dtype)
        if not (kind.is_floating_point or kind.is_complex):
            raise self.error(
                f"needs a floating-point tensor, got {kind.name} {fmt(tuple(x.shape))}; "
                "cast first: x.astype(lucid.Float64).norm()",
                TypeError,
            )
        self.setup(x)
        self.x = x
        a, p = xp.abs(x), self.p
        total = backend_for(xp).sum  # (MLX's: in blocks, and right on empty inputs)
        if p == math.inf or p == -math.inf:
            self.check_nonempty()
            y = (xp.max if p > 0 else xp.min)(a, axis=self.axes, keepdims=True)
        elif p == 0:
            y = total((a != 0).astype(x.dtype), self.axes, True)
        elif p == 1:
            y = total(a, self.axes, True)
        elif p == 2:
            y = xp.sqrt(total(a * a, self.axes, True))
        else:
            y = total(a**p, self.axes, True) ** (1 / p)
        self.y = y  # keepdims shape, for backward
        return y if self.keepdims else y.reshape(
            tuple(s for i, s in enumerate(self.in_shape) if i not in self.axes))

    def backward(self, xp, g):
        x, y, p = self.x, self.y, self.p
        g = g.reshape(self.kshape)
        if p == 0:
            return (xp.zeros_like(x),)
        a = xp.abs(x)
        if p == math.inf or p == -math.inf:
            mask = (a == y).astype(x.dtype)
            count = xp.sum(mask, axis=self.axes, keepdims=True)
            return (xp.sign(x) * mask * (g / count),)
        if p == 1:
            return (xp.sign(x) * g,)
        safe = xp.where(y == 0, 1, y)
        if p == 2:
            d = x / safe
        else:
            d = xp.where(a == 0, 0, xp.sign(x) * (a / safe) ** (p - 1))
        return (xp.where(y == 0, 0, d * g),)

    def forward_flops(self, out, x):
        return 3 * x.size + out.size

    def backward_flops(self, out, x):
        return 5 * x.size


@public(method=True)
def norm(x: typing.Any, p: typing.Any = 2, axis: typing.Any = None,
         keepdims: bool = False) -> typing.Any:
    """``x.norm(p=2, axis=None, keepdims=False)`` (also ``lucid.norm(x, p, dim)``): the
    vector p-norm of ``x`` over ``axis`` (every axis by default, so a matrix gives its
    Frobenius norm), as PyTorch's ``Tensor.norm`` and ``torch.norm``.  ``p`` is a number
    >= 0, inf, -inf or "fro".  See :class:`VectorNorm`
    for the formulas and gradients; matrix norms (spectral, nuclear) are lucid.linalg's.
    """
    return apply(VectorNorm(p, axis, keepdims), x)


class LogSumExp(Reduce):
    """y = log sum_i e^(x_i) over the axes, computed as  m + log sum_i e^(x_i - m)  with m the
    maximum, so no exponent is positive and nothing overflows (log(sum(exp(x))) taken
    literally is inf from x ≈ 89 in float32).  Where m is infinite it is taken as 0, so
    all--inf inputs give -inf (not NaN); over no elements the result is -inf (log 0).

    dy/dx_i = e^(x_i) / sum_j e^(x_j) = e^(x_i - y): the softmax, computed from the output.
    FLOPs: forward 4 per input element (max, subtract, exp, sum) + 2 per output (log, add);
    backward 3 per input element (subtract, exp, multiply).
    """

    name = "logsumexp"
    saves_output = True

    def forward(self, xp, x):
        self.setup(x)
        self.x = x
        if self.n == 0:  # nothing to add: log 0 = -inf, in the float the sum below has (a
            m = 0  # bool or int input's too: it was -inf cast to the input's dtype, True)
        else:
            m = xp.max(x, axis=self.axes, keepdims=True)
            m = xp.where(xp.isinf(m), 0, m)
        s = xp.sum(xp.exp(x - m), axis=self.axes, keepdims=True)
        with np.errstate(divide="ignore"):  # a row of -inf: log 0 = -inf is the answer
            self.y = xp.log(s) + m
        if self.keepdims:
            return self.y
        return self.y.reshape(tuple(s for i, s in enumerate(self.in_shape) if i not in self.axes))

    def backward(self, xp, g):
        return (self.spread(xp, g) * xp.exp(self.x - self.y),)

    def forward_flops(self, out, x):
        return 4 * x.size + 2 * out.size

    def backward_flops(self, out, x):
        return 3 * x.size



class _Extremum(Reduce):
    """max / min: the gradient goes to the elements equal to the result, split evenly on ties.

    With k elements tied for the maximum each receives g / k (PyTorch's ``amax`` rule), so the
    total gradient is still g, as for a single winner.
    """

    saves_output = True
    fn = ""

    def forward(self, xp, x):
        self.setup(x)
        self.check_nonempty()
        self.x = x
        self.y = getattr(xp, self.fn)(x, axis=self.axes, keepdims=self.keepdims)
        return self.y

    def backward(self, xp, g):
        mask = (self.x == self.y.reshape(self.kshape)).astype(g.dtype)
        count = xp.sum(mask, axis=self.axes, keepdims=True)
        share = g.reshape(self.kshape) / count
        return (mask * share,)

    def backward_flops(self, out, x):
        # compare with y (in), count the ties (in), g / count (out), mask * share (in)
        return 3 * x.size + out.size


class Max(_Extremum):
    """y = max of x over the axes.   dy/dx_i = [x_i == y] / (number of maxima): ties split."""

    name = "max"
    fn = "max"


class Min(_Extremum):
    """y = min of x over the axes.   dy/dx_i = [x_i == y] / (number of minima): ties split."""

    name = "min"
    fn = "min"


class _ArgExtremum(Reduce):
    """The index of the max/min along one axis (or of the flattened input): int64, no gradient.

    The first occurrence wins a tie, as in NumPy.
    """

    differentiable = False
    saves_inputs = False
    fn = ""

    def forward(self, xp, x):
        if self.axis is not None and not isinstance(self.axis, int):
            raise self.error(
                f"axis must be an int or None, got {self.axis!r} (input {fmt(tuple(x.shape))}). "
                "To search several axes, reshape them into one first.",
                TypeError,
            )
        self.setup(x)
        self.check_nonempty()
        if x.size == 0:  # reducing a nonempty axis of an empty tensor: an empty result
            shape = self.kshape if self.keepdims else tuple(
                s for i, s in enumerate(self.in_shape) if i not in self.axes)
            return xp.zeros(shape, dtype=xp.int64)
        find = getattr(xp, self.fn)
        if self.axis is None:
            index = find(x.reshape(-1), axis=0)
            shape = self.kshape if self.keepdims else ()
            index = index.reshape(shape)
        else:
            index = find(x, axis=self.axes[0], keepdims=self.keepdims)
        return index.astype(xp.int64)  # NumPy gives int64, MLX uint32: settle on int64

    def backward_flops(self, out, x):
        return 0


class ArgMax(_ArgExtremum):
    """i = index of the largest element (first one on ties).   Not differentiable."""

    name = "argmax"
    fn = "argmax"


class ArgMin(_ArgExtremum):
    """i = index of the smallest element (first one on ties).   Not differentiable."""

    name = "argmin"
    fn = "argmin"


class _Truth(Reduce):
    """Whether any / all elements are true (nonzero) over the axes: bool, no gradient."""

    differentiable = False
    saves_inputs = False
    fn = ""

    def forward(self, xp, x):
        self.setup(x)
        return getattr(xp, self.fn)(x, axis=self.axes, keepdims=self.keepdims)

    def backward_flops(self, out, x):
        return 0


class Any(_Truth):
    """y = x_1 or x_2 or ... over the axes (False for no elements).   Not differentiable."""

    name = "any"
    fn = "any"


class All(_Truth):
    """y = x_1 and x_2 and ... over the axes (True for no elements).   Not differentiable."""

    name = "all"
    fn = "all"


# --------------------------------------------------------------------------------------------
# scans: same shape out as in


def _reverse(x: typing.Any, axis: int) -> typing.Any:
    """``x`` reversed along ``axis`` by slicing (works on NumPy and MLX arrays alike)."""
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def _reverse_cumsum(xp: typing.Any, x: typing.Any, axis: int) -> typing.Any:
    """r_k = sum_{i >= k} x_i along ``axis``: the adjoint of cumsum."""
    return _reverse(xp.cumsum(_reverse(x, axis), axis=axis), axis)


class Scan(Op):
    """A cumulative op along one axis; the output has the input's shape."""

    method = True

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def setup(self, x: typing.Any) -> None:
        if not isinstance(self.axis, int):
            raise self.error(
                f"axis must be an int, got {self.axis!r} (input {fmt(tuple(x.shape))})",
                TypeError,
            )
        if x.ndim == 0:
            raise self.error(
                "input () is a 0-d tensor and has no axis to scan along. Reshape it to (1,) "
                "first.",
                IndexError,
            )
        self.ax = normalize_axis(self.name, self.axis, x.ndim)

    def forward_flops(self, out, x):
        return x.size


class CumSum(Scan):
    """y_i = x_0 + ... + x_i along the axis.
    dy_i/dx_k = 1 for i >= k, so dL/dx_k = sum_{i >= k} g_i: a cumsum of g run backwards.
    """

    name = "cumsum"
    saves_inputs = False

    def forward(self, xp, x):
        self.setup(x)
        return xp.cumsum(x, axis=self.ax)

    def backward(self, xp, g):
        return (_reverse_cumsum(xp, g, self.ax),)

    def backward_flops(self, out, x):
        return x.size


def _cumprod_grad(x: Tensor, g: Tensor, axis: int) -> Tensor:
    """dL/dx_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j from ops only (create_graph):
    the line laid out n times with x_k replaced by 1 in row k, its cumprod along the row, the
    entries i >= k kept and weighted by g.  Exact at zeros; O(n^2) per line."""
    xm, gm = x.swapaxes(axis, -1), g.swapaxes(axis, -1)
    n = xm.shape[-1]
    eye = Tensor(np.eye(n, dtype=bool), device=x.device)
    rows = FUNCTIONS["where"](eye, 1.0, xm.unsqueeze(-2))       # (..., k, j)
    partial = FUNCTIONS["cumprod"](rows, axis=-1)               # (..., k, i)
    later = Tensor(np.triu(np.ones((n, n), dtype=bool)), device=x.device)  # i >= k
    kept = FUNCTIONS["where"](later, partial, 0.0)
    return (kept * gm.unsqueeze(-2)).sum(axis=-1).swapaxes(-1, axis)


class CumProd(Scan):
    """y_i = x_0 * x_1 * ... * x_i along the axis.
    dy_i/dx_k = prod_{j <= i, j != k} x_j for i >= k (0 for i < k), and
    dL/dx_k = sum_{i >= k} g_i dy_i/dx_k.

    Without zeros this is ``revcumsum(g * y)_k / x_k`` (each y_i with its factor x_k divided
    out).  Dividing by zero is wrong, so backward splits each line along the axis at its first
    zero z, and stays exact:

    * k < z: x_k is not 0, and the division formula holds as written;
    * k = z: dy_i/dx_z is the cumulative product with x_z replaced by 1, so
      dL/dx_z = revcumsum(g * y')_z with y' = cumprod(x with x_z := 1);
    * k > z: every dy_i/dx_k contains the factor x_z = 0, so the gradient is exactly 0.

    All three are computed for every line with masks (no data-dependent branches), at the
    cost of a second cumprod.
    """

    name = "cumprod"
    saves_output = True

    def forward(self, xp, x):
        self.setup(x)
        self.x = x
        self.y = xp.cumprod(x, axis=self.ax)
        return self.y

    def backward(self, xp, g):
        if isinstance(g, Tensor):  # create_graph: the masks' derivative would be wrong
            return (_cumprod_grad(self.x, g, self.ax),)
        x, y, ax = self.x, self.y, self.ax
        zero = x == 0
        seen = xp.cumsum(zero.astype(x.dtype), axis=ax)  # zeros up to and including k
        before = seen == 0  # k lies before the line's first zero (or it has none)
        first = xp.logical_and(zero, seen == 1)  # k is the first zero
        # k < z: divide x_k out of every later product (x_k != 0 there)
        divided = _reverse_cumsum(xp, g * y, ax) / xp.where(before, x, 1)
        # k = z: the products with x_z replaced by 1
        y_skip = xp.cumprod(xp.where(first, 1, x), axis=ax)
        at_zero = _reverse_cumsum(xp, g * y_skip, ax)
        return (xp.where(before, divided, xp.where(first, at_zero, 0)),)

    def backward_flops(self, out, x):
        # masks: ==0, cumsum, ==0, ==1, & (5 per element); arithmetic: g*y, revcumsum,
        # division, second cumprod, g*y', revcumsum (6 per element)
        return 11 * x.size
