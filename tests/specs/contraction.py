"""Spec rows: matmul, dot, inner, outer, tensordot, einsum, trace.

FLOPs are multiply-accumulates (MACs): (m,k) @ (k,n) costs m·k·n forward and 2·m·k·n backward
(one product per operand that requires grad).
"""

from __future__ import annotations

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, transposed


def r(*shape, seed=0):
    return rand(shape, seed=seed)


def _t(a):
    return lucid.Tensor(a)


# -- matmul ---------------------------------------------------------------------------------


def _matmul(label, samples, flops=(), errors=(), fn=lucid.matmul):
    return Spec("matmul", fn, np.matmul, samples, label=label, flops=flops, errors=errors)


MATMUL = [
    _matmul(
        "2d", ((r(3, 4), r(4, 5, seed=1)),),
        flops=(FlopsCase((r(3, 4), r(4, 5, seed=1)), 3 * 4 * 5, 2 * 3 * 4 * 5),),
        errors=(
            ErrorCase(lambda: lucid.matmul(_t(r(2, 3)), _t(r(4, 5))), ValueError,
                      r"^matmul: \(2,3\) @ \(4,5\): inner dimensions 3 and 4 differ\. "
                      r"a's last axis must match b's second-to-last axis: transpose or "
                      r"reshape one operand \(e\.g\. b\.T\)\.$"),
            ErrorCase(lambda: lucid.matmul(_t(r(2, 2, 3)), _t(r(2, 2, 3))), ValueError,
                      r"^matmul: \(2,2,3\) @ \(2,2,3\): inner dimensions 3 and 2 differ\. .*"
                      r"\(e\.g\. b\.mT, which swaps b's last two axes\)\.$"),
            ErrorCase(lambda: lucid.matmul(_t(r(3)), _t(r(4))), ValueError,
                      r"^matmul: \(3,\) @ \(4,\): inner dimensions 3 and 4 differ\. "
                      r"a's last axis must match b's length"),
            ErrorCase(lambda: lucid.matmul(_t(r()), _t(r(3))), ValueError,
                      r"^matmul: \(\) @ \(3,\): matmul needs operands with at least 1 "
                      r"dimension, and a is 0-d"),
            ErrorCase(lambda: lucid.matmul(_t(r(3, 4)), 2.0), ValueError,
                      r"^matmul: \(3,4\) @ \(\): .* b is 0-d .* Multiply by a scalar with \*"),
            ErrorCase(lambda: lucid.matmul(_t(r(2, 3, 4)), _t(r(5, 4, 2))), ValueError,
                      r"^matmul: \(2,3,4\) @ \(5,4,2\): batch dimensions \(2,\) and \(5,\) "
                      r"cannot be broadcast together"),
        ),
    ),
    _matmul("1d@2d", ((r(4), r(4, 5, seed=1)),),
            flops=(FlopsCase((r(4), r(4, 5, seed=1)), 20, 40),)),
    _matmul("2d@1d", ((r(3, 4), r(4, seed=1)),),
            flops=(FlopsCase((r(3, 4), r(4, seed=1)), 12, 24),)),
    _matmul("1d@1d", ((r(4), r(4, seed=1)),),
            flops=(FlopsCase((r(4), r(4, seed=1)), 4, 8),)),
    # batch axes broadcast: (2,1) with (5,) -> (2,5); each operand's gradient is summed back
    _matmul(
        "batch-broadcast",
        ((r(2, 1, 3, 4), r(5, 4, 2, seed=1)), (r(2, 3, 4), r(4, 5, seed=1)),
         (r(3, 4), r(2, 4, 5, seed=1))),
        flops=(FlopsCase((r(2, 1, 3, 4), r(5, 4, 2, seed=1)), 2 * 5 * 3 * 4 * 2,
                         2 * (2 * 5 * 3 * 4 * 2)),),
    ),
    _matmul("batch-1d", ((r(4), r(2, 4, 3, seed=1)), (r(2, 3, 4), r(4, seed=1)))),
    _matmul("transposed", ((transposed((4, 3)), r(4, 5, seed=1)),
                           (r(2, 4), transposed((5, 4))))),
    _matmul("operator", ((r(3, 4), r(4, 5, seed=1)), (r(2, 3, 4), r(4, seed=1))),
            fn=lambda a, b: a @ b),
    _matmul("method", ((r(3, 4), r(4, 5, seed=1)),), fn=lambda a, b: a.matmul(b)),
]

# -- dot, inner, outer ----------------------------------------------------------------------

