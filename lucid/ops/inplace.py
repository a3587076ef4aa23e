"""Every in-place update goes through :func:`update`: the Tensor methods ``add_``, ``sub_``,
``mul_``, ``div_``, ``pow_``, ``clamp_``, ``fill_``, ``zero_`` and ``copy_`` (PyTorch's names;
the trailing underscore marks in place), the operators ``x += y``, ``-=``, ``*=``, ``/=``,
``//=`` and ``**=`` (``tensor_methods.py``) and ``x[i] = v`` (``indexing.setitem``).

Each computes its result with the ordinary op (so devices, broadcasting and dtypes follow the
usual rules), then stores it as the tensor's data and bumps ``x._version``.  The old array is
left untouched (views of it and values saved for backward stay valid), and the version bump
lets backward detect that a value it saved has changed since: a backward through such a graph
raises, naming the op and the versions.

Lucid records no in-place op in the graph, so an in-place update is refused where a gradient
would have to flow through it, while grad mode is on:

* on a leaf that requires grad (a parameter): PyTorch's error, "a leaf Variable that requires
  grad is being used in an in-place operation" -- update parameters under ``lucid.no_grad()``,
  as optimizers and ``nn.init`` do;
* on a result in a recorded graph, or with an operand that requires grad: write the
  out-of-place form (``y = y + 1``).

The result must keep the tensor's shape (``x.add_(y)`` may broadcast y, never x) and fit its
dtype under NumPy's ``same_kind`` rule (a float result does not fit an Int64 tensor: a
TypeError instead of silent truncation).  A refused call leaves the tensor as it was.

**Views.**  ``y = x[i]`` with basic indexing (ints, slices, ``...``, ``None``) is a view of
``x``, as in PyTorch: an in-place update of ``y`` is also written into ``x[i]`` (and on up, if
``x`` is itself such a view).  So PyTorch's idioms ``t[i][j] = 1`` and ``m[i][j] += 1`` change
``t`` and ``m``.  The link goes one way only: ``y`` does not see later changes of ``x``; once
``x`` has changed by another path, a write into ``y`` would overwrite them with stale values,
so it reaches ``y`` alone and a warning says so (index ``x`` again).
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.engine.mode import grad_enabled, no_grad
from lucid.ops import elementwise, shape
from lucid.ops.base import FUNCTIONS, apply, public
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type


def update(name: str, x: Any, compute: Callable[[], Tensor], *operands: Any,
           fix: str | None = None, cast: str = "same_kind") -> Tensor:
    """The one in-place path: refuse the update where a recorded graph would need it, compute
    the result out of place (``compute()``, ordinary ops, nothing recorded), then store it as
    ``x``'s data under the dtype rule ``cast`` and bump ``x._version``.  ``fix`` is the
    out-of-place form the refusal suggests."""
    check(name, x, *operands, fix=fix)
    with no_grad():
        result = compute()
    return _store(name, x, result, cast)


def check(name: str, x: Any, *others: Any, fix: str | None = None) -> None:
    """Refuse an in-place update a recorded graph would need to differentiate through."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a Tensor to update, got {type(x).__name__}")
    if not grad_enabled():
        return
    if x.requires_grad and x._op is None:
        raise RuntimeError(
            f"{name}: a leaf Variable that requires grad is being used in an in-place "
            f"operation (shape {fmt(x.shape)}). Update it inside `with lucid.no_grad():` (as "
            f"optimizers and nn.init do), or write the out-of-place form ({fix or 'y = x + 1'})."
        )
    if x.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others):
        raise RuntimeError(
            f"{name}: in-place update inside a recorded graph (tensor of shape "
            f"{fmt(x.shape)}; it or an operand requires grad). Lucid records no in-place ops, "
            f"so no gradient could flow through it: write the out-of-place form "
            f"({fix or 'y = y + 1'}), or do the update inside `with lucid.no_grad():`."
        )


def in_graph(x: Tensor, *others: Any) -> bool:
    """Whether an in-place update of ``x`` would have to be recorded: grad mode is on and ``x``
    (not a leaf that requires grad) or an operand requires grad."""
    if not grad_enabled() or (x.requires_grad and x._op is None):
        return False
    return x.requires_grad or any(isinstance(o, Tensor) and o.requires_grad for o in others)


