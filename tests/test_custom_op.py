"""Your own op through the public API (``lucid.Op``): forward, backward and FLOPs in one class,
checked by gradcheck, counted, drawn and stepped through like the catalogue's ops."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid_viz
from lucid.autograd import GradcheckError, gradcheck
from lucid.ops.base import FUNCTIONS, REGISTRY


class Cube(lucid.Op):
    """y = x³.   dy/dx = 3x², so backward reads the input.

    FLOPs: forward 2 per element (x·x·x), backward 3 (3·x·x·g).
    """

    def forward(self, xp, x):
        self.x = x
        return x * x * x

    def backward(self, xp, g):
        return (3 * self.x * self.x * g,)

    def forward_flops(self, out, x):
        return 2 * x.size

    def backward_flops(self, out, x):
        return 3 * x.size


class Scale(lucid.Op):
    """y = a·x + b·z (parameters a, b).   dy/dx = a, dy/dz = b."""

    inputs = ("x", "z")
    saves_inputs = False

    def __init__(self, a: float = 2.0, b: float = 1.0) -> None:
        self.a, self.b = a, b

    def forward(self, xp, x, z):
        return self.a * x + self.b * z

    def backward(self, xp, g):
        return (self.a * g, self.b * g)

    def forward_flops(self, out, x, z):
        return 3 * out.size

    def backward_flops(self, out, x, z):
        return 2 * out.size


X = np.array([[-1.5, 0.25, 2.0], [0.5, -0.75, 1.0]])


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_values_and_gradients(device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    x = lucid.Tensor(X, dtype=lucid.Float32, requires_grad=True, device=device)
    y = Cube.apply(x)
    assert y.device == device and y.shape == (2, 3)
    np.testing.assert_allclose(y.numpy(), X ** 3, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad.tolist()), 3 * X ** 2, rtol=1e-6)


def test_gradcheck_passes_and_catches_a_wrong_rule():
    x = lucid.Tensor(X, dtype=lucid.Float64, requires_grad=True)
    assert gradcheck(Cube.apply, x)

    class WrongCube(Cube):
        """y = x³ with the factor 3 forgotten in backward."""

        def backward(self, xp, g):
            return (self.x * self.x * g,)

    with pytest.raises(GradcheckError):
        gradcheck(WrongCube.apply, x)


def test_parameters_two_inputs_and_the_module_level_apply():
    x = lucid.Tensor(X, dtype=lucid.Float64, requires_grad=True)
    z = lucid.Tensor(-X, dtype=lucid.Float64, requires_grad=True)
    y = Scale.apply(x, z, a=3.0, b=0.5)
    np.testing.assert_allclose(y.numpy(), 3.0 * X - 0.5 * X)
    np.testing.assert_allclose(lucid.ops.apply(Scale(3.0, 0.5), x, z).numpy(), y.numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, np.full((2, 3), 3.0))
    np.testing.assert_array_equal(z.grad, np.full((2, 3), 0.5))
    assert gradcheck(lambda a, b: Scale.apply(a, b, a=-2.0), x, z)


def test_flops_are_counted_forward_and_backward():
    x = lucid.Tensor(X, requires_grad=True)
    with lucid.count_flops():
        y = Cube.apply(x)
        y.sum().backward()
    assert y._op.flops == 12 and y._op.flops_bwd == 18
    assert y.cost == lucid.cost.Cost(macs=0, flops=12)


def test_an_op_of_your_own_is_not_published_and_can_be_defined_again():
    before = (set(REGISTRY), set(FUNCTIONS))

    class Cube(lucid.Op):  # a notebook cell run twice defines the class twice
        """y = x³."""

        def forward(self, xp, x):
            return x * x * x

    assert (set(REGISTRY), set(FUNCTIONS)) == before
    np.testing.assert_allclose(Cube.apply(lucid.Tensor(X)).numpy(), X ** 3)


def test_missing_rules_are_clear_errors_naming_the_op():
    class Half(lucid.Op):
        """y = x / 2."""

        def forward(self, xp, x):
            return x / 2

    x = lucid.Tensor(X, requires_grad=True)
    y = Half.apply(x)
    with pytest.raises(NotImplementedError, match=r"^Half: no backward rule: define backward"):
        y.sum().backward()
    with pytest.raises(NotImplementedError, match=r"^Half: no FLOPs rule: define forward_flops"):
        with lucid.count_flops():
            Half.apply(x)


def test_saved_inputs_are_guarded_against_in_place_changes():
    x = lucid.Tensor(X, requires_grad=True)
    a = x * 1.0
    y = Cube.apply(a)
    with lucid.no_grad():
        a.add_(1.0)
    with pytest.raises(RuntimeError, match="Cube"):
        y.sum().backward()


def test_second_derivatives_run_the_same_rule_on_lucid_ops():
    x = lucid.Tensor(X, dtype=lucid.Float64, requires_grad=True)
    (g,) = lucid.autograd.grad(Cube.apply(x).sum(), [x], create_graph=True)
    (h,) = lucid.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(np.asarray(h), 6 * X)


def test_drawn_and_stepped_like_the_catalogues_ops():
    x = lucid.Tensor(X, requires_grad=True, name="x")
    with lucid.count_flops():
        loss = Cube.apply(x).sum()
    dot = lucid_viz.draw(loss).dot()
    assert "Cube" in dot and "12 FLOPs" in dot
    stepper = lucid_viz.step_backward(loss)
    texts = " ".join(stepper.frame_text(k) for k in range(1, len(stepper) + 1))
    assert "y = x³" in texts and "dy/dx = 3x²" in texts
