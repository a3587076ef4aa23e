"""PyTorch's numbers at the edges: fully masked attention rows, zero variance, attention
without features, empty products, derivatives at exactly 0."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid import nn
from lucid.autograd import grad

DEVICES = ["cpu", "gpu"]


def _t(a, device, grad_=True):
    return lucid.Tensor(np.asarray(a, dtype=np.float64), requires_grad=grad_, device=device)


def _softmax_attention(q, k, v, allowed):
    """NumPy float64 reference; a query with no allowed key gets 0 (PyTorch's answer)."""
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    s = np.where(allowed, s, -np.inf)
    dead = ~allowed.any(axis=-1, keepdims=True)
    s = np.where(dead, 0.0, s)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = np.where(dead, 0.0, w / w.sum(axis=-1, keepdims=True))
    return w @ v


# -- 10: a query whose keys are all masked ---------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_a_fully_masked_query_row_gives_zeros_and_finite_gradients(device):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    allowed = np.ones((2, 3, 3), bool)
    allowed[0, 1] = False  # query 1 of batch 0 may attend to nothing
    tq, tk, tv = (_t(a, device) for a in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=lucid.Tensor(allowed, device=device))
    np.testing.assert_allclose(out.numpy(), _softmax_attention(q, k, v, allowed), atol=1e-5)
    out.sum().backward()
    for t in (tq, tk, tv):
        assert np.isfinite(np.array(t.grad)).all()
    np.testing.assert_array_equal(np.array(tq.grad)[0, 1], 0.0)  # the dead row's query


@pytest.mark.parametrize("device", DEVICES)
def test_left_padding_with_a_causal_mask_trains_without_nan(device):
    # a batch padded on the left: the first query of the padded sequence sees only padding
    lucid.random.seed(0)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                       batch_first=True).to(device)
    x = lucid.Tensor(np.random.default_rng(1).standard_normal((2, 4, 8)).astype(np.float32),
                     device=device)
    pad = lucid.Tensor(np.array([[True, True, False, False], [False] * 4]), device=device)
    causal = lucid.Tensor(np.triu(np.ones((4, 4), bool), 1), device=device)  # True = blocked
    y = layer(x, src_mask=causal, src_key_padding_mask=pad)
    loss = y[:, 2:].sum()  # the real tokens
    loss.backward()
    assert np.isfinite(loss.item())
    for name, p in layer.named_parameters():
        assert np.isfinite(np.array(p.grad)).all(), name
    mha = nn.MultiheadAttention(8, 2, batch_first=True).to(device)
    out, _ = mha(x, x, x, key_padding_mask=pad, attn_mask=causal, need_weights=False)
    np.testing.assert_array_equal(out.numpy()[0, :2], np.broadcast_to(
        mha.out_proj.bias.numpy(), (2, 8)))  # attends to nothing: 0 through out_proj


# -- 11: d std / dx where std = 0 ------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_std_gradient_at_zero_variance_is_zero(device):
    x = _t([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], device)
    x.std(axis=1).sum().backward()
    row = np.array([1.0, 2.0, 4.0])
    expected = (row - row.mean()) / (row.size * row.std())
    np.testing.assert_allclose(np.array(x.grad), [[0, 0, 0], expected], atol=1e-7)
    one = _t([[3.0], [5.0]], device)  # a std over one element
    one.std(axis=1).sum().backward()
    np.testing.assert_array_equal(np.array(one.grad), 0.0)


# -- 12: attention without features ----------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_attention_with_embedding_size_zero_gives_the_mean_of_the_values(device):
    v = np.random.default_rng(2).standard_normal((2, 3, 5))
    out = F.scaled_dot_product_attention(lucid.zeros((2, 4, 0), device=device),
                                         lucid.zeros((2, 3, 0), device=device), _t(v, device))
    np.testing.assert_allclose(out.numpy(), np.broadcast_to(v.mean(axis=1, keepdims=True),
                                                             (2, 4, 5)), rtol=1e-6)


# -- 13: the empty product of booleans -------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_prod_of_empty_bool_is_int64_one(device):
    x = lucid.Tensor(np.ones((2, 0), bool), device=device)
    for y in (x.prod(), x.prod(axis=1)):
        ref = np.prod(np.ones((2, 0), bool), axis=None if y.ndim == 0 else 1)
        assert y.dtype == lucid.Int64 and ref.dtype == np.int64
        np.testing.assert_array_equal(y.numpy(), ref)


# -- 14: third derivatives at exactly 0 ------------------------------------------------------
def _third(f, x, device):
    t = lucid.Tensor(np.array(x), requires_grad=True, device=device)
    y = f(t)
    for _ in range(3):
        (y,) = grad(y.sum(), [t], create_graph=True)
    return y.numpy()


def _mish_third(x):  # by finite differences of the exact second derivative, float64
    def second(z):
        sp = np.log1p(np.exp(z))
        t, s = np.tanh(sp), 1 / (1 + np.exp(-z))
        dt = (1 - t * t) * s
        return 2 * dt + z * (-2 * t * dt * s + (1 - t * t) * s * (1 - s))
    h = 1e-5
    return (second(x + h) - second(x - h)) / (2 * h)


@pytest.mark.parametrize("device", DEVICES)
def test_third_derivatives_of_silu_softplus_mish_at_zero(device):
    x = [0.0, 0.7, -1.3]
    # silu = x/2 + x^2/4 - x^4/48 + ..., softplus = log 2 + x/2 + x^2/8 - x^4/192 + ...:
    # both have third derivative 0 at 0
    assert abs(_third(F.silu, x, device)[0]) < 1e-6
    assert abs(_third(F.softplus, x, device)[0]) < 1e-6
    np.testing.assert_allclose(_third(F.mish, x, device), _mish_third(np.array(x)),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_third(F.mish, x, device)[0], -0.0960, atol=5e-4)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_sign_of_nan_is_nan_and_logsumexp_of_nothing_is_minus_infinity(device):
    """sign(NaN) is NaN on both devices (MLX gave 0, NumPy NaN); logsumexp over no element
    is log 0 = -inf in a float, for bool and int input too (it was -inf cast to the input's
    dtype: True for a bool)."""
    y = lucid.sign(lucid.Tensor(np.array([np.nan, -0.0, 2.0, -np.inf]), device=device))
    np.testing.assert_array_equal(y.numpy(), np.sign([np.nan, -0.0, 2.0, -np.inf]))
    for dtype in (np.bool_, np.int64, np.float64):
        empty = lucid.Tensor(np.zeros((2, 0), dtype), device=device)
        total = lucid.logsumexp(empty, axis=(0, 1))
        rows = lucid.logsumexp(empty, axis=1)
        assert total.dtype == rows.dtype == lucid.Float64
        assert total.item() == -np.inf and rows.tolist() == [-np.inf, -np.inf]
