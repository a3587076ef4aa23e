"""Elementwise operations: unary maths, binary arithmetic, comparisons, logic, bitwise ops,
casts.

The operators ``& | ^ ~`` are the bitwise ops (NumPy's and PyTorch's meaning): bit by bit on
integer tensors, plain logic on Bool tensors; ``logical_and`` & co. treat any nonzero value as
True and always give Bools.  ``subtract``, ``multiply``, ``divide`` and ``power`` are second
names (NumPy's and Lucid 2.x's) of ``sub``, ``mul``, ``div`` and ``pow``.

FLOPs convention: one FLOP per output element for the forward pass; the backward count is the
number of elementwise arithmetic operations its rule performs per element (plus the additions
that sum a broadcast gradient back down).  Binary ops broadcast (NumPy's rule); their backward
returns gradients at the broadcast shape and the engine sums them down to each input's shape.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends.numpy_erf import erf as numpy_erf
from lucid.ops.base import FUNCTIONS, OPERATORS, Op, apply, public
from lucid.shapes import broadcast_shape
from lucid.tensor import Tensor
from lucid.types import as_numeric, to_numeric_type

# --------------------------------------------------------------------------------------------
# unary


class Elementwise(Op):
    """``y = f(x)`` elementwise; backward is ``g * f'(x)``.

    FLOPs: ``fwd_cost`` operations per element forward, ``bwd_cost`` for the backward rule (a
    transcendental function -- exp, log, tanh, erf -- counts as one, a select as zero).
    """

    #: elementwise operations the forward pass performs per element
    fwd_cost = 1
    #: elementwise operations the backward rule performs per element
    bwd_cost = 2

    def forward_flops(self, out: Any, x: Any) -> int:
        return self.fwd_cost * out.size

    def backward_flops(self, out: Any, x: Any) -> int:
        return self.bwd_cost * out.size


class Neg(Elementwise):
    """y = -x.   dy/dx = -1."""

    name = "neg"
    operator = "-x"
    saves_inputs = False
    bwd_cost = 1

    def forward(self, xp, x):
        return -x

    def backward(self, xp, g):
        return (-g,)


class Exp(Elementwise):
    """y = e^x.   dy/dx = e^x = y, so backward reuses the output."""

    name = "exp"
    method = True
    saves_inputs = False
    saves_output = True
    bwd_cost = 1

    def forward(self, xp, x):
        self.y = xp.exp(x)
        return self.y

    def backward(self, xp, g):
        return (g * self.y,)


class Log(Elementwise):
    """y = ln x.   dy/dx = 1/x."""

    name = "log"
    method = True
    bwd_cost = 1

    def forward(self, xp, x):
        self.x = x
        return xp.log(x)

    def backward(self, xp, g):
        return (g / self.x,)


class Log2(Elementwise):
    """y = log2 x = ln x / ln 2.   dy/dx = 1 / (x ln 2)."""

    name = "log2"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.log2(x)

    def backward(self, xp, g):
        return (g / (self.x * math.log(2.0)),)


class Log10(Elementwise):
    """y = log10 x = ln x / ln 10.   dy/dx = 1 / (x ln 10)."""

    name = "log10"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.log10(x)

    def backward(self, xp, g):
        return (g / (self.x * math.log(10.0)),)


class Log1p(Elementwise):
    """y = ln(1 + x), exact for tiny x (where 1 + x would round to 1).   dy/dx = 1 / (1 + x)."""

    name = "log1p"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.log1p(x)

    def backward(self, xp, g):
        return (g / (1 + self.x),)


class Expm1(Elementwise):
    """y = e^x - 1, exact for tiny x.   dy/dx = e^x = y + 1."""

    name = "expm1"
    method = True
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        self.y = xp.expm1(x)
        return self.y

    def backward(self, xp, g):
        return (g * (self.y + 1),)


class Sqrt(Elementwise):
    """y = sqrt(x).   dy/dx = 1 / (2 sqrt(x)) = 1 / (2y)."""

    name = "sqrt"
    method = True
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        self.y = xp.sqrt(x)
        return self.y

    def backward(self, xp, g):
        return (g / (2 * self.y),)


class Abs(Elementwise):
    """y = |x|.   dy/dx = sign(x) (0 at x = 0, the subgradient PyTorch also picks)."""

    name = "abs"
    method = True
    operator = "abs(x)"

    def forward(self, xp, x):
        self.x = x
        return xp.abs(x)

    def backward(self, xp, g):
        return (g * xp.sign(self.x),)


class Reciprocal(Elementwise):
    """y = 1/x.   dy/dx = -1/x^2 = -y^2."""

    name = "reciprocal"
    method = True
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = 1 / x
        return self.y

    def backward(self, xp, g):
        return (-g * self.y * self.y,)


class Square(Elementwise):
    """y = x^2.   dy/dx = 2x."""

    name = "square"
    method = True

    def forward(self, xp, x):
        self.x = x
        return x * x

    def backward(self, xp, g):
        return (2 * self.x * g,)


class Cube(Elementwise):
    """y = x^3.   dy/dx = 3x^2."""

    name = "cube"
    method = True
    fwd_cost = 2  # x * x * x
    bwd_cost = 3  # 3 * x * x * g

    def forward(self, xp, x):
        self.x = x
        return x * x * x

    def backward(self, xp, g):
        x = self.x
        return (3 * x * x * g,)


class Sin(Elementwise):
    """y = sin x.   dy/dx = cos x."""

    name = "sin"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.sin(x)

    def backward(self, xp, g):
        return (g * xp.cos(self.x),)


class Cos(Elementwise):
    """y = cos x.   dy/dx = -sin x."""

    name = "cos"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.cos(x)

    def backward(self, xp, g):
        return (-g * xp.sin(self.x),)


class Tan(Elementwise):
    """y = tan x.   dy/dx = 1 / cos^2 x = 1 + y^2."""

    name = "tan"
    method = True
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = xp.tan(x)
        return self.y

    def backward(self, xp, g):
        return (g * (1 + self.y * self.y),)


class Arcsin(Elementwise):
    """y = arcsin x.   dy/dx = 1 / sqrt(1 - x^2)."""

    name = "arcsin"
    method = True
    bwd_cost = 4

    def forward(self, xp, x):
        self.x = x
        return xp.arcsin(x)

    def backward(self, xp, g):
        return (g / xp.sqrt(1 - self.x * self.x),)


class Arccos(Elementwise):
    """y = arccos x.   dy/dx = -1 / sqrt(1 - x^2)."""

    name = "arccos"
    method = True
    bwd_cost = 4

    def forward(self, xp, x):
        self.x = x
        return xp.arccos(x)

    def backward(self, xp, g):
        return (-g / xp.sqrt(1 - self.x * self.x),)


class Arctan(Elementwise):
    """y = arctan x.   dy/dx = 1 / (1 + x^2)."""

    name = "arctan"
    method = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.x = x
        return xp.arctan(x)

    def backward(self, xp, g):
        return (g / (1 + self.x * self.x),)


class Sinh(Elementwise):
    """y = sinh x.   dy/dx = cosh x."""

    name = "sinh"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.sinh(x)

    def backward(self, xp, g):
        return (g * xp.cosh(self.x),)


class Cosh(Elementwise):
    """y = cosh x.   dy/dx = sinh x."""

    name = "cosh"
    method = True

    def forward(self, xp, x):
        self.x = x
        return xp.cosh(x)

    def backward(self, xp, g):
        return (g * xp.sinh(self.x),)


# NumPy has no erf (SciPy has, but is no dependency of Lucid): lucid.backends.numpy_erf writes
# Cody's approximations on whole arrays.
def _erf(xp: Any, x: Any) -> Any:
    """erf on the device's arrays: MLX has it; NumPy has not (see lucid.backends.numpy_erf)."""
    erf = getattr(xp, "erf", None)
    if erf is not None:
        return erf(x)
    return numpy_erf(x)


