"""Spec rows: reductions (sum, mean, var, logsumexp, max, min, argmax, argmin, any, all) and scans
(cumsum, cumprod).

Each reduction gets a row with ``axis=None`` on every shape of ``unary()`` and labelled rows for
the axis variants: an int, a negative int, a tuple (with a negative entry) and keepdims.  Random
floats have no ties, so max/min rows are safe for finite differences; the tie rule itself is
tested exactly in ``tests/test_reduction_linalg_extra.py``.
"""

from __future__ import annotations

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, transposed, unary

X34 = rand((3, 4))
X234 = rand((2, 3, 4))

#: samples with at least one axis / at least two axes / three axes
ND1 = ((rand((5,)),), (X34,), (X234,), (transposed(),))
ND2 = ((X34,), (X234,), (transposed(),))
ND3 = ((X234,),)


def _bools(samples):
    return tuple((a > 0.3,) for (a,) in samples)


def _t(a):
    return lucid.Tensor(a)


# Each variant: label, kwargs, samples, FLOPs case on X34 (kwargs applied) or None.
_ALL_SHAPES = unary()  # includes (): one element leaves ddof=1 no degrees of freedom
VARIANTS = [
    ("", {}, _ALL_SHAPES),
    ("axis=0", {"axis": 0}, ND1),
    ("axis=-1", {"axis": -1}, ND1),
    ("axis=(0,-1)", {"axis": (0, -1)}, ND2),
    ("axis=(0,2)", {"axis": (0, 2)}, ND3),
    ("axis=1,keepdims", {"axis": 1, "keepdims": True}, ND2),
    ("keepdims", {"keepdims": True}, _ALL_SHAPES),
]


def _rows(name, ref, flops, grad=True, variants=VARIANTS, bools=False, extra_kw=None,
          label_prefix="", errors=()):
    """One row per axis variant; ``flops`` maps a variant label to (forward, backward) on X34."""
    fn = getattr(lucid, name)
    extra_kw = extra_kw or {}
    rows = []
    for label, kw, samples in variants:
        kw = {**kw, **extra_kw}
        x34 = X34 > 0.3 if bools else X34
        cases = ()
        if label in flops:
            f, b = flops[label]
            cases = (FlopsCase((x34,), f, b),)
        rows.append(Spec(
            name,
            lambda a, kw=kw: fn(a, **kw),
            lambda a, kw=kw: ref(a, **kw),
            _bools(samples) if bools else samples,
            grad=grad,
            label=(label_prefix + label).strip(","),
            flops=cases,
            errors=errors if not rows else (),
            atol=0 if not grad else 1e-12,
            rtol=0 if not grad else 1e-10,
        ))
    return rows


_BAD_AXIS = [
    ErrorCase(lambda: lucid.sum(_t(X34), axis=2), IndexError,
              r"sum: axis 2 is out of range for a tensor with 2 dimension\(s\) \(valid: -2\.\.1\)"),
    ErrorCase(lambda: lucid.mean(_t(X34), axis=(0, -3)), IndexError,
              r"mean: axis -3 is out of range for a tensor with 2 dimension\(s\)"),
    ErrorCase(lambda: lucid.sum(_t(X34), axis=(1, -1)), ValueError, r"sum: repeated axis"),
    # (axis 0 or -1 of a 0-d tensor is the tensor itself, as in NumPy and PyTorch)
    ErrorCase(lambda: lucid.max(_t(rand(())), axis=1), IndexError,
              r"max: axis 1 is out of range for a tensor with 0 dimension\(s\)"),
]

_EMPTY = np.zeros((0, 3))

SUM = _rows("sum", np.sum, {"": (12, 0), "axis=0": (12, 0)}, errors=tuple(_BAD_AXIS))
MEAN = _rows("mean", np.mean, {"": (13, 1), "axis=0": (16, 4), "axis=-1": (15, 3)})


