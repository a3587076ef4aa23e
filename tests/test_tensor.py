"""Tensor construction, properties, conversions, errors, devices and FLOPs bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def test_constructor_metadata():
    x = lucid.Tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    assert x.shape == (1, 3) and x.ndim == 2 and x.size == 3 and isinstance(x.size, int)
    assert x._prev == () and x._op is None and x.grad is None
    assert x.requires_grad and not x.keep_grad and x.is_leaf
    y = x * 2
    assert not y.is_leaf and y._prev == (x, y._prev[1]) and type(y._op).__name__ == "Mul"
    assert y.op_name == "Mul"


def test_tensor_function_and_copy_semantics():
    a = np.array([1.0, 2.0])
    t = lucid.tensor(a)
    a[0] = 100.0
    assert t.numpy()[0] == 1.0  # construction copies
    u = lucid.Tensor(t)
    assert u.data is not t.data and u.tolist() == [1.0, 2.0]


def test_item_type_follows_dtype_not_value():
    assert type(lucid.Tensor(2.0).item()) is float
    assert type(lucid.Tensor(2).item()) is int
    assert type(lucid.Tensor(True).item()) is bool
    assert type(lucid.Tensor([3.0]).item()) is float
    with pytest.raises(ValueError, match=r"item\(\): only a tensor with one element.*\(2,\)"):
        lucid.Tensor([1.0, 2.0]).item()


def test_unknown_device_is_a_clear_error():
    msg = r"Unknown device 'tpu': expected one of \('cpu', 'gpu'\)"
    with pytest.raises(ValueError, match=msg):
        lucid.Tensor([1.0], device="tpu")
    with pytest.raises(ValueError, match="Unknown device"):
        lucid.Tensor([1.0]).to("tpu")


def test_requires_grad_needs_a_float_dtype():
    with pytest.raises(TypeError, match=r"requires_grad=True needs a floating-point or complex "
                                        r"dtype, got Int64.*dtype=lucid.Float32"):
        lucid.Tensor([1, 2], requires_grad=True)
    assert lucid.Tensor([1, 2], requires_grad=True, dtype=lucid.Float32).requires_grad


def test_to_same_device_is_identity_and_cpu_method():
    x = lucid.Tensor([1.0])
    assert x.to("cpu") is x and x.cpu() is x
    assert x.eval() is x


def test_free_tensors():
    assert lucid.Tensor([1, 2]).is_free  # from a list
    assert lucid.Tensor(3.0).is_free  # from a scalar
    arr = lucid.Tensor(np.ones(2))
    assert not arr.is_free
    assert arr.free() is arr and arr.is_free
    assert (lucid.Tensor([1.0]) + lucid.Tensor([2.0])).is_free  # free op free
    assert not (lucid.Tensor([1.0]) + lucid.Tensor(np.ones(1))).is_free


def test_detach_cuts_the_graph():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d._op is None and d.is_leaf
    np.testing.assert_allclose(d.numpy(), [2.0, 4.0])


def test_bool_len_iter_and_numpy_interop():
    x = lucid.Tensor([[1.0, 2.0], [3.0, 4.0]])
    assert len(x) == 2
    assert bool(lucid.Tensor([1.0]))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    np.testing.assert_allclose(np.asarray(x), x.numpy())
    y = np.float32(2.0) * lucid.Tensor(np.ones(2, np.float32))
    assert isinstance(y, lucid.Tensor)  # NumPy hands the operator back to Tensor


def test_repr_is_deterministic_and_has_no_address():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    assert repr(x) == "Tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == "Tensor([2., 4.], op=Mul)"
    assert repr(lucid.Tensor(np.ones(2, np.float32))) == "Tensor([1., 1.], dtype=Float32)"
    assert "0x" not in repr(x * 2)


def test_reflected_operators():
    x = lucid.Tensor([1.0, 2.0])
    np.testing.assert_allclose((1 - x).numpy(), [0.0, -1.0])
    np.testing.assert_allclose((2 / x).numpy(), [2.0, 1.0])
    np.testing.assert_allclose((2**x).numpy(), [2.0, 4.0])
    np.testing.assert_allclose((x**2).numpy(), [1.0, 4.0])
    np.testing.assert_allclose((-x).numpy(), [-1.0, -2.0])
    assert (x == lucid.Tensor([1.0, 0.0])).tolist() == [True, False]


def test_pow_with_constant_exponent_has_clean_gradient():
    x = lucid.Tensor([-2.0, 0.0, 3.0], requires_grad=True)
    with np.errstate(all="raise"):  # no log of a negative number for the constant exponent
        (x**2).backward()
    np.testing.assert_allclose(x.grad, [-4.0, 0.0, 6.0])


def test_op_argument_of_unknown_type_is_named():
    with pytest.raises(TypeError, match=r"add: cannot use an argument of type dict"):
        lucid.add(lucid.Tensor([1.0]), {"a": 1})


# -- FLOPs ----------------------------------------------------------------------------------


def test_count_flops_nests_and_restores():
    assert not lucid.flops_enabled()
    with lucid.count_flops():
        assert lucid.flops_enabled()
        with lucid.count_flops():
            assert lucid.flops_enabled()
        assert lucid.flops_enabled()
    assert not lucid.flops_enabled()


def test_flops_sum_each_node_once_and_keep_graph_under_no_grad():
    x = lucid.Tensor(np.ones((3, 4)))
    with lucid.no_grad(), lucid.count_flops():
        a = lucid.exp(x)  # 12
        y = a * a + a  # mul 12, add 12 -- a is shared, counted once
    assert y.flops == 36
    assert not y.requires_grad and y._op is not None  # graph kept for counting


def test_flops_off_records_nothing():
    x = lucid.Tensor(np.ones(3), requires_grad=True)
    y = lucid.exp(x)
    assert y.flops == 0
    assert not hasattr(y._op, "flops") or y._op.flops is None


def test_seed_002_style_flops_on_matmul_chain():
    w = lucid.Tensor(np.ones((4, 5)))
    x = lucid.Tensor(np.ones((3, 4)))
    with lucid.count_flops():
        y = lucid.tanh(x @ w)
    assert y.flops == 3 * 4 * 5 + 3 * 5


def test_bitwise_operators_have_reflected_and_in_place_forms():
    """``True | mask`` and ``3 ^ ints`` (a Python value on the left) work as in NumPy and
    PyTorch, and ``x &= 3`` updates ``x``."""
    ints = np.array([1, 2, 6])
    mask = np.array([True, False, True])
    for device in ("cpu", "gpu"):
        i, m = lucid.Tensor(ints, device=device), lucid.Tensor(mask, device=device)
        assert (True | m).tolist() == (True | mask).tolist()
        assert (False & m).tolist() == (False & mask).tolist()
        assert (3 ^ i).tolist() == (3 ^ ints).tolist()
        assert (6 & i).tolist() == (6 & ints).tolist()
        j = lucid.Tensor(ints.copy(), device=device)
        j &= 3
        assert j.tolist() == (ints & 3).tolist()
        with pytest.raises(TypeError, match="^bitwise_and: needs integer or Bool"):
            2.5 & i  # noqa: B018


def test_the_percent_operator_is_pythons_and_numpys_remainder():
    """``x % y`` (and ``7 % x``, ``x %= 3``) as Python, NumPy and PyTorch: the sign of the
    divisor.  It had no op: Python's bare "unsupported operand" error."""
    a, b = np.array([-5.5, 5.0, 7.25, -3.0]), np.array([2.0, -3.0, 2.0, 1.5])
    ints = np.array([7, -7, 4])
    for device in ("cpu", "gpu"):
        x = lucid.Tensor(a, device=device, requires_grad=True)
        y = lucid.Tensor(b, device=device, requires_grad=True)
        r = x % y
        np.testing.assert_array_equal(r.numpy(), np.remainder(a, b))
        r.sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad), np.ones(4))
        np.testing.assert_array_equal(np.asarray(y.grad), -np.floor_divide(a, b))
        i = lucid.Tensor(ints, device=device)
        assert (i % 3).tolist() == (ints % 3).tolist()
        assert (7 % i).tolist() == (7 % ints).tolist()
        i %= 3
        assert i.tolist() == (ints % 3).tolist() and i.dtype == lucid.Int64
