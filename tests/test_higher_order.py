"""Higher-order gradients: ``create_graph=True``, ``gradgradcheck`` over the spec table, and
``lucid.autograd.functional`` (jacobian, hessian, vjp, jvp, hvp) against NumPy references."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import functional as AF
from lucid.autograd import grad, gradcheck, gradgradcheck
from tests.specs import ALL_SPECS

ROWS = [s for s in ALL_SPECS if s.grad]


def _inputs(arrays):
    return [lucid.Tensor(a, requires_grad=np.issubdtype(a.dtype, np.floating)) for a in arrays]


@pytest.mark.parametrize("spec", ROWS, ids=[s.id for s in ROWS])
def test_gradgradcheck_every_op(spec):
    """Every op's backward rule runs on Lucid ops, so every op is twice differentiable."""
    arrays = spec.samples[min(2, len(spec.samples) - 1)]
    assert gradgradcheck(spec.fn, *_inputs(arrays), eps=1e-6, atol=1e-4, rtol=1e-3)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    class Leaky(lucid.ops.Op):
        """y = x^3, with a right first derivative 3x^2 computed through a Python float: the
        value is right, but it leaves the graph, so the second derivative comes out 0."""

        def forward(self, xp, x):
            self.x = x
            return x * x * x

        def backward(self, xp, g):
            return (g * (3 * float(self.x.sum()) ** 2),)

        def forward_flops(self, out, x):
            return 2 * x.size

        def backward_flops(self, out, x):
            return 2 * x.size

    x = lucid.Tensor([1.5], requires_grad=True)
    assert gradcheck(lambda t: lucid.ops.apply(Leaky(), t), x)  # first order: right
    with pytest.raises(lucid.autograd.GradcheckError, match="recorded as a constant"):
        gradgradcheck(lambda t: lucid.ops.apply(Leaky(), t), x)
    # the same, written with ops, passes
    assert gradgradcheck(lambda t: t * t * t, lucid.Tensor([1.5], requires_grad=True))


# -- create_graph ------------------------------------------------------------------------------

def test_grad_with_create_graph_can_be_differentiated_again():
    x = lucid.Tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (lucid.tanh(x) * x**3).sum()
    (g,) = grad(y, x, create_graph=True)
    assert g.requires_grad and g._op is not None
    (h,) = grad(g.sum(), x)
    a = np.array([0.5, -1.0, 2.0])
    t, s = np.tanh(a), 1 - np.tanh(a) ** 2
    np.testing.assert_allclose(g.numpy(), s * a**3 + 3 * t * a**2, rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), -2 * t * s * a**3 + 6 * s * a**2 + 6 * t * a,
                               rtol=1e-12)
    (plain,) = grad((lucid.tanh(x) * x**3).sum(), x)
    assert not plain.requires_grad  # without create_graph: values only, as before


def test_backward_create_graph_leaves_grads_with_graphs():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    assert isinstance(x.grad, lucid.Tensor) and x.grad.requires_grad
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    (gg,) = grad(x.grad.sum(), x)
    np.testing.assert_allclose(gg.numpy(), [6.0, 12.0])


def test_third_derivative():
    x = lucid.Tensor([0.3, -0.7], requires_grad=True)
    (d1,) = grad(lucid.sin(x).sum(), x, create_graph=True)
    (d2,) = grad(d1.sum(), x, create_graph=True)
    (d3,) = grad(d2.sum(), x)
    np.testing.assert_allclose(d3.numpy(), -np.cos([0.3, -0.7]), rtol=1e-12)


