"""lucid.autograd.Function: PyTorch's custom-function API (forward(ctx, ...), backward(ctx, g),
ctx.save_for_backward / saved_tensors / needs_input_grad / mark_non_differentiable, apply),
built on lucid.Op: checked against NumPy and finite differences, drawn, stepped, counted."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lucid
import lucid_viz
from lucid.autograd import Function, GradcheckError, gradcheck

HAS_MLX = importlib.util.find_spec("mlx") is not None
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not HAS_MLX, reason="no MLX"))]
X = np.array([[-1.5, 0.25, 2.0], [0.5, -0.75, 1.0]])


class Legendre3(Function):
    """P3(x) = (5x³ - 3x) / 2.   dP3/dx = (15x² - 3) / 2."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * x ** 2 - 1)


class ScaledAdd(Function):
    """y = a + alpha * b (alpha a number).   dy/da = 1, dy/db = alpha."""

    @staticmethod
    def forward(ctx, a, alpha, b):
        ctx.alpha = alpha
        ctx.seen_needs = ctx.needs_input_grad
        return a + alpha * b

    @staticmethod
    def backward(ctx, g):
        ga = g if ctx.needs_input_grad[0] else None
        gb = g * ctx.alpha if ctx.needs_input_grad[2] else None
        return ga, None, gb


@pytest.mark.parametrize("device", DEVICES)
def test_values_and_gradients_against_numpy(device):
    x = lucid.Tensor(X, dtype=lucid.Float32, requires_grad=True, device=device)
    y = Legendre3.apply(x)
    assert y.device == device and type(y._op).__name__ == "Legendre3"
    np.testing.assert_allclose(y.numpy(), 0.5 * (5 * X ** 3 - 3 * X), rtol=1e-5)
    (y * y).sum().backward()
    expected = 2 * (0.5 * (5 * X ** 3 - 3 * X)) * 1.5 * (5 * X ** 2 - 1)
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), expected, rtol=1e-5)


def test_gradcheck_passes_and_catches_a_wrong_backward():
    x = lucid.Tensor(X, requires_grad=True)
    assert gradcheck(Legendre3.apply, x)

    class Wrong(Function):
        """P3 with the factor 1.5 forgotten."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * (5 * x ** 2 - 1)

    with pytest.raises(GradcheckError):
        gradcheck(Wrong.apply, x)


def test_numbers_pass_through_and_needs_input_grad_says_which_gradients_are_wanted():
    a = lucid.Tensor(X, requires_grad=True)
    b = lucid.Tensor(-X)  # needs no gradient
    y = ScaledAdd.apply(a, 3.0, b)
    np.testing.assert_allclose(y.numpy(), X - 3.0 * X)
    assert y._op.ctx.seen_needs == (True, False, False)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad, np.ones_like(X))
    assert b.grad is None
    b2 = lucid.Tensor(-X, requires_grad=True)
    ScaledAdd.apply(a, 2.0, b2).sum().backward()
    np.testing.assert_array_equal(b2.grad, np.full_like(X, 2.0))
    with lucid.no_grad():
        z = ScaledAdd.apply(a, 2.0, b2)
    assert not z.requires_grad and z._op is None


def test_mark_non_differentiable_output_needs_no_gradient():
    class ArgMaxMask(Function):
        """1 where x is the row's maximum, else 0 (not differentiable)."""

        @staticmethod
        def forward(ctx, x):
            out = (x == x.max(axis=1, keepdims=True)) * 1.0
            ctx.mark_non_differentiable(out)
            return out

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("never called")

    x = lucid.Tensor(X, requires_grad=True)
    m = ArgMaxMask.apply(x)
    np.testing.assert_array_equal(m.numpy(), [[0, 0, 1], [0, 0, 1]])
    assert not m.requires_grad


def test_second_derivative_with_create_graph():
    x = lucid.Tensor(X, requires_grad=True)
    (g,) = lucid.autograd.grad(Legendre3.apply(x).sum(), [x], create_graph=True)
    np.testing.assert_allclose(np.asarray(g.numpy()), 1.5 * (5 * X ** 2 - 1))
    (h,) = lucid.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(np.asarray(h), 15 * X)


def test_in_place_change_of_a_saved_input_is_an_error():
    x = lucid.Tensor(X, requires_grad=True)
    a = x * 1.0
    y = Legendre3.apply(a)
    with lucid.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="Legendre3"):
        y.sum().backward()


def test_flops_are_those_of_the_operations_inside():
    x = lucid.Tensor(X, requires_grad=True)
    with lucid.count_flops():
        y = Legendre3.apply(x)
        ref = 0.5 * (5 * x ** 3 - 3 * x)
        y.sum().backward()
    assert y._op.flops == ref.flops > 0
    # backward: grad_output * 1.5 * (5 x² - 1): five elementwise ops of 6 elements
    assert y._op.flops_bwd == 5 * X.size


def test_drawn_and_stepped_like_an_op():
    x = lucid.Tensor(X, requires_grad=True, name="x")
    with lucid.count_flops():
        loss = Legendre3.apply(x).sum()
    assert "Legendre3" in lucid_viz.draw(loss).dot()
    stepper = lucid_viz.step_backward(loss)
    texts = " ".join(stepper.frame_text(k) for k in range(1, len(stepper) + 1))
    assert "P3(x) = (5x³ - 3x) / 2" in texts


