"""Spec rows: lucid.linalg -- norms, inv, det, slogdet, solve, cholesky, qr, svd, eigh, eig,
pinv, matrix_power (ops in lucid/ops/decomp.py).

Samples are well conditioned: square matrices get n·I added, symmetric positive-definite
ones (cholesky, eigh) are B B^T + n·I, whose eigenvalues are distinct.  eigh and cholesky read
one triangle of A and return the gradient for a symmetric A (as PyTorch), so their rows
check them through sym(A) = (A + A^T) / 2.

Factors with a sign ambiguity (the columns of Q, U, V and eigenvectors) are checked two ways:
raw against NumPy on "cpu" (the same LAPACK call, so the same signs; a sign is locally
constant, so the gradient of the raw factors is defined and gradchecked), and -- for
the gpu-vs-cpu parity test, where MLX's LAPACK may choose other signs -- after fixing the
signs (R's diagonal positive, the first row of U and V positive), a gauge-invariant form.

FLOPs are MACs (see lucid/ops/decomp.py): the hand counts below are written out per rule.
"""

from __future__ import annotations

import math

import numpy as np

import lucid
from lucid.linalg import LinAlgError
from lucid.ops import decomp
from lucid.ops.base import apply
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand

L = lucid.linalg
INF = math.inf


def _t(a, **kw):
    return lucid.Tensor(a, **kw)


def wc(n, batch=(), seed=0):
    """A well-conditioned square matrix (stack): uniform entries plus n·I."""
    return rand(batch + (n, n), seed=seed) + n * np.eye(n)


def spd(n, batch=(), seed=0):
    """A symmetric positive-definite matrix (stack) with distinct eigenvalues."""
    b = rand(batch + (n, n), seed=seed)
    return b @ np.swapaxes(b, -1, -2) + n * np.eye(n)


def sym(t):
    return (t + t.mT) * 0.5


def _sym_np(a):
    return (a + np.swapaxes(a, -1, -2)) / 2


def _col_signs(t, row=0):
    """sign of each column's entry in ``row`` (a lucid tensor (..., 1, k))."""
    return lucid.sign(t[..., row:row + 1, :])


def _col_signs_np(a, row=0):
    return np.sign(a[..., row:row + 1, :])


NO_PARITY = {"parity": False}  # raw factors: MLX's LAPACK may pick other signs than NumPy's

# -- norms -----------------------------------------------------------------------------------

X34 = rand((3, 4), seed=1)
X234 = rand((2, 3, 4), seed=2)


def _vnorm_np(x, ord, axis, keepdims):
    """NumPy's vector norm over any set of axes (np.linalg.norm takes a pair of axes as a
    matrix): the axes moved to the end and flattened into one."""
    axes = tuple(range(x.ndim)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % x.ndim for a in axes)
    rest = [i for i in range(x.ndim) if i not in axes]
    flat = np.transpose(x, rest + list(axes)).reshape([x.shape[i] for i in rest] + [-1])
    y = np.linalg.norm(flat, ord, axis=-1)
    if keepdims:
        y = y.reshape([1 if i in axes else s for i, s in enumerate(x.shape)])
    return y


def _vnorm(label, ord, axis=None, keepdims=False, samples=((X34,), (X234,)), flops=(), errors=()):
    return Spec(
        "vector_norm",
        lambda x: L.vector_norm(x, ord, axis, keepdims),
        lambda x: _vnorm_np(x, ord, axis, keepdims),
        samples, label=label, flops=flops, errors=errors,
    )


