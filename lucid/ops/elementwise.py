"""Elementwise operations: unary maths, binary arithmetic, comparisons and logic, casts.

FLOPs convention: one FLOP per output element for the forward pass; the backward count is the
number of elementwise arithmetic operations its rule performs per element (plus the additions
that sum a broadcast gradient back down).  Binary ops broadcast (NumPy's rule); their backward
returns gradients at the broadcast shape and the engine sums them down to each input's shape.
"""

from __future__ import annotations

import math
from typing import Any

from lucid.ops.base import Op, apply
from lucid.shapes import broadcast_shape
from lucid.types import as_numeric, to_numeric_type

__all__ = [
    "_predicate",
    "neg",
    "exp",
    "log",
    "log2",
    "sqrt",
    "abs",
    "sign",
    "reciprocal",
    "square",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "clip",
    "round",
    "floor",
    "ceil",
    "add",
    "sub",
    "mul",
    "div",
    "floordiv",
    "pow",
    "maximum",
    "minimum",
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isnan",
    "isinf",
    "astype",
]

# --------------------------------------------------------------------------------------------
# unary


class Unary(Op):
    """``y = f(x)`` elementwise; backward is ``g * f'(x)``."""

    #: elementwise operations the backward rule performs per element
    bwd_cost = 2

    def forward_flops(self, out: Any, x: Any) -> int:
        return out.size

    def backward_flops(self, out: Any, x: Any) -> int:
        return self.bwd_cost * out.size


class Neg(Unary):
    """y = -x.   dy/dx = -1."""

    name = "neg"
    saves_inputs = False
    bwd_cost = 1

    def forward(self, xp, x):
        return -x

    def backward(self, xp, g):
        return (-g,)


class Exp(Unary):
    """y = e^x.   dy/dx = e^x = y, so backward reuses the output."""

    name = "exp"
    saves_inputs = False
    saves_output = True
    bwd_cost = 1

    def forward(self, xp, x):
        self.y = xp.exp(x)
        return self.y

    def backward(self, xp, g):
        return (g * self.y,)


class Log(Unary):
    """y = ln x.   dy/dx = 1/x."""

    name = "log"
    bwd_cost = 1

    def forward(self, xp, x):
        self.x = x
        return xp.log(x)

    def backward(self, xp, g):
        return (g / self.x,)


class Log2(Unary):
    """y = log2 x = ln x / ln 2.   dy/dx = 1 / (x ln 2)."""

    name = "log2"

    def forward(self, xp, x):
        self.x = x
        return xp.log2(x)

    def backward(self, xp, g):
        return (g / (self.x * math.log(2.0)),)


class Sqrt(Unary):
    """y = sqrt(x).   dy/dx = 1 / (2 sqrt(x)) = 1 / (2y)."""

    name = "sqrt"
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        self.y = xp.sqrt(x)
        return self.y

    def backward(self, xp, g):
        return (g / (2 * self.y),)


class Abs(Unary):
    """y = |x|.   dy/dx = sign(x) (0 at x = 0, the subgradient PyTorch also picks)."""

    name = "abs"

    def forward(self, xp, x):
        self.x = x
        return xp.abs(x)

    def backward(self, xp, g):
        return (g * xp.sign(self.x),)


class Reciprocal(Unary):
    """y = 1/x.   dy/dx = -1/x^2 = -y^2."""

    name = "reciprocal"
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = 1 / x
        return self.y

    def backward(self, xp, g):
        return (-g * self.y * self.y,)


class Square(Unary):
    """y = x^2.   dy/dx = 2x."""

    name = "square"

    def forward(self, xp, x):
        self.x = x
        return x * x

    def backward(self, xp, g):
        return (2 * self.x * g,)


class Sin(Unary):
    """y = sin x.   dy/dx = cos x."""

    name = "sin"

    def forward(self, xp, x):
        self.x = x
        return xp.sin(x)

    def backward(self, xp, g):
        return (g * xp.cos(self.x),)


class Cos(Unary):
    """y = cos x.   dy/dx = -sin x."""

    name = "cos"

    def forward(self, xp, x):
        self.x = x
        return xp.cos(x)

    def backward(self, xp, g):
        return (-g * xp.sin(self.x),)


class Tan(Unary):
    """y = tan x.   dy/dx = 1 / cos^2 x = 1 + y^2."""

    name = "tan"
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = xp.tan(x)
        return self.y

    def backward(self, xp, g):
        return (g * (1 + self.y * self.y),)


class Arcsin(Unary):
    """y = arcsin x.   dy/dx = 1 / sqrt(1 - x^2)."""

    name = "arcsin"
    bwd_cost = 4

    def forward(self, xp, x):
        self.x = x
        return xp.arcsin(x)

    def backward(self, xp, g):
        return (g / xp.sqrt(1 - self.x * self.x),)


