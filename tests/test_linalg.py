"""lucid.linalg beyond the spec table: the namespace, behaviour on "gpu", refusals that must
leave nothing behind, and a cross-check of gradients against PyTorch (when installed)."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.linalg import LinAlgError

L = lucid.linalg
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 3)) + 3 * np.eye(3)
W = RNG.standard_normal((4, 3))
B = RNG.standard_normal((3, 3))
SPD = B @ B.T + 3 * np.eye(3)


def test_namespace_lists_every_function():
    assert lucid.linalg is L
    doc = L.__doc__
    for name in L.__all__:
        assert hasattr(L, name), name
        if name != "LinAlgError":
            assert f"{name}(" in doc, f"{name} is missing from lucid.linalg's docstring"
    assert not hasattr(lucid, "svd") and not hasattr(lucid, "cholesky")  # not at top level


def test_matrix_power_returns_new_tensors():
    a = lucid.Tensor(A)
    b = L.matrix_power(a, 1)
    b += 1.0
    np.testing.assert_array_equal(a.numpy(), A)
    eye = L.matrix_power(a, 0)
    eye += 1.0  # a writable array of its own, not a broadcast view
    np.testing.assert_array_equal(eye.numpy(), np.eye(3) + 1)


def test_slogdet_sign_and_eig_carry_no_gradient():
    a = lucid.Tensor(A, requires_grad=True)
    sign, logabsdet = L.slogdet(a)
    assert not sign.requires_grad and logabsdet.requires_grad
    w, v = L.eig(a)
    assert not w.requires_grad and not v.requires_grad
    assert w.dtype.is_complex and v.dtype.is_complex


def test_svd_full_matrices_gradient_through_the_first_k_columns():
    """A loss of S and the first k columns of U: the same gradient as with the reduced SVD."""
    weights = lucid.Tensor(RNG.standard_normal((4, 4)))

    def loss(u, s):
        k = u[:, :3]
        return (s ** 2).sum() + (k @ k.mT * weights).sum()

    full = lucid.Tensor(W, requires_grad=True)
    u, s, _ = L.svd(full)  # U (4,4): its last column gets no gradient
    loss(u, s).backward()
    reduced = lucid.Tensor(W, requires_grad=True)
    u, s, _ = L.svd(reduced, full_matrices=False)
    loss(u, s).backward()
    np.testing.assert_allclose(full.grad, reduced.grad, atol=1e-12)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_refusals_name_the_op_on_both_devices(device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    singular = lucid.Tensor(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32), device=device)
    with pytest.raises(LinAlgError, match=r"^inv: the matrix \(shape \(2,2\)\) is singular"):
        L.inv(singular)
    with pytest.raises(LinAlgError, match=r"^solve: the matrix \(shape \(2,2\)\) is singular"):
        L.solve(singular, lucid.Tensor(np.ones(2, np.float32), device=device))
    indefinite = lucid.Tensor(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32), device=device)
    with pytest.raises(LinAlgError, match=r"^cholesky: the matrix \(shape \(2,2\)\) is not "
                                          r"positive definite"):
        L.cholesky(indefinite)
    with pytest.raises(TypeError, match=r"^det: input \(2,2\) has dtype Float16"):
        L.det(lucid.Tensor(np.eye(2, dtype=np.float16), device=device))


def test_gpu_results_stay_on_gpu():
    pytest.importorskip("mlx.core")
    a = lucid.Tensor(SPD.astype(np.float32), device="gpu", requires_grad=True)
    w, v = L.eigh(a)
    q, r = L.qr(a)
    assert {t.device for t in (w, v, q, r, L.inv(a), L.det(a))} == {"gpu"}
    (w.sum() + L.det(a)).backward()
    assert a.grad is not None and not isinstance(a.grad, np.ndarray)
    want = np.eye(3) + np.linalg.det(SPD) * np.linalg.inv(SPD).T
    np.testing.assert_allclose(np.array(a.grad), want, rtol=1e-3, atol=1e-3)


# -- PyTorch cross-check: gauge-invariant losses, so LAPACK's sign choices do not matter ------

LOSSES = {
    "inv": (lambda m, a: m.inv(a).sum(), A),
    "det": (lambda m, a: m.det(a), A),
    "slogdet": (lambda m, a: m.slogdet(a)[1], A),
    "cholesky": (lambda m, a: (m.cholesky(a) ** 3).sum(), SPD),
    "qr": (lambda m, a: _qr_loss(m, a), W),
    "svd": (lambda m, a: _svd_loss(m, a), W),
    "eigh": (lambda m, a: _eigh_loss(m, a), SPD),
    "pinv": (lambda m, a: (m.pinv(a) ** 2).sum(), W),
    "norm-nuc": (lambda m, a: m.matrix_norm(a, "nuc"), W),
    "norm-3": (lambda m, a: m.vector_norm(a, 3), W),
}


def _qr_loss(m, a):
    q, r = m.qr(a)
    return ((q @ q.mT) ** 2 * 1.5).sum() + (r.mT @ r).sum() + (q[:, :1] * r[:1, :1]).sum()


def _svd_loss(m, a):
    u, s, vh = m.svd(a, full_matrices=False)
    return (s ** 3).sum() + ((u[:, :1] @ u[:, :1].mT) * a[:, :1]).sum() + (vh.mT @ vh).sum()


def _eigh_loss(m, a):
    w, v = m.eigh(a)
    return (w ** 2).sum() + ((v[:, -1:] @ v[:, -1:].mT) * a).sum()


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_pytorch(name):
    torch = pytest.importorskip("torch")
    loss, x = LOSSES[name]
    a = lucid.Tensor(x, requires_grad=True)
    loss(L, a).backward()
    t = torch.tensor(x, requires_grad=True)
    loss(torch.linalg, t).backward()
    np.testing.assert_allclose(a.grad, t.grad.numpy(), rtol=1e-7, atol=1e-9)