VECTOR_NORM = [
    _vnorm(
        "2", 2,
        # 12 squares (and adds) + 1 root; backward g/||x|| and its product with x: 2 · 12
        flops=(FlopsCase((X34,), 13, 24),),
        errors=(
            ErrorCase(lambda: L.vector_norm(_t(X34), "fro"), ValueError,
                      r"^vector_norm: ord='fro' is not a vector norm order; .*matrix_norm"),
            ErrorCase(lambda: L.vector_norm(_t(np.ones((2, 2), dtype=np.int64))), TypeError,
                      r"^vector_norm: input \(2,2\) has dtype Int64; vector_norm needs float32 "
                      r"or float64\. Cast first"),
            ErrorCase(lambda: L.vector_norm(_t(X34), 2, (1, -1)), ValueError,
                      r"^vector_norm: axis \(1, -1\) repeats an axis"),
        ),
    ),
    _vnorm("2-keepdims-all", 2, None, True),
    _vnorm("1-axis", 1, 1, flops=(FlopsCase((X34,), 12, 12),)),
    _vnorm("inf-axis", INF, -1, True),
    _vnorm("-inf-axis", -INF, 0),
    _vnorm("0-axis", 0, 1, flops=(FlopsCase((X34,), 12, 0),)),
    _vnorm("3-axes", 3, (0, 2), samples=((X234,),), flops=(FlopsCase((X234,), 24 + 3, 48),)),
    _vnorm("-1.5-axis", -1.5, 1),
    Spec("vector_norm", lambda x: L.norm(x), lambda x: np.linalg.norm(x),
         ((X34,), (X234,), (rand((5,)),)), label="norm()"),
    Spec("vector_norm", lambda x: L.norm(x, 1), lambda x: np.linalg.norm(x, 1),
         ((rand((5,)),),), label="norm(1-D, 1)"),
    Spec("vector_norm", lambda x: L.norm(x, 3, axis=1), lambda x: np.linalg.norm(x, 3, axis=1),
         ((X234,),), label="norm(axis)"),
    Spec("vector_norm", lambda x: L.norm(x, axis=(1, 2), keepdims=True),
         lambda x: np.linalg.norm(x, axis=(1, 2), keepdims=True), ((X234,),),
         label="norm(fro, axes)"),
    Spec("vector_norm", lambda x: L.matrix_norm(x), lambda x: np.linalg.norm(x, axis=(-2, -1)),
         ((X34,), (X234,)), label="matrix_norm(fro)"),
]


def _mnorm(ord, axis=(-2, -1), keepdims=False, errors=()):
    return Spec(
        "reshape",  # matrix norms other than "fro" are composites ending in a reshape
        lambda x: L.matrix_norm(x, ord, axis, keepdims),
        lambda x: np.linalg.norm(x, ord, axis, keepdims),
        ((X34,), (X234,), (rand((4, 3), seed=5),)), label=f"matrix_norm({ord}, {axis})",
        errors=errors,
    )


MATRIX_NORM = [
    _mnorm("nuc", errors=(
        ErrorCase(lambda: L.matrix_norm(_t(X34), 3), ValueError,
                  r"^matrix_norm: ord=3 is not a matrix norm order; use 'fro', 'nuc', 1, -1, "
                  r"2, -2, inf or -inf"),
        ErrorCase(lambda: L.matrix_norm(_t(X34), 1, (1, -1)), ValueError,
                  r"^matrix_norm: axis \(1, -1\) names the same axis twice"),
        ErrorCase(lambda: L.norm(_t(X234), 1), ValueError,
                  r"^norm: ord=1 with axis=None needs a 1-D or 2-D input, got shape \(2,3,4\)"),
        ErrorCase(lambda: L.norm(_t(X234), 1, axis=(0, 1, 2)), ValueError,
                  r"^norm: axis=\(0, 1, 2\) names 3 axes"),
    )),
    _mnorm(2), _mnorm(-2, keepdims=True), _mnorm(1), _mnorm(-1), _mnorm(INF), _mnorm(-INF),
    _mnorm(1, axis=(-1, -2), keepdims=True), _mnorm(2, axis=(-1, 0)),
    Spec("reshape", lambda x: L.norm(x, INF), lambda x: np.linalg.norm(x, INF), ((X34,),),
         label="norm(2-D, inf)"),
    Spec("reshape", lambda x: L.norm(x, "nuc"), lambda x: np.linalg.norm(x, "nuc"), ((X34,),),
         label="norm(2-D, nuc)"),
]

# -- inv, det, slogdet, solve ------------------------------------------------------------------

A3 = wc(3)
A233 = wc(3, (2,), seed=1)
A44T = wc(4, seed=2).T  # a transposed (non-contiguous) matrix
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
NEG = np.array([[0.0, 3.0], [2.0, 1.0]])  # det = -6: slogdet's sign is -1

