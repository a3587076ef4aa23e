"""Indexing and selection: ``x[...]``, ``x[...] = v``, gather, where, masked_fill, sort, topk.

These ops *move* values; they compute nothing.  Their gradients move values back: the
gradient of a selection is the output gradient written into zeros at the positions that were
selected.  Where one input element was picked several times (``x[[0, 0, 1]]``, ``gather``
with repeated indices) its gradient is the *sum* over the picks, so the write is a
scatter-*add* (``backend_for(xp).scatter_add``: ``np.add.at`` on NumPy), never a plain
assignment, which would keep only the last pick.

Index arguments (ints, slices, lists, arrays, index Tensors) are parameters of the op, not
graph inputs: no gradient flows into an index.  The exceptions are ``where``'s condition and
``masked_fill``'s mask, which are tensor inputs (so they can be built by ops on any device)
whose gradient is None.

FLOPs convention: moving data costs 0 forward FLOPs, except ``where`` (one select per output
element) and ``sort``/``argsort``/``topk``, which count comparisons as ``round(n·log2 n)`` per
sorted row of length ``n`` (a comparison sort's cost).  Backward counts the additions of the
scatter: one per element of the incoming gradient (plus, for ``where``, one select per output
element and input and the additions that sum a broadcast gradient down).
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

import numpy as np

from lucid.backends import backend_for, get_backend
from lucid.backends.base import host_index_error
from lucid.engine.grads import PartGrad
from lucid.ops.base import Op, apply, extra_output, numel, public
from lucid.ops.inplace import VIEWS, add_view, check, in_graph, update
from lucid.shapes import broadcast_shape, broadcasts_to, fmt, normalize_axis, sum_to
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

# --------------------------------------------------------------------------------------------
# index parsing (shared by x[...] and x[...] = v)


def _unwrap_index(owner: Tensor, index: Any, op: str) -> Any:
    """Replace index Tensors by their backend arrays (indices are op parameters, not inputs)."""
    parts = index if isinstance(index, tuple) else (index,)
    out = []
    for c in parts:
        if isinstance(c, Tensor):
            if c.device != owner.device:
                raise TypeError(
                    f"{op}: an index tensor on {c.device!r} cannot index a tensor on "
                    f"{owner.device!r}; move the index first (index.to({owner.device!r}))"
                )
            c = c._data
        elif isinstance(c, np.ndarray) and owner.device != "cpu":
            raise host_index_error(op, len(out))  # the rule parse_mlx_indexing applies too
        out.append(c)
    return tuple(out)


def _kind(a: Any) -> Any:
    """The base Python type (bool, int, float, complex) of an array's dtype."""
    return to_numeric_type(a.dtype).base_dtype


def _check_int(op: str, value: Any, what: str) -> None:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{op}: {what} {value!r} is a {type(value).__name__}; indices must be integers. "
            "Convert it with int(...)."
        )


def _bound(value: Any) -> Any:
    """A one-element integer Tensor as a slice bound is its int (PyTorch's ``x[i:i + k]`` with
    ``i`` drawn by ``randint``); anything else is checked as it is."""
    if isinstance(value, Tensor) and value.size == 1 and _kind(value) is int:
        return int(value.item())
    return value


def _out_of_bounds(op: str, index: Any, axis: int, size: int, shape: tuple[int, ...]) -> Exception:
    return IndexError(
        f"{op}: index {index} is out of bounds for axis {axis} of size {size} (tensor shape "
        f"{fmt(shape)}); valid indices are {-size}..{size - 1}"
    )