def test_inside_a_module_it_is_one_op_of_the_model():
    class Net(lucid.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lucid.nn.Linear(3, 2)

        def forward(self, x):
            return Legendre3.apply(self.fc(x))

    net = Net()
    with lucid.engine.mode.record_ops() as rec:
        net(lucid.Tensor(X))
    names = [type(t._op).__name__ for t in rec.ops]
    assert names.count("Legendre3") == 1 and "pow" not in " ".join(names).lower()


@pytest.mark.parametrize("body,exc,match", [
    (lambda ctx, x: (x, x.long()), TypeError, "outputs of different dtypes"),
    (lambda ctx, x: 3.0, TypeError, "must return a Tensor"),
])
def test_forward_errors_name_the_function(body, exc, match):
    Bad = type("Bad", (Function,), {"forward": staticmethod(body)})
    with pytest.raises(exc, match=f"^Bad: .*{match}"):
        Bad.apply(lucid.Tensor(X))


def test_backward_errors_name_the_function():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    x = lucid.Tensor(X, requires_grad=True)
    with pytest.raises(ValueError, match="^TooMany: backward returned 2 gradients for 1"):
        TooMany.apply(x).sum().backward()

    class NotATensor(TooMany):
        @staticmethod
        def backward(ctx, g):
            return 2.0

    with pytest.raises(TypeError, match="^NotATensor: backward returned a float"):
        NotATensor.apply(x).sum().backward()
    class GradForANumber(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    with pytest.raises(ValueError, match="^GradForANumber: .*argument 1, which is not a Tensor"):
        GradForANumber.apply(x, 2.0).sum().backward()
    with pytest.raises(TypeError, match=r"Legendre3\.apply"):
        Legendre3()
    with pytest.raises(TypeError, match="no Tensor"):
        Legendre3.apply(2.0)
    with pytest.raises(TypeError, match="only Tensors"):
        type("S", (Function,), {"forward": staticmethod(
            lambda ctx, x: ctx.save_for_backward(1.0))}).apply(x)


def test_once_differentiable_refuses_create_graph_by_name():
    class NumpyCube(Function):
        """y = x³, backward computed in NumPy."""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        @lucid.autograd.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return lucid.Tensor(3 * x.numpy() ** 2) * g

    x = lucid.Tensor(X, requires_grad=True)
    NumpyCube.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad, 3 * X ** 2)
    refused = ("^NumpyCube: create_graph=True needs a backward rule made of Lucid ops, but "
               "NumpyCube.backward is marked @once_differentiable")
    with pytest.raises(RuntimeError, match=refused):
        lucid.autograd.grad(NumpyCube.apply(x).sum(), [x], create_graph=True)
    assert "NumpyCube" not in lucid.ops.base.REGISTRY
    assert not hasattr(lucid, "NumpyCube")


def test_variable_is_a_tensor():
    v = lucid.autograd.Variable(lucid.Tensor(X), requires_grad=True)
    assert isinstance(v, lucid.Tensor) and v.requires_grad and v.is_leaf
    (v * 2).sum().backward()
    np.testing.assert_array_equal(v.grad, np.full_like(X, 2.0))
    assert not lucid.autograd.Variable(X).requires_grad


def test_pytorch_2_style_with_setup_context():
    class Cube(Function):
        """y = x³.   dy/dx = 3x²."""

        @staticmethod
        def forward(x, scale):
            return scale * x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, scale = inputs
            ctx.save_for_backward(x)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * ctx.scale * x ** 2, None

    x = lucid.Tensor(X, requires_grad=True)
    y = Cube.apply(x, 2.0)
    np.testing.assert_allclose(y.numpy(), 2 * X ** 3)
    y.sum().backward()
    np.testing.assert_allclose(x.grad, 6 * X ** 2)
    assert gradcheck(lambda t: Cube.apply(t, 0.5), lucid.Tensor(X, requires_grad=True))


class SinCos(Function):
    """(sin x, cos x, the row's argmax).   d sin/dx = cos x, d cos/dx = -sin x."""

    seen: list = []  # the gradients backward got for the indices

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        idx = x.argmax(axis=1)
        ctx.mark_non_differentiable(idx)
        return x.sin(), x.cos(), idx

    @staticmethod
    def backward(ctx, g_sin, g_cos, g_idx):
        (x,) = ctx.saved_tensors
        SinCos.seen.append(g_idx)
        return g_sin * x.cos() - g_cos * x.sin()


@pytest.mark.parametrize("device", DEVICES)
def test_several_outputs_each_get_their_gradient(device):
    x = lucid.Tensor(X, requires_grad=True, device=device)
    SinCos.seen.clear()
    s, c, idx = SinCos.apply(x)
    np.testing.assert_allclose(s.numpy(), np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(c.numpy(), np.cos(X), rtol=1e-6)
    np.testing.assert_array_equal(idx.numpy(), X.argmax(axis=1))
    assert s.requires_grad and c.requires_grad and not idx.requires_grad
    assert s.shape == c.shape == (2, 3)
    (2 * s + 3 * c).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), 2 * np.cos(X) - 3 * np.sin(X),
                               rtol=1e-6)
    (g_idx,) = SinCos.seen
    assert g_idx.shape == (2,) and not g_idx.numpy().any()  # zeros, as PyTorch gives


def test_several_outputs_gradcheck_and_create_graph():
    x = lucid.Tensor(X, requires_grad=True)
    assert gradcheck(lambda t: SinCos.apply(t)[0] * SinCos.apply(t)[1], x)
    s, c, _ = SinCos.apply(x)
    (g,) = lucid.autograd.grad((s + c).sum(), [x], create_graph=True)
    np.testing.assert_allclose(g.numpy(), np.cos(X) - np.sin(X))
    (h,) = lucid.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(np.asarray(h), -np.sin(X) - np.cos(X))