DOT = [
    Spec(
        "dot", lucid.dot, np.dot,
        ((r(3, 4), r(4, 5, seed=1)), (r(3, 4), r(4, seed=1)), (r(4), r(4, 5, seed=1)),
         (r(4), r(4, seed=1)), (r(), r(3, 4, seed=1)), (r(2, 3), r(seed=1)), (r(), r(seed=1)),
         (transposed((4, 3)), r(4, seed=1))),
        flops=(FlopsCase((r(3, 4), r(4, 5, seed=1)), 60, 120),
               FlopsCase((r(), r(3, 4, seed=1)), 12, 24)),
        errors=(
            ErrorCase(lambda: lucid.dot(_t(r(2, 3, 4)), _t(r(4))), ValueError,
                      r"^dot: \(2,3,4\) · \(4,\): dot takes operands of at most 2 dimensions\. "
                      r"Use matmul .* or tensordot"),
            ErrorCase(lambda: lucid.dot(_t(r(2, 3)), _t(r(4, 5))), ValueError,
                      r"^dot: \(2,3\) · \(4,5\): inner dimensions 3 and 4 differ"),
        ),
    ),
    Spec("dot", lambda a, b: a.dot(b), np.dot, ((r(3, 4), r(4, 5, seed=1)),), label="method"),
]

INNER = [
    Spec(
        "inner", lucid.inner, np.inner,
        ((r(3, 4), r(5, 4, seed=1)), (r(4), r(4, seed=1)), (r(2, 3, 4), r(4, seed=1)),
         (r(), r(2, 3, seed=1)), (r(2, 3), r(2, 2, 3, seed=1))),
        flops=(FlopsCase((r(3, 4), r(5, 4, seed=1)), 60, 120),),
        errors=(
            ErrorCase(lambda: lucid.inner(_t(r(2, 3)), _t(r(3, 4))), ValueError,
                      r"^inner: \(2,3\) and \(3,4\): last dimensions 3 and 4 differ"),
        ),
    ),
]

OUTER = [
    Spec(
        "outer", lucid.outer, np.outer,
        ((r(3), r(4, seed=1)), (r(2, 3), r(4, seed=1)), (r(), r(2, 2, seed=1)),
         (transposed((4, 3)), r(2, seed=1))),
        flops=(FlopsCase((r(3), r(4, seed=1)), 12, 24),),
    ),
]

# -- tensordot ------------------------------------------------------------------------------


def _tensordot(label, axes, samples, flops=(), errors=()):
    return Spec(
        "tensordot",
        lambda a, b: lucid.tensordot(a, b, axes),
        lambda a, b: np.tensordot(a, b, axes),
        samples, label=label, flops=flops, errors=errors,
    )


TENSORDOT = [
    _tensordot(
        "axes=2", 2, ((r(2, 3, 4), r(3, 4, 5, seed=1)), (r(3, 4), r(3, 4, seed=1))),
        flops=(FlopsCase((r(2, 3, 4), r(3, 4, 5, seed=1)), 2 * 12 * 5, 2 * 2 * 12 * 5),),
        errors=(
            ErrorCase(lambda: lucid.tensordot(_t(r(2, 3, 4)), _t(r(4, 5)), 2), ValueError,
                      r"^tensordot: \(2,3,4\) and \(4,5\): contracted axes \(1, 2\) of a have "
                      r"sizes \(3,4\) but axes \(0, 1\) of b have sizes \(4,5\)"),
            ErrorCase(lambda: lucid.tensordot(_t(r(2, 3)), _t(r(3)), 3), ValueError,
                      r"^tensordot: \(2,3\) and \(3,\): axes=3 must lie in 0\.\.1"),
            ErrorCase(lambda: lucid.tensordot(_t(r(2, 3)), _t(r(3, 2)), ([0, 1], [1])),
                      ValueError, r"^tensordot: axes \(0, 1\) of a and \(1,\) of b differ in "
                                  r"number"),
            ErrorCase(lambda: lucid.tensordot(_t(r(2, 3)), _t(r(3, 2)), ([0], [2])),
                      IndexError, r"^tensordot: axis 2 is out of range"),
            ErrorCase(lambda: lucid.tensordot(_t(r(2, 3)), _t(r(3, 2)), "ij"), TypeError,
                      r"^tensordot: axes must be an int or a pair"),
        ),
    ),
    _tensordot("axes=1", 1, ((r(3, 4), r(4, 5, seed=1)), (r(2, 3, 4), r(4, 2, seed=1))),
               flops=(FlopsCase((r(3, 4), r(4, 5, seed=1)), 60, 120),)),
    _tensordot("axes=0", 0, ((r(2, 3), r(4, seed=1)), (r(), r(3, seed=1)))),
    _tensordot("pairs", ([1, 0], [0, 1]), ((r(3, 4), r(4, 3, seed=1)),
                                            (r(3, 4, 2), r(4, 3, 5, seed=1)))),
    _tensordot("negative", ((-1,), (0,)), ((r(2, 3), r(3, 4, seed=1)),
                                           (transposed((4, 3)), r(4, 2, seed=1)))),
    _tensordot("ints", (2, 0), ((r(2, 3, 4), r(4, 5, seed=1)),)),
]

