"""Matrix functions and factorisations: norms, inv, det, slogdet, solve, cholesky, qr, svd,
eigh, eig, pinv.  Published as ``lucid.linalg.<fn>`` (lucid/linalg), not at ``lucid.<fn>``.

Every op takes a matrix (m, n) or a stack of them (..., m, n) -- float32 or float64 -- and
works on each matrix of the stack.  Each backward rule is the standard matrix-calculus one;
with ``g = dL/dY`` and ``A^-T`` for ``(A^-1)^T``:

    inv       Y = A^-1            dL/dA = -Y^T g Y^T
    det       d = det A           dL/dA = g d A^-T                    (Jacobi's formula)
    slogdet   l = log|det A|      dL/dA = g A^-T                      (the sign has none)
    solve     X = A^-1 B          dL/dB = A^-T g,   dL/dA = -(dL/dB) X^T
    cholesky  A = L L^T           dL/dA = L^-T Φ(L^T g) L^-1, symmetrised  (Murray 2016)
    qr        A = Q R             Walter & Lehmann's rule, as in TensorFlow and PyTorch
    svd       A = U diag(S) V^T   Townsend (2016), with F_ij = 1 / (s_j^2 - s_i^2)
    eigh      A = V diag(w) V^T   dL/dA = V (diag(g_w) + F ∘ skew(V^T g_V)) V^T,
                                  F_ij = 1 / (w_j - w_i)
    pinv      X = A^+             Golub & Pereyra (1973)

A factorisation with several factors (qr, svd, eigh) returns them *packed* in one array --
each factor flattened over its matrix axes, side by side along the last axis -- because an op
has one output.  ``lucid.linalg`` cuts the packed tensor into its factors with ``narrow`` and
``reshape``, whose backward rules put each factor's gradient back into its slot, so the op's
backward receives all the factors' gradients at once (zeros for a factor that was not used).

Device: on "gpu" these ops call ``mlx.core.linalg`` on MLX's CPU stream (MLX computes its
factorisations only there), through ``backend.linalg`` (lucid/backends/lapack.py), which
also makes MLX raise on a singular or indefinite matrix like NumPy does.

FLOPs convention: multiply-accumulates (MACs), as for matmul: an (m, k) @ (k, n) product
costs m·k·n, and a factorisation costs the textbook flop count of its LAPACK algorithm
(Golub & Van Loan, *Matrix Computations*, 4th ed.) halved to MACs; iterative ones (svd, eigh,
eig) use the book's usual estimate.  Each rule says its count in a comment, per matrix of the
stack; multiply by 2 for the "2·MACs" unit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.backends import backend_for
from lucid.backends.lapack import LinAlgError
from lucid.ops.base import Op, apply, numel
from lucid.shapes import broadcast_shape, fmt, normalize_axis
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

# --------------------------------------------------------------------------------------------
# shared checks and helpers


def _float(op: Op, a: Any, what: str = "input") -> None:
    """Factorisations run in float32 or float64 (LAPACK's real types)."""
    dtype = to_numeric_type(a.dtype)
    if dtype.base_dtype is not float or dtype.bits not in (32, 64):
        raise op.error(
            f"{what} {fmt(tuple(a.shape))} has dtype {dtype}; {op.name} needs float32 or "
            f"float64. Cast first, e.g. a.astype(lucid.Float64).",
            TypeError,
        )


def _matrices(op: Op, a: Any, what: str = "input") -> tuple[int, int]:
    """(m, n) of a float matrix or stack of matrices."""
    _float(op, a, what)
    if a.ndim < 2:
        raise op.error(
            f"expected a matrix or a stack of matrices (at least 2 dimensions), got shape "
            f"{fmt(tuple(a.shape))}. Reshape a vector into a matrix first, e.g. x.reshape(1, -1)."
        )
    return int(a.shape[-2]), int(a.shape[-1])


def _square(op: Op, a: Any, what: str = "input") -> int:
    m, n = _matrices(op, a, what)
    if m != n:
        raise op.error(
            f"expected square matrices, got shape {fmt(tuple(a.shape))} ({m} rows, {n} "
            "columns)" + (". For a non-square matrix use lucid.linalg.pinv (pseudo-inverse)."
                          if op.name in ("inv", "solve", "det", "slogdet") else ".")
        )
    return n


def _singular(op: Op, a: Any) -> Exception:
    return op.error(
        f"the matrix (shape {fmt(tuple(a.shape))}) is singular, so it has no inverse. Use "
        "lucid.linalg.pinv for the pseudo-inverse (a least-squares solution of A x = b is "
        "pinv(A) @ b), or make it invertible (e.g. add eps * I).",
        LinAlgError,
    )


def _batch(a: Any) -> int:
    """How many matrices a stack (..., m, n) holds."""
    return numel(tuple(a.shape[:-2]))


def _mT(xp: Any, a: Any) -> Any:
    """Swap the last two axes (the transpose of every matrix in a stack)."""
    return xp.swapaxes(a, -1, -2)


def _eye_like(xp: Any, n: int, like: Any) -> Any:
    return xp.eye(n, dtype=like.dtype)


def _pack(xp: Any, batch: tuple[int, ...], parts: list[Any]) -> Any:
    """Factors (*batch, p, q) or (*batch, p) side by side, each flattened: (*batch, total)."""
    # each size spelled out, not -1: a reshape of an empty batch cannot infer one
    return xp.concatenate([p.reshape(batch + (numel(tuple(p.shape[len(batch):])),))
                           for p in parts], axis=-1)


def _unpack(g: Any, shapes: list[tuple[int, ...]]) -> list[Any]:
    """The inverse of :func:`_pack`: ``g`` (..., total) cut into (..., *shape) pieces."""
    batch = tuple(g.shape[:-1])
    out, start = [], 0
    for shape in shapes:
        size = numel(shape)
        out.append(g[..., start:start + size].reshape(batch + shape))
        start += size
    return out


def _off_diagonal_inverse(xp: Any, d: Any) -> Any:
    """F_ij = 1 / d_ij off the diagonal, 0 on it (d's diagonal is 0 by construction)."""
    n = d.shape[-1]
    eye = xp.eye(n, dtype=d.dtype) > 0
    return xp.where(eye, xp.zeros_like(d), 1 / xp.where(eye, xp.ones_like(d), d))


# --------------------------------------------------------------------------------------------
# norms


class _Factorisation(Op):
    """What the matrix routines share: counted in multiply-adds.  (Each also says
    ``function = None``: published in ``lucid.linalg`` only.)  Their rules call the backend's
    routines (``backend_for(xp).linalg.inv``); under ``create_graph`` those are Lucid's own
    ops (see ``graph_xp``), so every rule here is differentiable again."""

    counts_macs = True  # a factorisation: multiply-adds (see each FLOPs rule)


class VectorNorm(Op):
    """y = ||x||_p over ``axis`` (all axes by default).   dL/dx = g x / ||x|| for p = 2.

    As numpy.linalg.norm on a vector and torch.linalg.vector_norm; every order's rule:

        p = 2:      sqrt(sum x_i^2)          dL/dx = g x / ||x||          (0 where ||x|| = 0)
        p = 1:      sum |x_i|                dL/dx = g sign(x)
        p = inf:    max |x_i|                dL/dx = g sign(x) on the entries reaching the max,
        p = -inf:   min |x_i|                       shared equally among ties (as lucid.max)
        p = 0:      number of nonzero x_i    dL/dx = 0 (a count: piecewise constant)
        other p:    (sum |x_i|^p)^(1/p)      dL/dx = g sign(x) |x|^(p-1) / ||x||^(p-1)

    FLOPs: one per input element (square or abs, and its add) plus one per output element
    for the root of p = 2 and general p; backward one per input element (two for p = 2 and
    general p: the ratio and the product with g), none for p = 0.
    """

    name = "vector_norm"
    function = None
    saves_output = True  # backward reads the norm (kept with its reduced axes, self.y)

    def __init__(self, ord: Any = 2, axis: Any = None, keepdims: bool = False) -> None:
        self.ord = 2 if ord is None else ord
        self.axis = axis
        self.keepdims = keepdims

    def _axes(self, x: Any) -> tuple[int, ...]:
        if self.axis is None:
            return tuple(range(x.ndim))
        axes = (self.axis,) if isinstance(self.axis, int) else tuple(self.axis)
        axes = tuple(normalize_axis(self.name, a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise self.error(f"axis {self.axis} repeats an axis", ValueError)
        return axes

    def forward(self, xp, x):
        _float(self, x)
        p = self.ord
        if isinstance(p, str) or not isinstance(p, (int, float)) or isinstance(p, bool) \
                or math.isnan(p):
            raise self.error(
                f"ord={p!r} is not a vector norm order; use a number, inf or -inf ('fro' and "
                "'nuc' are matrix norms: lucid.linalg.matrix_norm)", ValueError)
        axes = self.axes = self._axes(x)
        self.x = x
        kshape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        self.kshape = kshape
        ax = xp.abs(x)
        if p == 2:
            y = xp.sqrt(xp.sum(x * x, axis=axes, keepdims=True))
        elif p == 1:
            y = xp.sum(ax, axis=axes, keepdims=True)
        elif p == math.inf:
            y = xp.max(ax, axis=axes, keepdims=True)
        elif p == -math.inf:
            y = xp.min(ax, axis=axes, keepdims=True)
        elif p == 0:
            y = xp.sum((x != 0).astype(x.dtype), axis=axes, keepdims=True)
        else:
            y = xp.sum(ax ** p, axis=axes, keepdims=True) ** (1.0 / p)
        self.y = y
        if self.keepdims:
            return y
        return y.reshape(tuple(s for i, s in enumerate(x.shape) if i not in axes))

    def backward(self, xp, g):
        x, y, p = self.x, self.y, self.ord
        g = g.reshape(self.kshape)
        if p == 0:
            return (xp.zeros_like(x),)
        if p == 1:
            return (g * xp.sign(x),)
        if p in (math.inf, -math.inf):
            mask = (xp.abs(x) == y).astype(x.dtype)
            count = xp.sum(mask, axis=self.axes, keepdims=True)
            return (xp.sign(x) * mask * (g / count),)
        safe = xp.where(y == 0, xp.ones_like(y), y)
        if p == 2:
            return (xp.where(y == 0, xp.zeros_like(y), g / safe) * x,)
        scale = xp.where(y == 0, xp.zeros_like(y), g / safe ** (p - 1))
        return (scale * xp.sign(x) * xp.abs(x) ** (p - 1),)

    def forward_flops(self, out, x):
        return x.size + (out.size if self.ord not in (1, 0, math.inf, -math.inf) else 0)

    def backward_flops(self, out, x):
        if self.ord == 0:
            return 0
        return x.size * (1 if self.ord in (1, math.inf, -math.inf) else 2)


# --------------------------------------------------------------------------------------------
# inverse, determinants, solve


class Inv(_Factorisation):
    """Y = A^-1 (A Y = Y A = I).   dL/dA = -Y^T g Y^T.

    Differentiating A Y = I gives dY = -Y dA Y, hence the rule (it needs only Y).
    A singular matrix raises (use pinv).  FLOPs: n^3 MACs (LU, 2n^3/3 flops, plus inverting
    the factors, 4n^3/3 flops: 2n^3 flops in all); backward two n×n products, 2n^3.
    """

    name = "inv"
    function = None  # lucid.linalg.inv only
    saves_inputs = False
    saves_output = True

    def forward(self, xp, a):
        _square(self, a)
        try:
            self.y = backend_for(xp).linalg.inv(a)
        except LinAlgError:
            raise _singular(self, a) from None
        return self.y

    def backward(self, xp, g):
        yt = _mT(xp, self.y)
        return (-(yt @ g @ yt),)

    def forward_flops(self, out, a):
        return _batch(a) * a.shape[-1] ** 3

    def backward_flops(self, out, a):
        return 2 * _batch(a) * a.shape[-1] ** 3


class Det(_Factorisation):
    """d = det A.   dL/dA = g d A^-T.

    Jacobi's formula: dd = d · tr(A^-1 dA), hence the rule.  It needs A^-1: at a
    singular matrix (d = 0) backward raises (the gradient there is the adjugate, which this
    rule does not compute).  FLOPs: n^3/3 MACs for the LU factorisation plus n for the
    product of its diagonal; backward n^3 (A^-1) + n^2 (the scaling).
    """

    name = "det"
    function = None  # lucid.linalg.det only
    saves_output = True

    def forward(self, xp, a):
        _square(self, a)
        self.a = a
        self.d = backend_for(xp).linalg.det(a)
        return self.d

    def backward(self, xp, g):
        try:
            ainv = backend_for(xp).linalg.inv(self.a)
        except LinAlgError:
            raise self.error(
                f"backward at a singular matrix (shape {fmt(tuple(self.a.shape))}, det = 0): "
                "the gradient d det(A)/dA = adj(A)^T is not computed by this rule", LinAlgError
            ) from None
        return ((g * self.d)[..., None, None] * _mT(xp, ainv),)

    def forward_flops(self, out, a):
        n = a.shape[-1]
        return _batch(a) * (n ** 3 // 3 + n)

    def backward_flops(self, out, a):
        n = a.shape[-1]
        return _batch(a) * (n ** 3 + n * n)


class SLogDet(_Factorisation):
    """l = log|det A|  (and sign, with det A = sign · exp(l)).   dL/dA = g A^-T.

    The log-determinant without overflow.  The op's output is logabsdet; ``sign`` (-1, 0 or
    +1) is piecewise constant and carries no gradient.

    d log|det A| = tr(A^-1 dA), so dL/dA = g A^-T.  A singular matrix gives sign 0 and
    logabsdet -inf, and backward there raises.  FLOPs: n^3/3 MACs (LU) + n (the logs of its
    diagonal); backward n^3 (A^-1) + n^2.
    """

    name = "slogdet"
    function = None  # lucid.linalg.slogdet only

    def forward(self, xp, a):
        _square(self, a)
        self.a = a
        self.sign, logabsdet = backend_for(xp).linalg.slogdet(a)
        return logabsdet

    def backward(self, xp, g):
        try:
            ainv = backend_for(xp).linalg.inv(self.a)
        except LinAlgError:
            raise self.error(
                f"backward at a singular matrix (shape {fmt(tuple(self.a.shape))}): "
                "log|det A| = -inf there and has no gradient", LinAlgError
            ) from None
        return (g[..., None, None] * _mT(xp, ainv),)

    forward_flops = Det.forward_flops
    backward_flops = Det.backward_flops


class Solve(_Factorisation):
    """X = A^-1 B (A X = B).   dL/dB = A^-T g,  dL/dA = -(dL/dB) X^T.

    The solution of A X = B, without forming A^-1.

    ``b`` is a vector (n,) or a stack of matrices (..., n, k) -- NumPy 2's rule (a vector
    when b is 1-D) -- and the batch axes of A and B broadcast.  From A dX = dB - dA X:

        dL/dB = A^-T g        (one more solve, with A^T)
        dL/dA = -(dL/dB) X^T

    FLOPs per matrix: n^3/3 MACs (LU) + n^2 k (two triangular solves with k right-hand
    sides); backward the same again for dL/dB (also needed by dL/dA), plus n^2 k for dL/dA.
    """

    name = "solve"
    function = None  # lucid.linalg.solve only
    inputs = ("a", "b")
    broadcasts = True
    wants_needs = True
    saves_inputs = (0,)
    saves_output = True

    def forward(self, xp, a, b):
        n = _square(self, a, "a")
        _float(self, b, "b")
        self.vector = b.ndim == 1
        rows = b.shape[0] if self.vector else (b.shape[-2] if b.ndim >= 2 else None)
        if rows != n:
            raise self.error(
                f"a {fmt(tuple(a.shape))} and b {fmt(tuple(b.shape))}: b must be a vector of "
                f"length {n} or a stack of matrices (..., {n}, k) -- one row per row of a",
                ValueError,
            )
        b2 = b[:, None] if self.vector else b
        batch = broadcast_shape(self.name, tuple(a.shape[:-2]), tuple(b2.shape[:-2]))
        self.a = xp.broadcast_to(a, batch + (n, n))
        b2 = xp.broadcast_to(b2, batch + tuple(b2.shape[-2:]))
        try:
            self.x = backend_for(xp).linalg.solve(self.a, b2)
        except LinAlgError:
            raise _singular(self, a) from None
        return self.x[..., 0] if self.vector else self.x

    def backward(self, xp, g):
        if self.vector:
            g = g[..., None]
        gb = backend_for(xp).linalg.solve(_mT(xp, self.a), g)
        ga = -(gb @ _mT(xp, self.x)) if self.needs[0] else None
        if not self.needs[1]:
            gb = None
        elif self.vector:
            gb = gb[..., 0]
        return ga, gb

    def _sizes(self, a, b):
        n = a.shape[-1]
        k = 1 if b.ndim == 1 else b.shape[-1]
        return numel(tuple(self.x.shape[:-2])), n, k

    def forward_flops(self, out, a, b):
        batch, n, k = self._sizes(a, b)
        return batch * (n ** 3 // 3 + n * n * k)

    def backward_flops(self, out, a, b):
        batch, n, k = self._sizes(a, b)
        return batch * (n ** 3 // 3 + n * n * k + (n * n * k if self.needs[0] else 0))


# --------------------------------------------------------------------------------------------
# factorisations


class Cholesky(_Factorisation):
    """A = L L^T, L lower triangular.   dL/dA = sym(L^-T Φ(L^T g) L^-1).

    L has a positive diagonal (``upper=True`` returns U = L^T, A = U^T U).  A must be
    symmetric positive definite; only its lower triangle is read.

    Backward (Murray 2016, PyTorch's rule): with Φ(X) = the lower triangle of X with its
    diagonal halved,

        dL/dA = sym( L^-T Φ(L^T g) L^-1 ),     sym(X) = (X + X^T) / 2,

    the gradient with respect to a *symmetric* A (as PyTorch's): check it through a function
    that symmetrises its input, e.g. cholesky((A + A^T) / 2).  FLOPs: n^3/6 MACs (n^3/3
    flops); backward 3n^3 + n^3/6 (L^T g, two products with L^-1, and L^-1 itself).
    """

    name = "cholesky"
    function = None  # lucid.linalg.cholesky only
    saves_inputs = False
    saves_output = True

    def __init__(self, upper: bool = False) -> None:
        self.upper = upper

    def forward(self, xp, a):
        _square(self, a)
        try:
            self.low = backend_for(xp).linalg.cholesky(a)
        except LinAlgError:
            raise self.error(
                f"the matrix (shape {fmt(tuple(a.shape))}) is not positive definite. "
                "cholesky needs a symmetric positive-definite matrix, e.g. B @ B.mT + eps * I; "
                "for a symmetric indefinite one use lucid.linalg.eigh.",
                LinAlgError,
            ) from None
        return _mT(xp, self.low) if self.upper else self.low

    def backward(self, xp, g):
        low = self.low
        gl = _mT(xp, g) if self.upper else g
        phi = xp.tril(_mT(xp, low) @ gl)  # tril(L^T gL) = tril(L^T tril(gL)) (see PyTorch)
        sym = 0.5 * (phi + _mT(xp, xp.tril(phi, -1)))  # = sym(Φ(L^T gL)), diagonal halved
        linv = backend_for(xp).linalg.inv(low)
        return (_mT(xp, linv) @ sym @ linv,)

    def forward_flops(self, out, a):
        return _batch(a) * (a.shape[-1] ** 3 // 6)

    def backward_flops(self, out, a):
        n = a.shape[-1]
        return _batch(a) * (3 * n ** 3 + n ** 3 // 6)


def _qr_square_or_tall(xp: Any, q: Any, r: Any, gq: Any, gr: Any, rinv: Any) -> Any:
    """dL/dA for A = QR with m >= n (TensorFlow's _QrGradSquareAndDeepMatrices):

        M = tril(Q^T gQ - gQ^T Q + R gR^T - gR R^T)
        dL/dA = Q (gR + M R^-T) + (gQ - Q Q^T gQ) R^-T
    """
    qdq = _mT(xp, q) @ gq
    rdr = r @ _mT(xp, gr)
    m = xp.tril(qdq - _mT(xp, qdq) + rdr - _mT(xp, rdr))
    rinv_t = _mT(xp, rinv)
    return q @ (gr + m @ rinv_t) + (gq - q @ qdq) @ rinv_t


class QR(_Factorisation):
    """A = Q R.   dL/dA = Q (gR + M R^-T) + (gQ - Q Q^T gQ) R^-T   (m >= n).

    The reduced QR factorisation: Q (m, k) with orthonormal columns, R (k, n) upper
    triangular, k = min(m, n) (``mode="reduced"``).  Output: [Q | R] packed.

    Backward: for m >= n, with M = tril(Q^T gQ - gQ^T Q + R gR^T - gR R^T),

        dL/dA = Q (gR + M R^-T) + (gQ - Q Q^T gQ) R^-T

    (Walter & Lehmann 2018; the rule of TensorFlow and PyTorch).  For m < n, A = [X | Y]
    with X square: X = Q R_1 is a square QR and Y = Q R_2, so dL/dY = Q gR_2 and X takes the
    square rule with gQ + Y gR_2^T.  Defined where R is invertible (A has full rank k).  The
    factors are unique up to the signs of R's diagonal; LAPACK's choice is kept, so the
    gradient is that of the factors as computed.
    FLOPs: Householder QR, m·n·k - k^3/3 MACs for R plus m·k^2 - k^3/3 to form Q; backward
    counts the products of the rule (see ``_bwd_macs``).
    """

    name = "qr"
    function = None  # lucid.linalg.qr only

    def __init__(self, mode: str = "reduced") -> None:
        self.mode = mode

    def forward(self, xp, a):
        m, n = _matrices(self, a)
        if self.mode not in ("reduced", "complete"):
            raise self.error(
                f"mode={self.mode!r} is not supported; use mode='reduced' (Q (m, k), R (k, n), "
                "k = min(m, n)) or mode='complete' (Q (m, m), R (m, n))", ValueError)
        self.a = a
        if self.mode == "complete" and m > n:  # else the same factors as the reduced QR
            self.q, self.r = backend_for(xp).linalg.qr_complete(a)
        else:
            self.q, self.r = backend_for(xp).linalg.qr(a)
        return _pack(xp, tuple(a.shape[:-2]), [self.q, self.r])

    def backward(self, xp, g):
        q, r, a = self.q, self.r, self.a
        m, n = a.shape[-2], a.shape[-1]
        if self.mode == "complete" and m > n:
            raise self.error(
                f"backward: the complete QR of a tall matrix (shape {fmt(tuple(a.shape))}, "
                "m > n) has no gradient: Q's last m - n columns are any orthonormal completion "
                "(PyTorch refuses it too). Use mode='reduced'", RuntimeError)
        k = min(m, n)
        gq, gr = _unpack(g, [(m, k), (k, n)])
        try:
            rinv = backend_for(xp).linalg.inv(r[..., :, :k])
        except LinAlgError:
            raise self.error(
                f"backward: R is singular (A of shape {fmt(tuple(a.shape))} has rank < {k}); "
                "the QR gradient is defined only for full-rank A", LinAlgError) from None
        if m >= n:
            return (_qr_square_or_tall(xp, q, r, gq, gr, rinv),)
        y, gr1, gr2 = a[..., :, m:], gr[..., :, :m], gr[..., :, m:]
        gx = _qr_square_or_tall(xp, q, r[..., :, :m], gq + y @ _mT(xp, gr2), gr1, rinv)
        return (xp.concatenate([gx, q @ gr2], axis=-1),)

    def forward_flops(self, out, a):
        m, n = a.shape[-2], a.shape[-1]
        k = min(m, n)
        return _batch(a) * (m * n * k + m * k * k - 2 * k ** 3 // 3)

    @staticmethod
    def _bwd_macs(m: int, n: int) -> int:
        """The products of the rule: Q^T gQ (m k^2), R gR^T (k^2 n'), M R^-T (k^3), Q (...)
        (m k n'), Q Q^T gQ (m k^2), (...) R^-T (m k^2), R^-1 (k^3/3), with n' = min(m, n);
        for m < n also Y gR_2^T and Q gR_2 (m^2 (n - m) each)."""
        k = min(m, n)
        macs = 3 * m * k * k + k * k * k + k ** 3 + m * k * k + k ** 3 // 3
        if m < n:
            macs += 2 * m * m * (n - m)
        return macs

    def backward_flops(self, out, a):
        return _batch(a) * self._bwd_macs(a.shape[-2], a.shape[-1])


def _svd_macs(m: int, n: int) -> int:
    """The thin SVD by Golub-Reinsch: 14·M·k^2 + 8·k^3 flops (M = max(m, n), k = min(m, n);
    Golub & Van Loan, table 8.6.1), halved to MACs.  The orthonormal completion of
    ``full_matrices=True`` is not counted."""
    big, k = max(m, n), min(m, n)
    return 7 * big * k * k + 4 * k ** 3


class SVD(_Factorisation):
    """A = U diag(S) V^T.   dL/dA = U (J S + diag(gS) + S K) V^T + ...   (Townsend 2016)

    S descending and >= 0.  ``full_matrices=True`` (the default, as in
    NumPy and PyTorch): U (m, m), Vh = V^T (n, n); False: U (m, k), Vh (k, n), k = min(m, n).
    Output: [U | S | Vh] packed; with ``compute_uv=False`` S alone.

    Backward (Townsend 2016), with the first k columns U, V and F_ij = 1/(s_j^2 - s_i^2)
    (0 on the diagonal), J = F ∘ (U^T gU - gU^T U), K = F ∘ (V^T gV - gV^T V):

        dL/dA = U (J S + diag(gS) + S K) V^T
                + (I - U U^T) gU S^-1 V^T        (m > k)
                + U S^-1 gV^T (I - V V^T)        (n > k)

    Where the gradient is defined: distinct singular values (F is infinite where two are
    equal) and, for non-square A, nonzero ones.  The signs of each pair (u_i, v_i) are
    LAPACK's choice; a loss that depends on them (not on U S V^T, S, or u_i u_i^T) has the
    gradient of the factors as computed.  With full_matrices=True the extra m - k columns of
    U (and n - k rows of Vh) are an arbitrary basis of the orthogonal complement: a gradient
    reaching them is an error (use full_matrices=False); PyTorch drops it silently.  S alone
    (``compute_uv=False``) has dL/dA = U diag(gS) V^T, defined everywhere except at repeated
    singular values' sign changes.
    FLOPs: see ``_svd_macs``; backward counts the products of the rule.
    """

    name = "svd"
    function = None  # lucid.linalg.svd only
    saves_inputs = False
    saves_output = True  # with compute_uv=False the output is S, which backward keeps

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True) -> None:
        self.full_matrices = full_matrices
        self.compute_uv = compute_uv

    def forward(self, xp, a):
        _matrices(self, a)
        self.m, self.n = a.shape[-2], a.shape[-1]
        la = backend_for(xp).linalg
        if not self.compute_uv:
            self.u, self.s, self.vh = la.svd(a, False)  # U and V: the backward rule needs them
            return self.s
        u, self.s, vh = la.svd(a, self.full_matrices)
        k = min(self.m, self.n)
        self.u, self.vh = u[..., :, :k], vh[..., :k, :]
        self.shapes = [tuple(u.shape[-2:]), (k,), tuple(vh.shape[-2:])]
        return _pack(xp, tuple(a.shape[:-2]), [u, self.s, vh])

    def backward(self, xp, g):
        u, s, vh = self.u, self.s, self.vh
        m, n = self.m, self.n
        k = min(m, n)
        if not self.compute_uv:
            return ((u * g[..., None, :]) @ vh,)
        gu, gs, gvh = _unpack(g, self.shapes)
        if self.full_matrices and (m > k or n > k):
            extra = [gu[..., :, k:], gvh[..., k:, :]]
            if any(bool(xp.any(e != 0).item()) for e in extra if e.size):
                raise self.error(
                    f"backward: a gradient reached the last {max(m, n) - k} columns of U or rows "
                    f"of Vh (A of shape {fmt(tuple((m, n)))}), which full_matrices=True fills "
                    "with an arbitrary basis of the orthogonal complement; they have no "
                    "gradient. Use svd(A, full_matrices=False).", ValueError)
            gu, gvh = gu[..., :, :k], gvh[..., :k, :]
        gv = _mT(xp, gvh)
        s2 = s * s
        f = _off_diagonal_inverse(xp, s2[..., None, :] - s2[..., :, None])
        utgu = _mT(xp, u) @ gu
        vtgv = vh @ gv
        j = f * (utgu - _mT(xp, utgu))
        kk = f * (vtgv - _mT(xp, vtgv))
        inner = j * s[..., None, :] + s[..., :, None] * kk
        inner = inner + gs[..., :, None] * _eye_like(xp, k, s)
        ga = u @ inner @ vh
        if m > k:
            ga = ga + ((gu - u @ utgu) / s[..., None, :]) @ vh
        if n > k:
            ga = ga + u @ ((_mT(xp, gv) - _mT(xp, vtgv) @ vh) / s[..., :, None])
        return (ga,)

    def forward_flops(self, out, a):
        return _batch(a) * _svd_macs(a.shape[-2], a.shape[-1])

    def backward_flops(self, out, a):
        m, n = a.shape[-2], a.shape[-1]
        k = min(m, n)
        if not self.compute_uv:
            return _batch(a) * (m * k + m * k * n)  # scale U's columns, then the product
        # U^T gU (m k^2), V^T gV (n k^2), U (inner) (m k^2), (...) V^T (m k n); m > k adds
        # U (U^T gU) and its product with V^T; n > k adds (V^T gV) V^T and U (...)
        macs = m * k * k + n * k * k + m * k * k + m * k * n
        if m > k:
            macs += m * k * k + m * k * n
        if n > k:
            macs += k * k * n + m * k * n
        return _batch(a) * macs


class Eigh(_Factorisation):
    """A = V diag(w) V^T.   dL/dA = V (diag(g_w) + F ∘ skew(V^T g_V)) V^T.

    For a symmetric A: eigenvalues w ascending, orthonormal eigenvectors in the columns of V.
    Only the triangle ``UPLO`` ("L", the default, or "U") is read.  Output: [w | V] packed.

    Backward: with F_ij = 1/(w_j - w_i) (0 on the diagonal) and skew(X) = (X - X^T)/2,

        dL/dA = V (diag(g_w) + F ∘ skew(V^T g_V)) V^T,

    a symmetric matrix: the gradient with respect to a symmetric A (as PyTorch's); check it
    through a function that symmetrises its input, e.g. eigh((A + A^T) / 2).  Defined where
    the eigenvalues are distinct (F is infinite where two are equal) unless the loss depends
    on w alone.  Each eigenvector's sign is LAPACK's choice.
    FLOPs: the symmetric QR algorithm with eigenvectors, about 9n^3 flops (Golub & Van Loan)
    = 9n^3/2 MACs; backward four n×n products (V^T g_V, V (...), (...) V^T, and F ∘ ...
    counted as n^2), 3n^3 + n^2.
    """

    name = "eigh"
    function = None  # lucid.linalg.eigh only
    saves_inputs = False

    def __init__(self, UPLO: str = "L") -> None:  # noqa: N803  (NumPy's and PyTorch's name)
        self.UPLO = UPLO

    def forward(self, xp, a):
        n = _square(self, a)
        if self.UPLO not in ("L", "U"):
            raise self.error(f"UPLO must be 'L' or 'U', got {self.UPLO!r}", ValueError)
        self.w, self.v = backend_for(xp).linalg.eigh(a, self.UPLO)
        self.n = n
        return _pack(xp, tuple(a.shape[:-2]), [self.w, self.v])

    def backward(self, xp, g):
        w, v, n = self.w, self.v, self.n
        gw, gv = _unpack(g, [(n,), (n, n)])
        f = _off_diagonal_inverse(xp, w[..., None, :] - w[..., :, None])
        vtgv = _mT(xp, v) @ gv
        inner = f * (0.5 * (vtgv - _mT(xp, vtgv))) + gw[..., :, None] * _eye_like(xp, n, w)
        return (v @ inner @ _mT(xp, v),)

    def forward_flops(self, out, a):
        return _batch(a) * (9 * a.shape[-1] ** 3 // 2)

    def backward_flops(self, out, a):
        n = a.shape[-1]
        return _batch(a) * (3 * n ** 3 + n * n)


class Eig(_Factorisation):
    """A v_i = w_i v_i.   No gradient.

    For a general square real A: eigenvalues w and unit eigenvectors (the
    columns of V), both *complex* (Complex128 from float64 on "cpu"; Complex64 on "gpu",
    which has no complex128), as torch.linalg.eig -- a real matrix can have complex
    eigenvalues, and the result's dtype must not depend on the values.  Output: w; V is
    returned beside it by lucid.linalg.eig.

    Not differentiable: the result carries no gradient (use eigh for symmetric matrices,
    which is).  FLOPs: the unsymmetric QR algorithm with eigenvectors, about 25n^3 flops
    (Golub & Van Loan) = 25n^3/2 MACs; backward 0.
    """

    name = "eig"
    function = None  # lucid.linalg.eig only
    differentiable = False
    saves_inputs = False

    def forward(self, xp, a):
        _square(self, a)
        w, self.v = backend_for(xp).linalg.eig(a)
        return w

    def forward_flops(self, out, a):
        return _batch(a) * (25 * a.shape[-1] ** 3 // 2)

    def backward_flops(self, out, a):
        return 0


class Pinv(_Factorisation):
    """X = A^+.   dL/dA = -X^T g X^T + (I - A X) g^T X X^T + X^T X g^T (I - X A).

    The Moore-Penrose pseudo-inverse: with A = U diag(S) V^T (thin SVD),
    X = V diag(S^+) U^T, where S^+ inverts the singular values above ``rtol`` · max(S) and
    zeroes the others.  ``rtol`` defaults to max(m, n) · eps of the dtype (PyTorch's and the
    array API's default; NumPy's own default is 1e-15).

    Backward (Golub & Pereyra 1973), valid where the rank does not change near A:

        dL/dA = -X^T g X^T + (I - A X)^T g^T X X^T + X^T X g^T (I - X A)^T

    (with A X and X A symmetric).  FLOPs: the thin SVD (``_svd_macs``) + n·k·m for
    V S^+ U^T; backward the ten products of the rule, 6·m^2·n + 4·m·n^2.
    """

    name = "pinv"
    function = None  # lucid.linalg.pinv only
    saves_output = True

    def __init__(self, rtol: float | None = None) -> None:
        self.rtol = rtol

    def forward(self, xp, a):
        if isinstance(a, Tensor):  # create_graph: A+ recorded as this op (its rule needs A, A+)
            self.a, self.x = a, apply(Pinv(self.rtol), a)
            return self.x
        m, n = _matrices(self, a)
        rtol = self.rtol
        if rtol is None:
            rtol = max(m, n) * float(np.finfo(np.float32 if a.dtype == xp.float32
                                              else np.float64).eps)
        u, s, vh = backend_for(xp).linalg.svd(a, False)
        cutoff = rtol * xp.max(s, axis=-1, keepdims=True) if s.shape[-1] else s
        keep = s > cutoff
        sinv = xp.where(keep, 1 / xp.where(keep, s, xp.ones_like(s)), xp.zeros_like(s))
        self.a = a
        self.x = _mT(xp, vh) @ (sinv[..., :, None] * _mT(xp, u))
        return self.x

    def backward(self, xp, g):
        a, x = self.a, self.x
        m, n = a.shape[-2], a.shape[-1]
        gt = _mT(xp, g)
        ga = -(_mT(xp, x) @ g @ _mT(xp, x))
        ga = ga + (_eye_like(xp, m, a) - a @ x) @ gt @ (x @ _mT(xp, x))
        ga = ga + (_mT(xp, x) @ x) @ gt @ (_eye_like(xp, n, a) - x @ a)
        return (ga,)

    def forward_flops(self, out, a):
        m, n = a.shape[-2], a.shape[-1]
        return _batch(a) * (_svd_macs(m, n) + n * min(m, n) * m)

    def backward_flops(self, out, a):
        m, n = a.shape[-2], a.shape[-1]
        return _batch(a) * (6 * m * m * n + 4 * m * n * n)
