"""Spec rows: nonzero, unique, histogram, histogram2d, histogramdd (value-dependent sizes,
no gradient; forward against NumPy, exact)."""

from __future__ import annotations

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand

X34 = rand((3, 4))
SPARSE = np.where(np.abs(X34) < 1.0, 0.0, X34)  # about half zeros
INTS = np.array([[3, 1, 3], [2, 1, 7]])
REPEATS = np.round(rand((4, 5), 0.0, 3.0))  # a few distinct floats, repeated


def _t(a):
    return lucid.Tensor(a)


def _exact(name, fn, ref, samples, **kw):
    return Spec(name, fn, ref, samples, grad=False, atol=0, rtol=0, **kw)


NONZERO = [
    _exact("nonzero", lucid.nonzero, np.argwhere,
           ((SPARSE,), (SPARSE > 0,), (INTS,), (rand((5,)),), (np.zeros((2, 0)),)),
           flops=(FlopsCase((SPARSE,), 12, 0),),
           errors=(ErrorCase(lambda: lucid.nonzero(_t(1.0)), ValueError,
                             r"^nonzero: input \(\) is a 0-d tensor; nonzero needs at least one "
                             r"axis"),)),
    _exact("nonzero", lambda a: lucid.nonzero(a, as_tuple=True), np.nonzero,
           ((SPARSE,), (rand((2, 3, 4)) > 0,)), label="as_tuple"),
    _exact("nonzero", lambda a: a.nonzero(), np.argwhere, ((INTS,),), label="method"),
]

UNIQUE = [
    _exact("unique", lucid.unique, np.unique, ((REPEATS,), (INTS,), (X34 > 0,), (rand(()),)),
           # 20 values: the sort's round(20·log2 20) = 86 comparisons, then one pass
           flops=(FlopsCase((REPEATS,), 20 + 86, 0),),
           errors=(ErrorCase(lambda: lucid.unique(_t(INTS), axis=2), IndexError,
                             r"^unique: axis 2 is out of range for a tensor with 2 dimension"),
                   ErrorCase(lambda: lucid.unique(_t(INTS), axis=0.5), TypeError,
                             r"^unique: axis must be an int or None, got 0\.5"))),
    _exact("unique", lambda a: lucid.unique(a, return_inverse=True, return_counts=True),
           lambda a: np.unique(a, return_inverse=True, return_counts=True),
           ((REPEATS,), (INTS,)), label="inverse,counts"),
    _exact("unique", lambda a: a.unique(return_counts=True),
           lambda a: np.unique(a, return_counts=True), ((REPEATS,),), label="counts,method"),
    _exact("unique", lambda a: lucid.unique(a, return_inverse=True, axis=0),
           lambda a: np.unique(a, return_inverse=True, axis=0),
           ((np.array([[1, 2], [3, 4], [1, 2]]),),), label="axis=0"),
]


def _bins(edges):
    return lambda a: lucid.histogram(a, bins=edges)


HISTOGRAM = [
    _exact("histogram", lucid.histogram, np.histogram, ((X34,), (rand((50,)),), (INTS,)),
           flops=(FlopsCase((X34,), 12, 0),),
           errors=(ErrorCase(lambda: lucid.histogram(_t(X34), weights=_t(rand((3,)))),
                             ValueError, r"^histogram: weights have shape \(3,\) but x \(3,4\)"),
                   ErrorCase(lambda: lucid.histogram(_t(X34), bins=-1), ValueError,
                             r"^histogram: input \(3,4\): `bins` must be positive"))),
    _exact("histogram", lambda a: lucid.histogram(a, bins=4, range=(-1, 1)),
           lambda a: np.histogram(a, bins=4, range=(-1, 1)), ((X34,),), label="range"),
    _exact("histogram", lambda a: lucid.histogram(a, bins=[-2, 0, 0.5, 2]),
           lambda a: np.histogram(a, bins=[-2, 0, 0.5, 2]), ((X34,),), label="edges"),
    Spec("histogram", lambda a, w: lucid.histogram(a, bins=5, weights=w, density=True),
         lambda a, w: np.histogram(a, bins=5, weights=w, density=True),
         ((X34, rand((3, 4), 0.0, 1.0, seed=3)),), grad=False, label="weights,density"),
]

_XY = (rand((20,)), rand((20,), seed=1))
HISTOGRAM2D = [
    _exact("histogram2d", lucid.histogram2d, np.histogram2d, (_XY,),
           flops=(FlopsCase(_XY, 20, 0),),
           errors=(ErrorCase(lambda: lucid.histogram2d(_t(X34), _t(X34)), ValueError,
                             r"^histogram2d: x \(3,4\) and y \(3,4\) must be 1-D and of one "
                             r"length"),)),
    Spec("histogram2d", lambda x, y: lucid.histogram2d(x, y, bins=(3, 4), range=[[-1, 1], [-2, 2]],
                                                       density=True),
         lambda x, y: np.histogram2d(x, y, bins=(3, 4), range=[[-1, 1], [-2, 2]], density=True),
         (_XY,), grad=False, label="bins,range,density"),
]


def _dd(fn):
    def flat(*args):
        h, edges = fn(*args)
        return (h, *edges)
    return flat


_PTS = rand((30, 3))
HISTOGRAMDD = [
    _exact("histogramdd", _dd(lucid.histogramdd), _dd(np.histogramdd), ((_PTS,), (rand((9, 2)),)),
           flops=(FlopsCase((_PTS,), 90, 0),),
           errors=(ErrorCase(lambda: lucid.histogramdd(_t(rand((5,)))), ValueError,
                             r"^histogramdd: sample has shape \(5,\); give the points as rows "
                             r"of a 2-D \(N, D\) tensor"),)),
    _exact("histogramdd", _dd(lambda a: lucid.histogramdd(a, bins=(2, 3, 4))),
           _dd(lambda a: np.histogramdd(a, bins=(2, 3, 4))), ((_PTS,),), label="bins"),
]

SPECS = NONZERO + UNIQUE + HISTOGRAM + HISTOGRAM2D + HISTOGRAMDD