def _parse_index(op: str, xp: Any, index: tuple, shape: tuple[int, ...]) -> tuple[tuple, bool]:
    """Check ``index`` against ``shape`` and bring it to a form both backends read alike.

    Returns ``(parts, advanced)``.  ``parts`` holds only ints, slices, None, Ellipsis and int
    arrays of the backend: negative indices are made non-negative, boolean masks become the
    int arrays of their true positions (MLX has no boolean-mask indexing, and the output shape
    depends on the mask's values anyway).  ``advanced`` says whether any array is present, i.e.
    whether an element may be picked more than once.  Three passes: each component checked
    alone, then the axes they consume counted against the shape, then each resolved on its
    axis.
    """
    backend = backend_for(xp)
    parts = [_index_part(op, xp, backend, c) for c in index]
    consumed = _axes_consumed(op, backend, parts, shape)
    return _resolved(op, xp, backend, parts, shape, consumed)


def _index_part(op: str, xp: Any, backend: Any, c: Any) -> Any:
    """One component of an index, checked on its own: None, Ellipsis, an int, a slice or an
    array of the backend (lists become one)."""
    if c is None or c is Ellipsis:
        return c
    if isinstance(c, (bool, np.bool_)):
        raise TypeError(
            f"{op}: a Python bool ({c}) is not an index; use None to add an axis, or a "
            "boolean tensor of the indexed axes' shape as a mask"
        )
    if isinstance(c, (int, np.integer)):
        return int(c)
    if isinstance(c, (float, np.floating)):
        raise TypeError(
            f"{op}: index {c!r} is a float; indices must be integers (or booleans for a "
            "mask). Convert it with int(...)."
        )
    if isinstance(c, slice):
        c = slice(*(_bound(v) for v in (c.start, c.stop, c.step)))
        for v in (c.start, c.stop, c.step):
            if v is not None:
                _check_int(op, v, "slice bound")
        return c
    if isinstance(c, (list, tuple, range)):  # range: PyTorch's y_hat[range(n), y]
        c = list(c) if isinstance(c, range) else c
        return backend.asarray(c, dtype=xp.int64) if len(c) == 0 else backend.asarray(c)
    if isinstance(c, backend.array_type):
        return c
    raise TypeError(
        f"{op}: cannot index with a {type(c).__name__}; use ints, slices, None, "
        "Ellipsis, lists, or lucid Tensors on the tensor's device"
    )


def _axes_consumed(op: str, backend: Any, parts: list, shape: tuple[int, ...]) -> int:
    """How many of the tensor's axes the parts index (a mask as many as it has dimensions),
    checked against ``shape``."""
    consumed = 0
    for p in parts:
        if isinstance(p, backend.array_type):
            kind = _kind(p)
            if kind is bool:
                if p.ndim == 0:
                    raise TypeError(
                        f"{op}: a 0-d boolean mask is not an index; use None to add an axis"
                    )
                consumed += p.ndim
            elif kind is int:
                consumed += 1
            else:
                raise TypeError(
                    f"{op}: index array has dtype {to_numeric_type(p.dtype).name}; indices must "
                    "be integers (or booleans for a mask). Convert it with "
                    ".astype(lucid.Int64)."
                )
        elif p is not None and p is not Ellipsis:
            consumed += 1
    if sum(1 for p in parts if p is Ellipsis) > 1:
        raise IndexError(f"{op}: an index can only have a single Ellipsis (...)")
    if consumed > len(shape):
        raise IndexError(
            f"{op}: too many indices for a tensor of shape {fmt(shape)}: {consumed} indexed "
            f"axes, but the tensor has {len(shape)}"
        )
    return consumed


def _resolved(op: str, xp: Any, backend: Any, parts: list, shape: tuple[int, ...],
              consumed: int) -> tuple[tuple, bool]:
    """Each part resolved on the axis it indexes: ints and index arrays bounds-checked and made
    non-negative, masks turned into the positions of their true values."""
    out: list[Any] = []
    advanced = False
    axis = 0
    for p in parts:
        if p is None:
            out.append(p)
        elif p is Ellipsis:
            out.append(p)
            axis += len(shape) - consumed
        elif isinstance(p, int):
            size = shape[axis]
            if not -size <= p < size:
                raise _out_of_bounds(op, p, axis, size, shape)
            out.append(p % size)
            axis += 1
        elif isinstance(p, slice):
            out.append(p)
            axis += 1
        elif _kind(p) is bool:
            out.extend(_mask_positions(op, backend, p, axis, shape))
            advanced = True
            axis += p.ndim
        else:
            out.append(_index_array(op, xp, p, axis, shape))
            advanced = True
            axis += 1
    if not any(p is Ellipsis for p in parts):
        # x[0, ...] is a 0-d array where x[0] would be a NumPy scalar; every result stays an
        # array.  A trailing Ellipsis selects nothing more, so the meaning is unchanged.
        out.append(Ellipsis)
    return tuple(out), advanced