def check_fits(name: str, have: Any, want: Any) -> None:
    """Refuse values of dtype ``have`` that do not fit a tensor of dtype ``want`` under NumPy's
    ``same_kind`` rule (a float into an integer tensor: an error, not silent truncation)."""
    have, want = to_numeric_type(have), to_numeric_type(want)
    if not np.can_cast(have.cpu, want.cpu, casting="same_kind"):
        raise TypeError(
            f"{name}: the result is {have.name} but the tensor is {want.name}, and "
            f"{have.name} values do not fit {want.name} (NumPy's same_kind rule). Cast "
            f"the tensor first (x = x.astype(lucid.{have.name})) or use the out-of-place "
            "form."
        )


def _store(name: str, x: Tensor, result: Tensor, cast: str = "same_kind") -> Tensor:
    """Make ``result`` (computed out of place) the data of ``x``; bump its version."""
    if result.shape != x.shape:
        raise ValueError(
            f"{name}: the result has shape {fmt(result.shape)} but the tensor {fmt(x.shape)}; "
            "an in-place update cannot change the shape (the operand may broadcast to the "
            "tensor, not the tensor to the operand)"
        )
    if result.device != x.device:
        result = result.to(x.device)
    data = result._data
    if data.dtype != x._data.dtype:
        if cast == "same_kind":
            check_fits(name, data.dtype, x._data.dtype)
        data = data.astype(x._data.dtype)
    x._data = data
    x._version += 1
    _write_through(name, x)
    return x