class Arccos(Unary):
    """y = arccos x.   dy/dx = -1 / sqrt(1 - x^2)."""

    name = "arccos"
    bwd_cost = 4

    def forward(self, xp, x):
        self.x = x
        return xp.arccos(x)

    def backward(self, xp, g):
        return (-g / xp.sqrt(1 - self.x * self.x),)


class Arctan(Unary):
    """y = arctan x.   dy/dx = 1 / (1 + x^2)."""

    name = "arctan"
    bwd_cost = 3

    def forward(self, xp, x):
        self.x = x
        return xp.arctan(x)

    def backward(self, xp, g):
        return (g / (1 + self.x * self.x),)


class Sinh(Unary):
    """y = sinh x.   dy/dx = cosh x."""

    name = "sinh"

    def forward(self, xp, x):
        self.x = x
        return xp.sinh(x)

    def backward(self, xp, g):
        return (g * xp.cosh(self.x),)


class Cosh(Unary):
    """y = cosh x.   dy/dx = sinh x."""

    name = "cosh"

    def forward(self, xp, x):
        self.x = x
        return xp.cosh(x)

    def backward(self, xp, g):
        return (g * xp.sinh(self.x),)


class Tanh(Unary):
    """y = tanh x.   dy/dx = 1 - tanh^2 x = 1 - y^2, so backward reuses the output."""

    name = "tanh"
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = xp.tanh(x)
        return self.y

    def backward(self, xp, g):
        gy = g * self.y  # g - (g y) y = g (1 - y^2) with no Python scalar (one MLX op less)
        return (g - gy * self.y,)


class Clip(Unary):
    """y = min(max(x, lo), hi).   dy/dx = 1 inside [lo, hi], 0 where x was clipped."""

    name = "clip"
    bwd_cost = 3

    def __init__(self, lo: float | None, hi: float | None) -> None:
        if lo is None and hi is None:
            raise self.error("give min_value, max_value or both")
        if lo is not None and hi is not None and lo > hi:
            raise self.error(f"min_value {lo} is greater than max_value {hi}")
        self.lo = lo
        self.hi = hi

    def forward(self, xp, x):
        self.x = x
        return xp.clip(x, self.lo, self.hi)

    def backward(self, xp, g):
        x = self.x
        keep = xp.ones(x.shape, dtype=xp.bool_)
        if self.lo is not None:
            keep = keep & (x >= self.lo)
        if self.hi is not None:
            keep = keep & (x <= self.hi)
        return (xp.where(keep, g, 0),)


class _Piecewise(Unary):
    """Piecewise-constant functions: derivative 0 almost everywhere (as PyTorch)."""

    saves_inputs = False
    bwd_cost = 0

    def backward(self, xp, g):
        return (xp.zeros_like(g),)


class Sign(_Piecewise):
    """y = sign(x) in {-1, 0, 1}.   dy/dx = 0."""

    name = "sign"

    def forward(self, xp, x):
        return xp.sign(x)


class Round(_Piecewise):
    """y = x rounded to ``decimals`` places (half to even).   dy/dx = 0."""

    name = "round"

    def __init__(self, decimals: int = 0) -> None:
        self.decimals = decimals

    def forward(self, xp, x):
        return xp.round(x, self.decimals)


class Floor(_Piecewise):
    """y = floor(x).   dy/dx = 0."""

    name = "floor"

    def forward(self, xp, x):
        return xp.floor(x)


class Ceil(_Piecewise):
    """y = ceil(x).   dy/dx = 0."""

    name = "ceil"

    def forward(self, xp, x):
        return xp.ceil(x)


class Cast(Unary):
    """y = x stored as another dtype.   dy/dx = 1, cast back to the input's dtype."""

    name = "astype"
    saves_inputs = False
    numpy_dtypes = False  # the result dtype is the one asked for
    bwd_cost = 0

    def __init__(self, dtype: Any, device: str) -> None:
        numeric = as_numeric(dtype)
        self.numeric = numeric
        self.device = device
        self.differentiable = numeric.is_floating_point or numeric.is_complex

    def forward(self, xp, x):
        numeric = self.numeric.resolve_bits(x.dtype)
        self.in_dtype = x.dtype
        return x.astype(numeric.parse(self.device))

    def backward(self, xp, g):
        return (g.astype(self.in_dtype),)

    def forward_flops(self, out, x):
        return 0  # a conversion, no arithmetic


# --------------------------------------------------------------------------------------------
# binary


