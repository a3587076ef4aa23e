"""Indexing behaviour the spec table cannot express: x[...] = v, versions, accumulation."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def test_gradient_of_repeated_indices_accumulates():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 1]].backward()
    np.testing.assert_array_equal(x.grad, [2.0, 1.0, 0.0])


def test_gradient_of_repeated_tensor_index_and_gather_accumulate():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    i = lucid.tensor([1, 1, 0, 1])
    (x[i] * 2.0).backward()
    np.testing.assert_array_equal(x.grad, [[2.0, 2.0], [6.0, 6.0]])
    x.grad = None
    lucid.gather(x, 1, lucid.tensor([[0, 0, 0], [1, 0, 1]])).backward()
    np.testing.assert_array_equal(x.grad, [[3.0, 0.0], [1.0, 2.0]])


def test_full_integer_index_gives_a_0d_tensor_backed_by_an_array():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x[1, 0]
    assert y.shape == () and isinstance(y.data, np.ndarray)
    assert y.item() == 3.0
    y.backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 0.0], [1.0, 0.0]])


def test_numpy_integer_and_array_indices():
    x = lucid.arange(10.0)
    assert x[np.int64(3)].item() == 3.0
    np.testing.assert_array_equal(x[np.array([1, -1])].numpy(), [1.0, 9.0])


def test_iteration_uses_getitem():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0]]
    (rows[0] * rows[1]).backward()
    np.testing.assert_array_equal(x.grad, [[3.0, 4.0], [1.0, 2.0]])


def test_no_graph_without_grad():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with lucid.no_grad():
        y = x[0]
    assert not y.requires_grad and y._op is None


# -- x[index] = value ----------------------------------------------------------------------


def test_setitem_assigns_and_bumps_the_version():
    x = lucid.arange(5.0)
    assert x._version == 0
    x[0] = 5
    assert x._version == 1
    x[[1, 3]] = lucid.tensor([10.0, 30.0])
    x[x > 20] = -1.0
    assert x._version == 3
    assert x.tolist() == [5.0, 10.0, 2.0, -1.0, 4.0]
    assert x.dtype == lucid.Float64


def test_setitem_broadcasts_and_keeps_dtype():
    x = lucid.zeros(2, 3, dtype=lucid.Int32)
    x[:, 1:] = 7.9  # cast to the tensor's dtype, as NumPy and PyTorch do
    assert x.dtype == lucid.Int32
    assert x.tolist() == [[0, 7, 7], [0, 7, 7]]
    x[0] = lucid.tensor([1, 2, 3])
    assert x.tolist() == [[1, 2, 3], [0, 7, 7]]


def test_setitem_leaves_earlier_views_untouched():
    x = lucid.arange(4.0)
    view = x[1:3]
    x[1] = 100.0
    assert view.tolist() == [1.0, 2.0]
    assert x.tolist() == [0.0, 100.0, 2.0, 3.0]


def test_setitem_refused_in_grad_mode_when_grad_is_required():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"__setitem__: a leaf Variable that requires grad is "
                                           r"being used in an in-place operation \(shape "
                                           r"\(3,\)\)\..*no_grad"):
        x[0] = 5.0
    assert x._version == 0 and x.tolist() == [1.0, 2.0, 3.0]
    plain = lucid.zeros(3)
    plain[0] = x[1]  # the value requires grad: recorded, as PyTorch records it
    (plain * lucid.tensor([2.0, 1.0, 1.0])).sum().backward()
    assert plain.requires_grad and x.grad.tolist() == [0.0, 2.0, 0.0]


def test_setitem_allowed_under_no_grad():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lucid.no_grad():
        x[0] = 5.0
    assert x.tolist() == [5.0, 2.0, 3.0] and x._version == 1


def test_setitem_after_forward_makes_backward_fail():
    w = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = lucid.tensor([4.0, 5.0, 6.0], requires_grad=True)
    y = w * x  # mul saves x for dy/dw
    with lucid.no_grad():
        x[0] = 5.0
    with pytest.raises(RuntimeError, match=r"modified in place.*version 0 at forward, 1 now"):
        y.backward()


def test_getitem_saves_nothing_so_later_setitem_is_harmless():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[1:]
    with lucid.no_grad():
        x[0] = 9.0
    y.backward()  # getitem's backward needs only x's shape
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 1.0])


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: x.__setitem__(5, 1.0), IndexError,
     r"__setitem__: index 5 is out of bounds for axis 0 of size 3"),
    (lambda x: x.__setitem__(0.5, 1.0), TypeError, r"__setitem__: index 0\.5 is a float"),
    (lambda x: x.__setitem__(slice(0, 2), [1.0, 2.0, 3.0]), ValueError,
     r"__setitem__: cannot assign a value of shape \(3,\) to the selection of shape \(2,\)"),
])
def test_setitem_errors(call, exc, match):
    x = lucid.zeros(3)
    with pytest.raises(exc, match=match):
        call(x)
    assert x._version == 0


# -- where, masked_fill, sort, topk ---------------------------------------------------------


def test_where_scalar_keeps_the_tensor_dtype_and_accepts_list_condition():
    x = lucid.tensor([1.0, -2.0, 3.0], dtype=lucid.Float32, requires_grad=True)
    y = lucid.where([True, False, True], x, 0.0)
    assert y.dtype == lucid.Float32
    assert y.tolist() == [1.0, 0.0, 3.0]
    y.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 1.0])


def test_where_broadcast_gradients_are_summed_down():
    a = lucid.tensor([1.0, 2.0], requires_grad=True)
    b = lucid.tensor(0.5, requires_grad=True)
    cond = lucid.tensor([[True, False], [True, True], [False, False]])
    lucid.where(cond, a, b).backward()
    np.testing.assert_array_equal(a.grad, [2.0, 1.0])
    assert b.grad == 3.0


def test_masked_fill_gradient_is_zero_where_filled():
    x = lucid.tensor([[1.0, -2.0], [-3.0, 4.0]], requires_grad=True)
    y = x.masked_fill(x < 0, 0.0)
    assert y.tolist() == [[1.0, 0.0], [0.0, 4.0]]
    y.backward()
    np.testing.assert_array_equal(x.grad, [[1.0, 0.0], [0.0, 1.0]])


def test_masked_fill_casts_the_value_to_the_dtype():
    x = lucid.arange(4)
    y = x.masked_fill(x > 1, 9.7)
    assert y.dtype == lucid.Int64 and y.tolist() == [0, 1, 9, 9]


def test_sort_indices_are_int64_without_grad():
    x = lucid.tensor([3.0, 1.0, 2.0], requires_grad=True)
    values, indices = x.sort()
    assert values.tolist() == [1.0, 2.0, 3.0]
    assert indices.tolist() == [1, 2, 0] and indices.dtype == lucid.Int64
    assert values.requires_grad and not indices.requires_grad
    (values * lucid.tensor([1.0, 10.0, 100.0])).backward()
    np.testing.assert_array_equal(x.grad, [100.0, 1.0, 10.0])


def test_sort_bool_and_int_descending():
    b = lucid.tensor([False, True, False])
    assert lucid.sort(b, descending=True)[0].tolist() == [True, False, False]
    assert lucid.argsort(lucid.tensor([2, 9, 4]), descending=True).tolist() == [1, 2, 0]


def test_topk_values_indices_and_gradient():
    x = lucid.tensor([[0.5, 3.0, 1.0, 2.0]], requires_grad=True)
    values, indices = lucid.topk(x, 2)
    assert values.tolist() == [[3.0, 2.0]] and indices.tolist() == [[1, 3]]
    values.backward()
    np.testing.assert_array_equal(x.grad, [[0.0, 1.0, 0.0, 1.0]])
    empty, idx = lucid.topk(x, 0)
    assert empty.shape == (1, 0) and idx.shape == (1, 0)


def test_argsort_records_no_graph_but_counts_flops():
    x = lucid.tensor([3.0, 1.0, 2.0, 0.0], requires_grad=True)
    assert not lucid.argsort(x).requires_grad
    with lucid.count_flops():
        idx = lucid.argsort(x)
    assert idx.flops == 8  # round(4·log2 4)


def test_gpu_index_arrays_beside_reversed_slices_backward_and_assignment():
    """``x[idx, :, :, ::-1]`` on "gpu": MLX's updates misread a reversed slice beside index
    arrays (a raw broadcast error, or values written to the wrong places), so the backward
    pass and ``x[...] = v`` go through flat positions there too.  Checked against NumPy."""
    import itertools

    a = np.arange(36.0).reshape(3, 3, 2, 2)
    slices = [slice(None), slice(None, None, -1), slice(2, 0, -1), slice(0, 2)]
    for first in (np.array([True, False, True]), np.array([0, 2])):
        for rest in itertools.product(slices, repeat=3):
            index = (first, *rest)
            lucid_index = (lucid.Tensor(first, device="gpu"), *rest)
            x = lucid.Tensor(a, device="gpu", requires_grad=True)
            y = x[lucid_index]
            w = np.arange(y.size, dtype=float).reshape(y.shape)
            (y * lucid.Tensor(w, device="gpu")).sum().backward()
            want = np.zeros_like(a)
            np.add.at(want, index, w)
            np.testing.assert_array_equal(np.asarray(x.grad), want, err_msg=str(index))
            z = lucid.Tensor(a.copy(), device="gpu")
            z[lucid_index] = lucid.Tensor(w, device="gpu")
            want = a.copy()
            want[index] = w
            np.testing.assert_array_equal(z.numpy(), want, err_msg=str(index))