def store_out(name: str, out: Any, result: Tensor) -> Tensor:
    """PyTorch's ``out=`` argument: ``result`` (computed out of place) becomes ``out``'s data,
    cast to ``out``'s dtype under NumPy's same-kind rule, and ``out`` is returned.  A result
    of another shape resizes ``out``, with PyTorch's warning when ``out`` held elements.
    A result that needs a gradient is refused, as PyTorch refuses it: nothing is recorded
    through ``out=``."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(..., out=...): out must be a Tensor, got {type(out).__name__}")
    if result.requires_grad:
        raise RuntimeError(
            f"{name}(..., out=...): the result requires grad, and a result written into out= "
            f"records no gradient (PyTorch refuses it too): write y = lucid.{name}(...), or "
            f"compute it under `with lucid.no_grad():`"
        )
    check(name, out, fix=f"y = lucid.{name}(...)")
    if out.shape != result.shape:
        if out.size:
            warnings.warn(
                f"{name}: an output with one or more elements was resized since it had shape "
                f"{fmt(out.shape)}, which does not match the result's shape "
                f"{fmt(result.shape)} (as PyTorch warns); pass an empty tensor to resize "
                "without this warning", UserWarning, stacklevel=3)
        check_fits(name, result._data.dtype, out._data.dtype)
        if result.device != out.device:
            result = result.to(out.device)
        out._data = result._data.astype(out._data.dtype)
        out._version += 1
        return out
    return _store(name, out, result)


#: id(view) -> (a weak reference to the view, the tensor it was indexed from (kept alive by
#: its view, as in PyTorch: ``t[i][j] = 1`` writes through a temporary ``t[i]``), the index,
#: that tensor's version when they last agreed); entries leave with their view
VIEWS: dict[int, tuple] = {}


def add_view(view: Tensor, base: Tensor, index: Any) -> None:
    """Record that ``view`` is ``base[index]`` (basic indexing): see "Views" above."""
    key = id(view)
    VIEWS[key] = (weakref.ref(view, lambda _, key=key, views=VIEWS: views.pop(key, None)),
                  base, index, base._version)


def _write_through(name: str, view: Tensor) -> None:
    """After ``view`` changed in place, write its values into the tensor it views."""
    link = VIEWS.get(id(view))
    if link is None or link[0]() is not view:
        return
    me, base, index, version = link
    if base._version != version:  # the base changed since: view's other values are stale
        del VIEWS[id(view)]
        warnings.warn(
            f"{name}: this tensor was indexed from another one (y = x[...]) that has changed "
            f"since, so the update reaches y only, not x (PyTorch would write into x). Index "
            f"x again after changing it.", UserWarning, stacklevel=4)
        return
    data = get_backend(base.device).assign(base.data, index, view.data)
    update("__setitem__", base, lambda: Tensor._wrap(data, base.device), cast="unsafe")
    VIEWS[id(view)] = (me, base, index, base._version)


def _binary(name: str, op: Any, x: Any, other: Any) -> Tensor:
    return update(name, x, lambda: apply(op(), x, other), other)


def _scaled(other: Any, alpha: Any) -> Any:
    """alpha * other.  PyTorch still takes its old order ``x.add_(-lr, grad)`` (a number, then
    the tensor; older examples write it), which gives the same product."""
    if isinstance(alpha, (int, float)) and alpha == 1:
        return other
    return apply(elementwise.Mul(), other, alpha)


@public(method=True, function=False)
def add_(x: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """x <- x + alpha * other, in place; returns x."""
    return update("add_", x, lambda: apply(elementwise.Add(), x, _scaled(other, alpha)), other)


@public(method=True, function=False)
def sub_(x: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """x <- x - alpha * other, in place; returns x."""
    return update("sub_", x, lambda: apply(elementwise.Sub(), x, _scaled(other, alpha)), other)


@public(method=True, function=False)
def mul_(x: Tensor, other: Any) -> Tensor:
    """x <- x * other, in place; returns x."""
    return _binary("mul_", elementwise.Mul, x, other)


@public(method=True, function=False)
def div_(x: Tensor, other: Any) -> Tensor:
    """x <- x / other, in place; returns x (an integer tensor refuses: the quotient is a
    float)."""
    return _binary("div_", elementwise.Div, x, other)


@public(method=True, function=False)
def pow_(x: Tensor, exponent: Any) -> Tensor:
    """x <- x ** exponent, in place; returns x."""
    return _binary("pow_", elementwise.Pow, x, exponent)


@public(method=True, function=False)
def clamp_(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """x <- clamp(x, min, max), in place; returns x."""
    return update("clamp_", x, lambda: apply(elementwise.Clamp(min, max), x))


@public(method=True, function=False)
def fill_(x: Tensor, value: Any) -> Tensor:
    """x <- value everywhere, in place; returns x.  ``value`` is a number (or a one-element
    tensor); a float into an integer tensor is refused rather than truncated."""
    check("fill_", x)
    if isinstance(value, Tensor):
        value = value.item()
    if not isinstance(value, (bool, int, float, complex, np.number)):
        raise TypeError(f"fill_: value must be a number, got {type(value).__name__}")
    have = to_numeric_type(np.asarray(value).dtype)
    want = to_numeric_type(x._data.dtype)
    if not np.can_cast(have.cpu, want.cpu, casting="same_kind"):
        raise TypeError(
            f"fill_: value {value!r} ({have.name}) does not fit the tensor's {want.name} "
            "(NumPy's same_kind rule); give a value of the tensor's kind"
        )
    xp = get_backend(x.device).xp
    return update("fill_", x, lambda: Tensor._wrap(xp.full(x.shape, value, dtype=x._data.dtype),
                                                   x.device))


@public(method=True, function=False)
def zero_(x: Tensor) -> Tensor:
    """x <- 0 everywhere, in place; returns x."""
    return fill_(x, 0)


@public(method=True, function=False)
def copy_(x: Tensor, src: Any) -> Tensor:
    """x <- src, in place (src broadcast to x's shape, moved to x's device and cast to x's
    dtype, as PyTorch's ``copy_``: here any cast is asked for); returns x."""

    def copied() -> Tensor:
        value = src if isinstance(src, Tensor) else Tensor(src)
        if value.device != x.device:
            value = value.to(x.device)
        if value.shape != x.shape:
            value = apply(shape.BroadcastTo(x.shape), value)
        # a copy of its own: x must not share an array with src
        return Tensor._wrap(get_backend(x.device).copy(value._data), x.device)

    return update("copy_", x, copied, src, cast="unsafe")


# --------------------------------------------------------------------------------------------
# PyTorch's other in-place spellings: the function of the same name, stored back (x.exp_() is
# x <- exp(x)); lerp_, addcmul_ and addcdiv_ (hand-written optimizers); remainder_ and fmod_


def _unary_inplace(fn_name: str) -> None:
    fn = FUNCTIONS[fn_name]

    def method(x: Tensor) -> Tensor:
        return update(f"{fn_name}_", x, lambda: fn(x), fix=f"x = lucid.{fn_name}(x)")

    method.__name__ = method.__qualname__ = f"{fn_name}_"
    method.__doc__ = f"x <- {fn_name}(x), in place; returns x."
    public(method, method=True, function=False)


for _fn_name in ("exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "abs", "neg",
                 "sigmoid", "tanh", "relu", "floor", "ceil", "round", "sign", "sin", "cos",
                 "tan", "reciprocal", "square", "erf"):
    if _fn_name in FUNCTIONS:
        _unary_inplace(_fn_name)


@public(method=True, function=False)
def remainder_(x: Tensor, other: Any) -> Tensor:
    """x <- x % other (Python's remainder), in place; returns x."""
    return update("remainder_", x, lambda: FUNCTIONS["remainder"](x, other), other)


@public(method=True, function=False)
def fmod_(x: Tensor, other: Any) -> Tensor:
    """x <- fmod(x, other) (C's remainder, the sign of x), in place; returns x."""
    return update("fmod_", x, lambda: FUNCTIONS["fmod"](x, other), other)


@public(method=True, function=False)
def lerp_(x: Tensor, end: Any, weight: Any) -> Tensor:
    """x <- x + weight (end - x), in place (an exponential moving average step); returns x."""
    return update("lerp_", x, lambda: x + weight * (end - x), end, weight)


@public(method=True, function=False)
def addcmul_(x: Tensor, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
    """x <- x + value tensor1 tensor2, in place; returns x."""
    return update("addcmul_", x, lambda: x + value * (tensor1 * tensor2), tensor1, tensor2)


@public(method=True, function=False)
def addcdiv_(x: Tensor, tensor1: Any, tensor2: Any, value: Any = 1) -> Tensor:
    """x <- x + value tensor1 / tensor2, in place; returns x."""
    return update("addcdiv_", x, lambda: x + value * (tensor1 / tensor2), tensor1, tensor2)


def _reshape_in_place(name: str, x: Tensor, compute: Callable[[], Tensor]) -> Tensor:
    """A new shape for ``x`` itself (PyTorch's ``unsqueeze_``, ``squeeze_``, ``t_``,
    ``transpose_``): its data replaced by the reshaped array, its version bumped.  A view
    whose shape changes no longer writes through to the tensor it was indexed from."""
    check(name, x)
    with no_grad():
        result = compute()
    x.data = result.data
    x._version += 1
    VIEWS.pop(id(x), None)
    return x


@public(method=True, function=False)
def unsqueeze_(x: Tensor, dim: int) -> Tensor:
    """Insert an axis of length 1 at ``dim``, in place; returns x."""
    return _reshape_in_place("unsqueeze_", x, lambda: FUNCTIONS["unsqueeze"](x, dim))


@public(method=True, function=False)
def squeeze_(x: Tensor, dim: Any = None) -> Tensor:
    """Remove axes of length 1 (all of them, or ``dim`` if it has length 1), in place."""
    if dim is not None and x.shape[dim] != 1:
        return x  # PyTorch's rule: squeezing an axis longer than 1 leaves it
    return _reshape_in_place("squeeze_", x, lambda: FUNCTIONS["squeeze"](x, dim))


@public(method=True, function=False)
def t_(x: Tensor) -> Tensor:
    """Transpose a matrix in place (a vector stays as it is); returns x."""
    return _reshape_in_place("t_", x, lambda: x.t())


@public(method=True, function=False)
def transpose_(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """Swap axes ``dim0`` and ``dim1``, in place; returns x."""
    return _reshape_in_place("transpose_", x, lambda: FUNCTIONS["swapaxes"](x, dim0, dim1))