class Binary(Op):
    """``y = f(a, b)`` elementwise with broadcasting."""

    broadcasts = True
    bwd_cost = 2

    def check(self, a: Any, b: Any) -> None:
        if a.shape != b.shape:
            broadcast_shape(self.name, tuple(a.shape), tuple(b.shape))

    # The arithmetic operators (+ - * /) leave the shape check to the array library, which
    # makes it before computing anything (NumPy and MLX both refuse shapes that cannot
    # broadcast); only when it refuses do they ask ``check`` for the op's own message.  That
    # keeps two shape reads out of the commonest ops (an MLX ``.shape`` builds a new tuple).
    def refused(self, a: Any, b: Any, exc: ValueError) -> ValueError:
        """The error for a refused ``a op b``: the op's own when the shapes are the reason."""
        try:
            self.check(a, b)
        except ValueError as ours:
            return ours
        return exc

    def forward_flops(self, out: Any, a: Any, b: Any) -> int:
        return out.size

    def backward_flops(self, out: Any, a: Any, b: Any) -> int:
        # the rule's arithmetic, plus the additions that sum a broadcast gradient down
        return self.bwd_cost * out.size + (out.size - a.size) + (out.size - b.size)


class Add(Binary):
    """y = a + b.   dy/da = 1, dy/db = 1."""

    name = "add"
    saves_inputs = False
    bwd_cost = 0

    def forward(self, xp, a, b):
        try:
            return a + b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        return g, g


class Sub(Binary):
    """y = a - b.   dy/da = 1, dy/db = -1."""

    name = "sub"
    saves_inputs = False
    bwd_cost = 1

    def forward(self, xp, a, b):
        try:
            return a - b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        return g, -g


class Mul(Binary):
    """y = a * b.   dy/da = b, dy/db = a."""

    name = "mul"
    wants_needs = True

    def forward(self, xp, a, b):
        self.a = a
        self.b = b
        try:
            return a * b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        need_a, need_b = self.needs  # x * weight: the constant's gradient is never built
        return (g * self.b if need_a else None), (g * self.a if need_b else None)


class Div(Binary):
    """y = a / b.   dy/da = 1/b, dy/db = -a/b^2."""

    name = "div"
    bwd_cost = 4

    def forward(self, xp, a, b):
        self.a = a
        self.b = b
        try:
            return a / b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        ga = g / self.b
        return ga, -ga * self.a / self.b


class FloorDiv(Binary):
    """y = floor(a / b).   Piecewise constant: both derivatives are 0."""

    name = "floordiv"
    saves_inputs = False
    bwd_cost = 0

    def forward(self, xp, a, b):
        self.check(a, b)
        return xp.floor_divide(a, b)

    def backward(self, xp, g):
        zero = xp.zeros_like(g)
        return zero, zero


class Pow(Binary):
    """y = a^b.   dy/da = b a^(b-1),  dy/db = a^b ln a (taken as 0 where a = 0)."""

    name = "pow"
    wants_needs = True
    saves_output = True
    bwd_cost = 5

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        self.y = a**b
        return self.y

    def backward(self, xp, g):
        a, b = self.a, self.b
        ga = gb = None
        if self.needs[0]:
            ga = g * b * a ** (b - 1)
        if self.needs[1]:
            safe = xp.where(a == 0, 1, a)
            gb = g * self.y * xp.log(safe)
        return ga, gb


class Maximum(Binary):
    """y = max(a, b).   The gradient goes to the larger input; a tie splits it in half."""

    name = "maximum"
    bwd_cost = 4

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        return xp.maximum(a, b)

    def backward(self, xp, g):
        a, b = self.a, self.b
        share = xp.where(a > b, 1.0, xp.where(a == b, 0.5, 0.0)).astype(g.dtype)
        return g * share, g * (1 - share)


class Minimum(Binary):
    """y = min(a, b).   The gradient goes to the smaller input; a tie splits it in half."""

    name = "minimum"
    bwd_cost = 4

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        return xp.minimum(a, b)

    def backward(self, xp, g):
        a, b = self.a, self.b
        share = xp.where(a < b, 1.0, xp.where(a == b, 0.5, 0.0)).astype(g.dtype)
        return g * share, g * (1 - share)


# --------------------------------------------------------------------------------------------
# comparisons and logic: bool results, no gradient


class Predicate(Op):
    """A test whose bool result carries no gradient (``differentiable = False``)."""

    differentiable = False
    saves_inputs = False
    fn = ""

    def forward(self, xp, *xs):
        if len(xs) == 2 and xs[0].shape != xs[1].shape:
            broadcast_shape(self.name, tuple(xs[0].shape), tuple(xs[1].shape))
        return getattr(xp, self.fn)(*xs)

    def forward_flops(self, out, *xs):
        return out.size

    def backward_flops(self, out, *xs):
        return 0