SQUARE_ERRORS = lambda fn, name: (  # noqa: E731
    ErrorCase(lambda: fn(_t(rand((2, 3)))), ValueError,
              rf"^{name}: expected square matrices, got shape \(2,3\) \(2 rows, 3 columns\)"),
    ErrorCase(lambda: fn(_t(rand((3,)))), ValueError,
              rf"^{name}: expected a matrix or a stack of matrices \(at least 2 dimensions\), "
              r"got shape \(3,\)"),
    ErrorCase(lambda: fn(_t(np.eye(2, dtype=np.int64))), TypeError,
              rf"^{name}: input \(2,2\) has dtype Int64; {name} needs float32 or float64"),
)


def _det_singular_backward():
    a = _t(SINGULAR, requires_grad=True)
    L.det(a).backward()


INV = [
    Spec("inv", L.inv, np.linalg.inv, ((A3,), (A233,), (A44T,)),
         # n^3 per matrix forward, two n×n products backward
         flops=(FlopsCase((A3,), 27, 54), FlopsCase((A233,), 54, 108)),
         errors=SQUARE_ERRORS(L.inv, "inv") + (
             ErrorCase(lambda: L.inv(_t(SINGULAR)), LinAlgError,
                       r"^inv: the matrix \(shape \(2,2\)\) is singular, so it has no inverse\. "
                       r"Use lucid\.linalg\.pinv"),
         )),
]

DET = [
    Spec("det", L.det, np.linalg.det, ((A3,), (A233,), (A44T,), (NEG,)),
         # n^3/3 + n forward = 9 + 3; backward n^3 + n^2 = 27 + 9
         flops=(FlopsCase((A3,), 12, 36),),
         errors=SQUARE_ERRORS(L.det, "det") + (
             ErrorCase(_det_singular_backward, LinAlgError,
                       r"^det: backward at a singular matrix \(shape \(2,2\), det = 0\)"),
         )),
]

SLOGDET = [
    # (sign, logabsdet) reversed: the table's generic tests read the first output's op,
    # and sign is a constant tensor without one
    Spec("slogdet", lambda a: L.slogdet(a)[::-1], lambda a: tuple(np.linalg.slogdet(a))[::-1],
         ((A3,), (A233,), (NEG,), (A44T,)), errors=SQUARE_ERRORS(L.slogdet, "slogdet")),
    Spec("slogdet", lambda a: L.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
         ((A3,), (A233,)), label="logabsdet", flops=(FlopsCase((A3,), 12, 36),)),
]

B32 = rand((3, 2), seed=3)
SOLVE = [
    Spec("solve", L.solve, np.linalg.solve,
         ((A3, B32), (A3, rand((3,), seed=4)), (A233, B32), (A3, rand((2, 3, 4), seed=5)),
          (wc(3, (2, 1), seed=6), rand((3,), seed=7)), (A233, rand((2, 3), seed=8)[0])),
         # per matrix: n^3/3 + n^2 k = 9 + 18; backward dB: 9 + 18, dA: + 18
         flops=(FlopsCase((A3, B32), 27, 45), FlopsCase((A233, B32), 54, 90)),
         errors=(
             ErrorCase(lambda: L.solve(_t(A3), _t(rand((4,)))), ValueError,
                       r"^solve: a \(3,3\) and b \(4,\): b must be a vector of length 3 or a "
                       r"stack of matrices \(\.\.\., 3, k\)"),
             ErrorCase(lambda: L.solve(_t(rand((3, 2))), _t(B32)), ValueError,
                       r"^solve: expected square matrices, got shape \(3,2\)"),
             ErrorCase(lambda: L.solve(_t(A233), _t(rand((3, 3, 2)))), ValueError,
                       r"^solve: shapes \(2,\) and \(3,\) cannot be broadcast together"),
             ErrorCase(lambda: L.solve(_t(SINGULAR), _t(rand((2,)))), LinAlgError,
                       r"^solve: the matrix \(shape \(2,2\)\) is singular"),
         )),
]

# -- cholesky --------------------------------------------------------------------------------

S3 = spd(3)
S244 = spd(4, (2,), seed=1)

