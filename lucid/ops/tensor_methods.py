"""Attach the catalogue to Tensor: its methods and Python operators, read from the registry.

``tensor.py`` sits below the ops (imports flow one way), so the op layer adds ``x.sum()``,
``x + y``, ``x[i]`` ... here, once, when ``lucid.ops`` is imported.  Nothing here names an
op: each op class says whether it is a method (``method = True``) and which operator it
computes (``operator = "+"``); this module only knows Python's operator protocol.
"""

from __future__ import annotations

from typing import Any

from lucid.ops.base import METHODS, OPERATORS
from lucid.ops.inplace import in_graph, update
from lucid.tensor import Tensor

# Python's operator protocol: the special method(s) that spell each operator.  Binary
# arithmetic and bitwise operators also have a reflected form (``2 * x`` calls
# ``x.__rmul__(2)``, ``True | mask`` calls ``mask.__ror__(True)``) and, except ``@``, an
# in-place one (``x *= 2``).
_ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "//": "floordiv",
               "%": "mod", "**": "pow", "@": "matmul", "&": "and", "|": "or", "^": "xor"}
_SPECIAL = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__",
            ">=": "__ge__", "-x": "__neg__", "~x": "__invert__", "abs(x)": "__abs__",
            "[]": "__getitem__"}


def _reflected(fn):
    def reflected(self, other):
        return fn(other, self)

    reflected.__name__ = f"r{fn.__name__}"
    return reflected


def _inplace(fn, name: str, symbol: str):
    """``a op= b``: the same path as ``a.add_(b)`` (:func:`lucid.ops.inplace.update`): computed
    out of place, stored as ``a.data`` under the same dtype rule, ``a._version`` bumped.

    Inside a recorded graph (``loss = 0`` then ``loss += criterion(out, y)`` in a loop, the
    commonest PyTorch idiom that updates in place) PyTorch records the in-place op; Lucid
    records none, so there ``a op= b`` gives the out-of-place result, which Python binds to
    ``a`` -- the same value and gradient (other names for the old ``a`` keep the old value).
    A leaf that requires grad (a parameter) is still refused, as in PyTorch."""

    def inplace(self, other):
        if in_graph(self, other):
            return fn(self, other)
        return update(name, self, lambda: fn(self, other), other, fix=f"x = x {symbol} y")

    inplace.__name__ = name
    return inplace


def _attach(name: str, fn: Any) -> None:
    setattr(Tensor, name, fn)


for _name, _fn in METHODS.items():
    _attach(_name, _fn)

for _symbol, _fn in OPERATORS.items():
    if _symbol in _ARITHMETIC:
        _stem = _ARITHMETIC[_symbol]
        _attach(f"__{_stem}__", _fn)
        _attach(f"__r{_stem}__", _reflected(_fn))
        if _symbol != "@":
            _attach(f"__i{_stem}__", _inplace(_fn, f"__i{_stem}__", _symbol))
    else:
        _attach(_SPECIAL[_symbol], _fn)

_attach("__pos__", lambda self: self)