def test_gradient_penalty_of_a_small_mlp():
    """WGAN-GP's term: || d D(x) / dx ||^2, differentiated with respect to the weights."""
    lucid.random.seed(0)
    net = lucid.nn.Sequential(lucid.nn.Linear(3, 4), lucid.nn.Tanh(), lucid.nn.Linear(4, 1))
    x = lucid.random.randn(5, 3, dtype=lucid.Float64, requires_grad=True)
    params = list(net.parameters())
    for p in params:  # float64 weights, for finite differences
        p.data = p.data.astype(np.float64)

    def penalty():
        (gx,) = grad(net(x).sum(), x, create_graph=True)
        return (gx * gx).sum()

    analytic = grad(penalty(), params, allow_unused=True)
    assert analytic[3] is None  # the last bias does not change dD/dx
    for p, a in zip(params[:3], analytic[:3]):
        flat, num = p.data.reshape(-1), np.zeros(p.size)
        for j in range(p.size):
            old = flat[j]
            flat[j] = old + 1e-6
            up = penalty().item()
            flat[j] = old - 1e-6
            down = penalty().item()
            flat[j] = old
            num[j] = (up - down) / 2e-6
        np.testing.assert_allclose(a.numpy().reshape(-1), num, rtol=1e-5, atol=1e-8)


def test_maml_inner_step_outer_gradient():
    """One inner SGD step w' = w - lr dL/dw, then the outer loss at w', differentiated
    through the inner step (second derivatives of the inner loss)."""
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((6, 3)), rng.standard_normal((6, 1))
    lr = 0.1

    def outer(w_values):
        w = lucid.Tensor(w_values, requires_grad=True)
        inner = ((lucid.Tensor(X) @ w - lucid.Tensor(Y)) ** 2).mean()
        (gw,) = grad(inner, w, create_graph=True)
        w2 = w - lr * gw
        loss = ((lucid.Tensor(X) @ w2 - lucid.Tensor(Y)) ** 2).sum()
        return w, loss

    w0 = rng.standard_normal((3, 1))
    w, loss = outer(w0)
    (analytic,) = grad(loss, w)
    num = np.zeros(3)
    for j in range(3):
        e = np.zeros((3, 1))
        e[j] = 1e-6
        num[j] = (outer(w0 + e)[1].item() - outer(w0 - e)[1].item()) / 2e-6
    np.testing.assert_allclose(analytic.numpy().reshape(-1), num, rtol=1e-6)


def test_hooks_and_create_graph_are_refused_clearly():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: None)
    with pytest.raises(RuntimeError, match=r"create_graph=True\): a tensor of shape \(2,\) has a "
                                           r"hook"):
        y.sum().backward(create_graph=True)


def test_create_graph_on_gpu():
    pytest.importorskip("mlx.core")
    x = lucid.Tensor(np.array([0.5, -1.0, 2.0], np.float32), requires_grad=True, device="gpu")
    (g,) = grad((lucid.tanh(x) * x**3).sum(), x, create_graph=True)
    (h,) = grad(g.sum(), x)
    a = np.array([0.5, -1.0, 2.0])
    t, s = np.tanh(a), 1 - np.tanh(a) ** 2
    assert h.device == "gpu"
    np.testing.assert_allclose(h.numpy(), -2 * t * s * a**3 + 6 * s * a**2 + 6 * t * a,
                               rtol=1e-5)
    w = lucid.Tensor(np.ones((3, 2), np.float32), device="gpu")
    assert gradgradcheck(lambda t: lucid.tanh(t @ w).sum() * t.sum(),
                         lucid.Tensor(np.array([[0.2, -0.1, 0.4]], np.float32),
                                      requires_grad=True, device="gpu"),
                         eps=1e-2, atol=1e-2, rtol=1e-2)


# -- lucid.autograd.functional -------------------------------------------------------------

A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, -1.0], [0.0, 1.0, 4.0]])


def test_hessian_of_a_quadratic_form_is_a_plus_a_transpose():
    f = lambda x: x @ lucid.Tensor(A) @ x  # noqa: E731
    H = AF.hessian(f, lucid.Tensor([0.1, 0.2, 0.3]))
    np.testing.assert_allclose(H.numpy(), A + A.T, rtol=1e-12)