def _predicate(cls_name: str, name: str, fn: str, doc: str) -> type[Predicate]:
    return type(cls_name, (Predicate,), {"name": name, "fn": fn, "__doc__": doc})


Equal = _predicate("Equal", "equal", "equal", "a == b, elementwise.")
NotEqual = _predicate("NotEqual", "not_equal", "not_equal", "a != b, elementwise.")
Greater = _predicate("Greater", "greater", "greater", "a > b, elementwise.")
GreaterEqual = _predicate("GreaterEqual", "greater_equal", "greater_equal", "a >= b.")
Less = _predicate("Less", "less", "less", "a < b, elementwise.")
LessEqual = _predicate("LessEqual", "less_equal", "less_equal", "a <= b, elementwise.")
LogicalAnd = _predicate("LogicalAnd", "logical_and", "logical_and", "a and b, elementwise.")
LogicalOr = _predicate("LogicalOr", "logical_or", "logical_or", "a or b, elementwise.")
LogicalXor = _predicate("LogicalXor", "logical_xor", "logical_xor", "a xor b, elementwise.")
LogicalNot = _predicate("LogicalNot", "logical_not", "logical_not", "not a, elementwise.")
IsNan = _predicate("IsNan", "isnan", "isnan", "True where a is NaN.")
IsInf = _predicate("IsInf", "isinf", "isinf", "True where a is +/-inf.")


# --------------------------------------------------------------------------------------------
# the functions users call


def neg(a):
    return apply(Neg(), a)


def exp(a):
    return apply(Exp(), a)


def log(a):
    return apply(Log(), a)


def log2(a):
    return apply(Log2(), a)


def sqrt(a):
    return apply(Sqrt(), a)


def abs(a):  # noqa: A001 -- numpy's name
    return apply(Abs(), a)


def sign(a):
    return apply(Sign(), a)


def reciprocal(a):
    return apply(Reciprocal(), a)


def square(a):
    return apply(Square(), a)


def sin(a):
    return apply(Sin(), a)


def cos(a):
    return apply(Cos(), a)


def tan(a):
    return apply(Tan(), a)


def arcsin(a):
    return apply(Arcsin(), a)


def arccos(a):
    return apply(Arccos(), a)


def arctan(a):
    return apply(Arctan(), a)


def sinh(a):
    return apply(Sinh(), a)


def cosh(a):
    return apply(Cosh(), a)


def tanh(a):
    return apply(Tanh(), a)


def clip(a, min_value: float | None = None, max_value: float | None = None):
    """Limit values to ``[min_value, max_value]`` (either bound may be None)."""
    return apply(Clip(min_value, max_value), a)


def round(a, decimals: int = 0):  # noqa: A001 -- numpy's name
    return apply(Round(decimals), a)


def floor(a):
    return apply(Floor(), a)


def ceil(a):
    return apply(Ceil(), a)


def add(a, b):
    return apply(Add(), a, b)


def sub(a, b):
    return apply(Sub(), a, b)


def mul(a, b):
    return apply(Mul(), a, b)


def div(a, b):
    return apply(Div(), a, b)


def floordiv(a, b):
    return apply(FloorDiv(), a, b)


def pow(a, b):  # noqa: A001 -- numpy's name
    return apply(Pow(), a, b)


def maximum(a, b):
    return apply(Maximum(), a, b)


def minimum(a, b):
    return apply(Minimum(), a, b)


def equal(a, b):
    return apply(Equal(), a, b)


def not_equal(a, b):
    return apply(NotEqual(), a, b)


def greater(a, b):
    return apply(Greater(), a, b)


def greater_equal(a, b):
    return apply(GreaterEqual(), a, b)


def less(a, b):
    return apply(Less(), a, b)


def less_equal(a, b):
    return apply(LessEqual(), a, b)


def logical_and(a, b):
    return apply(LogicalAnd(), a, b)


def logical_or(a, b):
    return apply(LogicalOr(), a, b)


def logical_xor(a, b):
    return apply(LogicalXor(), a, b)


def logical_not(a):
    return apply(LogicalNot(), a)


def isnan(a):
    return apply(IsNan(), a)


def isinf(a):
    return apply(IsInf(), a)


def astype(a, dtype):
    """``a`` converted to ``dtype`` (a Numeric, builtin or NumPy dtype); differentiable.

    The result reports the dtype asked for, even where the device stores it narrower
    (Float64 on an MLX GPU is held as float32).
    """
    op = Cast(dtype, getattr(a, "device", "cpu"))
    out = apply(op, a)
    wanted = op.numeric.resolve_bits(op.in_dtype)
    out._dtype = None if to_numeric_type(out.data.dtype) == wanted else wanted
    return out