def _spread_ref(f):
    """NumPy's var/std under Lucid's default: Bessel's correction (ddof=1, PyTorch's), except
    that NumPy's keyword axis= without a correction keeps NumPy's ddof=0."""

    def ref(a, **kw):
        return f(a, **{"ddof": 0 if "axis" in kw else 1, **kw})

    return ref


# one element leaves ddof=1 no degrees of freedom: the default (ddof=1) rows skip () samples
_NOT_SCALAR = [("", {}, ND1)] + [v for v in VARIANTS if v[2] is not _ALL_SHAPES] + [
    ("keepdims", {"keepdims": True}, ND1)]
VAR = _rows(
    "var", _spread_ref(np.var), {"": (50, 13), "axis=-1": (54, 15)}, variants=_NOT_SCALAR,
    errors=(
        ErrorCase(lambda: lucid.var(_t(rand((3, 1))), axis=1, ddof=1), ValueError,
                  r"var: input \(3,1\) has 1 element\(s\) along axis 1, which leaves no degrees "
                  r"of freedom with ddof=1 \(n - ddof = 0\)"),
    ),
) + _rows("var", np.var, {"axis=0": (4 * 12 + 8, 12 + 4)}, extra_kw={"ddof": 1},
          variants=[v for v in VARIANTS if v[2] is not _ALL_SHAPES], label_prefix="ddof=1,")

# std: a single element has std 0, where the gradient is 0/0 (NaN, as PyTorch): no () samples
STD = _rows(
    "std", _spread_ref(np.std), {"": (51, 15), "axis=-1": (57, 21)}, variants=_NOT_SCALAR,
    errors=(
        ErrorCase(lambda: lucid.std(_t(X34), ddof=1, unbiased=True), TypeError,
                  r"^std: unbiased=True and ddof=1 both set the degrees-of-freedom correction; "
                  r"give one of them$"),
        ErrorCase(lambda: lucid.std(_t(X34), correction=-1), TypeError,
                  r"^std: ddof/correction must be an int >= 0, got -1$"),
        ErrorCase(lambda: lucid.std(_t(rand((3, 1))), axis=1, correction=1), ValueError,
                  r"^std: input \(3,1\) has 1 element\(s\) along axis 1, which leaves no "
                  r"degrees of freedom"),
    ),
) + _rows("std", np.std, {}, extra_kw={"ddof": 1}, variants=_NOT_SCALAR[:3],
          label_prefix="ddof=1,") + [
    # PyTorch's spellings of ddof
    Spec("std", lambda a: a.std(axis=0, correction=1), lambda a: a.std(axis=0, ddof=1), ND2,
         label="correction=1"),
    Spec("std", lambda a: a.std(unbiased=True), lambda a: a.std(ddof=1), ND2,
         label="unbiased=True"),
    Spec("var", lambda a: a.var(axis=-1, correction=1), lambda a: a.var(axis=-1, ddof=1), ND2,
         label="correction=1"),
    Spec("var", lambda a: lucid.var(a, unbiased=False), np.var, ND2, label="unbiased=False"),
    # PyTorch's default (Bessel's correction) and keywords; NumPy's axis= keeps ddof=0
    Spec("var", lambda a: a.var(1), lambda a: a.var(axis=1, ddof=1), ND2, label="dim"),
    Spec("std", lambda a: a.std(dim=0, keepdim=True), lambda a: a.std(0, ddof=1, keepdims=True),
         ND2, label="dim=,keepdim="),
    Spec("std", lambda a: a.std(axis=0, ddof=0), lambda a: a.std(axis=0), ND2, label="ddof=0"),
]

