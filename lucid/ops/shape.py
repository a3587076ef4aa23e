"""Shape operations: reshape, transpose, squeeze, broadcast, join, split, pad, repeat, roll ...

Shape ops move data, they do no arithmetic: every op here costs 0 FLOPs forward.  Their
backward passes move the gradient back to where each input element came from, so they cost 0
FLOPs too -- except where one input element fed several outputs (``broadcast_to``, ``repeat``,
``tile``): its gradient is the *sum* of the copies' gradients, and a sum of m copies costs
m - 1 additions, counted as backward FLOPs.

None of these backward rules reads the input's values, only its shape, so every op sets
``saves_inputs = False`` and keeps the shapes it needs as plain tuples on ``self``.  Each
backward returns a gradient of exactly its input's shape.
"""

from __future__ import annotations

import operator
from typing import Any

from lucid.engine.grads import PartGrad
from lucid.ops.base import Op, apply, numel, public
from lucid.shapes import broadcasts_to, fmt, normalize_axes, normalize_axis, sum_to
from lucid.tensor import Tensor

# --------------------------------------------------------------------------------------------
# argument helpers


def _int(op: str, value: Any, what: str) -> int:
    """``value`` as a Python int (NumPy ints welcome), or a TypeError naming ``op``."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{op}: {what} must be an int, got {type(value).__name__} {value!r}"
        ) from None


def _ints(op: str, values: Any, what: str) -> tuple[int, ...]:
    """An int or a sequence of ints as a tuple of ints."""
    if isinstance(values, (list, tuple)):
        return tuple(_int(op, v, what) for v in values)
    return (_int(op, values, what),)


def _varargs(op: str, first: Any, more: tuple[Any, ...], what: str) -> tuple[int, ...]:
    """``f(a, (2, 3))``, ``f(a, [2, 3])`` and ``f(a, 2, 3)`` all mean the tuple (2, 3)."""
    if more:
        return _ints(op, (first, *more), what)
    return _ints(op, first, what)


def _axis_arg(op: str, axis: Any) -> int | tuple[int, ...] | None:
    """None, an int or a sequence of ints (as a tuple)."""
    if axis is None:
        return None
    if isinstance(axis, (list, tuple)):
        return _ints(op, axis, "an axis")
    return _int(op, axis, "axis")


def _tensor(a: Any) -> Tensor:
    """Composites below need ``a.shape`` before they call an op; lists and arrays become
    free tensors, exactly as ``apply`` would promote them."""
    if isinstance(a, Tensor):
        return a
    t = Tensor(a)
    t._free = True
    return t


def _along(axis: int, index: Any) -> tuple[Any, ...]:
    """A basic-indexing key that applies ``index`` to ``axis`` and keeps every other axis."""
    return (slice(None),) * axis + (index,)


class ShapeOp(Op):
    """Common ground of the shape ops: no arithmetic forward, no input values in backward."""

    saves_inputs = False

    def forward_flops(self, out: Any, *xs: Any) -> int:
        return 0

    def backward_flops(self, out: Any, *xs: Any) -> int:
        return 0


# --------------------------------------------------------------------------------------------
# one input, one new view of its elements


class Reshape(ShapeOp):
    """y = x with a new shape: the same elements in the same (row-major) order.
    ``reshape(x, (2, 3))`` or ``x.reshape(2, 3)``; one size may be -1, inferred from the
    element count.

    Every y element is one x element, so dL/dx is dL/dy read back in the old shape:
    ``reshape(g, x.shape)``.  Squeeze, Unsqueeze and Flatten are reshapes too: each only says
    how it computes the new shape (``target``).
    """

    name = "reshape"
    method = True

    def __init__(self, shape: Any, *more: int) -> None:
        self.shape = _varargs("reshape", shape, more, "a size")

    def forward(self, xp, x):
        self.in_shape = tuple(x.shape)
        return xp.reshape(x, self.target(self.in_shape))

    def backward(self, xp, g):
        return (xp.reshape(g, self.in_shape),)

    def target(self, in_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The new shape for an input of shape ``in_shape`` (checked)."""
        shape, n = self.shape, numel(in_shape)
        for s in shape:
            if s < -1:
                raise self.error(
                    f"invalid size {s} in the new shape {fmt(shape)}; sizes must be >= 0, "
                    "or -1 for the one size to infer"
                )
        if shape.count(-1) > 1:
            raise self.error(
                f"the new shape {fmt(shape)} has more than one -1; only one size can be "
                "inferred, give the others explicitly"
            )
        known = numel(tuple(s for s in shape if s != -1))
        if -1 in shape:
            if known == 0 or n % known:
                raise self.error(
                    f"cannot reshape {fmt(in_shape)} ({n} elements) into {fmt(shape)}: the "
                    f"other sizes multiply to {known}, which does not divide {n}; change "
                    "them so that they do"
                )
            return tuple(n // known if s == -1 else s for s in shape)
        if known != n:
            raise self.error(
                f"cannot reshape {fmt(in_shape)} ({n} elements) into {fmt(shape)} ({known} "
                "elements); the new shape must hold the same number of elements (use -1 "
                "for one size to have it inferred)"
            )
        return shape


class Transpose(ShapeOp):
    """y = x with its axes permuted: y.shape[k] = x.shape[axes[k]] (no axes: reversed).

    Two spellings, two meanings, told apart by how the axes are given:

    * ``x.transpose(d0, d1)`` / ``transpose(x, d0, d1)`` -- exactly two ints: axes ``d0`` and
      ``d1`` swapped, the others kept (PyTorch's meaning, any number of dimensions);
    * ``x.transpose((2, 0, 1))`` / ``transpose(x, axes)`` -- one tuple: the full permutation
      (NumPy's and Lucid 2.x's meaning; PyTorch's name is ``permute``); ``x.transpose()``
      reverses the axes, and three or more ints are a permutation too.

    Why: on a matrix, NumPy reads ``transpose(0, 1)`` as the identity permutation, PyTorch as
    a swap; a PyTorch program must not silently get its matrix back unchanged.

    Permuting moves elements without changing them, so the gradient is permuted back with the
    inverse permutation: dL/dx = transpose(g, argsort(axes)).
    """

    name = "transpose"
    method = True

    def __init__(self, axes: Any = None, *more: int) -> None:
        self.swap = None
        if len(more) == 1 and not isinstance(axes, (tuple, list)):  # PyTorch's (d0, d1)
            self.swap = (_int("transpose", axes, "dim0"), _int("transpose", more[0], "dim1"))
            self.axes = None
        else:  # transpose(x, (1, 0)), x.transpose(2, 0, 1): a permutation
            self.axes = None if axes is None else _varargs("transpose", axes, more, "an axis")

    def forward(self, xp, x):
        nd = x.ndim
        if self.swap is not None:
            d0, d1 = (normalize_axis(self.name, a, nd) for a in self.swap)
            perm = list(range(nd))
            perm[d0], perm[d1] = d1, d0
            perm = tuple(perm)
        elif self.axes is None:
            perm = tuple(reversed(range(nd)))
        else:
            if len(self.axes) != nd:
                raise self.error(
                    f"axes {self.axes} has {len(self.axes)} entries but the tensor of shape "
                    f"{fmt(tuple(x.shape))} has {nd} dimension(s); give one entry per axis "
                    "(or two ints, x.transpose(d0, d1), to swap two axes)"
                )
            perm = tuple(normalize_axis(self.name, a, nd) for a in self.axes)
            if sorted(perm) != list(range(nd)):
                raise self.error(
                    f"axes {self.axes} is not a permutation of {tuple(range(nd))} for shape "
                    f"{fmt(tuple(x.shape))}; each axis must appear exactly once"
                )
        self.inverse = tuple(sorted(range(nd), key=perm.__getitem__))
        return xp.transpose(x, perm)

    def backward(self, xp, g):
        return (xp.transpose(g, self.inverse),)


class SwapAxes(ShapeOp):
    """y = x with axes ``axis1`` and ``axis2`` exchanged.

    Swapping is its own inverse, so dL/dx = swapaxes(g, axis1, axis2).
    """

    name = "swapaxes"
    method = True

    def __init__(self, axis1: int, axis2: int) -> None:
        self.axis1 = _int("swapaxes", axis1, "axis1")
        self.axis2 = _int("swapaxes", axis2, "axis2")

    def forward(self, xp, x):
        self.a1 = normalize_axis(self.name, self.axis1, x.ndim)
        self.a2 = normalize_axis(self.name, self.axis2, x.ndim)
        return xp.swapaxes(x, self.a1, self.a2)

    def backward(self, xp, g):
        return (xp.swapaxes(g, self.a1, self.a2),)


class Squeeze(Reshape):
    """y = x without axes of size 1 (all of them, or the ones named by ``axis``).

    Only the shape changes, so dL/dx = reshape(g, x.shape).
    """

    name = "squeeze"

    def __init__(self, axis: int | tuple[int, ...] | None = None) -> None:
        self.axis = _axis_arg("squeeze", axis)

    def target(self, shape):
        if self.axis is None:
            axes = tuple(i for i, s in enumerate(shape) if s == 1)
        else:
            axes = normalize_axes(self.name, self.axis, len(shape))
            for ax in axes:
                if shape[ax] != 1:
                    raise self.error(
                        f"cannot squeeze axis {ax} of shape {fmt(shape)}: its size is "
                        f"{shape[ax]}, not 1; squeeze only removes axes of size 1 (pick "
                        "another axis, or use reshape). PyTorch would hand the tensor back "
                        "unchanged; for that, write x.squeeze(d) if x.shape[d] == 1 else x"
                    )
        return tuple(s for i, s in enumerate(shape) if i not in axes)


class Unsqueeze(Reshape):
    """y = x with new axes of size 1 inserted at ``axis`` (positions in y, as NumPy's
    expand_dims counts them).   dL/dx = reshape(g, x.shape).
    """

    name = "unsqueeze"

    def __init__(self, axis: int | tuple[int, ...]) -> None:
        self.axis = _axis_arg(self.name, axis)

    def target(self, shape):
        count = 1 if isinstance(self.axis, int) else len(self.axis)
        axes = normalize_axes(self.name, self.axis, len(shape) + count)
        sizes = iter(shape)
        return tuple(1 if i in axes else next(sizes) for i in range(len(shape) + count))


class ExpandDims(Unsqueeze):
    """NumPy's name for :func:`unsqueeze`: y = x with new axes of size 1 at ``axis``."""

    name = "expand_dims"


class Flatten(Reshape):
    """y = x with axes ``start_axis..end_axis`` (inclusive) merged into one (all of them by
    default).   A 0-d tensor becomes shape (1,).  Only the shape changes: dL/dx =
    reshape(g, x.shape).
    """

    name = "flatten"

    def __init__(self, start_axis: int = 0, end_axis: int = -1) -> None:
        self.start_axis = _int("flatten", start_axis, "start_axis")
        self.end_axis = _int("flatten", end_axis, "end_axis")

    def target(self, shape):
        nd = max(len(shape), 1)  # a 0-d tensor flattens like shape (1,)
        start = normalize_axis(self.name, self.start_axis, nd)
        end = normalize_axis(self.name, self.end_axis, nd)
        if start > end:
            raise self.error(
                f"start_axis {self.start_axis} comes after end_axis {self.end_axis} for shape "
                f"{fmt(shape)}; give start_axis <= end_axis"
            )
        if not shape:
            return (1,)
        return shape[:start] + (numel(shape[start : end + 1]),) + shape[end + 1 :]


class BroadcastTo(ShapeOp):
    """y = x stretched to ``shape`` by NumPy's broadcasting rule (a size-1 axis repeats).

    An x element copied to m places of y receives the sum of their gradients:
    dL/dx = sum_to(g, x.shape), which costs y.size - x.size additions.
    """

    name = "broadcast_to"
    method = True

    def __init__(self, shape: Any) -> None:
        self.shape = _ints("broadcast_to", shape, "a size")

    def forward(self, xp, x):
        shape = self.in_shape = tuple(x.shape)
        target = self.shape
        if not broadcasts_to(shape, target):
            raise self.error(f"cannot broadcast {fmt(shape)} to {fmt(target)}: {self._why()}")
        return xp.broadcast_to(x, target)

    def _why(self) -> str:
        shape, target = self.in_shape, self.shape
        if any(s < 0 for s in target):
            return "target sizes must be >= 0"
        if len(shape) > len(target):
            return (
                f"the target has fewer dimensions ({len(target)}) than the input "
                f"({len(shape)}); broadcasting only adds axes on the left"
            )
        lead = len(target) - len(shape)
        for i, s in enumerate(shape):
            if s != 1 and s != target[lead + i]:
                return (
                    f"input axis {i} has size {s}, which is neither 1 nor the target size "
                    f"{target[lead + i]}; each axis must match or be 1 (reshape the input first)"
                )
        return "shapes do not broadcast"  # pragma: no cover -- one of the above applies

    def backward(self, xp, g):
        return (sum_to(xp, g, self.in_shape),)

    def backward_flops(self, out, x):
        return max(out.size - x.size, 0)


# --------------------------------------------------------------------------------------------
# several inputs joined into one


class Concatenate(ShapeOp):
    """y = [x_0, x_1, ...] joined along an existing ``axis``.

    Each x_i fills its own slab of y, so dL/dx_i is g's slab at the same place along axis.
    """

    name = "concatenate"
    inputs = ("*tensors",)

    @classmethod
    def call(cls, tensors: Any, axis: int = 0) -> Tensor:
        return apply(cls(_int("concatenate", axis, "axis")), *_sequence("concatenate", tensors))

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, xp, *xs):
        first = tuple(xs[0].shape)
        if not first:
            raise self.error(
                "zero-dimensional tensors cannot be concatenated (tensor 0 has shape ()); "
                "use stack, or reshape them to (1,) first"
            )
        for i, x in enumerate(xs[1:], 1):
            if x.ndim != len(first):
                raise self.error(
                    f"tensor {i} has shape {fmt(tuple(x.shape))} ({x.ndim} dimension(s)) but "
                    f"tensor 0 has shape {fmt(first)} ({len(first)}); all tensors need the "
                    "same number of dimensions"
                )
        ax = normalize_axis(self.name, self.axis, len(first))
        for i, x in enumerate(xs[1:], 1):
            for d, (s, s0) in enumerate(zip(x.shape, first)):
                if d != ax and s != s0:
                    raise self.error(
                        f"tensor {i} has shape {fmt(tuple(x.shape))} but tensor 0 has shape "
                        f"{fmt(first)}: axis {d} differs ({s} vs {s0}); every axis except the "
                        f"concatenation axis {ax} must match"
                    )
        self.ax = ax
        self.sizes = [x.shape[ax] for x in xs]
        return xp.concatenate(list(xs), axis=ax)

    def backward(self, xp, g):
        grads, start = [], 0
        for size in self.sizes:
            grads.append(g[_along(self.ax, slice(start, start + size))])
            start += size
        return tuple(grads)


