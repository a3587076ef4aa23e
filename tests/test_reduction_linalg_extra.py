"""Reduction and linalg behaviour the spec table cannot state: tie rules (finite differences
are meaningless at a tie), exact cumprod gradients through zeros, skipped gradients and the
FLOPs they save, dtypes of the non-differentiable reductions, reflected ``@``."""

from __future__ import annotations

import numpy as np
import pytest

import lucid


def _grad_of(fn, x, seed=None):
    t = lucid.Tensor(np.asarray(x, dtype=np.float64), requires_grad=True)
    out = fn(t)
    out.backward(seed)
    return t.grad


@pytest.mark.parametrize("name", ["max", "min"])
def test_tied_extrema_split_the_gradient_evenly(name):
    x = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 0.0, -1.0, -1.0], [5.0, 5.0, 5.0, 5.0]])
    if name == "min":
        x = -x
    fn = getattr(lucid, name)
    g = _grad_of(lambda t: fn(t, axis=1), x, seed=np.array([2.0, 1.0, 4.0]))
    want = np.array([[0.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    np.testing.assert_array_equal(g, want)
    # over every axis: the four tied extrema (row 2) share one unit of gradient
    g = _grad_of(lambda t: fn(t), x)
    assert g.sum() == 1.0
    np.testing.assert_array_equal(g[2], np.full(4, 0.25))
    np.testing.assert_array_equal(g[:2], 0.0)


def test_tied_max_with_keepdims_and_axis_tuple():
    x = np.array([[[1.0, 2.0], [2.0, 0.0]], [[2.0, 2.0], [1.0, 1.0]]])
    g = _grad_of(lambda t: lucid.max(t, axis=(1, 2), keepdims=True), x)
    np.testing.assert_array_equal(g, [[[0.0, 0.5], [0.5, 0.0]], [[0.5, 0.5], [0.0, 0.0]]])


def _cumprod_grad_by_definition(x, g, axis):
    """dL/dx_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j, by brute force along ``axis``."""
    x = np.moveaxis(x, axis, -1)
    g = np.moveaxis(g, axis, -1)
    out = np.zeros_like(x)
    n = x.shape[-1]
    for k in range(n):
        for i in range(k, n):
            factors = np.delete(x[..., : i + 1], k, axis=-1)
            out[..., k] += g[..., i] * np.prod(factors, axis=-1)
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumprod_gradient_is_exact_through_zeros(axis):
    x = np.array([
        [0.0, 2.0, 0.0, 3.0, 1.5],
        [2.0, 0.0, 4.0, 0.5, 0.0],
        [1.0, 3.0, -2.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0],
        [1.25, -0.5, 2.0, 3.0, 0.75],
    ])
    g = np.random.default_rng(0).standard_normal(x.shape)
    got = _grad_of(lambda t: lucid.cumprod(t, axis=axis), x, seed=g)
    want = _cumprod_grad_by_definition(x, g, axis)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("name", ["argmax", "argmin", "any", "all"])
def test_non_differentiable_reductions(name):
    x = lucid.Tensor(np.array([[1.0, -2.0], [0.0, 3.0]]), requires_grad=True)
    out = getattr(lucid, name)(x, axis=0)
    assert not out.requires_grad
    want = lucid.Int64 if name.startswith("arg") else bool
    assert out.dtype == lucid.types.as_numeric(want)


def test_matmul_skips_the_gradient_nobody_needs():
    a = lucid.Tensor(np.ones((3, 4)), requires_grad=True)
    b = lucid.Tensor(np.ones((4, 5)))
    with lucid.count_flops():
        y = lucid.matmul(a, b)
    assert y._op.flops == 60
    assert y._op.flops_bwd == 60  # one product (g @ b^T), not two
    y.backward()
    np.testing.assert_array_equal(a.grad, np.full((3, 4), 5.0))
    assert b.grad is None


def test_einsum_flops_count_only_needed_gradients():
    a = lucid.Tensor(np.ones((2, 3)))
    b = lucid.Tensor(np.ones((3, 4)), requires_grad=True)
    with lucid.count_flops():
        y = lucid.einsum("ij,jk->ik", a, b)
    assert (y._op.flops, y._op.flops_bwd) == (24, 24)


def test_reflected_matmul():
    b = lucid.Tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    y = [[1.0, 2.0, 3.0]] @ b
    np.testing.assert_array_equal(y.numpy(), [[16.0, 22.0]])
    y.backward()
    np.testing.assert_array_equal(b.grad, [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])


def test_matmul_batch_gradient_is_summed_to_each_operand():
    a = lucid.Tensor(np.ones((2, 1, 3, 4)), requires_grad=True)
    b = lucid.Tensor(np.ones((5, 4, 2)), requires_grad=True)
    (a @ b).backward()
    assert a.grad.shape == (2, 1, 3, 4) and b.grad.shape == (5, 4, 2)
    np.testing.assert_array_equal(a.grad, np.full((2, 1, 3, 4), 5 * 2.0))  # 5 batches, n=2
    np.testing.assert_array_equal(b.grad, np.full((5, 4, 2), 2 * 3.0))  # 2 batches, m=3


def test_reduction_results_are_float_where_numpy_is():
    ints = lucid.Tensor(np.arange(12).reshape(3, 4))
    assert lucid.sum(ints).dtype == lucid.Int64
    assert lucid.mean(ints, axis=0).dtype == lucid.Float64
    assert lucid.max(ints).item() == 11