CHOLESKY = [
    Spec("cholesky", lambda a: L.cholesky(sym(a)), lambda a: np.linalg.cholesky(_sym_np(a)),
         ((S3,), (S244,)),
         # n^3/6 = 10 forward (n = 4); backward 3n^3 + n^3/6 = 192 + 10
         flops=(FlopsCase((spd(4),), 10, 202),),
         errors=SQUARE_ERRORS(L.cholesky, "cholesky") + (
             ErrorCase(lambda: L.cholesky(_t(np.array([[1.0, 2.0], [2.0, 1.0]]))), LinAlgError,
                       r"^cholesky: the matrix \(shape \(2,2\)\) is not positive definite\. "
                       r"cholesky needs a symmetric positive-definite matrix"),
         )),
    Spec("cholesky", lambda a: L.cholesky(sym(a), upper=True),
         lambda a: np.swapaxes(np.linalg.cholesky(_sym_np(a)), -1, -2), ((S3,), (S244,)),
         label="upper"),
]

# -- qr --------------------------------------------------------------------------------------

W43 = rand((4, 3), seed=3)
W35 = rand((3, 5), seed=4)
W243 = rand((2, 4, 3), seed=5)
QR_SAMPLES = ((W43,), (W35,), (A3,), (W243,))


def _qr_np(a):
    q, r = np.linalg.qr(a)
    return q, r


def _qr_canonical(a):
    q, r = L.qr(a)
    k = r.shape[-2]
    eye = lucid.eye(k, r.shape[-1], dtype=r.dtype, device=r.device)
    d = lucid.sign((r * eye).sum(axis=-1))  # the signs of R's diagonal
    return q * d.reshape(d.shape[:-1] + (1, k)), r * d.reshape(d.shape + (1,))


def _qr_canonical_np(a):
    q, r = np.linalg.qr(a)
    d = np.sign(np.diagonal(r, axis1=-2, axis2=-1))
    return q * d[..., None, :], r * d[..., :, None]


def _packed_qr_np(a):
    q, r = np.linalg.qr(a)
    batch = a.shape[:-2]
    return np.concatenate([q.reshape(batch + (-1,)), r.reshape(batch + (-1,))], axis=-1)


QR = [
    Spec("qr", L.qr, _qr_np, QR_SAMPLES, extra=NO_PARITY,
         errors=(
             ErrorCase(lambda: L.qr(_t(W43), mode="r"), ValueError,
                       r"^qr: mode='r' is not supported; use mode='reduced' .* or "
                       r"mode='complete'"),
             ErrorCase(lambda: L.qr(_t(rand((3,)))), ValueError,
                       r"^qr: expected a matrix or a stack of matrices"),
         )),
    Spec("qr", _qr_canonical, _qr_canonical_np, QR_SAMPLES, label="R's diagonal positive"),
    Spec("qr", lambda a: apply(decomp.QR(), a), _packed_qr_np, ((W43,), (W35,)),
         label="packed", extra=NO_PARITY,
         # (4,3): m n k + m k^2 - 2k^3/3 = 36 + 36 - 18 = 54;  backward 3 m k^2 + 2 k^3 +
         # m k^2 + k^3/3 = 108 + 54 + 36 + 9 = 207.  (3,5): 45 + 27 - 18 = 54;
         # 81 + 54 + 27 + 9 + 2·9·2 = 207
         flops=(FlopsCase((W43,), 54, 207), FlopsCase((W35,), 54, 207))),
]

# -- svd -------------------------------------------------------------------------------------

SVD_SAMPLES = ((W43,), (W35,), (A3,), (W243,))


def _svd_canonical(a):
    u, s, vh = L.svd(a, full_matrices=False)
    d = _col_signs(u)  # (..., 1, k): make the first row of U positive
    return u * d, s, vh * d.mT


