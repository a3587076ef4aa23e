"""Creation functions: values and dtypes against NumPy, dtype= spellings, *_like, errors."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _same(t, want):
    want = np.asarray(want)
    assert isinstance(t, lucid.Tensor)
    assert t.shape == want.shape
    assert t.dtype == lucid.types.to_numeric_type(want.dtype), (t.dtype, want.dtype)
    np.testing.assert_array_equal(t.numpy(), want)
    assert t.is_leaf and t._op is None


@pytest.mark.parametrize("fn,ref", [(lucid.zeros, np.zeros), (lucid.ones, np.ones)])
@pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 0, 3)])
def test_zeros_ones_match_numpy(fn, ref, shape):
    _same(fn(*shape), ref(shape))
    _same(fn(shape), ref(shape))
    _same(fn(list(shape)), ref(shape))


def test_empty_has_shape_and_float64():
    t = lucid.empty(2, 3)
    assert t.shape == (2, 3) and t.dtype == lucid.Float64
    assert lucid.empty((4,), dtype=lucid.Int32).dtype == lucid.Int32


@pytest.mark.parametrize("value,dtype", [(7, lucid.Int64), (7.5, lucid.Float64),
                                          (True, lucid.types.Bool)])
def test_full_infers_dtype_from_value(value, dtype):
    t = lucid.full((2, 2), value)
    _same(t, np.full((2, 2), value))
    assert t.dtype == dtype
    _same(lucid.full(3, value), np.full(3, value))


def test_full_accepts_a_one_element_tensor():
    _same(lucid.full((2,), lucid.tensor(2.5)), np.full((2,), 2.5))


@pytest.mark.parametrize("args", [(3,), (3, 4), (4, 3, 1), (3, None, -1), (2, 5, 3)])
def test_eye_matches_numpy(args):
    _same(lucid.eye(*args), np.eye(*args))


@pytest.mark.parametrize("args", [(5,), (2, 7), (0, 1, 0.25), (5, 0, -1), (1.5, 4), (3, 3)])
def test_arange_matches_numpy(args):
    _same(lucid.arange(*args), np.arange(*args))


@pytest.mark.parametrize("args", [(0, 1), (0, 1, 5), (-2, 3, 1), (1, 0, 4), (0, 1, 0)])
def test_linspace_matches_numpy(args):
    _same(lucid.linspace(*args), np.linspace(*args))


@pytest.mark.parametrize(
    "dtype,want",
    [
        (lucid.Float32, np.float32),
        (lucid.Float16, np.float16),
        (lucid.Float, np.float64),  # bit-free: the width of NumPy's default, float64
        (lucid.Int32, np.int32),
        (lucid.Int, np.int64),
        (float, np.float64),
        (int, np.int64),
        (bool, np.bool_),
        (np.float32, np.float32),
        (np.dtype("int16"), np.int16),
        (lucid.Complex64, np.complex64),
    ],
)
def test_dtype_spellings(dtype, want):
    for t in (lucid.zeros(2, 3, dtype=dtype), lucid.ones((2,), dtype=dtype),
              lucid.full((2,), 1, dtype=dtype), lucid.eye(2, dtype=dtype),
              lucid.arange(3, dtype=dtype), lucid.linspace(0, 1, 3, dtype=dtype)):
        assert t.data.dtype == want, (t, dtype)
    _same(lucid.ones(2, dtype=dtype), np.ones(2, dtype=want))


def test_full_casts_the_value_to_the_dtype():
    _same(lucid.full((2,), 2.7, dtype=lucid.Int32), np.full((2,), 2.7).astype(np.int32))


def test_requires_grad_and_keep_grad_flags():
    t = lucid.zeros(2, 2, requires_grad=True, keep_grad=True)
    assert t.requires_grad and t.keep_grad and t.is_leaf
    (t * 2.0).backward()
    np.testing.assert_array_equal(t.grad, np.full((2, 2), 2.0))
    assert not lucid.ones(2).requires_grad
    assert lucid.arange(0.0, 1.0, 0.5, requires_grad=True).requires_grad
    assert lucid.linspace(0, 1, 3, requires_grad=True).requires_grad


def test_requires_grad_needs_a_float_dtype():
    with pytest.raises(TypeError, match=r"requires_grad=True needs a floating-point"):
        lucid.arange(3, requires_grad=True)
    with pytest.raises(TypeError, match=r"requires_grad=True needs a floating-point"):
        lucid.zeros(2, dtype=lucid.Int32, requires_grad=True)


@pytest.mark.parametrize("fn,ref", [(lucid.zeros_like, np.zeros_like),
                                    (lucid.ones_like, np.ones_like)])
@pytest.mark.parametrize("src", [np.arange(6, dtype=np.int32).reshape(2, 3),
                                 np.ones((3,), dtype=np.float32), np.zeros((), dtype=bool)])
def test_like_keeps_shape_and_dtype(fn, ref, src):
    _same(fn(lucid.Tensor(src)), ref(src))
    _same(fn(src), ref(src))  # NumPy arrays work too


def test_full_like_and_empty_like():
    a = lucid.Tensor(np.zeros((2, 3), dtype=np.float32))
    _same(lucid.full_like(a, 1.5), np.full((2, 3), 1.5, dtype=np.float32))
    _same(lucid.full_like(lucid.arange(3), 2.9), np.full(3, 2))  # cast to a's Int64
    e = lucid.empty_like(a)
    assert e.shape == (2, 3) and e.dtype == lucid.Float32


def test_like_overrides_dtype_and_sets_requires_grad():
    a = lucid.arange(4)
    t = lucid.zeros_like(a, dtype=lucid.Float32, requires_grad=True)
    assert t.dtype == lucid.Float32 and t.shape == (4,) and t.requires_grad
    assert t.device == "cpu"
    # the source's requires_grad is not inherited: a fresh leaf
    src = lucid.ones(2, requires_grad=True)
    assert not lucid.ones_like(src).requires_grad


def test_like_does_not_share_memory():
    a = lucid.ones(3)
    b = lucid.ones_like(a)
    b.data[0] = 5
    assert a.data[0] == 1


@pytest.mark.parametrize("call,match", [
    (lambda: lucid.zeros(2, -1), r"zeros: negative size -1 in shape \(2, -1\)"),
    (lambda: lucid.ones((-3,)), r"ones: negative size -3"),
    (lambda: lucid.empty(-1), r"empty: negative size -1"),
    (lambda: lucid.full((2, -2), 0.0), r"full: negative size -2"),
    (lambda: lucid.eye(-1), r"eye: N must be >= 0, got -1"),
    (lambda: lucid.eye(2, -3), r"eye: M must be >= 0, got -3"),
    (lambda: lucid.linspace(0, 1, -2), r"linspace: num must be >= 0, got -2"),
    (lambda: lucid.arange(0, 5, 0), r"arange: step must not be 0"),
])
def test_bad_sizes_raise_value_error_naming_the_function(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("call,match", [
    (lambda: lucid.zeros(2.5), r"zeros: shape entries must be ints, got 2\.5"),
    (lambda: lucid.ones(True), r"ones: shape entries must be ints, got True"),
    (lambda: lucid.eye(2.0), r"eye: N must be an int"),
    (lambda: lucid.eye(2, k=0.5), r"eye: k must be an int"),
    (lambda: lucid.linspace(0, 1, 2.5), r"linspace: num must be an int"),
])
def test_non_int_sizes_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


@pytest.mark.parametrize("fn", [
    lambda d: lucid.zeros(2, dtype=d),
    lambda d: lucid.ones(2, dtype=d),
    lambda d: lucid.empty(2, dtype=d),
    lambda d: lucid.full(2, 1, dtype=d),
    lambda d: lucid.eye(2, dtype=d),
    lambda d: lucid.arange(2, dtype=d),
    lambda d: lucid.linspace(0, 1, 2, dtype=d),
    lambda d: lucid.zeros_like(lucid.ones(2), dtype=d),
])
@pytest.mark.parametrize("dtype", ["not-a-dtype", np.str_, object])
def test_unsupported_dtype(fn, dtype):
    with pytest.raises(TypeError, match=r"Unsupported dtype"):
        fn(dtype)


def test_unknown_device():
    with pytest.raises(ValueError, match=r"Unknown device 'tpu'"):
        lucid.zeros(2, device="tpu")


def test_all_lists_the_functions():
    from lucid import creation

    assert set(creation.__all__) == {"zeros", "ones", "empty", "full", "eye", "arange",
                                     "linspace", "zeros_like", "ones_like", "full_like",
                                     "empty_like", "from_numpy", "as_tensor", "is_tensor",
                                     "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
                                     "IntTensor", "BoolTensor", "ByteTensor"}
    for name in creation.__all__:
        assert getattr(lucid, name) is getattr(creation, name)
