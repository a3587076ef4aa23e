"""Attach the op functions to Tensor as operators and methods.

``tensor.py`` sits below the ops (imports flow one way), so the op layer adds ``__add__``,
``sum``, ``reshape`` ... here, once, when ``lucid.ops`` is imported.
"""

from __future__ import annotations

from typing import Any

from lucid.autograd.mode import MODE
from lucid.ops import conv, device, indexing, linalg, nn, reduction, shape
from lucid.ops import elementwise as E
from lucid.tensor import Tensor


def _swap(fn):
    def reflected(self, other):
        return fn(other, self)

    reflected.__name__ = f"r{fn.__name__}"
    return reflected


def _inplace(fn, name: str, symbol: str):
    """``a op= b``: compute out of place, then rebind ``a.data`` and bump ``a._version``.

    The old array is left untouched (views of it and values saved for backward stay valid);
    the version bump lets backward detect that a saved input changed.  Gradients do not flow
    through in-place updates, so they are refused where a graph is being recorded.
    """

    def inplace(self, other):
        if MODE.grad and (self.requires_grad or getattr(other, "requires_grad", False)):
            raise RuntimeError(
                f"{name}: in-place update of a tensor that requires grad (shape "
                f"{self.shape}). Write the out-of-place form (x = x {symbol} y), or do "
                "the update inside `with lucid.no_grad():` (as optimizers do)."
            )
        result = fn(self, other)
        if result.shape != self.shape:
            raise ValueError(
                f"{name}: result shape {result.shape} differs from the tensor's shape "
                f"{self.shape}; an in-place update cannot change the shape."
            )
        data = result.data
        self.data = data if data.dtype == self.data.dtype else data.astype(self.data.dtype)
        self._version += 1
        return self

    inplace.__name__ = name
    return inplace


def attach(name: str, fn: Any) -> None:
    setattr(Tensor, name, fn)


_BINARY = {
    "add": (E.add, "+"),
    "sub": (E.sub, "-"),
    "mul": (E.mul, "*"),
    "truediv": (E.div, "/"),
    "floordiv": (E.floordiv, "//"),
    "pow": (E.pow, "**"),
}
for _n, (_fn, _symbol) in _BINARY.items():
    attach(f"__{_n}__", _fn)
    attach(f"__r{_n}__", _swap(_fn))
    attach(f"__i{_n}__", _inplace(_fn, f"__i{_n}__", _symbol))

attach("__neg__", E.neg)
attach("__abs__", E.abs)
attach("__pos__", lambda self: self)
attach("__eq__", E.equal)
attach("__ne__", E.not_equal)
attach("__lt__", E.less)
attach("__le__", E.less_equal)
attach("__gt__", E.greater)
attach("__ge__", E.greater_equal)
attach("__and__", E.logical_and)
attach("__or__", E.logical_or)
attach("__xor__", E.logical_xor)
attach("__invert__", E.logical_not)

for _n in ("exp", "log", "log2", "sqrt", "sign", "reciprocal", "square", "sin", "cos", "tan",
           "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "clip", "round", "floor",
           "ceil", "astype", "maximum", "minimum"):
    attach(_n, getattr(E, _n))
attach("abs", E.abs)

# Each family module lists its own Tensor methods (sum, reshape, __getitem__, T, ...).
for _module in (reduction, linalg, shape, indexing, device, nn, conv):
    for _n, _fn in _module.METHODS.items():
        attach(_n, _fn)
