"""Lucid 2.x's spellings keep working beside PyTorch's, and where the two disagree the
decision in the README's "Coming from PyTorch" table holds: GELU, clip without bounds,
histogram layouts, rounded division, and the einops einsum with the pattern first."""

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.einops import einsum as einops_einsum

DEVICES = ["cpu", "gpu"]

A = np.array([[7.0, -7.0, 5.5], [-5.5, 0.0, 9.0]])
B = np.array([[2.0, 2.0, -2.0], [2.0, 3.0, -4.0]])


def _numbers(x):
    return np.asarray(x.data, dtype=np.float64) if isinstance(x, lucid.Tensor) else np.asarray(x)


# ------------------------------------------------------------------------------------------
# division rounded as torch.div does; Lucid 2.x's floor=True


@pytest.mark.parametrize("device", DEVICES)
def test_div_rounding_modes_match_numpy_on_floats_and_integers(device):
    a, b = lucid.tensor(A, device=device), lucid.tensor(B, device=device)
    np.testing.assert_array_equal(_numbers(lucid.div(a, b, rounding_mode="floor")),
                                  np.floor(A / B))
    np.testing.assert_array_equal(_numbers(lucid.div(a, b, rounding_mode="trunc")),
                                  np.trunc(A / B))
    np.testing.assert_allclose(_numbers(lucid.div(a, b)), A / B, rtol=1e-12)
    ia, ib = np.array([[7, -7, 5], [-5, 0, 9]]), np.array([[2, 2, -2], [2, 3, -4]])
    ta, tb = lucid.tensor(ia, device=device), lucid.tensor(ib, device=device)
    trunc = lucid.div(ta, tb, rounding_mode="trunc")
    assert trunc.dtype == ta.dtype  # an integer quotient stays integer, as in PyTorch
    np.testing.assert_array_equal(_numbers(trunc), np.trunc(ia / ib))
    np.testing.assert_array_equal(_numbers(lucid.div(ta, tb, floor=True)), ia // ib)
    np.testing.assert_array_equal(_numbers(lucid.floor_divide(ta, tb)), ia // ib)
    np.testing.assert_array_equal(_numbers(ta.div(tb, rounding_mode="floor")), ia // ib)


def test_rounded_division_has_a_zero_gradient():
    a = lucid.tensor(A, requires_grad=True)
    for mode in ("floor", "trunc"):
        a.grad = None
        lucid.div(a, 2.0, rounding_mode=mode).sum().backward()
        np.testing.assert_array_equal(a.grad, np.zeros_like(A))


def test_div_refuses_an_unknown_or_contradictory_rounding_mode():
    a = lucid.tensor(A)
    with pytest.raises(ValueError, match=r"div: rounding_mode must be None, 'trunc' or 'floor'"):
        lucid.div(a, 2.0, rounding_mode="round")
    with pytest.raises(ValueError, match=r"div: floor=True and rounding_mode='trunc' disagree"):
        lucid.div(a, 2.0, rounding_mode="trunc", floor=True)


# ------------------------------------------------------------------------------------------
# clip with no bound is a copy (NumPy 2, Lucid 2.x); clamp with none raises (PyTorch)


@pytest.mark.parametrize("device", DEVICES)
def test_clip_without_bounds_is_a_differentiable_copy(device):
    x = lucid.tensor(A, requires_grad=True, device=device)
    y = lucid.clip(x)
    np.testing.assert_array_equal(_numbers(y), A)
    (y * lucid.tensor(B, device=device)).sum().backward()
    np.testing.assert_array_equal(_numbers(x.grad), B)


def test_clamp_without_bounds_raises_as_pytorch():
    with pytest.raises(ValueError, match="clamp: give min, max or both"):
        lucid.clamp(lucid.tensor(A))


# ------------------------------------------------------------------------------------------
# keyword names of Lucid 2.x


def test_unique_takes_sorted_and_returns_sorted_values():
    x = lucid.tensor([3, 1, 3, 2, 1])
    values, inverse = lucid.unique(x, sorted=True, return_inverse=True)
    np.testing.assert_array_equal(values.data, [1, 2, 3])
    np.testing.assert_array_equal(values.data[inverse.data], x.data)
    np.testing.assert_array_equal(lucid.unique(x, False).data, [1, 2, 3])


def test_normalize_takes_lucid2_names_ord_and_axis():
    x = lucid.tensor(A)
    want = A / np.maximum(np.sum(np.abs(A) ** 3, axis=0, keepdims=True) ** (1 / 3), 1e-12)
    np.testing.assert_allclose(F.normalize(x, ord=3, axis=0).data, want, rtol=1e-12)
    np.testing.assert_allclose(F.normalize(x, p=3, dim=0).data, want, rtol=1e-12)


@pytest.mark.parametrize("pattern", ["ij,jk->ik", "bi,bj->bij", "bi,bj"])
def test_einops_einsum_with_the_pattern_first_is_lucid_einsum(pattern):
    rng = np.random.default_rng(0)
    left, right = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    a = lucid.tensor(left, requires_grad=True)
    out = einops_einsum(pattern, a, lucid.tensor(right))
    np.testing.assert_allclose(out.data, np.einsum(pattern, left, right), rtol=1e-12)
    out.sum().backward()
    ones = np.ones_like(np.einsum(pattern, left, right))
    step = 1e-6  # the gradient against central differences of the NumPy reference
    bump = np.zeros_like(left)
    bump[1, 2] = step
    numeric = (np.sum(np.einsum(pattern, left + bump, right) * ones)
               - np.sum(np.einsum(pattern, left - bump, right) * ones)) / (2 * step)
    assert math.isclose(a.grad[1, 2], numeric, rel_tol=1e-6)


def test_einops_einsum_with_the_pattern_last_keeps_named_axes():
    rng = np.random.default_rng(1)
    left, right = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    out = einops_einsum(lucid.tensor(left), lucid.tensor(right), "rows k, k cols -> rows cols")
    np.testing.assert_allclose(out.data, left @ right, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# meanings decided for PyTorch (README table)


def test_gelu_is_exact_by_default_and_tanh_on_request():
    x = np.linspace(-3, 3, 13)
    erf = np.vectorize(math.erf)
    exact = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    u = math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)
    tanh = 0.5 * x * (1 + np.tanh(u))
    np.testing.assert_allclose(nn.GELU()(lucid.tensor(x)).data, exact, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(nn.GELU(approximate="tanh")(lucid.tensor(x)).data, tanh,
                               rtol=1e-12, atol=1e-15)


def test_histograms_keep_numpys_layout():
    x = np.array([0.1, 0.4, 0.6, 1.2, 1.9, 1.9])
    counts, edges = lucid.histogram(lucid.tensor(x), bins=4, range=(0.0, 2.0))
    want_counts, want_edges = np.histogram(x, bins=4, range=(0.0, 2.0))
    assert edges.shape == (5,)
    np.testing.assert_array_equal(counts.data, want_counts)
    np.testing.assert_allclose(edges.data, want_edges)
    y = np.array([0.0, 1.0, 0.5, 0.2, 0.9, 0.3])
    result = lucid.histogram2d(lucid.tensor(x), lucid.tensor(y), bins=[2, 2],
                               range=[[0.0, 2.0], [0.0, 1.0]])
    assert len(result) == 3
    want = np.histogram2d(x, y, bins=[2, 2], range=[[0.0, 2.0], [0.0, 1.0]])
    for got, expected in zip(result, want):
        np.testing.assert_allclose(got.data, expected)