_PROD_ZEROS = np.array([
    [1.5, 0.0, 2.0, -1.0],   # one zero
    [0.0, 0.0, 1.2, 3.0],    # two zeros
    [0.8, 1.1, -1.3, 0.7],   # none
])
PROD = _rows("prod", np.prod, {"": (12, 60), "axis=0": (12, 60)}) + [
    # zeros: no division by zero in backward; the products of the others are exact
    Spec("prod", lambda a: lucid.prod(a, axis=1), lambda a: np.prod(a, axis=1),
         ((_PROD_ZEROS,),), label="zeros,axis=1"),
    Spec("prod", lambda a: a.prod(axis=0), lambda a: np.prod(a, axis=0),
         ((_PROD_ZEROS,), (np.zeros((3, 2)),)), label="zeros,axis=0,method"),
    Spec("prod", lucid.prod, np.prod, ((_PROD_ZEROS[:1],), (_EMPTY,)), label="zeros,all"),
    Spec("prod", lucid.prod, np.prod, ((np.arange(1, 7).reshape(2, 3),),), grad=False,
         label="ints", atol=0, rtol=0),
]


def _norm_ref(a, p=2, axis=None, keepdims=False):
    p = 2 if p == "fro" else p
    a = np.abs(a)
    kw = {"axis": axis, "keepdims": keepdims}
    if p == np.inf:
        return a.max(**kw)
    if p == -np.inf:
        return a.min(**kw)
    if p == 0:
        return (a != 0).sum(**kw).astype(a.dtype)
    return (a**p).sum(**kw) ** (1 / p)


def _norm(label, samples, flops=None, errors=(), **kw):
    return Spec("pnorm", lambda a: a.norm(**kw), lambda a: _norm_ref(a, **kw), samples,
                label=label, flops=flops or (), errors=errors)


_ZERO_ROWS = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5]])
NORM = [
    _norm("p=2", unary(), flops=(FlopsCase((X34,), 37, 60),),
          errors=(
              ErrorCase(lambda: _t(X34).norm("nuc"), ValueError,
                        r"^pnorm: p must be a number >= 0, inf, -inf or 'fro', got 'nuc' "
                        r"\(matrix norms .* lucid\.linalg\.norm\)$"),
              ErrorCase(lambda: _t(X34).norm(-1), ValueError, r"^pnorm: p must be a number"),
              ErrorCase(lambda: _t(np.arange(3)).norm(), TypeError,
                        r"^pnorm: needs a floating-point tensor, got Int64 \(3,\); cast first"),
              ErrorCase(lambda: _t(_EMPTY).norm(np.inf, axis=0), ValueError,
                        r"^pnorm: input \(0,3\) has no elements along axis 0"),
          )),
    _norm("p=2,axis=1", ND2, p=2, axis=1),
    _norm("fro,axis=(0,-1),keepdims", ND2, p="fro", axis=(0, -1), keepdims=True),
    _norm("p=1,axis=0", ND1, p=1, axis=0),
    _norm("p=inf", unary(), p=np.inf),
    _norm("p=-inf,axis=-1", ND1, p=-np.inf, axis=-1),
    _norm("p=3,axis=0", ND1, p=3, axis=0),
    _norm("p=0.5", ND1, p=0.5),
    _norm("p=0", ND1, p=0),
    # an all-zero row: the norm has no derivative there, the gradient is taken as 0
    _norm("zero-row,p=2,axis=1", ((_ZERO_ROWS,),), p=2, axis=1),
    _norm("zero-row,p=3,axis=1", ((_ZERO_ROWS,),), p=3, axis=1),
    _norm("empty", ((_EMPTY,),)),
]


def _logsumexp(a, axis=None, keepdims=False):
    """log sum exp in float64, shifted by the maximum (NumPy has no logsumexp of its own)."""
    m = np.max(a, axis=axis, keepdims=True) if a.size else np.zeros((1,) * a.ndim)
    m = np.where(np.isinf(m), 0.0, m)
    with np.errstate(divide="ignore"):
        y = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return y if keepdims else np.reshape(y, np.sum(a, axis=axis).shape)