class Stack(ShapeOp):
    """y = [x_0, x_1, ...] joined along a new ``axis`` (all x_i of one shape).

    x_i is y's slice i along that axis, so dL/dx_i = g[..., i, ...].
    """

    name = "stack"
    inputs = ("*tensors",)

    @classmethod
    def call(cls, tensors: Any, axis: int = 0) -> Tensor:
        return apply(cls(_int("stack", axis, "axis")), *_sequence("stack", tensors))

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, xp, *xs):
        first = tuple(xs[0].shape)
        for i, x in enumerate(xs[1:], 1):
            if tuple(x.shape) != first:
                raise self.error(
                    f"tensor {i} has shape {fmt(tuple(x.shape))} but tensor 0 has shape "
                    f"{fmt(first)}; stack needs tensors of one shape (concatenate joins "
                    "along an existing axis)"
                )
        self.ax = normalize_axis(self.name, self.axis, len(first) + 1)
        self.count = len(xs)
        return xp.stack(list(xs), axis=self.ax)

    def backward(self, xp, g):
        return tuple(g[_along(self.ax, i)] for i in range(self.count))


# --------------------------------------------------------------------------------------------
# slicing, padding and copying along axes


class Narrow(ShapeOp):
    """y = x[..., start : start + length, ...] along one ``axis`` (start may be negative).

    The sliced-out elements do not reach y, so their gradient is 0: dL/dx is g padded with
    zeros back to x's size along axis.
    """

    name = "narrow"
    method = True

    def __init__(self, axis: int, start: int, length: int) -> None:
        self.axis = _int("narrow", axis, "axis")
        self.start = _int("narrow", start, "start")
        self.length = _int("narrow", length, "length")

    def forward(self, xp, x):
        shape = tuple(x.shape)
        if not shape:
            raise self.error("cannot narrow a 0-d tensor (shape ()); it has no axis to slice")
        ax = normalize_axis(self.name, self.axis, x.ndim)
        n, start, length = shape[ax], self.start, self.length
        if not -n <= start <= n:
            raise self.error(
                f"start {start} is out of range for axis {ax} of shape {fmt(shape)} (size "
                f"{n}); valid starts are {-n}..{n}"
            )
        start = start + n if start < 0 else start
        if length < 0 or start + length > n:
            raise self.error(
                f"start {start} with length {length} does not fit axis {ax} of shape "
                f"{fmt(shape)} (size {n}); length must be in 0..{n - start}"
            )
        self.shape, self.dtype = shape, x.dtype
        self.index = _along(ax, slice(start, start + length))
        return x[self.index]

    def backward(self, xp, g):
        return (PartGrad(self.shape, self.dtype, self.index, g),)  # added into place


