"""The matrix factorisations each backend offers, behind one spelling.

``numpy.linalg`` and ``mlx.core.linalg`` have the same routines under slightly different
signatures: MLX runs them only on its CPU stream (``stream=mx.cpu``), computes lazily (so a
failure surfaces only when the result is evaluated), returns the full U of an SVD, and leaves
a Cholesky factorisation of a matrix that is not positive definite undefined instead of
raising.  The ops in ``lucid/ops/decomp.py`` call ``backend.linalg.<routine>`` and see the same
behaviour on both devices: batched over leading axes, a reduced QR, and
``numpy.linalg.LinAlgError`` when a matrix is singular or not positive definite.
"""

from __future__ import annotations

from typing import Any

import numpy as np

LinAlgError = np.linalg.LinAlgError


class NumpyLinalg:
    """``numpy.linalg``, batched over leading axes (NumPy's own rule)."""

    def inv(self, a: Any) -> Any:
        return np.linalg.inv(a)

    def solve(self, a: Any, b: Any) -> Any:
        """X with A X = B; ``b`` is a stack of matrices (..., n, k) with A's batch shape."""
        return np.linalg.solve(a, b)

    def slogdet(self, a: Any) -> tuple[Any, Any]:
        sign, logabsdet = np.linalg.slogdet(a)
        return sign, logabsdet

    def det(self, a: Any) -> Any:
        return np.linalg.det(a)

    def cholesky(self, a: Any) -> Any:
        """The lower factor L (A = L L^T); only A's lower triangle is read."""
        return np.linalg.cholesky(a)

    def qr(self, a: Any) -> tuple[Any, Any]:
        """The reduced QR: Q (m, k) with orthonormal columns, R (k, n) upper, k = min(m, n)."""
        q, r = np.linalg.qr(a, mode="reduced")
        return q, r

    def qr_complete(self, a: Any) -> tuple[Any, Any]:
        """The complete QR: Q (m, m) orthogonal, R (m, n) upper triangular (LAPACK's
        completion of Q's columns)."""
        q, r = np.linalg.qr(a, mode="complete")
        return q, r

    def svd(self, a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
        return u, s, vh

    def svdvals(self, a: Any) -> Any:
        return np.linalg.svd(a, compute_uv=False)

    def eigh(self, a: Any, uplo: str) -> tuple[Any, Any]:
        w, v = np.linalg.eigh(a, UPLO=uplo)
        return w, v

    def eig(self, a: Any) -> tuple[Any, Any]:
        """Eigenvalues and eigenvectors, always complex (NumPy returns real arrays when every
        eigenvalue happens to be real; the dtype must not depend on the values)."""
        w, v = np.linalg.eig(a)
        kind = np.result_type(a.dtype, np.complex64)
        return w.astype(kind), v.astype(kind)


class MLXLinalg:
    """``mlx.core.linalg`` on MLX's CPU stream, evaluated at once so that failures raise here
    (as ``LinAlgError``) and not later, wherever the lazy result happens to be used."""

    def __init__(self) -> None:
        import mlx.core as mx

        self.mx = mx
        self.la = mx.linalg

    def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        mx = self.mx
        try:
            out = fn(*args, stream=mx.cpu, **kwargs)
            mx.eval(out)
        except RuntimeError as exc:  # MLX reports LAPACK's failures as RuntimeError
            raise LinAlgError(str(exc)) from None
        return out

    def inv(self, a: Any) -> Any:
        return self._run(self.la.inv, a)

    def solve(self, a: Any, b: Any) -> Any:
        return self._run(self.la.solve, a, b)

    def slogdet(self, a: Any) -> tuple[Any, Any]:
        sign, logabsdet = self._run(self.la.slogdet, a)
        return sign, logabsdet

    def det(self, a: Any) -> Any:
        return self._run(self.la.det, a)

    def cholesky(self, a: Any) -> Any:
        low = self._run(self.la.cholesky, a)
        # MLX leaves the factor of a matrix that is not positive definite undefined: LAPACK
        # stops at the first pivot <= 0 and leaves it on the diagonal, so check the diagonal.
        diag = self.mx.diagonal(low, axis1=-2, axis2=-1)
        if not bool(self.mx.all(diag > 0).item()):
            raise LinAlgError("Matrix is not positive definite")
        return low

    def qr(self, a: Any) -> tuple[Any, Any]:
        q, r = self._run(self.la.qr, a)  # MLX's QR is the reduced one
        return q, r

    def qr_complete(self, a: Any) -> tuple[Any, Any]:
        """MLX's QR is the reduced one only: the complete one is NumPy's (MLX runs its
        factorisations on the CPU anyway), so both devices give the same completion."""
        q, r = NumpyLinalg().qr_complete(np.array(a))
        return self.mx.array(q), self.mx.array(r)

    def svd(self, a: Any, full_matrices: bool) -> tuple[Any, Any, Any]:
        u, s, vh = self._run(self.la.svd, a)  # MLX always returns the full U and Vh
        if not full_matrices:
            k = s.shape[-1]
            u, vh = u[..., :, :k], vh[..., :k, :]
        return u, s, vh

    def svdvals(self, a: Any) -> Any:
        return self._run(self.la.svd, a, compute_uv=False)

    def eigh(self, a: Any, uplo: str) -> tuple[Any, Any]:
        w, v = self._run(self.la.eigh, a, UPLO=uplo)
        return w, v

    def eig(self, a: Any) -> tuple[Any, Any]:
        w, v = self._run(self.la.eig, a)  # always complex64 (MLX has no complex128)
        return w, v
