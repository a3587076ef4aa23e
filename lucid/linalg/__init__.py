"""``lucid.linalg``: matrix functions and factorisations, with gradients (as torch.linalg).

    norm(x, ord=None, axis=None, keepdims=False)     vector or matrix norm (numpy.linalg.norm)
    vector_norm(x, ord=2, axis=None, keepdims=False) ||x||_p: 2, 1, inf, -inf, 0 or any p
    matrix_norm(x, ord="fro", axis=(-2, -1), keepdims=False)
                                                     "fro", "nuc", 1, -1, 2, -2, inf, -inf
    inv(a)                                           A^-1
    det(a)                                           det A
    slogdet(a)                                       (sign, log|det A|)
    solve(a, b)                                      X with A X = B (b a vector or matrices)
    cholesky(a, upper=False)                         L with A = L L^T (or U with A = U^T U)
    qr(a, mode="reduced")                            (Q, R) with A = Q R
    svd(a, full_matrices=True)                       (U, S, Vh) with A = U diag(S) Vh
    svdvals(a)                                       S alone
    eigh(a, UPLO="L")                                (w, V) with A = V diag(w) V^T, A symmetric
    eig(a)                                           (w, V), complex, no gradient
    pinv(a, rtol=None)                               the Moore-Penrose pseudo-inverse A^+
    matrix_power(a, n)                               A^n (n < 0: (A^-1)^|n|)

Every function takes a matrix (m, n) or a stack of them (..., m, n) in float32 or float64,
and works on each matrix of the stack, like NumPy and PyTorch.  The maths of each one -- its
formula, backward rule and FLOPs count -- is in its op class in ``lucid/ops/decomp.py``; the
functions here are built from those ops (``norm``, ``matrix_norm`` and ``matrix_power`` from
other ops: their gradients follow).  Where a gradient is undefined (repeated singular values
or eigenvalues, a singular matrix) the op's docstring says so.

A singular matrix (inv, solve), one that is not positive definite (cholesky) and the like
raise ``lucid.linalg.LinAlgError`` (NumPy's, a ValueError) naming the op and the shape.

Devices: on "gpu" the factorisations run through ``mlx.core.linalg`` on MLX's CPU stream
(MLX has no GPU kernels for them); results stay MLX arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends.lapack import LinAlgError  # raised for singular / indefinite matrices
from lucid.creation import eye, zeros
from lucid.ops import decomp
from lucid.ops.base import apply, extra_output, numel
from lucid.ops import where
from lucid.ops.reduction import Max, Min, Sum
from lucid.shapes import fmt, normalize_axis
from lucid.tensor import Tensor

__all__ = [
    "LinAlgError", "cholesky", "det", "eig", "eigh", "inv", "matrix_norm", "matrix_power",
    "norm", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "vector_norm",
]


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _factors(packed: Tensor, shapes: list[tuple[int, ...]]) -> tuple[Tensor, ...]:
    """Cut an op's packed output (..., total) into factors of the given matrix shapes."""
    batch = tuple(packed.shape[:-1])
    out, start = [], 0
    for shape in shapes:
        size = numel(shape)
        out.append(packed.narrow(-1, start, size).reshape(batch + shape))
        start += size
    return tuple(out)


# -- norms -----------------------------------------------------------------------------------


def vector_norm(x: Any, ord: Any = 2, axis: Any = None, keepdims: bool = False) -> Tensor:
    """||x||_ord over ``axis`` (every axis by default, i.e. of the flattened tensor).

    ord: 2 (sqrt of the sum of squares, the default), 1 (sum of |x|), inf (max |x|), -inf
    (min |x|), 0 (the number of nonzero entries) or any other p: (sum |x|^p)^(1/p).
    ``keepdims`` keeps the reduced axes with size 1.  Returns a tensor of x's dtype.
    """
    return apply(decomp.VectorNorm(ord, axis, keepdims), x)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)