def _svd_canonical_np(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    d = _col_signs_np(u)
    return u * d, s, vh * np.swapaxes(d, -1, -2)


def _svd_full_backward():
    a = _t(W43, requires_grad=True)
    u, s, vh = L.svd(a)
    u.sum().backward()


def _packed_svd_np(a, full):
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    batch = a.shape[:-2]
    return np.concatenate([p.reshape(batch + (-1,)) for p in (u, s, vh)], axis=-1)


SVD = [
    Spec("svd", lambda a: L.svd(a, full_matrices=False),
         lambda a: np.linalg.svd(a, full_matrices=False), SVD_SAMPLES, label="reduced",
         extra=NO_PARITY,
         errors=(
             ErrorCase(_svd_full_backward, ValueError,
                       r"^svd: backward: a gradient reached the last 1 columns of U or rows of "
                       r"Vh \(A of shape \(4,3\)\), which full_matrices=True fills with an "
                       r"arbitrary basis .* Use svd\(A, full_matrices=False\)"),
             ErrorCase(lambda: L.svd(_t(np.ones(3, dtype=np.float32))), ValueError,
                       r"^svd: expected a matrix or a stack of matrices"),
         )),
    # full_matrices=True: a square A (no extra columns) is differentiable ...
    Spec("svd", L.svd, np.linalg.svd, ((A3,), (wc(3, (2,), seed=3),)), label="full-square",
         extra=NO_PARITY),
    # ... a non-square one only through its first k columns: forward here, refusal above
    Spec("svd", L.svd, np.linalg.svd, ((W43,), (W35,), (W243,)), label="full", grad=False,
         extra=NO_PARITY),
    Spec("svd", _svd_canonical, _svd_canonical_np, SVD_SAMPLES, label="U's first row positive"),
    Spec("svd", L.svdvals, lambda a: np.linalg.svd(a, compute_uv=False), SVD_SAMPLES,
         label="svdvals",
         # (4,3): 7 M k^2 + 4 k^3 = 252 + 108;  backward m k + m k n = 12 + 36
         flops=(FlopsCase((W43,), 360, 48),)),
    Spec("svd", lambda a: apply(decomp.SVD(False), a), lambda a: _packed_svd_np(a, False),
         ((W43,), (W35,)), label="packed", extra=NO_PARITY,
         # backward (4,3), k = 3: m k^2 + n k^2 + m k^2 + m k n = 36 + 27 + 36 + 36, and m > k
         # adds m k^2 + m k n = 72: 207.  (3,5): 27 + 45 + 27 + 45, n > k adds 45 + 45: 234;
         # forward (3,5): 7 M k^2 + 4 k^3 = 315 + 108
         flops=(FlopsCase((W43,), 360, 207), FlopsCase((W35,), 423, 234))),
]

# -- eigh, eig -------------------------------------------------------------------------------


def _eigh_np(a, uplo="L"):
    w, v = np.linalg.eigh(a, UPLO=uplo)
    return w, v


def _eigh_canonical(a):
    w, v = L.eigh(sym(a))
    return w, v * _col_signs(v)


def _eigh_canonical_np(a):
    w, v = np.linalg.eigh(_sym_np(a))
    return w, v * _col_signs_np(v)


def _packed_eigh_np(a):
    w, v = np.linalg.eigh(a)
    batch = a.shape[:-2]
    return np.concatenate([w.reshape(batch + (-1,)), v.reshape(batch + (-1,))], axis=-1)


EIGH = [
    Spec("eigh", lambda a: L.eigh(sym(a)), lambda a: _eigh_np(_sym_np(a)), ((S3,), (S244,)),
         extra=NO_PARITY,
         errors=SQUARE_ERRORS(L.eigh, "eigh") + (
             ErrorCase(lambda: L.eigh(_t(S3), UPLO="X"), ValueError,
                       r"^eigh: UPLO must be 'L' or 'U', got 'X'"),
         )),
    Spec("eigh", lambda a: L.eigh(sym(a), UPLO="U"), lambda a: _eigh_np(_sym_np(a), "U"),
         ((S3,),), label="UPLO=U", extra=NO_PARITY),
    # only the chosen triangle is read: a non-symmetric input, forward only
    Spec("eigh", lambda a: L.eigh(a, UPLO="U"), lambda a: _eigh_np(a, "U"),
         ((S3 + np.tril(rand((3, 3), seed=9), -1),),), label="reads-U", grad=False,
         extra=NO_PARITY),
    Spec("eigh", _eigh_canonical, _eigh_canonical_np, ((S3,), (S244,)),
         label="V's first row positive"),
    Spec("eigh", lambda a: apply(decomp.Eigh(), sym(a)), lambda a: _packed_eigh_np(_sym_np(a)),
         ((S3,),), label="packed",
         extra=NO_PARITY,
         # 9 n^3 / 2 = 121 forward; backward 3 n^3 + n^2 = 81 + 9
         flops=(FlopsCase((S3,), 121, 90),)),
]

REAL_EIG = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 0.2, -1.0]])
COMPLEX_EIG = np.array([[0.0, -2.0], [2.0, 1.0]])  # eigenvalues 0.5 ± i·1.94