class Erf(Elementwise):
    """y = erf x = (2/√π) ∫_0^x e^(-t²) dt (the Gaussian error function).
    dy/dx = (2/√π) e^(-x²).

    FLOPs: forward 1, backward 4 (square, negate, exp, multiply) per element.
    """

    name = "erf"
    method = True
    bwd_cost = 4

    def forward(self, xp, x):
        self.x = x
        return _erf(xp, x)

    def backward(self, xp, g):
        x = self.x
        return (g * (1.1283791670955126 * xp.exp(-(x * x))),)


class Tanh(Elementwise):
    """y = tanh x.   dy/dx = 1 - tanh^2 x = 1 - y^2, so backward reuses the output."""

    name = "tanh"
    method = True
    saves_inputs = False
    saves_output = True
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = xp.tanh(x)
        return self.y

    def backward(self, xp, g):
        gy = g * self.y  # g - (g y) y = g (1 - y^2) with no Python scalar (one MLX op less)
        return (g - gy * self.y,)


class Clip(Elementwise):
    """y = min(max(x, lo), hi) with lo = ``min_value``, hi = ``max_value`` (either may be
    None; with neither, as in NumPy 2 and Lucid 2.x, y is a copy of x).
    dy/dx = 1 inside [lo, hi], 0 where x was clipped."""

    name = "clip"
    method = True
    bwd_cost = 3

    #: how the bounds are called in messages (Clamp uses PyTorch's names)
    bounds = ("min_value", "max_value")
    #: PyTorch's clamp refuses to be called without a bound; NumPy's clip does not
    needs_a_bound = False

    def __init__(self, min_value: float | None = None, max_value: float | None = None) -> None:
        lo, hi = min_value, max_value
        low_name, high_name = self.bounds
        if lo is None and hi is None and self.needs_a_bound:
            raise self.error(f"give {low_name}, {high_name} or both")
        if lo is not None and hi is not None and lo > hi:
            raise self.error(f"{low_name} {lo} is greater than {high_name} {hi}")
        self.lo = lo
        self.hi = hi

    def forward(self, xp, x):
        self.x = x
        if self.lo is None and self.hi is None:
            return xp.array(x)  # a copy (MLX refuses clip with no bound)
        return xp.clip(x, _in_range(x.dtype, self.lo), _in_range(x.dtype, self.hi))

    def backward(self, xp, g):
        x = self.x
        keep = xp.ones(x.shape, dtype=xp.bool_)
        if self.lo is not None:
            keep = keep & (x >= self.lo)
        if self.hi is not None:
            keep = keep & (x <= self.hi)
        return (xp.where(keep, g, 0),)