def _check_arrays_fit(op: str, backend: Any, parts: tuple, shape: tuple[int, ...]) -> None:
    """The index arrays of a parsed index (a mask counts as the positions of its True
    entries) must broadcast together: they pick elements side by side."""
    shapes = [tuple(p.shape) for p in parts if isinstance(p, backend.array_type)]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError(
            f"{op}: the index arrays of shapes {', '.join(fmt(s) for s in shapes)} (a boolean "
            f"mask counts as its True positions) do not broadcast together (tensor shape "
            f"{fmt(shape)}); arrays that index several axes pick elements side by side and "
            "need broadcastable shapes"
        ) from None


def _mask_positions(op: str, backend: Any, mask: Any, axis: int,
                    shape: tuple[int, ...]) -> list:
    """The int arrays of a boolean mask's true positions, one per axis it covers."""
    want = shape[axis:axis + mask.ndim]
    if tuple(mask.shape) != want:
        raise IndexError(
            f"{op}: boolean mask of shape {fmt(tuple(mask.shape))} does not match the "
            f"indexed axes {axis}..{axis + mask.ndim - 1} of shape {fmt(want)} (tensor "
            f"shape {fmt(shape)}); a mask must have exactly the shape it selects from"
        )
    return [backend.asarray(q) for q in np.nonzero(backend.to_numpy(mask))]


def _index_array(op: str, xp: Any, p: Any, axis: int, shape: tuple[int, ...]) -> Any:
    """An int index array, bounds-checked on its axis, negative entries made non-negative."""
    size = shape[axis]
    if p.size:
        lo, hi = int(xp.min(p)), int(xp.max(p))
        if lo < -size or hi >= size:
            raise _out_of_bounds(op, lo if lo < -size else hi, axis, size, shape)
        if lo < 0:
            p = xp.where(p < 0, p + size, p)
    return p


# --------------------------------------------------------------------------------------------
# x[index]


class GetItem(Op):
    """y = x[index]   (basic, fancy and boolean-mask indexing, NumPy's rules).

    dy/dx is a selection: dL/dx is zero everywhere except at the selected positions, which
    receive dL/dy.  With basic indexing (ints, slices, None, ...) each element is selected at
    most once, so the gradient is written into zeros.  With an index array an element may be
    selected several times (``x[[0, 0, 1]]``), and its gradient is the sum over the picks:
    the gradient is scatter-*added*.
    """

    name = "getitem"
    function = None  # spelled x[index]
    operator = "[]"
    saves_inputs = False  # backward needs the input's shape, never its values

    @classmethod
    def call(cls, x: Tensor, index: Any) -> Tensor:
        op = cls(_unwrap_index(x, index, "getitem"))
        out = apply(op, x)
        if not getattr(op, "advanced", True):  # a view: writes into it reach x[index]
            add_view(out, x, op.index)
        return out

    def __init__(self, index: tuple) -> None:
        self.index = index

    def forward(self, xp, x):
        self.index, self.advanced = _parse_index(self.name, xp, self.index, tuple(x.shape))
        if self.advanced:
            _check_arrays_fit(self.name, backend_for(xp), self.index, tuple(x.shape))
        self.shape, self.dtype = tuple(x.shape), x.dtype
        return x[self.index]

    def backward(self, xp, g):
        if self.advanced:
            return (backend_for(xp).scatter_add(self.shape, self.dtype, self.index, g),)
        if not self.shape:  # x[()] or x[...] of a 0-d x selects all of it: g is dL/dx
            return (g.reshape(()),)  # (and no part to add into a NumPy scalar gradient)
        return (PartGrad(self.shape, self.dtype, self.index, g),)  # added into place

    def forward_flops(self, out, x):
        return 0

    def backward_flops(self, out, x):
        return out.size