# forward: max, subtract, exp, sum per element + log, add per output; backward 3 per element
LOGSUMEXP = _rows("logsumexp", _logsumexp, {"": (50, 36), "axis=0": (56, 36)}) + [
    # large logits do not overflow; rows of -inf give -inf; no elements give log 0 = -inf
    Spec("logsumexp", lambda a: lucid.logsumexp(a, axis=1), lambda a: _logsumexp(a, axis=1),
         ((np.array([[1000.0, 999.0, -1000.0], [-np.inf, -np.inf, -np.inf]]),),
          (np.zeros((2, 0)),)), grad=False, label="tails"),
    Spec("logsumexp", lambda a: a.logsumexp(axis=-1, keepdims=True),
         lambda a: _logsumexp(a, axis=-1, keepdims=True), ND2, label="method"),
]

# max/min backward: compare (in), count ties (in), g / count (out), mask * share (in)
MAX = _rows(
    "max", np.max, {"": (12, 37), "axis=0": (12, 40)},
    errors=(
        ErrorCase(lambda: lucid.max(_t(_EMPTY), axis=0), ValueError,
                  r"max: input \(0,3\) has no elements along axis 0"),
    ),
)
MIN = _rows(
    "min", np.min, {"": (12, 37), "axis=-1": (12, 39)},
    errors=(
        ErrorCase(lambda: lucid.min(_t(_EMPTY)), ValueError,
                  r"min: input \(0,3\) has no elements along axis None"),
    ),
)

# argmax/argmin take an int axis or None (as NumPy); tuples are refused
_ARG_VARIANTS = [v for v in VARIANTS if not isinstance(v[1].get("axis"), tuple)]
ARGMAX = _rows(
    "argmax", np.argmax, {"": (12, 0), "axis=0": (12, 0)}, grad=False, variants=_ARG_VARIANTS,
    errors=(
        ErrorCase(lambda: lucid.argmax(_t(X34), axis=(0, 1)), TypeError,
                  r"argmax: axis must be an int or None, got \(0, 1\) \(input \(3,4\)\)"),
        ErrorCase(lambda: lucid.argmax(_t(_EMPTY), axis=0), ValueError,
                  r"argmax: input \(0,3\) has no elements along axis 0"),
    ),
)
ARGMIN = _rows(
    "argmin", np.argmin, {"": (12, 0), "axis=-1": (12, 0)}, grad=False, variants=_ARG_VARIANTS,
    errors=(
        ErrorCase(lambda: lucid.argmin(_t(X234), axis=3), IndexError,
                  r"argmin: axis 3 is out of range for a tensor with 3 dimension\(s\)"),
    ),
)
# ties go to the first occurrence, as in NumPy
_TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 0.5, 0.5], [-1.0, -1.0, -1.0, -1.0]])
ARG_TIES = [
    Spec("argmax", lambda a: lucid.argmax(a, axis=1), lambda a: np.argmax(a, axis=1),
         ((_TIES,),), grad=False, label="ties", atol=0, rtol=0),
    Spec("argmin", lambda a: lucid.argmin(a, axis=0), lambda a: np.argmin(a, axis=0),
         ((_TIES,),), grad=False, label="ties", atol=0, rtol=0),
]

ANY = _rows("any", np.any, {"": (12, 0)}, grad=False, bools=True) + [
    Spec("any", lambda a: lucid.any(a, axis=0), lambda a: np.any(a, axis=0),
         ((np.array([[0.0, 1.5], [0.0, 0.0]]),),), grad=False, label="float", atol=0, rtol=0),
]
ALL = _rows("all", np.all, {"axis=0": (12, 0)}, grad=False, bools=True) + [
    Spec("all", lambda a: lucid.all(a, axis=1), lambda a: np.all(a, axis=1),
         ((np.array([[0.0, 1.5], [2.0, -1.0]]),),), grad=False, label="float", atol=0, rtol=0),
]

# -- scans ----------------------------------------------------------------------------------

# np.cumsum/np.cumprod flatten when given no axis; Lucid's default axis is -1 (as PyTorch's
# dim must be given, and a flattening default would surprise), so references pass axis=-1.
_SCAN_VARIANTS = [
    ("axis=-1(default)", {}, ND1),
    ("axis=0", {"axis": 0}, ND1),
    ("axis=1", {"axis": 1}, ND2),
]



def _scan_ref(fn):
    return lambda a, axis=-1: fn(a, axis=axis)


