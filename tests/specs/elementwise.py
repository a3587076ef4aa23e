"""Spec rows: elementwise unary, binary, comparison/logic and cast ops."""

from __future__ import annotations

import math

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, binary, rand, unary

X34 = rand((3, 4))
X234 = rand((2, 3, 4))


def _unary(name, ref, low=-2.0, high=2.0, grad=True, bwd=2, **kw):
    fn = getattr(lucid, name)
    return Spec(
        name, fn, ref, unary(low, high), grad=grad,
        flops=(FlopsCase((rand((3, 4), low, high),), 12, bwd * 12),), **kw,
    )


UNARY = [
    _unary("neg", np.negative, bwd=1),
    _unary("exp", np.exp, bwd=1),
    _unary("log", np.log, 0.2, 3.0, bwd=1),
    _unary("log2", np.log2, 0.2, 3.0),
    _unary("log10", np.log10, 0.2, 3.0),
    _unary("log1p", np.log1p, -0.5, 3.0),
    _unary("expm1", np.expm1),
    _unary("sqrt", np.sqrt, 0.2, 3.0),
    _unary("abs", np.abs),
    _unary("reciprocal", np.reciprocal, 0.3, 3.0, bwd=3),
    _unary("square", np.square),
    Spec("cube", lucid.cube, lambda a: a**3, unary(), flops=(FlopsCase((X34,), 24, 36),)),
    Spec("cube", lambda a: a.cube(), lambda a: a**3, unary(), label="method"),
    _unary("sin", np.sin),
    _unary("cos", np.cos),
    _unary("tan", np.tan, -1.2, 1.2, bwd=3),
    _unary("arcsin", np.arcsin, -0.9, 0.9, bwd=4),
    _unary("arccos", np.arccos, -0.9, 0.9, bwd=4),
    _unary("arctan", np.arctan, bwd=3),
    _unary("sinh", np.sinh),
    _unary("cosh", np.cosh),
    _unary("tanh", np.tanh, bwd=3),
    _unary("erf", np.vectorize(math.erf, otypes=[np.float64]), bwd=4),
    # piecewise constant: gradient 0 (finite differences agree away from the jumps)
    _unary("sign", np.sign, bwd=0),
    _unary("floor", np.floor, bwd=0),
    _unary("ceil", np.ceil, bwd=0),
    _unary("round", np.round, bwd=0),
    Spec("round", lambda a: lucid.round(a, 2), lambda a: np.round(a, 2), unary(), label="2dp"),
    Spec(
        "clip", lambda a: lucid.clip(a, -1.0, 0.5), lambda a: np.clip(a, -1.0, 0.5), unary(),
        errors=(
            ErrorCase(lambda: lucid.clip(lucid.Tensor(X34), 1.0, -1.0), ValueError,
                      r"clip: min_value 1.0 is greater than max_value -1.0"),
        ),
        flops=(FlopsCase((X34,), 12, 36),),
    ),
    Spec("clip", lambda a: lucid.clip(a, min_value=0.0), lambda a: np.clip(a, 0.0, None),
         unary(), label="lower-only"),
    Spec("clip", lambda a: lucid.clip(a), lambda a: np.array(a), unary(),
         label="no-bound (a copy, as NumPy 2's)"),
    # clamp: PyTorch's names for clip's bounds (errors name clamp and its arguments)
    Spec(
        "clamp", lambda a: lucid.clamp(a, -1.0, 0.5), lambda a: np.clip(a, -1.0, 0.5), unary(),
        errors=(
            ErrorCase(lambda: lucid.clamp(lucid.Tensor(X34), min=1.0, max=-1.0), ValueError,
                      r"^clamp: min 1.0 is greater than max -1.0$"),
            ErrorCase(lambda: lucid.clamp(lucid.Tensor(X34)), ValueError,
                      r"^clamp: give min, max or both$"),
        ),
        flops=(FlopsCase((X34,), 12, 36),),
    ),
    Spec("clamp", lambda a: a.clamp(max=0.25), lambda a: np.clip(a, None, 0.25), unary(),
         label="method,upper-only"),
    Spec("astype", lambda a: lucid.astype(a, lucid.Float64), lambda a: a.astype(np.float64),
         unary(), atol=0, rtol=0, flops=(FlopsCase((X34,), 0, 0),)),
    # float32 steps are too coarse for eps=1e-6 finite differences: forward only here
    Spec("astype", lambda a: lucid.astype(a, lucid.Float32).astype(lucid.Float64),
         lambda a: a.astype(np.float32).astype(np.float64), unary(), grad=False,
         label="via-f32", atol=0, rtol=0),
    Spec("astype", lambda a: a.astype(lucid.Int32), lambda a: a.astype(np.int32), unary(),
         grad=False, label="to-int", atol=0, rtol=0),
]

_BROADCAST_ERROR = (r"{op}: shapes \(2,3\) and \(4,\) cannot be broadcast together "
                    r"\(axis -1: sizes 3 and 4 differ")


def _binary(name, ref, samples=None, bwd=2, grad=True, **kw):
    fn = getattr(lucid, name)
    a, b = rand((2, 3)), rand((4,))
    return Spec(
        name, fn, ref, samples or binary(), grad=grad,
        errors=(ErrorCase(lambda: fn(lucid.Tensor(a), lucid.Tensor(b)), ValueError,
                          _BROADCAST_ERROR.format(op=name)),),
        # (3,1,4) with (2,4) -> (3,2,4): 24 outputs; summing back down costs 24-12 and 24-8
        flops=(FlopsCase((rand((3, 1, 4), 0.5, 2.0), rand((2, 4), 0.5, 2.0)), 24,
                         bwd * 24 + 12 + 16),),
        **kw,
    )