class IndexPut(Op):
    """y = x with y[index] = v: ``x[index] = v`` where a graph is being recorded.

    dL/dx is dL/dy with zeros at the written positions (their old values are gone);
    dL/dv is dL/dy at those positions, summed down to v's shape where v was broadcast.
    """

    name = "index_put"
    function = None  # spelled x[index] = v
    saves_inputs = False  # backward needs the index and v's shape only
    wants_needs = True

    def __init__(self, index: tuple) -> None:
        self.index = index  # already parsed and checked by setitem

    def forward(self, xp, x, v):
        self.vshape = tuple(v.shape)
        return backend_for(xp).assign(x, self.index, v)

    def backward(self, xp, g):
        gx = gv = None
        if self.needs[0]:
            gx = backend_for(xp).assign(g, self.index, xp.zeros((), dtype=g.dtype))
        if self.needs[1]:
            gv = sum_to(xp, g[self.index], self.vshape)
        return gx, gv

    def forward_flops(self, out, x, v):
        return 0

    def backward_flops(self, out, x, v):
        return v.size if self.needs[1] else 0  # the sum down to v's shape (at most)


_SETITEM_FIX = "lucid.where(mask, value, x) or lucid.masked_fill(x, mask, value)"


def _put_in_graph(x: Tensor, parts: tuple, value: Any) -> Tensor:
    """``x[index] = value`` recorded, as PyTorch records it: ``x`` becomes the result of an
    :class:`IndexPut` of its old self (a new node standing for the value before) and
    ``value``, so gradients reach ``value`` and x's earlier values.  A later backward through
    an op that used ``x`` *before* the write raises (see the walk): it would need the old
    node, which ``x`` no longer is."""
    link = VIEWS.get(id(x))
    if link is not None and link[0]() is x and link[1].requires_grad and link[1]._op is None:
        # a view of a parameter: refused before anything changes, as in PyTorch
        check("__setitem__", link[1], value, fix=_SETITEM_FIX)
    old = Tensor._wrap(x.data, x.device)
    old._op, old._prev, old.requires_grad = x._op, x._prev, x.requires_grad
    old._dtype, old._version = x._dtype, x._version
    new = apply(IndexPut(parts), old, value)
    x.data, x._op, x._prev, x.requires_grad = new.data, new._op, new._prev, True
    x._dtype = new._dtype
    x._version += 1
    if link is not None and link[0]() is x and link[1]._version == link[3]:
        base, index = link[1], link[2]
        old_base = _put_in_graph(base, index, x)  # the write reaches the tensor x viewed
        # x's old node was read from base *before* this write: it reads the old base
        old._prev = tuple(old_base if p is base else p for p in old._prev)
        VIEWS[id(x)] = (link[0], base, index, base._version)
    return old