def _in_range(dtype: Any, bound: Any) -> Any:
    """An int bound past an integer dtype's range moved to its edge: every value is on that
    side of it anyway (clamping a uint8 at -1 clamps nothing), and MLX refuses the -1."""
    name = str(dtype).rsplit(".", 1)[-1]
    if not isinstance(bound, int) or not name.startswith(("int", "uint")):
        return bound
    info = np.iinfo(name)
    return min(max(bound, int(info.min)), int(info.max))


class Clamp(Clip):
    """PyTorch's spelling of :func:`clip`: y = min(max(x, min), max) (either bound may be
    None).   dy/dx = 1 inside [min, max], 0 where x was clamped."""

    name = "clamp"
    bounds = ("min", "max")
    needs_a_bound = True

    def __init__(self, min: float | None = None, max: float | None = None) -> None:  # noqa: A002
        super().__init__(min, max)

    @classmethod
    def call(cls, x: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Number bounds make one Clamp op; tensor bounds (PyTorch's ``clamp(x, min=lo)``
        with ``lo`` a tensor, elementwise) are ``maximum(x, lo)`` then ``minimum(., hi)``,
        whose gradients they inherit."""
        if not (isinstance(min, Tensor) or isinstance(max, Tensor)):
            return apply(cls(min, max), x)
        out = x if min is None else apply(Maximum(), x, min)
        return out if max is None else apply(Minimum(), out, max)


class _Piecewise(Elementwise):
    """Piecewise-constant functions: derivative 0 almost everywhere (as PyTorch)."""

    saves_inputs = False
    bwd_cost = 0

    def backward(self, xp, g):
        return (xp.zeros_like(g),)


class Sign(_Piecewise):
    """y = sign(x) in {-1, 0, 1}, NaN for NaN (as NumPy; MLX gives 0).   dy/dx = 0."""

    name = "sign"
    method = True

    def forward(self, xp, x):
        return xp.where(x != x, x, xp.sign(x))  # (x != x: x is NaN)


class Round(_Piecewise):
    """y = x rounded to ``decimals`` places (half to even).   dy/dx = 0."""

    name = "round"
    method = True

    def __init__(self, decimals: int = 0) -> None:
        self.decimals = decimals

    def forward(self, xp, x):
        return xp.round(x, self.decimals)


class Floor(_Piecewise):
    """y = floor(x).   dy/dx = 0."""

    name = "floor"
    method = True

    def forward(self, xp, x):
        return xp.floor(x)


class Ceil(_Piecewise):
    """y = ceil(x).   dy/dx = 0."""

    name = "ceil"
    method = True

    def forward(self, xp, x):
        return xp.ceil(x)


class Cast(Elementwise):
    """y = x stored as ``dtype`` (a Numeric, builtin or NumPy dtype).   dy/dx = 1, cast back
    to the input's dtype.

    The result reports the dtype asked for, even where the device stores it narrower
    (Float64 on an MLX GPU is held as float32).
    """

    name = "astype"
    method = True
    saves_inputs = False
    numpy_dtypes = False  # the result dtype is the one asked for
    bwd_cost = 0

    def __init__(self, dtype: Any, device: str) -> None:
        numeric = as_numeric(dtype)
        self.numeric = numeric
        self.device = device
        self.differentiable = numeric.is_floating_point or numeric.is_complex

    @classmethod
    def call(cls, x: Any, dtype: Any) -> Any:
        op = cls(dtype, getattr(x, "device", "cpu"))
        out = apply(op, x)
        wanted = op.numeric.resolve_bits(op.in_dtype)
        out._dtype = None if to_numeric_type(out._data.dtype) == wanted else wanted
        return out

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

    inputs = ("a", "b")
    broadcasts = True
    #: FLOPs per output element of dL/da and of dL/db (each counted only when computed)
    bwd_cost: tuple[int, int] = (1, 1)

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
        # the rule's arithmetic for the gradients it computes, plus the additions that sum a
        # broadcast gradient down to its input's shape
        need_a, need_b = self.needs
        cost_a, cost_b = self.bwd_cost
        n = out.size
        return need_a * (cost_a * n + n - a.size) + need_b * (cost_b * n + n - b.size)


class Add(Binary):
    """y = a + b.   dy/da = 1, dy/db = 1."""

    name = "add"
    operator = "+"
    saves_inputs = False
    bwd_cost = (0, 0)  # both gradients are g itself

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
    operator = "-"
    saves_inputs = False
    wants_needs = True
    bwd_cost = (0, 1)  # g, and -g

    def forward(self, xp, a, b):
        try:
            return a - b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        return g, (-g if self.needs[1] else None)


class Mul(Binary):
    """y = a * b.   dy/da = b, dy/db = a."""

    name = "mul"
    operator = "*"
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
    function = None  # lucid.div (below) also takes a rounding mode; ``a / b`` runs this op
    operator = "/"
    wants_needs = True

    def forward(self, xp, a, b):
        self.a = a
        self.b = b
        try:
            return a / b
        except ValueError as exc:
            raise self.refused(a, b, exc) from None

    def backward(self, xp, g):
        ga = g / self.b  # dL/db = -(g / b) a / b reuses it
        return (ga if self.needs[0] else None), (-ga * self.a / self.b if self.needs[1] else None)

    def backward_flops(self, out, a, b):
        # g / b (shared); then negate, times a, over b for dL/db; and the broadcast sums
        need_a, need_b = self.needs
        n = out.size
        return n + need_a * (n - a.size) + need_b * (4 * n - b.size)


class FloorDiv(Binary):
    """y = floor(a / b).   Piecewise constant: both derivatives are 0."""

    name = "floordiv"
    operator = "//"
    saves_inputs = False
    wants_needs = True
    bwd_cost = (0, 0)

    def forward(self, xp, a, b):
        self.check(a, b)
        return xp.floor_divide(a, b)

    def backward(self, xp, g):
        zero = xp.zeros_like(g)
        return (zero if self.needs[0] else None), (zero if self.needs[1] else None)


@public
def div(a: Any, b: Any, rounding_mode: str | None = None, *, floor: bool = False) -> Any:
    """a / b, or rounded to an integer value as PyTorch's ``torch.div`` does:
    ``rounding_mode="floor"`` is ``a // b`` (rounded down), ``"trunc"`` rounds toward zero
    (C's integer division).  ``floor=True`` is Lucid 2.x's spelling of ``"floor"``.
    A rounded quotient is piecewise constant: its gradient is 0.
    """
    if floor:
        if rounding_mode not in (None, "floor"):
            raise ValueError(f"div: floor=True and rounding_mode={rounding_mode!r} disagree; "
                             f"give one of them")
        rounding_mode = "floor"
    if rounding_mode is None:
        return OPERATORS["/"](a, b)
    if rounding_mode not in ("floor", "trunc"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                         f"{rounding_mode!r}")
    down = FUNCTIONS["floordiv"](a, b)
    if rounding_mode == "floor":
        return down
    # toward zero: a negative quotient that was not whole was rounded one too far down
    rounded_off = FUNCTIONS["logical_and"](down < 0, down * b != a)
    return FUNCTIONS["where"](rounded_off, down + 1, down)


class Remainder(Binary):
    """y = a - b floor(a / b), Python's ``a % b`` (the sign of b, as PyTorch's ``remainder``).
    dy/da = 1, dy/db = -floor(a / b)."""

    name = "remainder"
    operator = "%"
    method = True
    wants_needs = True
    bwd_cost = (0, 3)

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a, self.b = a, b
        return xp.remainder(a, b)

    def backward(self, xp, g):
        gb = -g * xp.floor_divide(self.a, self.b) if self.needs[1] else None
        return (g if self.needs[0] else None), gb


class Fmod(Binary):
    """y = a - b trunc(a / b), C's ``fmod`` (the sign of a, as PyTorch's ``fmod``).
    dy/da = 1, dy/db = -trunc(a / b)."""

    name = "fmod"
    method = True
    wants_needs = True
    bwd_cost = (0, 4)

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a, self.b = a, b
        if hasattr(xp, "fmod"):
            return xp.fmod(a, b)
        return a - b * _trunc(xp, a / b)  # MLX has no fmod

    def backward(self, xp, g):
        gb = -g * _trunc(xp, self.a / self.b) if self.needs[1] else None
        return (g if self.needs[0] else None), gb


def _trunc(xp: Any, x: Any) -> Any:
    """Rounding toward zero (MLX has no ``trunc``)."""
    return xp.sign(x) * xp.floor(xp.abs(x))


class Pow(Binary):
    """y = a^b.   dy/da = b a^(b-1) (0 where b = 0, as PyTorch: also at a = 0),
    dy/db = a^b ln a (taken as 0 where a = 0)."""

    name = "pow"
    operator = "**"
    wants_needs = True
    saves_output = True
    # dL/da: b - 1, the power, two multiplies and the b == 0 test; dL/db: the a == 0 test,
    # log and two multiplies
    bwd_cost = (5, 4)

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        self.y = a**b
        return self.y

    def backward(self, xp, g):
        a, b = self.a, self.b
        ga = gb = None
        if self.needs[0]:  # b a^(b-1) is 0 * inf = NaN at a = b = 0: the limit there is 0
            ga = xp.where(b == 0, 0, g * b * a ** (b - 1))
        if self.needs[1]:
            safe = xp.where(a == 0, 1, a)
            gb = g * self.y * xp.log(safe)
        return ga, gb



def _share_flops(self: Binary, out: Any, a: Any, b: Any) -> int:
    # the share (two comparisons, two selects), then g * share and g * (1 - share), and the
    # broadcast sums
    need_a, need_b = self.needs
    n = out.size
    return 4 * n + need_a * (2 * n - a.size) + need_b * (3 * n - b.size)


class Maximum(Binary):
    """y = max(a, b).   The gradient goes to the larger input; a tie splits it in half."""

    name = "maximum"
    method = True
    wants_needs = True

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        return xp.maximum(a, b)

    def backward(self, xp, g):
        a, b = self.a, self.b
        share = xp.where(a > b, 1.0, xp.where(a == b, 0.5, 0.0)).astype(g.dtype)
        return (g * share if self.needs[0] else None), (g * (1 - share) if self.needs[1] else None)

    backward_flops = _share_flops


class Minimum(Binary):
    """y = min(a, b).   The gradient goes to the smaller input; a tie splits it in half."""

    name = "minimum"
    method = True
    wants_needs = True

    def forward(self, xp, a, b):
        self.check(a, b)
        self.a = a
        self.b = b
        return xp.minimum(a, b)

    def backward(self, xp, g):
        a, b = self.a, self.b
        share = xp.where(a < b, 1.0, xp.where(a == b, 0.5, 0.0)).astype(g.dtype)
        return (g * share if self.needs[0] else None), (g * (1 - share) if self.needs[1] else None)

    backward_flops = _share_flops


# --------------------------------------------------------------------------------------------
# comparisons and logic: bool results, no gradient


class Predicate(Op):
    """A test whose bool result carries no gradient (``differentiable = False``); ``forward``
    calls the namespace's function of the op's name (``xp.equal``, ``xp.isnan``, ...)."""

    inputs = ("a", "b")
    differentiable = False
    saves_inputs = False

    def forward(self, xp, *xs):
        if len(xs) == 2 and xs[0].shape != xs[1].shape:
            broadcast_shape(self.name, tuple(xs[0].shape), tuple(xs[1].shape))
        return getattr(xp, self.name)(*xs)

    def forward_flops(self, out, *xs):
        return out.size

    def backward_flops(self, out, *xs):
        return 0


class Equal(Predicate):
    """a == b, elementwise: ``lucid.eq(a, b)``, ``a.eq(b)``, ``a == b``.

    Its function is ``eq``, not ``equal``: PyTorch's ``torch.equal(a, b)`` is one Python bool
    (same shape, every element equal), and a PyTorch spelling must not mean something else
    here, so ``lucid.equal`` is that bool (:func:`lucid.ops.pytorch.equal`)."""

    name = "equal"
    function = "eq"
    operator = "=="


class NotEqual(Predicate):
    """a != b, elementwise."""

    name = "not_equal"
    operator = "!="


class Greater(Predicate):
    """a > b, elementwise."""

    name = "greater"
    operator = ">"


class GreaterEqual(Predicate):
    """a >= b, elementwise."""

    name = "greater_equal"
    operator = ">="


class Less(Predicate):
    """a < b, elementwise."""

    name = "less"
    operator = "<"


class LessEqual(Predicate):
    """a <= b, elementwise."""

    name = "less_equal"
    operator = "<="


class LogicalAnd(Predicate):
    """a and b, elementwise."""

    name = "logical_and"


class LogicalOr(Predicate):
    """a or b, elementwise."""

    name = "logical_or"


class LogicalXor(Predicate):
    """a xor b, elementwise."""

    name = "logical_xor"


class LogicalNot(Predicate):
    """not x, elementwise."""

    name = "logical_not"
    inputs = ("x",)


class Bitwise(Predicate):
    """Bitwise logic on integer tensors (two's complement, as NumPy), which is plain logic on
    Bool tensors: ``a & b`` on Int64 is the bitwise and (6 & 3 = 2), on Bool the logical and.
    This is what the operators ``& | ^ ~`` compute, as in NumPy and PyTorch; float tensors
    have no bits to combine (a TypeError: compare them first, or use lucid.logical_and).
    The result has the inputs' (promoted) dtype; no gradient.
    """

    fn = ""

    def forward(self, xp, *xs):
        for x in xs:
            kind = to_numeric_type(x.dtype)
            if kind.is_floating_point or kind.is_complex:
                shapes = " and ".join(
                    f"{to_numeric_type(a.dtype).name} {tuple(a.shape)}" for a in xs)
                raise self.error(
                    f"needs integer or Bool tensors, got {shapes}. Floats have no bits to "
                    "combine: cast with .astype(lucid.Int64), or for a logical test use "
                    "lucid.logical_and / logical_or / logical_xor / logical_not (or compare "
                    "first: (a > 0) & (b > 0)).",
                    TypeError,
                )
        if len(xs) == 2 and xs[0].shape != xs[1].shape:
            broadcast_shape(self.name, tuple(xs[0].shape), tuple(xs[1].shape))
        return getattr(xp, self.fn)(*xs)


class BitwiseAnd(Bitwise):
    """a & b: bitwise and of integers (6 & 3 = 2); logical and of Bools."""

    name = "bitwise_and"
    operator = "&"
    fn = "bitwise_and"


class BitwiseOr(Bitwise):
    """a | b: bitwise or of integers (6 | 3 = 7); logical or of Bools."""

    name = "bitwise_or"
    operator = "|"
    fn = "bitwise_or"


class BitwiseXor(Bitwise):
    """a ^ b: bitwise exclusive or of integers (6 ^ 3 = 5); logical xor of Bools."""

    name = "bitwise_xor"
    operator = "^"
    fn = "bitwise_xor"


class BitwiseNot(Bitwise):
    """~x: every bit flipped (two's complement: ~x = -x - 1 for signed integers, 255 - x for
    uint8); logical not of Bools."""

    name = "bitwise_not"
    operator = "~x"
    inputs = ("x",)
    fn = "bitwise_invert"


class IsNan(Predicate):
    """True where x is NaN."""

    name = "isnan"
    inputs = ("x",)


class IsInf(Predicate):
    """True where x is +/-inf."""

    name = "isinf"
    inputs = ("x",)


# --------------------------------------------------------------------------------------------
# second names: NumPy's and Lucid 2.x's spellings of the arithmetic functions.  Each is the
# same function object as the short name (lucid.multiply is lucid.mul), so both behave alike.

for _alias, _short in (("subtract", "sub"), ("multiply", "mul"), ("divide", "div"),
                       ("power", "pow")):
    public(FUNCTIONS[_short], name=_alias)
