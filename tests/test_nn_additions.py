"""Issue 14's nn additions: SELU, Softplus, Mish, Hardswish, Hardsigmoid, ReLU6 modules; L1,
SmoothL1 and KL-divergence losses; ParameterList/ParameterDict; nn.utils clipping and vectors.
NumPy float64 references throughout; PyTorch cross-checks only where it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import gradcheck
from lucid.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-5, 5, (3, 4))
T = RNG.uniform(-5, 5, (3, 4))


@pytest.mark.parametrize("module,ref", [
    (nn.SELU(), lambda a: 1.0507009873554805 * np.where(a > 0, a, 1.6732632423543772 *
                                                        np.expm1(np.minimum(a, 0)))),
    (nn.Softplus(), lambda a: np.log1p(np.exp(a))),
    (nn.Softplus(beta=2.0, threshold=5.0), lambda a: np.where(2 * a > 5, a,
                                                              np.log1p(np.exp(2 * a)) / 2)),
    (nn.Mish(), lambda a: a * np.tanh(np.log1p(np.exp(a)))),
    (nn.Hardswish(), lambda a: a * np.clip(a + 3, 0, 6) / 6),
    (nn.Hardsigmoid(), lambda a: np.clip(a + 3, 0, 6) / 6),
    (nn.ReLU6(), lambda a: np.clip(a, 0, 6)),
])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_activation_modules(module, ref, device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    x = lucid.Tensor(X.astype(np.float32), device=device)
    np.testing.assert_allclose(module(x).numpy(), ref(X), rtol=1e-5, atol=1e-6)
    assert list(module.parameters()) == []


def test_losses_against_numpy():
    x, t = lucid.Tensor(X), lucid.Tensor(T)
    d = X - T
    assert F.l1_loss(x, t).item() == pytest.approx(np.abs(d).mean(), rel=1e-12)
    assert nn.L1Loss(reduction="sum")(x, t).item() == pytest.approx(np.abs(d).sum(), rel=1e-12)
    for beta in (1.0, 2.5):
        ref = np.where(np.abs(d) < beta, 0.5 * d**2 / beta, np.abs(d) - 0.5 * beta)
        assert nn.SmoothL1Loss(beta=beta)(x, t).item() == pytest.approx(ref.mean(), rel=1e-12)
    assert F.smooth_l1_loss(x, t, beta=0.0).item() == pytest.approx(np.abs(d).mean())
    logp = X - np.log(np.exp(X).sum(1, keepdims=True))
    q = np.exp(T) / np.exp(T).sum(1, keepdims=True)
    q[0, 0] = 0.0  # a zero target probability contributes 0
    pointwise = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - logp), 0)
    lp, qt = lucid.Tensor(logp), lucid.Tensor(q)
    assert nn.KLDivLoss()(lp, qt).item() == pytest.approx(pointwise.mean(), rel=1e-12)
    assert F.kl_div(lp, qt, reduction="batchmean").item() == pytest.approx(
        pointwise.sum() / 3, rel=1e-12)
    np.testing.assert_allclose(F.kl_div(lp, qt, reduction="none").numpy(), pointwise)
    logq = np.log(np.exp(T) / np.exp(T).sum(1, keepdims=True))
    assert F.kl_div(lp, lucid.Tensor(logq), reduction="sum", log_target=True).item() == \
        pytest.approx((np.exp(logq) * (logq - logp)).sum(), rel=1e-12)


def test_loss_gradients_by_finite_differences():
    t = lucid.Tensor(T)
    for fn in (F.l1_loss, F.smooth_l1_loss, lambda a, b: F.kl_div(a, b.abs() / 10)):
        assert gradcheck(lambda a, fn=fn: fn(a, t), lucid.Tensor(X, requires_grad=True))


def test_loss_errors():
    with pytest.raises(ValueError, match="kl_div: reduction must be 'mean', 'batchmean'"):
        F.kl_div(lucid.Tensor(X), lucid.Tensor(T), reduction="avg")
    with pytest.raises(ValueError, match=r"smooth_l1_loss: beta must be >= 0, got -1"):
        F.smooth_l1_loss(lucid.Tensor(X), lucid.Tensor(T), beta=-1)
    with pytest.raises(ValueError, match=r"l1_loss"):
        F.l1_loss(lucid.Tensor(X), lucid.Tensor(T[:2]))


def test_parameter_list_and_dict_register_like_pytorch():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(lucid.zeros(2)), nn.Parameter(lucid.ones(3))])
            self.named = nn.ParameterDict({"scale": nn.Parameter(lucid.ones(1))})

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["ws.0", "ws.1", "named.scale"]
    assert list(net.state_dict()) == ["ws.0", "ws.1", "named.scale"]
    net.ws.append(nn.Parameter(lucid.zeros(4)))
    assert len(net.ws) == 3 and net.ws[-1].shape == (4,) and "scale" in net.named
    with pytest.raises(TypeError, match=r"ParameterList: expected an nn.Parameter, got Tensor"):
        net.ws.append(lucid.zeros(2))
    with pytest.raises(IndexError, match="ParameterList: index 5 out of range for 3"):
        net.ws[5]


def _with_grads(values):
    params = [nn.Parameter(lucid.zeros(len(v))) for v in values]
    for p, v in zip(params, values):
        p.grad = np.array(v, dtype=np.float32)
    return params


def test_clip_grad_norm():
    params = _with_grads([[3.0, 4.0], [12.0]])  # total 2-norm 13
    total = clip_grad_norm_(params, max_norm=1.3)
    assert total.item() == pytest.approx(13.0)
    scale = 1.3 / (13 + 1e-6)
    np.testing.assert_allclose(params[0].grad, np.array([3, 4]) * scale, rtol=1e-6)
    params = _with_grads([[3.0, -4.0], [1.0]])
    assert clip_grad_norm_(params, max_norm=10, norm_type=math.inf).item() == 4.0
    np.testing.assert_array_equal(params[0].grad, [3.0, -4.0])  # under the limit: untouched
    params = _with_grads([[1.0, 2.0], [2.0]])
    assert clip_grad_norm_(params, 100, norm_type=1).item() == pytest.approx(5.0)
    nan = _with_grads([[np.nan, 1.0]])
    with pytest.raises(RuntimeError, match="clip_grad_norm_: the total norm of order 2.0"):
        clip_grad_norm_(nan, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_and_vectors():
    params = _with_grads([[3.0, -4.0, 0.5]])
    clip_grad_value_(params, 1.0)
    np.testing.assert_array_equal(params[0].grad, [1.0, -1.0, 0.5])
    with pytest.raises(ValueError, match="clip_grad_value_: clip_value must be >= 0"):
        clip_grad_value_(params, -1)
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (3 * 2 + 2 + 2 + 1,)
    np.testing.assert_array_equal(vec.numpy()[:6], model[0].weight.numpy().reshape(-1))
    vector_to_parameters(vec * 0 + 1, model.parameters())
    assert all(np.all(p.numpy() == 1) for p in model.parameters())
    before = [p.numpy().copy() for p in model.parameters()]
    with pytest.raises(ValueError, match="vector_to_parameters: vec has 3 values, the "
                                         "parameters hold 11"):
        vector_to_parameters(lucid.zeros(3), model.parameters())
    assert all(np.array_equal(a, p.numpy()) for a, p in zip(before, model.parameters()))


def test_against_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    x = torch.tensor(X)
    for ours, theirs in [(nn.SELU(), torch.nn.SELU()), (nn.Mish(), torch.nn.Mish()),
                         (nn.Hardswish(), torch.nn.Hardswish()),
                         (nn.Hardsigmoid(), torch.nn.Hardsigmoid()),
                         (nn.ReLU6(), torch.nn.ReLU6()), (nn.Softplus(2.0, 5.0),
                                                          torch.nn.Softplus(2.0, 5.0))]:
        np.testing.assert_allclose(ours(lucid.Tensor(X)).numpy(), theirs(x).numpy(), rtol=1e-12)
    t = torch.tensor(T)
    assert nn.SmoothL1Loss(beta=2.0)(lucid.Tensor(X), lucid.Tensor(T)).item() == pytest.approx(
        torch.nn.SmoothL1Loss(beta=2.0)(x, t).item(), rel=1e-12)