class Pad(ShapeOp):
    """y = x surrounded by ``constant_values``: pad_width[i] = (before, after) along axis i.

    The padding is constant, so only the middle block of g reaches x:
    dL/dx = g[before_0 : before_0 + n_0, ...].
    """

    name = "pad"

    def __init__(self, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> None:
        self.pad_width, self.mode, self.value = pad_width, mode, constant_values

    def forward(self, xp, x):
        if self.mode != "constant":
            raise self.error(
                f"mode {self.mode!r} is not implemented; only mode='constant' is (pad with "
                "constant_values, or build other modes from narrow and concatenate)",
                NotImplementedError,
            )
        if not isinstance(self.value, (int, float)):
            raise self.error(
                f"constant_values must be one number, got {self.value!r}; per-axis values "
                "are not supported",
                NotImplementedError,
            )
        shape = self.in_shape = tuple(x.shape)
        self.widths = self._widths(shape)
        if not shape:  # a 0-d tensor has no axis to pad (NumPy returns it unchanged)
            return xp.reshape(x, ())
        return xp.pad(x, self.widths, constant_values=self.value)

    def _widths(self, shape: tuple[int, ...]) -> list[tuple[int, int]]:
        """NumPy's pad_width forms -- n, (before, after), ((b0, a0), (b1, a1), ...) -- as one
        (before, after) pair per axis."""
        pw, nd = self.pad_width, len(shape)
        usage = (
            "give one int, one (before, after) pair for every axis, or one pair per axis"
        )
        if isinstance(pw, (list, tuple)) and all(isinstance(p, (list, tuple)) for p in pw):
            pairs = [tuple(_ints(self.name, p, "a pad width")) for p in pw]
            if any(len(p) != 2 for p in pairs):
                raise self.error(f"pad_width {pw!r} has an entry that is not a pair; {usage}")
            if len(pairs) == 1:
                pairs = pairs * nd
            elif len(pairs) != nd:
                raise self.error(
                    f"pad_width has {len(pairs)} pairs but the tensor of shape {fmt(shape)} "
                    f"has {nd} dimension(s); {usage}"
                )
        else:
            flat = _ints(self.name, pw, "a pad width")
            if len(flat) == 1:
                flat = flat * 2
            if len(flat) != 2:
                raise self.error(f"pad_width {pw!r} is not a pair; {usage}")
            pairs = [flat] * nd
        if any(b < 0 or a < 0 for b, a in pairs):
            raise self.error(f"pad widths must be >= 0, got {pw!r}; use narrow to cut instead")
        return [(b, a) for b, a in pairs]

    def backward(self, xp, g):
        key = tuple(slice(b, b + n) for (b, _), n in zip(self.widths, self.in_shape))
        return (g[key],)


class Repeat(ShapeOp):
    """y = each element of x repeated ``repeats`` times along ``axis`` (NumPy's repeat; with
    axis=None x is flattened first).   repeats is one int or one count per element.

    x[i] is copied r_i times, so dL/dx[i] is the sum of its r_i copies' gradients
    (r_i - 1 additions each).
    """

    name = "repeat"
    method = True

    def __init__(self, repeats: int | tuple[int, ...], axis: int | None = None) -> None:
        if isinstance(repeats, (list, tuple)):
            repeats = _ints("repeat", repeats, "a repeat count")
        else:
            repeats = _int("repeat", repeats, "repeats")
        axis = None if axis is None else _int("repeat", axis, "axis")
        self.repeats, self.axis = repeats, axis

    def forward(self, xp, x):
        self.in_shape = tuple(x.shape)
        if self.axis is None:
            x = xp.reshape(x, (-1,))
        ax = self.ax = normalize_axis(self.name, 0 if self.axis is None else self.axis, x.ndim)
        n = self.n = x.shape[ax]
        reps = self.repeats
        if isinstance(reps, tuple):
            if len(reps) != n and len(reps) != 1:
                raise self.error(
                    f"{len(reps)} repeat counts for axis {ax} of size {n} (shape "
                    f"{fmt(tuple(x.shape))}); give one count per element or a single int"
                )
            if len(set(reps)) == 1:  # one count for every element: the fast path below
                reps = reps[0]
        if min(reps if isinstance(reps, tuple) else (reps,), default=0) < 0:
            raise self.error(f"repeat counts must be >= 0, got {self.repeats}")
        self.reps = reps
        self.per_slice = x.size // n if n else 0  # elements in one slice along axis
        if isinstance(reps, int):
            return xp.repeat(x, reps, ax)
        index = [i for i, r in enumerate(reps) for _ in range(r)]
        return xp.take(x, xp.array(index, dtype=xp.int32), axis=ax)

    def backward(self, xp, g):
        ax, reps, shape = self.ax, self.reps, tuple(g.shape)
        if isinstance(reps, int):
            # along axis y holds x[0] r times, x[1] r times, ...: view it as (n, r), sum r
            grad = xp.reshape(g, shape[:ax] + (self.n, reps) + shape[ax + 1 :]).sum(axis=ax + 1)
        else:
            parts, start = [], 0
            for r in reps:
                parts.append(g[_along(ax, slice(start, start + r))].sum(axis=ax, keepdims=True))
                start += r
            grad = xp.concatenate(parts, axis=ax) if parts else g
        return (xp.reshape(grad, self.in_shape),)

    def backward_flops(self, out, x):
        counts = (self.reps,) * self.n if isinstance(self.reps, int) else self.reps
        return self.per_slice * sum(max(r - 1, 0) for r in counts)


class Tile(ShapeOp):
    """y = x tiled ``reps[i]`` times along axis i (NumPy's tile; the shorter of x.shape and
    reps is padded with leading 1s).

    Each x element appears prod(reps) times; its gradient is the sum of those copies:
    view g as (r_0, n_0, r_1, n_1, ...) and sum the r axes.
    """

    name = "tile"
    method = True

    def __init__(self, reps: Any, *more: int) -> None:
        # tile(x, (2, 3)) and x.tile(2, 3) both work
        self.reps = _varargs("tile", reps, more, "a repetition count")

    def forward(self, xp, x):
        if any(r < 0 for r in self.reps):
            raise self.error(f"reps must be >= 0, got {self.reps}")
        shape = self.in_shape = tuple(x.shape)
        d = max(len(shape), len(self.reps))
        self.padded = (1,) * (d - len(shape)) + shape
        self.reps_p = (1,) * (d - len(self.reps)) + self.reps
        return xp.tile(x, self.reps)

    def backward(self, xp, g):
        interleaved = []
        for r, n in zip(self.reps_p, self.padded):
            interleaved += [r, n]
        grouped = xp.reshape(g, tuple(interleaved))
        grad = grouped.sum(axis=tuple(range(0, len(interleaved), 2)))
        return (xp.reshape(grad, self.in_shape),)

    def backward_flops(self, out, x):
        return max(out.size - x.size, 0)


class Roll(ShapeOp):
    """y = x shifted cyclically by ``shifts`` along ``axis`` (axis=None: as if flattened).

    Rolling back undoes it: dL/dx = roll(g, -shifts, axis).
    """

    name = "roll"
    method = True

    def __init__(self, shifts: int | tuple[int, ...], axis: Any = None) -> None:
        if isinstance(shifts, (list, tuple)):
            shifts = _ints("roll", shifts, "a shift")
        else:
            shifts = _int("roll", shifts, "shifts")
        self.shifts, self.axis = shifts, _axis_arg("roll", axis)

    def forward(self, xp, x):
        shifts, axis = self.shifts, self.axis
        if axis is None:
            if not isinstance(shifts, int):
                raise self.error(
                    f"with axis=None give one int shift (the tensor rolls as if flattened), "
                    f"got {shifts}; or name the axes to roll"
                )
        else:
            if isinstance(axis, tuple):
                axis = tuple(normalize_axis(self.name, a, x.ndim) for a in axis)
            else:
                axis = normalize_axis(self.name, axis, x.ndim)
            if isinstance(axis, tuple) and not isinstance(shifts, tuple):
                shifts = (shifts,) * len(axis)  # one shift for every named axis
            if isinstance(shifts, tuple) != isinstance(axis, tuple) or (
                isinstance(shifts, tuple) and len(shifts) != len(axis)
            ):
                raise self.error(
                    f"shifts {shifts} and axis {self.axis} do not pair up; give one int shift "
                    "and one axis, or tuples of equal length"
                )
        self.ax, self.steps = axis, shifts
        return xp.roll(x, shifts, axis)

    def backward(self, xp, g):
        shifts = self.steps
        back = tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts
        return (xp.roll(g, back, self.ax),)


def _need_matrix(op: Op, x: Any) -> None:
    if x.ndim < 2:
        raise op.error(
            f"needs a tensor with at least 2 dimensions (a matrix or a stack of matrices), "
            f"got shape {fmt(tuple(x.shape))}; reshape it first"
        )


class Tril(ShapeOp):
    """y = x with the entries above diagonal k of the last two axes set to 0.

    y_ij = x_ij where j - i <= k, else 0, so dL/dx = tril(g, k).
    """

    name = "tril"

    def __init__(self, k: int = 0, diagonal: int | None = None) -> None:
        # ``diagonal`` is PyTorch's name for k (``torch.tril(x, diagonal=1)``)
        self.k = _int("tril", k if diagonal is None else diagonal, "k")

    def forward(self, xp, x):
        _need_matrix(self, x)
        return xp.tril(x, self.k)

    def backward(self, xp, g):
        return (xp.tril(g, self.k),)


class Triu(ShapeOp):
    """y = x with the entries below diagonal k of the last two axes set to 0.

    y_ij = x_ij where j - i >= k, else 0, so dL/dx = triu(g, k).
    """

    name = "triu"

    def __init__(self, k: int = 0, diagonal: int | None = None) -> None:
        # ``diagonal`` is PyTorch's name for k (``torch.triu(x, diagonal=1)``)
        self.k = _int("triu", k if diagonal is None else diagonal, "k")

    def forward(self, xp, x):
        _need_matrix(self, x)
        return xp.triu(x, self.k)

    def backward(self, xp, g):
        return (xp.triu(g, self.k),)


class Diagonal(ShapeOp):
    """y[..., i] = x[..., i, i + offset] taken over axes (axis1, axis2) (offset < 0: below the
    main diagonal); the diagonal becomes the last axis of y, as in NumPy.

    Every other x entry is unused, so dL/dx is zeros with g written onto that diagonal.
    """

    name = "diagonal"
    method = True

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> None:
        self.offset = _int("diagonal", offset, "offset")
        self.axis1 = _int("diagonal", axis1, "axis1")
        self.axis2 = _int("diagonal", axis2, "axis2")

    def forward(self, xp, x):
        shape = tuple(x.shape)
        _need_matrix(self, x)
        a1 = normalize_axis(self.name, self.axis1, x.ndim)
        a2 = normalize_axis(self.name, self.axis2, x.ndim)
        if a1 == a2:
            raise self.error(
                f"axis1 and axis2 both name axis {a1} of shape {fmt(shape)}; give two "
                "different axes"
            )
        self.a1, self.a2, self.n1, self.n2 = a1, a2, shape[a1], shape[a2]
        return xp.diagonal(x, self.offset, a1, a2)

    def backward(self, xp, g):
        n1, n2, k, lead = self.n1, self.n2, self.offset, g.ndim - 1
        size = g.shape[-1]
        # Spread g over an (n1, n2) grid so that the cell on the diagonal holds its entry,
        # then keep only the diagonal (xp.eye marks it).  offset >= 0: entry i sits in row i;
        # offset < 0: entry j sits in column j.
        if k >= 0:
            spread = xp.pad(xp.expand_dims(g, -1), [(0, 0)] * lead + [(0, n1 - size), (0, 0)])
        else:
            spread = xp.pad(xp.expand_dims(g, -2), [(0, 0)] * lead + [(0, 0), (0, n2 - size)])
        grid = xp.where(xp.eye(n1, n2, k) != 0, spread, 0)
        # grid's axes are x's other axes in order, then axis1, axis2: put those two back
        order = [d for d in range(lead + 2) if d not in (self.a1, self.a2)] + [self.a1, self.a2]
        return (xp.transpose(grid, tuple(order.index(d) for d in range(lead + 2))),)


class Diag(ShapeOp):
    """NumPy's ``diag``: a 1-D v becomes the square matrix with v on diagonal k (zeros
    elsewhere): y[i, i + k] = v[i] (k < 0: below the main diagonal), of size n + |k|.
    dL/dv = the diagonal k of g.

    A 2-D input gives its diagonal k instead (the op :class:`Diagonal`), so ``diag(diag(v))``
    is v, as in NumPy.
    """

    name = "diag"

    def __init__(self, k: int = 0) -> None:
        self.k = _int("diag", k, "k")

    @classmethod
    def call(cls, x: Any, k: int = 0) -> Tensor:
        x = _tensor(x)
        k = _int("diag", k, "k")
        if x.ndim == 2:
            return apply(Diagonal(k), x)
        return apply(cls(k), x)

    def forward(self, xp, x):
        if x.ndim != 1:
            raise self.error(
                f"input {fmt(tuple(x.shape))} is {x.ndim}-D; diag takes a 1-D vector (to build "
                "a diagonal matrix) or a 2-D matrix (to read its diagonal). For stacks of "
                "matrices use lucid.diagonal(x, offset, axis1, axis2)."
            )
        return xp.diag(x, self.k)

    def backward(self, xp, g):
        return (xp.diagonal(g, self.k),)


# --------------------------------------------------------------------------------------------
# functions built from the ops above (no class of their own)


@public
def meshgrid(*tensors: Any, indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D coordinate vectors (NumPy's ``meshgrid``).

    For inputs of lengths n_0, ..., n_{k-1}, output i holds input i's values repeated along
    every other axis.  ``indexing="xy"`` (NumPy's default, Cartesian) gives the outputs shape
    (n_1, n_0, n_2, ...) -- x varies along columns, as on a picture; ``indexing="ij"``
    (matrix indexing, PyTorch's ``torch.meshgrid`` default to be) gives (n_0, n_1, ...).
    Inputs of more dimensions are flattened first, as NumPy does; ``meshgrid([a, b])`` is
    accepted too.  Each output is a broadcast view of its input, so its gradient is summed
    back onto the input (differentiable).
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        return ()
    ts = [_tensor(t) for t in tensors]
    ts = [t if t.ndim == 1 else apply(Reshape((-1,)), t) for t in ts]
    sizes = [t.shape[0] for t in ts]
    axes = list(range(len(ts)))
    if indexing == "xy" and len(ts) > 1:
        axes[0], axes[1] = 1, 0  # x along axis 1 (columns), y along axis 0 (rows)
    shape = [0] * len(ts)
    for i, ax in enumerate(axes):
        shape[ax] = sizes[i]
    out = []
    for t, ax in zip(ts, axes):
        along = tuple(-1 if d == ax else 1 for d in range(len(ts)))
        out.append(apply(BroadcastTo(tuple(shape)), apply(Reshape(along), t)))
    return tuple(out)


@public(method=True)
def ravel(x: Any) -> Tensor:
    """``x`` flattened to 1-D (a reshape to ``(-1,)``)."""
    return apply(Reshape((-1,)), x)


@public(method=True)
def expand(x: Any, *sizes: int) -> Tensor:
    """PyTorch's ``expand``: broadcast_to where -1 keeps an axis's size; ``expand(x, 2, -1)``
    or ``expand(x, (2, -1))``."""
    if not sizes:
        raise TypeError("expand: give the target sizes, e.g. expand(a, 4, -1)")
    sizes = _varargs("expand", sizes[0], sizes[1:], "a size")
    x = _tensor(x)
    shape = x.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ValueError(
            f"expand: {len(sizes)} size(s) {sizes} for shape {fmt(shape)} ({len(shape)} "
            "dimensions); give at least one size per axis"
        )
    target = []
    for i, s in enumerate(sizes):
        if s == -1:
            if i < lead:
                raise ValueError(
                    f"expand: -1 at position {i} of {sizes} names a new leading axis, which "
                    f"has no size to keep (input shape {fmt(shape)}); give its size"
                )
            s = shape[i - lead]
        target.append(s)
    return apply(BroadcastTo(tuple(target)), x)


def _sequence(op: str, tensors: Any) -> list[Any]:
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"{op}: expected a list or tuple of tensors, got {type(tensors).__name__}; "
            f"write {op}([a, b])"
        )
    if not tensors:
        raise ValueError(f"{op}: needs at least one tensor, got an empty sequence")
    return list(tensors)


@public
def hstack(tensors: Any) -> Tensor:
    """NumPy's hstack: concatenate 1-D tensors end to end, others along axis 1."""
    ts = [_tensor(t) for t in _sequence("hstack", tensors)]
    ts = [apply(Reshape((1,)), t) if t.ndim == 0 else t for t in ts]
    return apply(Concatenate(0 if ts[0].ndim == 1 else 1), *ts)


@public
def vstack(tensors: Any) -> Tensor:
    """NumPy's vstack: 0-D and 1-D tensors become rows (1, n); then concatenate along axis 0."""
    ts = [_tensor(t) for t in _sequence("vstack", tensors)]
    ts = [apply(Reshape((1, -1)), t) if t.ndim < 2 else t for t in ts]
    return apply(Concatenate(0), *ts)


@public(method=True)
def split(x: Any, size_or_sections: Any, axis: int = 0) -> tuple[Tensor, ...]:
    """Cut ``x`` along ``axis`` into pieces; returns a tuple of tensors (views' gradients flow
    back into their place).

    Lucid follows PyTorch's ``torch.split``:

    * an **int** is the size of each piece: ``split(x, 2)`` on a length-5 axis gives pieces of
      2, 2 and 1 (the last may be smaller);
    * a **list** gives the size of every piece: ``split(x, [1, 4])``, adding up to the length.

    NumPy's ``np.split`` reads both differently: an int there is the *number* of equal pieces
    (``np.split(a, 2)``: two halves, an error when the length does not divide) and a list holds
    the *indices* where to cut (``np.split(a, [1, 3])``: a[:1], a[1:3], a[3:]).  For NumPy's
    int meaning use :func:`chunk` (``chunk(x, 2)``); for cut indices, slice.
    """
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("split: cannot split a 0-d tensor (shape ()); it has no axis")
    ax = normalize_axis("split", _int("split", axis, "axis"), x.ndim)
    n = x.shape[ax]
    if isinstance(size_or_sections, (list, tuple)):
        sizes = _ints("split", size_or_sections, "a section size")
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ValueError(
                f"split: sizes {list(sizes)} add up to {sum(sizes)} but axis {ax} of shape "
                f"{fmt(x.shape)} has size {n}; give sizes >= 0 that add up to {n}"
            )
    else:
        size = _int("split", size_or_sections, "the chunk size")
        if size <= 0:
            raise ValueError(f"split: the chunk size must be positive, got {size}")
        sizes = (size,) * (n // size) + ((n % size,) if n % size or n == 0 else ())
    pieces, start = [], 0
    for s in sizes:
        pieces.append(apply(Narrow(ax, start, s), x))
        start += s
    return tuple(pieces)


@public(method=True)
def chunk(x: Any, chunks: int, axis: int = 0) -> tuple[Tensor, ...]:
    """PyTorch's chunk: ``chunks`` pieces of ceil(n / chunks) elements (fewer pieces when
    that already covers the axis)."""
    chunks = _int("chunk", chunks, "chunks")
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks}")
    x = _tensor(x)
    if x.ndim == 0:
        raise ValueError("chunk: cannot chunk a 0-d tensor (shape ()); it has no axis")
    ax = normalize_axis("chunk", _int("chunk", axis, "axis"), x.ndim)
    n = x.shape[ax]
    if n == 0:  # as PyTorch: `chunks` empty pieces
        return split(x, [0] * chunks, ax)
    return split(x, -(-n // chunks), ax)


@public(prop=True, function=False)
def T(self: Tensor) -> Tensor:  # noqa: N802 -- NumPy's and PyTorch's name
    """``x.T``: all axes reversed."""
    return apply(Transpose(), self)


@public(prop=True, function=False)
def mT(self: Tensor) -> Tensor:  # noqa: N802 -- PyTorch's name
    """``x.mT``: the last two axes swapped (a stack of matrices, each transposed)."""
    if self.ndim < 2:
        raise ValueError(
            f"mT: needs a tensor with at least 2 dimensions, got shape {fmt(self.shape)}; "
            "use .T for 1-D (a no-op) or unsqueeze first"
        )
    return apply(SwapAxes(-2, -1), self)