BINARY = [
    _binary("add", np.add, bwd=0),
    _binary("sub", np.subtract, bwd=1),
    _binary("mul", np.multiply),
    _binary("div", np.divide, binary(low_b=0.5, high_b=2.0), bwd=4),
    _binary("floordiv", np.floor_divide, binary(low_b=0.5, high_b=2.0), bwd=0),
    # Python's a % b (the sign of b) and C's fmod (the sign of a): dL/db = -floor (or trunc)
    # of a / b
    _binary("remainder", np.remainder, binary(low_b=0.5, high_b=2.0), bwd=3),
    _binary("fmod", np.fmod, binary(low_b=-2.0, high_b=-0.5), bwd=4),
    _binary("pow", np.power, binary(0.3, 2.0, -2.0, 2.0), bwd=9),  # 5 for dL/da, 4 for dL/db
    _binary("maximum", np.maximum, bwd=7),
    # NumPy's and Lucid 2.x's names: the very same functions as sub, mul, div, pow
    Spec("sub", lucid.subtract, np.subtract, binary(), label="subtract"),
    Spec("mul", lucid.multiply, np.multiply, binary(), label="multiply"),
    Spec("div", lucid.divide, np.divide, binary(low_b=0.5, high_b=2.0), label="divide"),
    Spec("pow", lucid.power, np.power, binary(0.3, 2.0, -2.0, 2.0), label="power"),
    _binary("minimum", np.minimum, bwd=7),
]

_B = binary()


def _predicate(name, ref, arity=2):
    fn = getattr(lucid, {"equal": "eq"}.get(name, name))  # lucid.equal is PyTorch's one bool
    if arity == 1:
        samples = tuple((s[0] > 0,) if name.startswith("logical") else (s[0],) for s in _B)
    elif name.startswith("logical"):
        samples = tuple((a > 0, b > 0) for a, b in _B)
    else:
        # include exact ties so == and <= are exercised
        samples = tuple((a, np.where(np.abs(b) < 0.5, a, b)) for a, b in _B)
    return Spec(name, fn, ref, samples, grad=False, atol=0, rtol=0,
                flops=(FlopsCase(samples[2], 12, 0),))


PREDICATES = [
    _predicate("equal", np.equal),
    _predicate("not_equal", np.not_equal),
    _predicate("greater", np.greater),
    _predicate("greater_equal", np.greater_equal),
    _predicate("less", np.less),
    _predicate("less_equal", np.less_equal),
    _predicate("logical_and", np.logical_and),
    _predicate("logical_or", np.logical_or),
    _predicate("logical_xor", np.logical_xor),
    _predicate("logical_not", np.logical_not, arity=1),
    _predicate("isnan", np.isnan, arity=1),
    _predicate("isinf", np.isinf, arity=1),
]

# -- bitwise: integers bit by bit (as NumPy), Bools logically --------------------------------

_INTS = (
    (np.array([6, 5, -1, 0, 12], dtype=np.int64), np.array([3, 3, 3, 7, -8], dtype=np.int64)),
    (np.arange(12, dtype=np.int32).reshape(3, 4), np.array([1, 2, 4, 8], dtype=np.int32)),
    (np.array([200, 15, 0], dtype=np.uint8), np.array([15, 255, 1], dtype=np.uint8)),
)
_BOOLS = tuple((a > 0, b > 0) for a, b in _B)


def _bitwise(name, ref, operator, arity=2):
    fn = getattr(lucid, name)
    pick = (lambda s: s[:1]) if arity == 1 else (lambda s: s)
    err_args = (lucid.Tensor(X34),) * arity
    return [
        Spec(name, fn, ref, tuple(pick(s) for s in _INTS), grad=False, atol=0, rtol=0,
             label="ints", flops=(FlopsCase(pick(_INTS[1]), 12, 0),),
             errors=(ErrorCase(lambda: fn(*err_args), TypeError,
                               rf"^{name}: needs integer or Bool tensors, got Float64 \(3, 4\)"
                               r".*use lucid\.logical_and"),)),
        Spec(name, operator, ref, tuple(pick(s) for s in _INTS), grad=False, atol=0, rtol=0,
             label="ints,operator"),
        # on Bool tensors the same operator is the logical one
        Spec(name, operator, ref, tuple(pick(s) for s in _BOOLS), grad=False, atol=0, rtol=0,
             label="bools,operator"),
    ]


BITWISE = (
    _bitwise("bitwise_and", np.bitwise_and, lambda a, b: a & b)
    + _bitwise("bitwise_or", np.bitwise_or, lambda a, b: a | b)
    + _bitwise("bitwise_xor", np.bitwise_xor, lambda a, b: a ^ b)
    + _bitwise("bitwise_not", np.invert, lambda a: ~a, arity=1)
    + [Spec("bitwise_and", lambda a: a & 3, lambda a: a & 3, (_INTS[0][:1],), grad=False,
            atol=0, rtol=0, label="int-scalar"),
       Spec("bitwise_and", lambda a, b: a & b, np.bitwise_and,
            ((np.array([6, 5]), np.array([3, 3])),), grad=False, label="shapes",
            errors=(ErrorCase(lambda: lucid.Tensor([1, 2]) & lucid.Tensor([1, 2, 3]),
                              ValueError, r"^bitwise_and: shapes \(2,\) and \(3,\) cannot be "
                                          r"broadcast together"),))]
)

SPECS = UNARY + BINARY + PREDICATES + BITWISE