@public(method=True, function=False, name="__setitem__")
def setitem(x: Tensor, index: Any, value: Any) -> None:
    """``x[index] = value``, in place: a new array is assigned and ``x._version`` bumps.

    The old array is left untouched (views of it and values saved for backward stay valid);
    the version bump lets backward detect that a saved input changed.  Where a graph is being
    recorded (``outputs[t] = h`` with h requiring grad) the write is recorded as an
    :class:`IndexPut`, as PyTorch records it; a leaf that requires grad (a parameter) is
    refused, as in PyTorch.
    """
    name = "__setitem__"
    backend = get_backend(x.device) if isinstance(x, Tensor) else None
    if backend is not None and in_graph(x, value):
        if isinstance(value, Tensor) and value.device != x.device:
            raise RuntimeError(
                f"{name}: the value is on {value.device!r} but the tensor on {x.device!r}; "
                f"move it first (value.to({x.device!r}))"
            )
        parts, advanced = _parse_index(name, backend.xp, _unwrap_index(x, index, name),
                                       x.shape)
        if advanced:
            _check_arrays_fit(name, backend, parts, x.shape)
        _put_in_graph(x, parts, value)
        return
    check(name, x, value, fix=_SETITEM_FIX)
    parts, advanced = _parse_index(name, backend.xp, _unwrap_index(x, index, name), x.shape)
    if advanced:
        _check_arrays_fit(name, backend, parts, x.shape)
    if isinstance(value, Tensor):
        if value.device != x.device:
            raise RuntimeError(
                f"{name}: the value is on {value.device!r} but the tensor on {x.device!r}; "
                f"move it first (value.to({x.device!r}))"
            )
        value = value._data
    try:
        data = backend.assign(x._data, parts, value)
    except ValueError as exc:
        got = fmt(tuple(np.shape(value)))
        raise ValueError(
            f"{name}: cannot assign a value of shape {got} to the selection of shape "
            f"{fmt(tuple(x._data[parts].shape))} (tensor shape {fmt(x.shape)}); the value must "
            "broadcast to the selection"
        ) from exc
    # cast as copy_ does (and NumPy, PyTorch): x[0] = 7.9 writes 7 into an integer tensor
    update(name, x, lambda: Tensor._wrap(data, x.device), cast="unsafe")


# --------------------------------------------------------------------------------------------
# gather


def _along_axis(xp: Any, index: Any, axis: int) -> tuple:
    """The full index tuple that ``take_along_axis(a, index, axis)`` reads.

    Position ``(i0, .., ik, ..)`` of ``index`` picks ``a[i0, .., index[i0, .., ik, ..], ..]``:
    every axis but ``axis`` is indexed by its own coordinate (an ``arange`` shaped to
    broadcast).  Scatter-adding with it is the reverse of the gather.
    """
    ndim = index.ndim
    parts = []
    for d in range(ndim):
        if d == axis:
            parts.append(index)
        else:
            shape = [1] * ndim
            shape[d] = index.shape[d]
            parts.append(xp.arange(index.shape[d]).reshape(shape))
    return tuple(parts)


class Gather(Op):
    """y[i, j, ..] = a[i, .., index[i, j, ..], ..]  (the index replaces the ``axis`` coordinate).

    PyTorch's ``gather`` (NumPy's ``take_along_axis``): ``index`` has ``a``'s number of
    dimensions, the output has ``index``'s shape, and ``index.shape[d] <= a.shape[d]`` on every
    other axis.  dL/da scatter-adds dL/dy back to the positions read, so an element gathered
    twice receives both gradients.
    """

    name = "gather"
    method = True
    inputs = ("a",)
    saves_inputs = False  # backward needs the index and a's shape only

    @classmethod
    def call(cls, a: Tensor, axis: int, index: Any) -> Tensor:
        """Values of ``a`` along ``axis`` at ``index`` (output shape = index's)."""
        if isinstance(index, Tensor):
            index = _unwrap_index(a, index, "gather")[0]
        return apply(cls(axis, index), a)

    def __init__(self, axis: int, index: Any) -> None:
        self.axis = axis
        self.index = index

    def forward(self, xp, a):
        backend = backend_for(xp)
        index = self.index
        if isinstance(index, (list, tuple)):
            index = backend.asarray(index)
        if not isinstance(index, backend.array_type):
            raise TypeError(
                f"gather: index must be an integer tensor, got {type(index).__name__}"
            )
        shape = tuple(a.shape)
        if _kind(index) is not int:
            raise TypeError(
                f"gather: index has dtype {to_numeric_type(index.dtype).name}; it must be an "
                "integer tensor. Convert it with .astype(lucid.Int64)."
            )
        if index.ndim != a.ndim:
            raise ValueError(
                f"gather: index of shape {fmt(tuple(index.shape))} must have as many dimensions "
                f"as the input of shape {fmt(shape)} ({index.ndim} vs {a.ndim}); reshape the "
                "index (e.g. index[:, None]) so they match"
            )
        axis = normalize_axis(self.name, self.axis, a.ndim)
        for d, (n, m) in enumerate(zip(index.shape, shape)):
            if d != axis and n > m:
                raise ValueError(
                    f"gather: index of shape {fmt(tuple(index.shape))} is larger than the input "
                    f"of shape {fmt(shape)} at axis {d} ({n} > {m}); on every axis but "
                    f"axis={self.axis} the index may be at most as large as the input"
                )
        size = shape[axis]
        if index.size:
            lo, hi = int(xp.min(index)), int(xp.max(index))
            if lo < -size or hi >= size:
                raise _out_of_bounds(self.name, lo if lo < -size else hi, axis, size, shape)
            if lo < 0:
                index = xp.where(index < 0, index + size, index)
        self.shape, self.dtype = shape, a.dtype
        self.positions = _along_axis(xp, index, axis)
        return a[self.positions]

    def backward(self, xp, g):
        return (backend_for(xp).scatter_add(self.shape, self.dtype, self.positions, g),)

    def forward_flops(self, out, a):
        return 0

    def backward_flops(self, out, a):
        return out.size



