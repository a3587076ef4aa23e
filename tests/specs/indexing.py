"""Spec rows: indexing and selection (getitem, gather, where, masked_fill, sort, argsort, topk).

Samples are continuous random values, so sort/topk see no ties (asserted below): with a tie
the order of equal values, and so the gradient, would be ambiguous.
"""

from __future__ import annotations

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, transposed

X5 = rand((5,), seed=11)
X34 = rand((3, 4), seed=12)
X234 = rand((2, 3, 4), seed=13)
XT = transposed()  # (3, 4), not contiguous
MASK34 = rand((3, 4), seed=14) > 0
MASK3 = np.array([True, False, True])
T34 = lucid.Tensor(X34)


def _getitem(label, index, samples, **kw):
    """A row for ``x[index]`` with a fixed index."""
    return Spec("getitem", lambda x: x[index], lambda x: x[index], samples, label=label, **kw)


_OOB = (r"getitem: index {i} is out of bounds for axis {axis} of size {size} "
        r"\(tensor shape {shape}\)")

GETITEM = [
    _getitem(
        "slices", (slice(1, 3), slice(None, None, 2)), ((X34,), (XT,), (X234,)),
        errors=(
            ErrorCase(lambda: T34[3], IndexError,
                      _OOB.format(i=3, axis=0, size=3, shape=r"\(3,4\)")
                      + r"; valid indices are -3\.\.2"),
            ErrorCase(lambda: T34[0, -5], IndexError,
                      _OOB.format(i=-5, axis=1, size=4, shape=r"\(3,4\)")),
            ErrorCase(lambda: T34[1.5], TypeError,
                      r"getitem: index 1\.5 is a float; indices must be integers"),
            ErrorCase(lambda: T34[0:1.5], TypeError,
                      r"getitem: slice bound 1\.5 is a float; indices must be integers"),
            ErrorCase(lambda: T34[0, 0, 0], IndexError,
                      r"getitem: too many indices for a tensor of shape \(3,4\): 3 indexed "
                      r"axes, but the tensor has 2"),
            ErrorCase(lambda: T34[..., 0, ...], IndexError,
                      r"getitem: an index can only have a single Ellipsis"),
            ErrorCase(lambda: T34["a"], TypeError, r"getitem: cannot index with a str"),
            ErrorCase(lambda: T34[True], TypeError, r"getitem: a Python bool \(True\) is not an"),
        ),
        flops=(FlopsCase((X34,), 0, 4),),  # the (2,2) gradient is written back: 4 elements
    ),
    _getitem("negative-steps", (slice(None, None, -1), slice(-1, 0, -2)), ((X34,), (XT,))),
    _getitem("int", (1, -2), ((X34,), (X234,))),
    _getitem("row", -1, ((X5,), (X34,), (X234,))),
    _getitem("none-ellipsis", (None, Ellipsis, 1), ((X34,), (X234,))),
    _getitem("ellipsis-none", (Ellipsis, None, slice(1, None)), ((X5,), (X234,))),
    # repeated indices: the gradient of a row picked twice is 2, three times 3
    _getitem(
        "repeats", [0, 0, 2, 0, -1], ((X5,), (X34,)),
        errors=(
            ErrorCase(lambda: T34[[0, 5]], IndexError,
                      _OOB.format(i=5, axis=0, size=3, shape=r"\(3,4\)")),
            ErrorCase(lambda: T34[[0, -4]], IndexError,
                      _OOB.format(i=-4, axis=0, size=3, shape=r"\(3,4\)")),
            ErrorCase(lambda: T34[[0.0, 1.0]], TypeError,
                      r"getitem: index array has dtype Float64; indices must be integers"),
        ),
        flops=(FlopsCase((X34,), 0, 20),),
    ),
    _getitem("empty-list", [], ((X34,),)),
    _getitem(
        # a nested list of bools is a mask on both devices; a NumPy array would be refused by
        # a gpu tensor (seed 000), see tests/test_gpu_device.py
        "bool-mask", MASK34.tolist(), ((X34,), (XT,)),
        errors=(
            ErrorCase(lambda: T34[np.array([True, False])], IndexError,
                      r"getitem: boolean mask of shape \(2,\) does not match the indexed axes "
                      r"0\.\.0 of shape \(3,\) \(tensor shape \(3,4\)\)"),
        ),
        flops=(FlopsCase((X34,), 0, int(MASK34.sum())),),
    ),
    _getitem("bool-list", [True, False, True], ((X34,), (rand((3, 2, 2), seed=20),))),
    _getitem("mask-and-slice", (slice(None), MASK3.tolist(), slice(1, 3)), ((X234,),)),
    # the index is a Tensor: int positions (with a repeat) or a boolean mask
    Spec(
        "getitem", lambda x, i: x[i], lambda x, i: x[i],
        ((X34, np.array([2, 0, 2])), (X34, MASK34), (X34, np.array([[1, -1], [1, 0]]))),
        label="tensor-index",
        errors=(
            ErrorCase(lambda: T34[lucid.Tensor([1.0])], TypeError,
                      r"getitem: index array has dtype Float64; indices must be integers"),
        ),
    ),
    _getitem("multi-axis", ([0, 2, 2], [1, 3, 1]), ((X34,), (XT,))),
    _getitem("multi-axis-broadcast", ([[0], [1]], slice(None), [1, 2, 1]), ((X234,),)),
    _getitem("int-and-list", (1, [0, 0, 2]), ((X34,), (X234,))),
    _getitem("slice-and-list", (slice(1, None), [2, 0, 2]), ((X34,), (X234,))),
]