def matrix_norm(x: Any, ord: Any = "fro", axis: Any = (-2, -1), keepdims: bool = False) -> Tensor:
    """The matrix norm of each matrix held in the two axes ``axis`` (the last two by default).

    ord: "fro" (Frobenius, sqrt of the sum of squares), "nuc" (nuclear: the sum of the
    singular values), 2 / -2 (the largest / smallest singular value), 1 / -1 (max / min
    column sum of |x|), inf / -inf (max / min row sum of |x|).  Built from other ops:
    vector_norm, svdvals, sum, max and min, whose gradients it inherits (at ties of max/min,
    and at repeated singular values for 2 / -2, the gradient is one valid subgradient).
    """
    x = _as_tensor(x)
    if ord not in _MATRIX_ORDS or isinstance(ord, bool):
        raise ValueError(
            f"matrix_norm: ord={ord!r} is not a matrix norm order; use 'fro', 'nuc', 1, -1, 2, "
            "-2, inf or -inf (for a vector norm use lucid.linalg.vector_norm)")
    try:
        r, c = axis
    except (TypeError, ValueError):
        raise ValueError(
            f"matrix_norm: axis must be a pair of axes (rows, columns), got {axis!r}") from None
    r, c = normalize_axis("matrix_norm", r, x.ndim), normalize_axis("matrix_norm", c, x.ndim)
    if r == c:
        raise ValueError(f"matrix_norm: axis {axis} names the same axis twice; the rows and "
                         "columns of a matrix are two different axes")
    if ord == "fro":
        return vector_norm(x, 2, (r, c), keepdims)
    kshape = tuple(1 if i in (r, c) else s for i, s in enumerate(x.shape))
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        s = svdvals(x.transpose(tuple(rest) + (r, c)))
        reduce = {"nuc": Sum, 2: Max, -2: Min}[ord]
        y = apply(reduce(-1), s)
    else:  # 1 / -1: the columns' sums of |x|; inf / -inf: the rows'
        summed, over = (r, c) if ord in (1, -1) else (c, r)
        sums = apply(Sum(summed, True), x.abs())
        y = apply((Max if ord > 0 else Min)(over, True), sums)
    return y.reshape(kshape) if keepdims else y.reshape(
        tuple(s for i, s in enumerate(x.shape) if i not in (r, c)))


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Tensor:
    """A vector or matrix norm, as numpy.linalg.norm and torch.linalg.norm.

    * ``axis`` an int (or one-element tuple): the vector norm ``vector_norm(x, ord, axis)``
      along it;
    * ``axis`` a pair: the matrix norm ``matrix_norm(x, ord, axis)`` of those two axes;
    * ``axis=None``: with ``ord=None``, the 2-norm of the flattened tensor (any shape);
      otherwise x must be 1-D (a vector norm) or 2-D (a matrix norm).

    ``ord=None`` means 2 for vectors and "fro" for matrices.  Returns a tensor of x's dtype.
    """
    x = _as_tensor(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, 2, None, keepdims)
        if x.ndim == 1:
            return vector_norm(x, ord, None, keepdims)
        if x.ndim == 2:
            return matrix_norm(x, ord, (0, 1), keepdims)
        raise ValueError(
            f"norm: ord={ord!r} with axis=None needs a 1-D or 2-D input, got shape "
            f"{fmt(x.shape)}; pass axis (an int for vector norms, a pair for matrix norms)")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(x, 2 if ord is None else ord, axes[0], keepdims)
    if len(axes) == 2:
        return matrix_norm(x, "fro" if ord is None else ord, axes, keepdims)
    raise ValueError(f"norm: axis={axis!r} names {len(axes)} axes; give one (a vector norm) "
                     "or two (a matrix norm)")


# -- inverse, determinants, solve ------------------------------------------------------------


def inv(a: Any) -> Tensor:
    """A^-1 for a square matrix (or each of a stack).  A singular matrix raises LinAlgError:
    use pinv, or solve(a, b) to solve A x = b without forming the inverse."""
    return apply(decomp.Inv(), a)


def det(a: Any) -> Tensor:
    """det A for a square matrix (or each of a stack): shape a.shape[:-2]."""
    return apply(decomp.Det(), a)


def slogdet(a: Any) -> tuple[Tensor, Tensor]:
    """``(sign, logabsdet)`` with det A = sign · exp(logabsdet), each of shape a.shape[:-2].
    ``sign`` (-1, 0 or +1) carries no gradient; logabsdet does.  For a singular matrix sign
    is 0 and logabsdet -inf."""
    op = decomp.SLogDet()
    logabsdet = apply(op, a)
    return extra_output(op.sign, logabsdet), logabsdet