# --------------------------------------------------------------------------------------------
# where, masked_fill


class Where(Op):
    """y = a where cond else b   (cond, a and b broadcast together).

    dy/da = 1 where cond holds and 0 elsewhere; dy/db the opposite.  The condition gets no
    gradient.  Gradients come back at the broadcast shape; the engine sums them down.
    """

    name = "where"
    inputs = ("cond", "a", "b")
    broadcasts = True
    wants_needs = True
    saves_inputs = (2,)  # the condition (last: see ``call``); a, b are never read again

    @classmethod
    def call(cls, cond: Any, a: Any = None, b: Any = None) -> Tensor | tuple[Tensor, ...]:
        """``where(cond, a, b)``; ``where(cond)`` alone is NumPy's and PyTorch's
        ``nonzero(cond, as_tuple=True)``: one index tensor per axis."""
        if a is None and b is None:
            from lucid.ops.base import FUNCTIONS  # filled once every op family is imported

            return FUNCTIONS["nonzero"](cond, as_tuple=True)
        if a is None or b is None:
            raise TypeError("where(cond, a, b) takes both a and b (or neither: where(cond) "
                            "gives the indices where cond holds)")
        # cond goes last: a Python number among a, b takes the dtype of the tensor it meets
        # (float32 x with 0.0 stays float32), and the dispatcher reads that dtype from the
        # first tensor argument, which must not be the bool condition.
        return apply(cls(), a, b, cond)

    def forward(self, xp, a, b, cond):
        # arguments arrive as (a, b, cond): see ``call`` for why cond goes last
        if _kind(cond) is not bool:
            raise TypeError(
                f"where: cond has dtype {to_numeric_type(cond.dtype).name}; it must be a bool "
                "tensor. Build it with a comparison, e.g. lucid.where(x > 0, x, 0.0)."
            )
        broadcast_shape(self.name, tuple(cond.shape), tuple(a.shape), tuple(b.shape))
        self.cond = cond
        return xp.where(cond, a, b)

    def backward(self, xp, g):
        zero = xp.zeros_like(g)
        need_a, need_b = self.needs[0], self.needs[1]
        return (xp.where(self.cond, g, zero) if need_a else None,
                xp.where(self.cond, zero, g) if need_b else None, None)

    def forward_flops(self, out, a, b, cond):
        return out.size

    def backward_flops(self, out, a, b, cond):
        # one select per output element for each gradient computed, then its sum down to
        # the input's shape
        need_a, need_b = self.needs[0], self.needs[1]
        return (need_a * (2 * out.size - a.size)) + (need_b * (2 * out.size - b.size))