# -- einsum ---------------------------------------------------------------------------------


def _einsum(subscripts, *samples, flops=(), errors=()):
    return Spec(
        "einsum",
        lambda *xs: lucid.einsum(subscripts, *xs),
        lambda *xs: np.einsum(subscripts, *xs),
        samples, label=subscripts, flops=flops, errors=errors,
    )


EINSUM = [
    _einsum(
        "ij,jk->ik", (r(3, 4), r(4, 5, seed=1)), (transposed((4, 3)), r(4, 2, seed=1)),
        flops=(FlopsCase((r(3, 4), r(4, 5, seed=1)), 60, 120),),
        errors=(
            ErrorCase(lambda: lucid.einsum("ii->i", _t(r(3, 4))), ValueError,
                      r"^einsum: 'ii->i': operand 0 \(shape \(3,4\)\) repeats the letter 'i' "
                      r"on axes of sizes 3 and 4; a repeated letter takes a diagonal, which "
                      r"needs equal sizes$"),
            ErrorCase(lambda: lucid.einsum("...i->i", _t(r(2, 3))), ValueError,
                      r"^einsum: '...i->i': '...' stands for 1 axis\(es\) here, but the output "
                      r"names no '...'"),
            ErrorCase(lambda: lucid.einsum("...ijk", _t(r(2, 3))), ValueError,
                      r"^einsum: '...ijk': operand 0 has shape \(2,3\) \(2 axes\) but its "
                      r"subscripts '...ijk' name 3 besides '...'$"),
            ErrorCase(lambda: lucid.einsum("....i", _t(r(2, 3))), ValueError,
                      r"^einsum: '....i': subscripts are letters"),
            ErrorCase(lambda: lucid.einsum("ij->ii", _t(r(2, 3))), ValueError,
                      r"^einsum: 'ij->ii': output repeats the letter 'i'$"),
            ErrorCase(lambda: lucid.einsum("ij,jk->ik", _t(r(2, 3)), _t(r(4, 5))), ValueError,
                      r"^einsum: 'ij,jk->ik': letter 'j' has size 3 in operand 0 but 4 in "
                      r"operand 1 \(shapes \(2,3\), \(4,5\)\); a letter names one size "
                      r"\(or 1, which broadcasts\)$"),
            ErrorCase(lambda: lucid.einsum("ij,jk->ik", _t(r(2, 3))), ValueError,
                      r"^einsum: 'ij,jk->ik' names 2 operand\(s\) but 1 were given"),
            ErrorCase(lambda: lucid.einsum("ijk->i", _t(r(2, 3))), ValueError,
                      r"^einsum: 'ijk->i': operand 0 has shape \(2,3\) \(2 axes\) but its "
                      r"subscripts 'ijk' name 3"),
            ErrorCase(lambda: lucid.einsum("ij->iz", _t(r(2, 3))), ValueError,
                      r"^einsum: 'ij->iz': output letter 'z' does not appear in any operand"),
            ErrorCase(lambda: lucid.einsum("i1->i", _t(r(2, 3))), ValueError,
                      r"^einsum: 'i1->i': subscripts are letters"),
            ErrorCase(lambda: lucid.einsum(3, _t(r(2))), TypeError,
                      r"^einsum: subscripts must be a string"),
        ),
    ),
    _einsum("ij,jk", (r(3, 4), r(4, 5, seed=1))),  # implicit output: "ik"
    _einsum("Ba,aC", (r(2, 3), r(3, 4, seed=1))),  # implicit, ASCII order: "BC"
    _einsum("bij,bjk->bik", (r(2, 3, 4), r(2, 4, 5, seed=1))),
    _einsum("ij->ji", (r(3, 4),)),
    _einsum("ij->", (r(3, 4),), flops=(FlopsCase((r(3, 4),), 12, 1),)),
    _einsum("i,i->", (r(5), r(5, seed=1))),
    _einsum("i,j->ij", (r(3), r(4, seed=1))),
    _einsum("ij,ij->ij", (r(3, 4), r(3, 4, seed=1))),
    # j is summed within the first operand alone: its gradient is broadcast along j
    _einsum("ij,k->ik", (r(3, 4), r(5, seed=1))),
    _einsum("ij,k->", (r(3, 4), r(5, seed=1))),
    _einsum(
        "ij,jk,kl->il", (r(2, 3), r(3, 4, seed=1), r(4, 5, seed=2)),
        # index space 2·3·4·5 = 120, two MACs per point; each gradient einsum spans all letters
        flops=(FlopsCase((r(2, 3), r(3, 4, seed=1), r(4, 5, seed=2)), 240, 3 * 240),),
    ),
    # a letter repeated within one operand takes a diagonal; its gradient is g scattered onto
    # that diagonal (zeros elsewhere)
    # FLOPs: 3 diagonal entries forward; backward 1 (g itself) + 9 (the diagonal mask)
    _einsum("ii->", (r(3, 3),), (transposed((3, 3)),), flops=(FlopsCase((r(3, 3),), 3, 10),)),
    _einsum("ii", (r(4, 4),)),  # implicit: the trace
    _einsum("ii->i", (r(3, 3),)),
    _einsum("bii->bi", (r(2, 3, 3),)),
    _einsum("iij->j", (r(3, 3, 4),)),
    _einsum("iji->j", (r(3, 4, 3),)),
    _einsum("iii->i", (r(2, 2, 2),)),
    _einsum("ii,ij->j", (r(3, 3), r(3, 4, seed=1))),
    _einsum("bii,bj->bij", (r(2, 3, 3), r(2, 4, seed=1))),
    # ellipsis: the unnamed axes, broadcast across operands (leading the implicit output)
    _einsum("...ij,...jk->...ik", (r(2, 3, 4), r(4, 5, seed=1)), (r(3, 4), r(2, 4, 5, seed=1))),
    _einsum("...ij,...jk", (r(2, 1, 3, 4), r(5, 4, 2, seed=1))),
    _einsum("i...->...", (r(3, 2, 2),)),
    _einsum("...ii->...i", (r(2, 3, 3),)),
    _einsum("...", (r(2, 3),)),
    _einsum("b...,b->...", (r(2, 3, 4), r(2, seed=1))),
    # an axis of size 1 broadcasts against the letter's size elsewhere (as NumPy)
    _einsum("ij,ij->ij", (r(1, 3), r(2, 3, seed=1))),
    _einsum("i,i", (r(3), r(1, seed=1))),
]