def _gather_ref(a, axis, index):
    """PyTorch's gather: take_along_axis on ``a`` cut to the index's size off ``axis``."""
    cut = tuple(slice(None) if d == axis % a.ndim else slice(0, n)
                for d, n in enumerate(index.shape))
    return np.take_along_axis(a[cut], index, axis)


G34 = np.array([[3, 0], [1, 1], [0, -1]])  # axis 1, a repeat in row 1, a negative index
G234 = np.array([[[1, 0, 1, 1]], [[0, 0, 1, 0]]])  # axis 0 of (2,3,4), smaller on axis 1
T_G34 = lucid.Tensor(G34)

GATHER = [
    Spec(
        "gather", lambda a, i: lucid.gather(a, 1, i), lambda a, i: _gather_ref(a, 1, i),
        ((X34, G34), (XT, G34), (X34, np.zeros((2, 6), dtype=np.int64))),
        errors=(
            ErrorCase(lambda: lucid.gather(T34, 1, lucid.Tensor([0, 1])), ValueError,
                      r"gather: index of shape \(2,\) must have as many dimensions as the "
                      r"input of shape \(3,4\) \(1 vs 2\)"),
            ErrorCase(lambda: lucid.gather(T34, 1, lucid.Tensor([[0.0]])), TypeError,
                      r"gather: index has dtype Float64; it must be an integer tensor"),
            ErrorCase(lambda: lucid.gather(T34, 1, lucid.Tensor([[4]])), IndexError,
                      r"gather: index 4 is out of bounds for axis 1 of size 4 \(tensor shape "
                      r"\(3,4\)\)"),
            ErrorCase(lambda: lucid.gather(T34, 1, lucid.Tensor([[0]] * 4)), ValueError,
                      r"gather: index of shape \(4,1\) is larger than the input of shape "
                      r"\(3,4\) at axis 0 \(4 > 3\)"),
            ErrorCase(lambda: lucid.gather(T34, 2, T_G34), IndexError,
                      r"gather: axis 2 is out of range for a tensor with 2 dimension\(s\)"),
        ),
        flops=(FlopsCase((X34, G34), 0, 6),),
    ),
    Spec("gather", lambda a, i: a.gather(0, i), lambda a, i: _gather_ref(a, 0, i),
         ((X234, G234),), label="method-axis0"),
]

C34 = MASK34
C31 = np.array([[True], [False], [True]])
C234 = rand((2, 3, 4), seed=15) > 0

WHERE = [
    Spec(
        "where", lucid.where, np.where,
        ((C34, X34, rand((3, 4), seed=16)), (C31, rand((4,), seed=17), X34),
         (C234, rand((), seed=18), rand((3, 1), seed=19))),
        errors=(
            ErrorCase(lambda: lucid.where(T34, T34, T34), TypeError,
                      r"where: cond has dtype Float64; it must be a bool tensor"),
            ErrorCase(lambda: lucid.where(lucid.Tensor(C34), T34, lucid.Tensor(X5)),
                      ValueError,
                      r"where: shapes \(3,4\) and \(3,4\) and \(5,\) cannot be broadcast "
                      r"together \(axis -1: sizes 4 and 5 differ"),
        ),
        # (3,1) cond, (4,) a, (3,4) b -> 12 outputs; backward: 2 selects per output + 8 adds
        # summing a's gradient from (3,4) down to (4,)
        flops=(FlopsCase((C31, rand((4,)), X34), 12, 2 * 12 + 8),),
    ),
    Spec("where", lambda c, a: lucid.where(c, a, 0.0), lambda c, a: np.where(c, a, 0.0),
         ((C34, X34), (C31, X34)), label="scalar"),
]

MASKED_FILL = [
    Spec(
        "masked_fill", lambda a, m: lucid.masked_fill(a, m, -1.5),
        lambda a, m: np.where(m, -1.5, a),
        ((X34, MASK34), (X234, C31), (XT, MASK34[0])),
        errors=(
            ErrorCase(lambda: lucid.masked_fill(T34, T34, 0.0), TypeError,
                      r"masked_fill: mask has dtype Float64; it must be a bool tensor"),
            ErrorCase(lambda: lucid.masked_fill(T34, lucid.Tensor(C234), 0.0), ValueError,
                      r"masked_fill: mask of shape \(2,3,4\) does not broadcast to the "
                      r"tensor's shape \(3,4\)"),
            ErrorCase(lambda: lucid.masked_fill(T34, lucid.Tensor(MASK34), [1.0]), TypeError,
                      r"masked_fill: value must be a number, got list"),
        ),
        flops=(FlopsCase((X34, MASK34), 0, 12),),
    ),
    Spec("masked_fill", lambda a, m: a.masked_fill(m, 0), lambda a, m: np.where(m, 0.0, a),
         ((X34, MASK34),), label="method"),
]