class MaskedFill(Op):
    """y = value where mask else a   (mask broadcasts to a's shape; y has a's shape and dtype).

    dy/da = 0 where the mask filled the element, 1 elsewhere.  The mask gets no gradient and
    ``value`` is a constant.
    """

    name = "masked_fill"
    method = True
    inputs = ("a", "mask")
    saves_inputs = (1,)  # the mask

    @classmethod
    def call(cls, a: Tensor, mask: Any, value: Any) -> Tensor:
        """``a`` with ``value`` written wherever ``mask`` is True (out of place)."""
        if isinstance(value, Tensor):
            value = value.item()  # a constant: the fill value gets no gradient
        if isinstance(value, (list, tuple)) or not isinstance(
                value, (bool, int, float, np.number)):
            raise TypeError(
                f"masked_fill: value must be a number, got {type(value).__name__}; for a "
                "tensor of values use lucid.where(mask, values, a)"
            )
        return apply(cls(value), a, mask)

    def __init__(self, value: Any) -> None:
        self.value = value

    def forward(self, xp, a, mask):
        if _kind(mask) is not bool:
            raise TypeError(
                f"masked_fill: mask has dtype {to_numeric_type(mask.dtype).name}; it must be a "
                "bool tensor. Build it with a comparison, e.g. x.masked_fill(x < 0, 0.0)."
            )
        if not broadcasts_to(tuple(mask.shape), tuple(a.shape)):
            raise ValueError(
                f"masked_fill: mask of shape {fmt(tuple(mask.shape))} does not broadcast to the "
                f"tensor's shape {fmt(tuple(a.shape))}; the output keeps the tensor's shape, so "
                "each mask axis must match it or be 1"
            )
        self.mask = mask
        return xp.where(mask, xp.full((), self.value, dtype=a.dtype), a)

    def backward(self, xp, g):
        return xp.where(self.mask, xp.zeros_like(g), g), None

    def forward_flops(self, out, a, mask):
        return 0

    def backward_flops(self, out, a, mask):
        return out.size



# --------------------------------------------------------------------------------------------
# sort, argsort, topk


def _sort_flops(shape: tuple[int, ...], axis: int) -> int:
    """Comparisons of a comparison sort: round(n·log2 n) per sorted row of length n."""
    if not shape:
        return 0
    n = shape[axis]
    rows = numel(shape) // n if n else 0
    return rows * round(n * math.log2(n)) if n > 1 else 0


#: what ``sort`` and ``topk`` return, as PyTorch's ``torch.return_types.sort`` / ``topk``: a
#: named tuple, so ``x.topk(3).indices`` reads as in PyTorch and ``v, i = x.sort()`` unpacks
Sorted = namedtuple("sort", ["values", "indices"])
TopKResult = namedtuple("topk", ["values", "indices"])


def _argsort(xp: Any, a: Any, axis: int, descending: bool) -> Any:
    """Indices that sort ``a`` along ``axis`` (int64 on both backends)."""
    if not descending:
        return xp.argsort(a, axis=axis).astype(xp.int64)
    # Descending without negation (bool and unsigned dtypes have none): sort the reversed
    # array, reverse the order, and map positions back -- so equal values keep their original
    # order, as PyTorch's CPU sort gives them (reversing an ascending sort would swap them).
    flip = tuple(slice(None, None, -1) if d == axis else slice(None) for d in range(a.ndim))
    n = a.shape[axis]
    return ((n - 1) - xp.argsort(a[flip], axis=axis)[flip]).astype(xp.int64)