# -- trace ----------------------------------------------------------------------------------

TRACE = [
    Spec(
        "trace", lucid.trace, np.trace,
        ((r(3, 3),), (r(3, 5),), (r(4, 2),), (transposed((4, 3)),)),
        flops=(FlopsCase((r(3, 4),), 3, 12),),
        errors=(
            ErrorCase(lambda: lucid.trace(_t(r(2, 3, 4))), ValueError,
                      r"^trace: input \(2,3,4\) is 3-D; trace needs a 2-D matrix"),
            ErrorCase(lambda: lucid.trace(_t(r(3))), ValueError,
                      r"^trace: input \(3,\) is 1-D; trace needs a 2-D matrix"),
        ),
    ),
]

# --------------------------------------------------------------------------------------------
# linear


W53 = rand((5, 3), seed=1)
B5 = rand((5,), seed=2)


def _linear_ref(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


LINEAR = [
    Spec("linear", lucid.linear, _linear_ref,
         ((rand((4, 3)), W53, B5), (rand((2, 4, 3)), W53, B5), (rand((3,)), W53, B5),
          (transposed((3, 4)), W53, B5)),
         errors=(
             ErrorCase(lambda: lucid.linear(_t(rand((4, 2))), _t(W53)), ValueError,
                       r"linear: input \(4,2\) and weight \(5,3\): the input's last axis must "
                       r"equal in_features = 3"),
             ErrorCase(lambda: lucid.linear(_t(rand((4, 3))), _t(B5)), ValueError,
                       r"linear: weight must be 2-D \(out_features, in_features\), got shape "
                       r"\(5,\)"),
             ErrorCase(lambda: lucid.linear(_t(rand((4, 3))), _t(W53), _t(rand((3,)))), ValueError,
                       r"linear: bias has shape \(3,\), expected \(5,\)"),
         ),
         # 4·3·5 = 60 MACs + 20 bias adds; backward 60 MACs for x, 60 for W, 20 - 5 for b
         flops=(FlopsCase((rand((4, 3)), W53, B5), 80, 135),)),
    Spec("linear", lucid.linear, _linear_ref, ((rand((4, 3)), W53), (rand((2, 4, 3)), W53)),
         label="no-bias", flops=(FlopsCase((rand((4, 3)), W53), 60, 120),)),
]


SPECS = MATMUL + LINEAR + DOT + INNER + OUTER + TENSORDOT + EINSUM + TRACE