def solve(a: Any, b: Any) -> Tensor:
    """X with A X = B, A square.  ``b`` is a vector (n,) (X is then (..., n)) or a stack of
    matrices (..., n, k); batch axes broadcast (NumPy 2's rule).  Singular A raises."""
    return apply(decomp.Solve(), a, b)


# -- factorisations --------------------------------------------------------------------------


def cholesky(a: Any, upper: bool = False) -> Tensor:
    """L, lower triangular with a positive diagonal, with A = L L^T; ``upper=True`` gives
    U = L^T (A = U^T U).  A must be symmetric positive definite (only its lower triangle is
    read); otherwise LinAlgError."""
    return apply(decomp.Cholesky(upper), a)


def qr(a: Any, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """``(Q, R)`` with A = Q R: Q (..., m, k) with orthonormal columns, R (..., k, n) upper
    triangular, k = min(m, n) (``mode="reduced"``); ``mode="complete"``: Q (..., m, m)
    orthogonal, R (..., m, n) -- NumPy's completion, without a gradient when m > n."""
    op = decomp.QR(mode)
    packed = apply(op, a)
    return _factors(packed, [tuple(op.q.shape[-2:]), tuple(op.r.shape[-2:])])


def svd(a: Any, full_matrices: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, Vh)`` with A = U diag(S) Vh, S descending.  ``full_matrices=True`` (NumPy's
    and PyTorch's default): U (..., m, m), Vh (..., n, n); False: U (..., m, k),
    Vh (..., k, n), k = min(m, n).  S: (..., k).

    Gradients: defined for distinct (and, for non-square A, nonzero) singular values; with
    full_matrices=True only through the first k columns of U and rows of Vh (a gradient
    reaching the others raises: use full_matrices=False).  See lucid/ops/decomp.py, SVD.
    """
    op = decomp.SVD(full_matrices)
    packed = apply(op, a)
    return _factors(packed, op.shapes)


def svdvals(a: Any) -> Tensor:
    """The singular values S (..., k), descending: dL/dA = U diag(g) V^T."""
    return apply(decomp.SVD(False, compute_uv=False), a)


def eigh(a: Any, UPLO: str = "L") -> tuple[Tensor, Tensor]:  # noqa: N803  (NumPy's name)
    """``(w, V)`` for a symmetric A: eigenvalues ascending (..., n), orthonormal eigenvectors
    in the columns of V (..., n, n), A = V diag(w) V^T.  Only the triangle ``UPLO`` ("L" or
    "U") is read.  Gradients: defined for distinct eigenvalues; see decomp.Eigh."""
    op = decomp.Eigh(UPLO)
    packed = apply(op, a)
    n = op.n
    return _factors(packed, [(n,), (n, n)])


def eig(a: Any) -> tuple[Tensor, Tensor]:
    """``(w, V)`` for a general square A: eigenvalues (..., n) and unit eigenvectors in the
    columns of V (..., n, n), both complex, in LAPACK's order.  No gradient (use eigh for a
    symmetric matrix)."""
    op = decomp.Eig()
    w = apply(op, a)
    return w, extra_output(op.v, w)


def pinv(a: Any, rtol: float | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse (..., n, m) of A (..., m, n): singular values below
    ``rtol`` · max(S) count as zero (default rtol: max(m, n) · eps, as PyTorch)."""
    return apply(decomp.Pinv(rtol), a)


def matrix_power(a: Any, n: int) -> Tensor:
    """A^n for a square A and an integer n, by repeated squaring (about log2 |n| matmuls,
    whose gradients it inherits).  n = 0 gives identity matrices (a zero gradient: they do
    not depend on A); n = 1 a copy of A; n < 0 gives inv(A)^|n|."""
    a = _as_tensor(a)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"matrix_power: n must be an int, got {n!r} ({type(n).__name__})")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"matrix_power: expected square matrices, got shape {fmt(a.shape)}")
    if n == 0:  # identity matrices, one per matrix, recorded as a choice between them and
        # A (always them) so that A gets its gradient, zero, as in PyTorch
        identity = eye(a.shape[-1], dtype=a.dtype, device=a.device)
        identity = identity + zeros(a.shape, dtype=a.dtype, device=a.device)
        return where(Tensor(np.ones(a.shape, dtype=bool), device=a.device), identity, a)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while True:
        if n & 1:
            result = a if result is None else result @ a
        n >>= 1
        if not n:
            return result * 1 if result is a else result  # n = 1: a new tensor, not A itself
        a = a @ a