class Sort(Op):
    """values = a sorted along ``axis``;  indices: where each value came from.

    values[.., j, ..] = a[.., indices[.., j, ..], ..], a permutation of each row, so dL/da
    sends each gradient back to the position its value came from (a scatter along ``axis``).
    Ties get an arbitrary but valid order; the gradient is then ambiguous, as for any sort.
    """

    name = "sort"
    method = True
    saves_inputs = False

    @classmethod
    def call(cls, x: Tensor, axis: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        """``(values, indices)``: ``values`` carries the gradient; ``indices`` is an Int64
        tensor without one."""
        op = cls(axis, descending)
        values = apply(op, x)
        return Sorted(values, extra_output(op.indices, values))

    def __init__(self, axis: int, descending: bool) -> None:
        self.axis = axis
        self.descending = descending

    def forward(self, xp, a):
        axis = normalize_axis(self.name, self.axis, a.ndim)
        self.indices = _argsort(xp, a, axis, self.descending)
        self.shape, self.dtype = tuple(a.shape), a.dtype
        self.positions = _along_axis(xp, self.indices, axis)
        return a[self.positions]

    def backward(self, xp, g):
        return (backend_for(xp).scatter_add(self.shape, self.dtype, self.positions, g),)

    def forward_flops(self, out, a):
        return _sort_flops(tuple(a.shape), self.axis % a.ndim)

    def backward_flops(self, out, a):
        return out.size


class ArgSort(Op):
    """indices that would sort a along ``axis``.  Integer positions: not differentiable."""

    name = "argsort"
    method = True
    differentiable = False
    saves_inputs = False

    def __init__(self, axis: int = -1, descending: bool = False) -> None:
        self.axis = axis
        self.descending = descending

    def forward(self, xp, a):
        axis = normalize_axis(self.name, self.axis, a.ndim)
        return _argsort(xp, a, axis, self.descending)

    def forward_flops(self, out, a):
        return _sort_flops(tuple(a.shape), self.axis % a.ndim)

    def backward_flops(self, out, a):
        return 0


class TopK(Op):
    """The k largest (or smallest) values along ``axis`` and their indices.

    Like sort, then keep the first k of each row: values[.., j, ..] = a[.., indices[.., j, ..],
    ..], so dL/da scatters each gradient back to where its value came from; the elements not
    selected get 0.  Computed with a full sort (FLOPs: round(n·log2 n) per row); the result is
    always in sorted order, also with ``sorted=False``.
    """

    name = "topk"
    method = True
    saves_inputs = False

    @classmethod
    def call(cls, x: Tensor, k: int, axis: int = -1, largest: bool = True,
             sorted: bool = True) -> tuple[Tensor, Tensor]:
        """``(values, indices)``; the result is always sorted (largest first, or smallest
        first): ``sorted`` is accepted for PyTorch compatibility."""
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"topk: k must be an int, got {k!r} ({type(k).__name__})")
        op = cls(int(k), axis, largest)
        values = apply(op, x)
        return TopKResult(values, extra_output(op.indices, values))

    def __init__(self, k: int, axis: int, largest: bool) -> None:
        self.k = k
        self.axis = axis
        self.largest = largest

    def forward(self, xp, a):
        axis = normalize_axis(self.name, self.axis, a.ndim)
        n = a.shape[axis]
        if not 0 <= self.k <= n:
            raise ValueError(
                f"topk: k={self.k} is out of range for axis {self.axis} of size {n} (tensor "
                f"shape {fmt(tuple(a.shape))}); choose 0 <= k <= {n}"
            )
        keep = tuple(slice(0, self.k) if d == axis else slice(None) for d in range(a.ndim))
        self.indices = _argsort(xp, a, axis, descending=self.largest)[keep]
        self.shape, self.dtype = tuple(a.shape), a.dtype
        self.positions = _along_axis(xp, self.indices, axis)
        return a[self.positions]

    def backward(self, xp, g):
        return (backend_for(xp).scatter_add(self.shape, self.dtype, self.positions, g),)

    def forward_flops(self, out, a):
        return _sort_flops(tuple(a.shape), self.axis % a.ndim)

    def backward_flops(self, out, a):
        return out.size