SORTABLE = ((X5,), (X34,), (X234,), (XT,))
for (_s,) in SORTABLE:  # no ties: a gap far above gradcheck's eps=1e-6
    assert np.min(np.diff(np.sort(_s.reshape(-1)))) > 1e-4


def _flip(a, axis):
    return np.flip(a, axis)


SORT = [
    Spec(
        "sort", lucid.sort, lambda a: (np.sort(a, -1), np.argsort(a, -1)), SORTABLE,
        errors=(
            ErrorCase(lambda: lucid.sort(T34, axis=2), IndexError,
                      r"sort: axis 2 is out of range for a tensor with 2 dimension\(s\)"),
            ErrorCase(lambda: lucid.sort(lucid.Tensor(1.0)), IndexError,
                      r"sort: axis -1 is out of range for a tensor with 0 dimension\(s\)"),
        ),
        # 3 rows of 4: round(4·log2 4) = 8 comparisons each; (2,3,4) along axis 1: 8 rows of
        # 3, round(3·log2 3) = 5 each
        flops=(FlopsCase((X34,), 24, 12),),
    ),
    Spec("sort", lambda a: lucid.sort(a, axis=0, descending=True),
         lambda a: (_flip(np.sort(a, 0), 0), _flip(np.argsort(a, 0), 0)),
         SORTABLE, label="descending-axis0"),
    Spec("sort", lambda a: a.sort(1), lambda a: (np.sort(a, 1), np.argsort(a, 1)),
         ((X34,), (X234,)), label="method-axis1",
         flops=(FlopsCase((X234,), 40, 24),)),
    Spec(
        "argsort", lucid.argsort, lambda a: np.argsort(a, -1), SORTABLE, grad=False,
        errors=(
            ErrorCase(lambda: lucid.argsort(T34, axis=-3), IndexError,
                      r"argsort: axis -3 is out of range for a tensor with 2 dimension\(s\)"),
        ),
        flops=(FlopsCase((X34,), 24, 0),),
    ),
    Spec("argsort", lambda a: a.argsort(axis=0, descending=True),
         lambda a: _flip(np.argsort(a, 0), 0), SORTABLE, grad=False, label="descending"),
]


def _topk_ref(a, k, axis=-1, largest=True):
    order = np.argsort(-a if largest else a, axis)
    idx = np.take(order, np.arange(k), axis)
    return np.take_along_axis(a, idx, axis), idx


TOPK = [
    Spec(
        "topk", lambda a: lucid.topk(a, 2), lambda a: _topk_ref(a, 2), SORTABLE,
        errors=(
            ErrorCase(lambda: lucid.topk(T34, 5), ValueError,
                      r"topk: k=5 is out of range for axis -1 of size 4 \(tensor shape "
                      r"\(3,4\)\); choose 0 <= k <= 4"),
            ErrorCase(lambda: lucid.topk(T34, -1), ValueError,
                      r"topk: k=-1 is out of range for axis -1 of size 4"),
            ErrorCase(lambda: lucid.topk(T34, 1.5), TypeError, r"topk: k must be an int"),
        ),
        # a full sort: round(4·log2 4) = 8 per row, 3 rows; backward: 3·2 gradient elements
        flops=(FlopsCase((X34,), 24, 6),),
    ),
    Spec("topk", lambda a: a.topk(1, axis=0, largest=False),
         lambda a: _topk_ref(a, 1, 0, largest=False), SORTABLE, label="smallest-axis0"),
    Spec("topk", lambda a: lucid.topk(a, 3, axis=1), lambda a: _topk_ref(a, 3, 1),
         ((X34,), (X234,)), label="all-of-axis1"),
]



def _put(index):
    """``y[index] = v`` where a graph is recorded (y a result that requires grad)."""
    def fn(x, v):
        y = x * 1.0
        y[index] = v
        return y

    def ref(x, v):
        y = x.copy()
        y[index] = v
        return y

    return fn, ref


INDEX_PUT = [
    Spec("index_put", *_put((slice(1, 3),)), ((X34, rand((2, 4), seed=15)),
                                              (X34, rand((4,), seed=16))), label="rows",
         flops=(FlopsCase((X34, rand((2, 4), seed=15)), 0, 8),)),
    Spec("index_put", *_put((0, 2)), ((X234, rand((), seed=17)),), label="element"),
]

SPECS = GETITEM + INDEX_PUT + GATHER + WHERE + MASKED_FILL + SORT + TOPK