CUMSUM = _rows(
    "cumsum", _scan_ref(np.cumsum), {"axis=-1(default)": (12, 12)}, variants=_SCAN_VARIANTS,
    errors=(
        ErrorCase(lambda: lucid.cumsum(_t(rand(()))), IndexError,
                  r"cumsum: input \(\) is a 0-d tensor and has no axis to scan along"),
        ErrorCase(lambda: lucid.cumsum(_t(X34), axis=2), IndexError,
                  r"cumsum: axis 2 is out of range for a tensor with 2 dimension\(s\)"),
        ErrorCase(lambda: lucid.cumsum(_t(X34), axis=(0, 1)), TypeError,
                  r"cumsum: axis must be an int, got \(0, 1\)"),
    ),
)

# zeros, including two in one line and a line that starts with one: the backward rule must
# stay exact (no division by zero) -- finite differences of a polynomial check it well
_ZEROS = np.array([
    [1.5, 0.0, 2.0, -1.0, 0.5],
    [0.0, 0.0, 1.2, 3.0, -0.7],
    [0.8, 1.1, -1.3, 0.0, 2.0],
    [0.9, -1.4, 0.6, 1.7, -0.8],
])
CUMPROD = _rows(
    # backward: 5 mask operations and 6 arithmetic ones per element (see CumProd)
    "cumprod", _scan_ref(np.cumprod), {"axis=-1(default)": (12, 132)}, variants=_SCAN_VARIANTS,
    errors=(
        ErrorCase(lambda: lucid.cumprod(_t(X34), axis=-3), IndexError,
                  r"cumprod: axis -3 is out of range for a tensor with 2 dimension\(s\)"),
    ),
) + [
    Spec("cumprod", lambda a: lucid.cumprod(a, axis=-1), lambda a: np.cumprod(a, axis=-1),
         ((_ZEROS,),), label="zeros,axis=-1"),
    Spec("cumprod", lambda a: lucid.cumprod(a, axis=0), lambda a: np.cumprod(a, axis=0),
         ((_ZEROS,), (np.zeros((3, 2)),)), label="zeros,axis=0"),
]


# -- methods --------------------------------------------------------------------------------

METHODS = [
    Spec("sum", lambda a: a.sum(axis=1), lambda a: a.sum(axis=1), ND2, label="method"),
    Spec("mean", lambda a: a.mean(), lambda a: a.mean(), unary(), label="method"),
    Spec("var", lambda a: a.var(axis=0, ddof=1), lambda a: a.var(axis=0, ddof=1), ND2,
         label="method"),
    Spec("max", lambda a: a.max(axis=-1, keepdims=True),
         lambda a: a.max(axis=-1, keepdims=True), ND2, label="method"),
    Spec("min", lambda a: a.min(), lambda a: a.min(), unary(), label="method"),
    Spec("argmax", lambda a: a.argmax(axis=0), lambda a: a.argmax(axis=0), ND2, grad=False,
         label="method", atol=0, rtol=0),
    Spec("argmin", lambda a: a.argmin(), lambda a: a.argmin(), unary(), grad=False,
         label="method", atol=0, rtol=0),
    Spec("cumsum", lambda a: a.cumsum(axis=0), lambda a: a.cumsum(axis=0), ND1,
         label="method"),
    Spec("cumprod", lambda a: a.cumprod(), lambda a: a.cumprod(axis=-1), ND1, label="method"),
    Spec("any", lambda a: a.any(axis=0), lambda a: a.any(axis=0), _bools(ND1), grad=False,
         label="method", atol=0, rtol=0),
    Spec("all", lambda a: a.all(), lambda a: a.all(), _bools(unary()), grad=False,
         label="method", atol=0, rtol=0),
]

SPECS = (SUM + MEAN + VAR + STD + PROD + NORM + LOGSUMEXP + MAX + MIN + ARGMAX + ARGMIN
         + ARG_TIES + ANY + ALL + CUMSUM + CUMPROD + METHODS)
