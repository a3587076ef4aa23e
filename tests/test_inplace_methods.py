"""In-place Tensor methods (add_, sub_, mul_, div_, pow_, clamp_, fill_, zero_, copy_): values
against NumPy on both devices, the version bump seen by backward, and every refusal (leaf that
requires grad, recorded graph, shape, dtype) leaving the tensor as it was."""

from __future__ import annotations

import numpy as np
import pytest

import lucid

DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.filterwarnings("ignore"))]
A = np.array([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]])
B = np.array([2.0, -0.5, 4.0])

CASES = [
    ("add_", lambda x, b: x.add_(b), lambda a, b: a + b),
    ("add_alpha", lambda x, b: x.add_(b, alpha=3), lambda a, b: a + 3 * b),
    ("sub_", lambda x, b: x.sub_(b), lambda a, b: a - b),
    ("sub_alpha", lambda x, b: x.sub_(b, alpha=0.5), lambda a, b: a - 0.5 * b),
    ("mul_", lambda x, b: x.mul_(b), lambda a, b: a * b),
    ("div_", lambda x, b: x.div_(b), lambda a, b: a / b),
    ("pow_", lambda x, b: x.pow_(2), lambda a, b: a**2),
    ("clamp_", lambda x, b: x.clamp_(-1.0, 1.0), lambda a, b: np.clip(a, -1, 1)),
    ("clamp_min", lambda x, b: x.clamp_(min=0.0), lambda a, b: np.clip(a, 0, None)),
    ("fill_", lambda x, b: x.fill_(7.5), lambda a, b: np.full_like(a, 7.5)),
    ("zero_", lambda x, b: x.zero_(), lambda a, b: np.zeros_like(a)),
    ("copy_", lambda x, b: x.copy_(b), lambda a, b: np.broadcast_to(b, a.shape)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("label,call,ref", CASES, ids=[c[0] for c in CASES])
def test_values_version_and_identity(label, call, ref, device):
    x = lucid.Tensor(A, device=device)
    b = lucid.Tensor(B, device=device)
    old = x.data
    out = call(x, b)
    assert out is x and x.device == device and x.dtype == lucid.Float64
    assert x._version == 1
    np.testing.assert_allclose(x.numpy(), ref(A, B), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(old), A)  # the old array is untouched


def test_copy_takes_its_own_array_and_casts():
    src = lucid.Tensor(B)
    x = lucid.zeros(3, dtype=lucid.Int64)
    x.copy_(src)
    assert x.dtype == lucid.Int64 and x.tolist() == [2, 0, 4]
    y = lucid.zeros(3)
    y.copy_(src)
    assert not np.shares_memory(y.numpy(), src.numpy())


def test_copy_moves_across_devices():
    x = lucid.zeros(3, device="gpu")
    x.copy_(lucid.Tensor(B))
    assert x.device == "gpu"
    np.testing.assert_allclose(x.numpy(), B)


def test_backward_sees_the_version_bump():
    w = lucid.Tensor(A, requires_grad=True)
    c = lucid.Tensor(A)
    y = (w * c).sum()
    c.mul_(2)  # Mul saved c for backward
    with pytest.raises(RuntimeError, match=r"Mul: input 1 .* modified in place .*version 0 at "
                                           r"forward, 1 now"):
        y.backward()


@pytest.mark.parametrize("call", [lambda w: w.add_(1), lambda w: w.zero_(),
                                  lambda w: w.fill_(2.0), lambda w: w.mul_(2),
                                  lambda w: w.copy_(lucid.Tensor(A)),
                                  lambda w: w.clamp_(0.0)])
def test_leaf_that_requires_grad_is_refused_and_unchanged(call):
    w = lucid.Tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^\w+_: a leaf Variable that requires grad is "
                                           r"being used in an in-place operation"):
        call(w)
    np.testing.assert_array_equal(w.numpy(), A)
    assert w._version == 0
    with lucid.no_grad():  # how optimizers update parameters
        call(w)
    assert w._version == 1


def test_graph_results_and_grad_operands_are_refused():
    w = lucid.Tensor(A, requires_grad=True)
    y = w * 2
    with pytest.raises(RuntimeError, match=r"^add_: in-place update inside a recorded graph"):
        y.add_(1)
    x = lucid.Tensor(A)
    with pytest.raises(RuntimeError, match=r"^mul_: in-place update inside a recorded graph"):
        x.mul_(w)
    np.testing.assert_array_equal(x.numpy(), A)


def test_shape_and_dtype_refusals_leave_the_tensor_unchanged():
    x = lucid.Tensor(B)
    with pytest.raises(ValueError, match=r"^add_: the result has shape \(2,3\) but the tensor "
                                         r"\(3,\); an in-place update cannot change the shape"):
        x.add_(lucid.Tensor(A))
    i = lucid.Tensor([1, 2, 3])
    with pytest.raises(TypeError, match=r"^div_: the result is Float64 but the tensor is "
                                        r"Int64.*same_kind"):
        i.div_(2)
    with pytest.raises(TypeError, match=r"^fill_: value 1.5 \(Float64\) does not fit the "
                                        r"tensor's Int64"):
        i.fill_(1.5)
    with pytest.raises(TypeError, match=r"^fill_: value must be a number, got str"):
        i.fill_("1")
    assert x.tolist() == B.tolist() and i.tolist() == [1, 2, 3]
    assert x._version == 0 and i._version == 0
    i.add_(2)  # an int into an int tensor fits
    assert i.tolist() == [3, 4, 5]


# -- one path: operators, x[i] = v and the methods share the dtype rule and the version bump ----

@pytest.mark.parametrize("update", [lambda x: x.add_(2.5), lambda x: x.__iadd__(2.5),
                                    lambda x: x.__isub__(0.5), lambda x: x.__imul__(1.5),
                                    lambda x: x.__itruediv__(2)],
                         ids=["add_", "+=", "-=", "*=", "/="])
def test_float_into_an_integer_tensor_is_refused_by_every_inplace_form(update):
    x = lucid.tensor([1, 2, 3])
    with pytest.raises(TypeError, match=r"Float64 values do not fit Int64 \(NumPy's same_kind "
                                        r"rule\)"):
        update(x)
    assert x.tolist() == [1, 2, 3] and x._version == 0


def test_operators_and_setitem_bump_the_version_as_the_methods_do():
    x = lucid.tensor([1, 2, 3])
    x += 2
    x *= 3
    x[1] = 0
    x.sub_(1)
    assert x.tolist() == [8, -1, 14] and x._version == 4
    assert x.dtype == lucid.Int64
    x[0] = 7.9  # x[i] = v casts as copy_ does (NumPy and PyTorch alike)
    assert x.tolist() == [7, -1, 14] and x._version == 5