def test_jacobian_vjp_jvp_hvp_agree_with_numpy():
    x0 = np.array([0.3, -0.4, 0.9])
    x = lucid.Tensor(x0)
    f = lambda t: lucid.tanh(lucid.Tensor(A) @ t) * t  # noqa: E731
    J = AF.jacobian(f, x).numpy()
    z = A @ x0
    s = 1 - np.tanh(z) ** 2
    J_ref = np.diag(np.tanh(z)) + (s * x0)[:, None] * A
    np.testing.assert_allclose(J, J_ref, rtol=1e-12)
    v = np.array([1.0, -2.0, 0.5])
    out, vj = AF.vjp(f, x, lucid.Tensor(v))
    np.testing.assert_allclose(vj.numpy(), v @ J_ref, rtol=1e-12)
    np.testing.assert_allclose(out.numpy(), np.tanh(z) * x0, rtol=1e-12)
    _, jv = AF.jvp(f, x, lucid.Tensor(v))
    np.testing.assert_allclose(jv.numpy(), J_ref @ v, rtol=1e-12)
    g = lambda t: (lucid.tanh(lucid.Tensor(A) @ t) * t).sum()  # noqa: E731
    H = AF.hessian(g, x).numpy()
    _, hv = AF.hvp(g, x, lucid.Tensor(v))
    np.testing.assert_allclose(hv.numpy(), H @ v, rtol=1e-10)
    np.testing.assert_allclose(H, H.T, rtol=1e-10)  # a Hessian is symmetric
    assert not x.requires_grad  # the caller's tensor is left as it was


def test_functional_errors_name_the_problem():
    x = lucid.Tensor([1.0, 2.0])
    with pytest.raises(ValueError, match=r"vjp: the output has shape \(2,\); give v"):
        AF.vjp(lambda t: t * 2, x)
    with pytest.raises(ValueError, match=r"hessian: func must return a scalar, got shape \(2,\)"):
        AF.hessian(lambda t: t * 2, x)
    with pytest.raises(ValueError, match=r"jvp: v has shape \(3,\), expected \(2,\)"):
        AF.jvp(lambda t: t * 2, x, lucid.Tensor([1.0, 2.0, 3.0]))


def test_second_derivatives_through_indexing():
    """x[i] in a loss whose gradient depends on x: the gradient's scatter is an op too."""
    v = lambda: lucid.Tensor([1.0, 2.0, 3.0], requires_grad=True)  # noqa: E731
    assert gradgradcheck(lambda t: (t[1:] * t[:-1]).sum() * t[0], v())  # basic indexing
    assert gradgradcheck(lambda t: (t[[0, 0, 2]] ** 2).sum() * t[1], v())  # repeated picks

    def f(w):
        x, y = w[0], w[1]
        return x * x * y + lucid.sin(x * y)

    H = AF.hessian(f, lucid.Tensor([1.0, 2.0]))
    s, c = np.sin(2.0), np.cos(2.0)
    np.testing.assert_allclose(H.numpy(), [[4 - 4 * s, 2 + c - 2 * s], [2 + c - 2 * s, -s]],
                               rtol=1e-12)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_gradient_penalty_through_a_convolution(device):
    """A CNN critic's input-gradient norm, differentiated with respect to its weights: the
    backward rules of convolution and pooling (im2col, col2im, GEMMs, the max masks)
    recorded as a graph."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    rng = np.random.default_rng(3)
    x = lucid.Tensor(rng.standard_normal((2, 2, 5, 5)), requires_grad=True)
    w = lucid.Tensor(rng.standard_normal((3, 2, 3, 3)) * 0.3, requires_grad=True)
    if device == "gpu":  # float32 on MLX: a float32-level check
        x = lucid.Tensor(x.numpy().astype(np.float32), requires_grad=True, device="gpu")
        w = lucid.Tensor(w.numpy().astype(np.float32), requires_grad=True, device="gpu")

    def penalty(weight):
        with lucid.enable_grad():  # (gradcheck evaluates it under no_grad too)
            h = lucid.tanh(lucid.nn.functional.conv2d(x, weight, padding=1))
            y = (lucid.nn.functional.max_pool2d(h, 2) ** 2).sum() + \
                lucid.nn.functional.avg_pool2d(h, 2, stride=1).sum()
            (gx,) = grad(y, x, create_graph=True)
            return (gx * gx).sum()

    if device == "cpu":
        assert gradcheck(penalty, w)
    else:
        assert gradcheck(penalty, w, eps=1e-2, atol=1e-2, rtol=5e-2)