def _eig_np(a):
    w, v = np.linalg.eig(a)
    kind = np.result_type(a.dtype, np.complex64)
    return w.astype(kind), v.astype(kind)


EIG = [
    Spec("eig", L.eig, _eig_np, ((REAL_EIG,), (COMPLEX_EIG,), (wc(3, (2,), seed=4),)),
         grad=False, extra=NO_PARITY,
         # 25 n^3 / 2 = 337 (n = 3); no backward
         flops=(FlopsCase((REAL_EIG,), 337, 0),),
         errors=SQUARE_ERRORS(L.eig, "eig")),
    # eigenvalues alone are unique: parity on them (the eigenvectors' phases may differ)
    Spec("eig", lambda a: L.eig(a)[0], lambda a: _eig_np(a)[0], ((REAL_EIG,), (COMPLEX_EIG,)),
         grad=False, label="eigenvalues"),
]

# -- pinv, matrix_power ----------------------------------------------------------------------


def _pinv_np(a):
    return np.linalg.pinv(a, rtol=None)  # the array API default, max(m, n)·eps, as Lucid


RANK1 = np.outer(rand((4,), seed=1), rand((3,), seed=2))

PINV = [
    Spec("pinv", L.pinv, _pinv_np, ((W43,), (W35,), (A3,), (W243,)),
         # (4,3): svd 360 + n k m = 36;  backward 6 m^2 n + 4 m n^2 = 288 + 144
         flops=(FlopsCase((W43,), 396, 432),),
         errors=(ErrorCase(lambda: L.pinv(_t(rand((3,)))), ValueError,
                           r"^pinv: expected a matrix or a stack of matrices"),)),
    # rank 1: the two zero singular values are dropped (no gradient check: a perturbation
    # changes the rank, and pinv is discontinuous there)
    Spec("pinv", L.pinv, _pinv_np, ((RANK1,),), label="rank-deficient", grad=False),
    Spec("pinv", lambda a: L.pinv(a, rtol=0.5), lambda a: np.linalg.pinv(a, rtol=0.5),
         ((np.diag([4.0, 3.0, 1.0]),),), label="rtol", grad=False),
]

MATRIX_POWER = [
    Spec("matmul", lambda a: L.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3),
         ((A3,), (A233,)), label="matrix_power(3)",
         errors=(
             ErrorCase(lambda: L.matrix_power(_t(W43), 2), ValueError,
                       r"^matrix_power: expected square matrices, got shape \(4,3\)"),
             ErrorCase(lambda: L.matrix_power(_t(A3), 1.5), TypeError,
                       r"^matrix_power: n must be an int, got 1\.5"),
         )),
    Spec("matmul", lambda a: L.matrix_power(a, 6), lambda a: np.linalg.matrix_power(a, 6),
         ((A3,),), label="matrix_power(6)"),
    Spec("matmul", lambda a: L.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2),
         ((A3,), (A233,)), label="matrix_power(-2)"),
    Spec("inv", lambda a: L.matrix_power(a, -1), lambda a: np.linalg.matrix_power(a, -1),
         ((A3,),), label="matrix_power(-1)"),
    Spec("mul", lambda a: L.matrix_power(a, 1), lambda a: np.linalg.matrix_power(a, 1),
         ((A3,),), label="matrix_power(1)"),
    Spec("add", lambda a: L.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0),
         ((A3,), (A233,)), label="matrix_power(0)", grad=False),
]


SPECS = (VECTOR_NORM + MATRIX_NORM + INV + DET + SLOGDET + SOLVE + CHOLESKY + QR + SVD + EIGH
         + EIG + PINV + MATRIX_POWER)
