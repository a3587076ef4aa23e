"""nn layers, functional ops, losses and init: values against hand-written NumPy float64
references, fused ops against their composites, BatchNorm/Dropout modes, attention, init
statistics, the seeds' snippets, and modules moved to "gpu" against "cpu".

(The op-level rows -- forward, gradcheck, FLOPs, errors, gpu parity of each nn op -- live in
``tests/specs/nn.py``.)
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import grad, gradcheck
from lucid.nn import init

RNG = np.random.default_rng(1234)


def rnd(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


def T(a, requires_grad=False, device="cpu", dtype=None):
    return lucid.Tensor(a, requires_grad=requires_grad, device=device, dtype=dtype)


def softmax_ref(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def sigmoid_ref(a):
    return 1 / (1 + np.exp(-a))


def gpu():
    pytest.importorskip("mlx.core", reason="MLX is not installed")
    warnings.filterwarnings("ignore", message="MLX has no GPU here")


def grads_of(fn, *tensors):
    """Gradients of sum(fn(*tensors) * v) for a fixed random v, as NumPy arrays."""
    out = fn(*tensors)
    v = T(np.random.default_rng(0).standard_normal(out.shape), device=out.device)
    gs = grad([out], list(tensors), grad_outputs=[v.astype(out.dtype)])
    return out, [g.numpy() for g in gs]


# --------------------------------------------------------------------------------------------
# the seeds' snippets


def test_seed_001_linear_with_dtype_and_mlp():
    layer = nn.Linear(128, 64, dtype=lucid.Float32)
    assert layer.weight.shape == (64, 128) and layer.bias.shape == (64,)
    assert layer.weight.dtype == lucid.Float32 and layer.bias.dtype == lucid.Float32
    assert layer.weight.requires_grad and layer.weight.keep_grad
    assert repr(layer) == "Linear(in_features=128, out_features=64, bias=True)"

    class MLP(lucid.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = lucid.nn.Linear(128, 64, dtype=lucid.Float32)
            self.fc2 = lucid.nn.Linear(64, 10, dtype=lucid.Float32)

        def forward(self, x):
            return self.fc2(F.relu(self.fc1(x)))

    model = MLP()
    assert list(model.state_dict()) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    out = model(T(rnd(3, 128), dtype=lucid.Float32))
    assert out.shape == (3, 10) and out.dtype == lucid.Float32


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_seed_001_one_hot_float16(device):
    if device == "gpu":
        gpu()
    from lucid.nn.functional import one_hot

    labels = lucid.tensor([0, 2, 1], dtype=lucid.Int64)
    if device == "gpu":
        labels = labels.to("gpu")
    oh = one_hot(labels, num_classes=3, dtype=lucid.Float16)
    assert oh.device == device and oh.dtype == lucid.Float16 and oh.shape == (3, 3)
    np.testing.assert_array_equal(oh.numpy(), np.eye(3, dtype=np.float16)[[0, 2, 1]])
    if device == "gpu":
        import mlx.core as mx

        assert oh.data.dtype == mx.float16


def test_one_hot_defaults_and_errors():
    oh = F.one_hot(lucid.tensor([[1, 0], [3, 2]]))
    assert oh.dtype == lucid.Int64 and oh.shape == (2, 2, 4)
    np.testing.assert_array_equal(oh.numpy(), np.eye(4, dtype=np.int64)[[[1, 0], [3, 2]]])
    with pytest.raises(IndexError, match=r"one_hot: index 3 is out of range for num_classes=3"):
        F.one_hot(lucid.tensor([0, 3]), num_classes=3)
    with pytest.raises(TypeError, match=r"one_hot: indices must be integers"):
        F.one_hot(lucid.tensor([0.0, 1.0]), num_classes=3)


# --------------------------------------------------------------------------------------------
# Linear


def test_linear_values_and_init():
    lucid.random.seed(0)
    layer = nn.Linear(50, 20)
    w, b = layer.weight.numpy(), layer.bias.numpy()
    bound = 1 / math.sqrt(50)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.1 * bound  # U(-b, b): std b/sqrt(3)
    x = rnd(7, 50)
    np.testing.assert_allclose(layer(T(x)).numpy(), x @ w.astype(np.float64).T + b, rtol=1e-5,
                               atol=1e-5)
    lucid.random.seed(0)
    again = nn.Linear(50, 20)
    np.testing.assert_array_equal(again.weight.numpy(), w)  # seeded: reproducible


def test_linear_dtype_default_float32_and_options():
    assert nn.Linear(3, 2).weight.dtype == lucid.Float32
    layer = nn.Linear(3, 2, bias=False, dtype=lucid.Float64)
    assert layer.weight.dtype == lucid.Float64 and layer.bias is None
    assert list(layer.state_dict()) == ["weight"]
    assert layer.extra_repr() == "in_features=3, out_features=2, bias=False"
    with pytest.raises(TypeError, match=r"Linear: dtype must be a floating-point type"):
        nn.Linear(3, 2, dtype=lucid.Int32)
    with pytest.raises(ValueError, match=r"Linear: in_features must be >= 0"):
        nn.Linear(-1, 2)


def test_fused_linear_matches_composite_values_grads_and_flops():
    x = T(rnd(6, 4), requires_grad=True)
    w = T(rnd(3, 4), requires_grad=True)
    b = T(rnd(3), requires_grad=True)
    fused, g_fused = grads_of(F.linear, x, w, b)
    comp, g_comp = grads_of(lambda x, w, b: x @ w.T + b, x, w, b)
    np.testing.assert_allclose(fused.numpy(), comp.numpy(), rtol=1e-14, atol=1e-14)
    for a, c in zip(g_fused, g_comp):
        np.testing.assert_allclose(a, c, rtol=1e-13, atol=1e-13)
    with lucid.count_flops():
        f = F.linear(x, w, b)
        c = x @ w.T + b
    assert f.flops == c.flops == 6 * 4 * 3 + 6 * 3

    def bwd(t):
        total, stack, seen = 0, [t], set()
        while stack:
            n = stack.pop()
            if n._op is not None and id(n) not in seen:
                seen.add(id(n))
                total += n._op.flops_bwd
                stack.extend(n._prev)
        return total

    assert bwd(f) == bwd(c)


def test_linear_graph_is_one_op_and_first_layer_skips_input_grad():
    layer = nn.Linear(4, 3, dtype=lucid.Float64)
    y = layer(T(rnd(5, 4)))
    assert type(y._op).name == "linear" and y._op.needs == (False, True, True)
    y.backward()
    assert layer.weight.grad.shape == (3, 4) and layer.weight.grad.flags.c_contiguous


def test_identity_and_flatten():
    x = T(rnd(2, 3, 4, 5))
    assert nn.Identity(7, key=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    assert repr(nn.Flatten()) == "Flatten(start_axis=1, end_axis=-1)"


# --------------------------------------------------------------------------------------------
# activations: layers, and fused ops against composites of primitives


ACT_REFS = [
    (nn.ReLU(), lambda a: np.maximum(a, 0)),
    (nn.LeakyReLU(0.1), lambda a: np.where(a > 0, a, 0.1 * a)),
    (nn.ELU(0.7), lambda a: np.where(a > 0, a, 0.7 * (np.exp(a) - 1))),
    (nn.GELU(), lambda a: 0.5 * a * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda a: 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                        * (a + 0.044715 * a**3)))),
    (nn.SiLU(), lambda a: a * sigmoid_ref(a)),
    (nn.Sigmoid(), sigmoid_ref),
    (nn.Tanh(), np.tanh),
    (nn.Softmax(axis=1), lambda a: softmax_ref(a, 1)),
    (nn.LogSoftmax(axis=0), lambda a: np.log(softmax_ref(a, 0))),
]


@pytest.mark.parametrize("layer,ref", ACT_REFS, ids=[repr(m) for m, _ in ACT_REFS])
def test_activation_layers_match_numpy(layer, ref):
    x = rnd(4, 5)
    np.testing.assert_allclose(layer(T(x)).numpy(), ref(x), rtol=1e-12, atol=1e-12)


COMPOSITES = {
    "relu": (F.relu, lambda x: lucid.where(x > 0, x, 0.0)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: lucid.where(x > 0, x, 0.2 * x)),
    "elu": (F.elu, lambda x: lucid.where(x > 0, x, lucid.exp(x) - 1)),
    "gelu(tanh)": (
        lambda x: F.gelu(x, "tanh"),
        lambda x: 0.5 * x * (1 + lucid.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    ),
    "silu": (F.silu, lambda x: x / (1 + lucid.exp(-x))),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + lucid.exp(-x))),
    "softmax": (lambda x: F.softmax(x, axis=1), lambda x: (
        lucid.exp(x - x.max(axis=1, keepdims=True))
        / lucid.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))),
    "log_softmax": (lambda x: F.log_softmax(x, axis=1), lambda x: (
        (x - x.max(axis=1, keepdims=True))
        - lucid.log(lucid.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)))),
}


@pytest.mark.parametrize("name", sorted(COMPOSITES))
def test_fused_op_matches_composite(name):
    fused_fn, comp_fn = COMPOSITES[name]
    x = T(rnd(4, 6), requires_grad=True)
    fused, g_fused = grads_of(fused_fn, x)
    comp, g_comp = grads_of(comp_fn, x)
    np.testing.assert_allclose(fused.numpy(), comp.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_fused[0], g_comp[0], rtol=1e-10, atol=1e-12)


def test_exact_gelu_gradient_formula():
    # no erf primitive to compose with: check dy/dx = Phi(x) + x phi(x) directly
    x = rnd(20)
    _, (g,) = grads_of(F.gelu, T(x, requires_grad=True))
    v = np.random.default_rng(0).standard_normal(20)
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(g, v * (cdf + x * pdf), rtol=1e-12)


def test_sigmoid_and_softmax_never_overflow():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from exp overflow
        s = F.sigmoid(T(np.array([-1000.0, 1000.0]))).numpy()
        p = F.softmax(T(np.array([[1000.0, 0.0]]))).numpy()
        ls = F.log_softmax(T(np.array([[1000.0, 0.0]]))).numpy()
        e = F.elu(T(np.array([1000.0, -1000.0]))).numpy()
    np.testing.assert_array_equal(s, [0.0, 1.0])
    np.testing.assert_allclose(p, [[1.0, 0.0]])
    np.testing.assert_allclose(ls, [[0.0, -1000.0]])
    np.testing.assert_array_equal(e, [1000.0, -1.0])


def test_tensor_methods_attached():
    x = T(rnd(3, 4))
    np.testing.assert_allclose(x.relu().numpy(), np.maximum(x.numpy(), 0))
    np.testing.assert_allclose(x.softmax(0).numpy(), softmax_ref(x.numpy(), 0))
    np.testing.assert_allclose(x.sigmoid().numpy(), sigmoid_ref(x.numpy()))
    np.testing.assert_allclose(x.log_softmax().numpy(), np.log(softmax_ref(x.numpy())))


# --------------------------------------------------------------------------------------------
# cross-entropy: fused against the composite log_softmax + gather


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_fused_cross_entropy_matches_composite(reduction, weighted):
    logits = T(rnd(8, 5), requires_grad=True)
    target = lucid.tensor([0, 4, 2, 2, -100, 1, 3, 0])
    weight = T(rnd(5, low=0.5, high=2.0)) if weighted else None

    def fused(x):
        return F.cross_entropy(x, target, weight=weight, reduction=reduction)

    def composite(x):
        return F.nll_loss(F.log_softmax(x, axis=1), target, weight=weight, reduction=reduction)

    f, gf = grads_of(fused, logits)
    c, gc = grads_of(composite, logits)
    assert type(f._op).name == "cross_entropy"  # one op
    np.testing.assert_allclose(f.numpy(), c.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(gf[0], gc[0], rtol=1e-10, atol=1e-12)


def test_cross_entropy_matches_primitive_gather_composite():
    x = T(rnd(6, 4), requires_grad=True)
    t = lucid.tensor([3, 0, 1, 1, 2, 0])

    def composite(x):
        z = x - x.max(axis=1, keepdims=True)
        logp = z - lucid.log(lucid.exp(z).sum(axis=1, keepdims=True))
        return -lucid.gather(logp, 1, t[:, None]).mean()

    f, gf = grads_of(lambda x: F.cross_entropy(x, t), x)
    c, gc = grads_of(composite, x)
    assert abs(f.item() - c.item()) < 1e-10
    np.testing.assert_allclose(gf[0], gc[0], atol=1e-12)


def test_cross_entropy_with_probabilities_and_layer():
    x = rnd(4, 3)
    p = softmax_ref(rnd(4, 3))
    want = -(p * np.log(softmax_ref(x, 1))).sum(1).mean()
    got = F.cross_entropy(T(x), T(p))
    assert abs(got.item() - want) < 1e-12
    loss = nn.CrossEntropyLoss(reduction="sum")
    t = lucid.tensor([0, 2, 1, 1])
    assert abs(loss(T(x), t).item() - F.cross_entropy(T(x), t, reduction="sum").item()) < 1e-12
    weighted = nn.CrossEntropyLoss(weight=T(np.array([1.0, 2.0, 3.0])))
    assert list(weighted.state_dict()) == ["weight"]


def test_cross_entropy_float32_stays_float32():
    x = T(rnd(4, 3), requires_grad=True, dtype=lucid.Float32)
    loss = F.cross_entropy(x, lucid.tensor([0, 1, 2, 0]))
    loss.backward()
    assert loss.dtype == lucid.Float32 and x.grad.dtype == np.float32


# --------------------------------------------------------------------------------------------
# the other losses


def test_mse_and_huber_against_numpy():
    a, b = rnd(5, 3), rnd(5, 3)
    assert abs(F.mse_loss(T(a), T(b)).item() - np.mean((a - b) ** 2)) < 1e-12
    assert abs(nn.MSELoss("sum")(T(a), T(b)).item() - np.sum((a - b) ** 2)) < 1e-12
    np.testing.assert_allclose(F.mse_loss(T(a), T(b), reduction="none").numpy(), (a - b) ** 2)
    d = a - b
    huber = np.where(np.abs(d) < 0.5, 0.5 * d * d, 0.5 * (np.abs(d) - 0.25))
    assert abs(F.huber_loss(T(a), T(b), delta=0.5).item() - huber.mean()) < 1e-12
    assert abs(nn.HuberLoss(delta=0.5)(T(a), T(b)).item() - huber.mean()) < 1e-12
    # dHuber/dx = d clipped to [-delta, delta]
    x = T(a, requires_grad=True)
    F.huber_loss(x, T(b), reduction="sum", delta=0.5).backward()
    np.testing.assert_allclose(x.grad, np.clip(d, -0.5, 0.5), atol=1e-12)
    assert gradcheck(lambda x: F.mse_loss(x, T(b)), T(a, requires_grad=True))


def test_nll_loss_against_numpy():
    logp = np.log(softmax_ref(rnd(5, 4), 1))
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([1.0, 0.5, 2.0, 1.5])
    want = -(logp[np.arange(5), t] * w[t]).sum() / w[t].sum()
    assert abs(F.nll_loss(T(logp), lucid.tensor(t), weight=T(w)).item() - want) < 1e-12
    assert abs(nn.NLLLoss(weight=T(w))(T(logp), lucid.tensor(t)).item() - want) < 1e-12


def test_bce_and_bce_with_logits_against_numpy():
    x = rnd(6, 2, low=-4, high=4)
    t = (rnd(6, 2) > 0).astype(float)
    p = sigmoid_ref(x)
    want = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    assert abs(F.binary_cross_entropy(T(p), T(t)).item() - want.mean()) < 1e-12
    assert abs(nn.BCELoss()(T(p), T(t)).item() - want.mean()) < 1e-12
    assert abs(F.binary_cross_entropy_with_logits(T(x), T(t)).item() - want.mean()) < 1e-12
    assert abs(nn.BCEWithLogitsLoss()(T(x), T(t)).item() - want.mean()) < 1e-12
    pw = np.array([2.0, 0.5])
    want_pw = -(pw * t * np.log(p) + (1 - t) * np.log(1 - p))
    got = F.binary_cross_entropy_with_logits(T(x), T(t), pos_weight=T(pw), reduction="none")
    np.testing.assert_allclose(got.numpy(), want_pw, rtol=1e-12)
    # gradient of the logits version: (sigmoid(x) - t) / n
    xt = T(x, requires_grad=True)
    F.binary_cross_entropy_with_logits(xt, T(t)).backward()
    np.testing.assert_allclose(xt.grad, (p - t) / t.size, atol=1e-14)
    assert gradcheck(lambda x: F.binary_cross_entropy_with_logits(x, T(t), pos_weight=T(pw)),
                     T(x, requires_grad=True))


def test_fused_bce_matches_composite_and_stays_finite_when_saturated():
    p = T(rnd(7, low=0.05, high=0.95), requires_grad=True)
    t = T((rnd(7) > 0).astype(float))
    f, gf = grads_of(lambda p: F.binary_cross_entropy(p, t), p)
    c, gc = grads_of(lambda p: (-(t * lucid.log(p) + (1 - t) * lucid.log(1 - p))).mean(), p)
    np.testing.assert_allclose(f.numpy(), c.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gf[0], gc[0], rtol=1e-10)
    # a float32 sigmoid saturates to exactly 1.0: loss and gradient stay finite
    x = T(np.array([30.0, -30.0, 0.0]), requires_grad=True, dtype=lucid.Float32)
    loss = F.binary_cross_entropy(F.sigmoid(x), T(np.array([0.0, 1.0, 1.0]), dtype=lucid.Float32))
    loss.backward()
    assert np.isfinite(loss.item()) and np.all(np.isfinite(x.grad))


@pytest.mark.parametrize("loss", [F.mse_loss, F.huber_loss, F.binary_cross_entropy,
                                  F.binary_cross_entropy_with_logits])
def test_losses_refuse_shapes_that_would_broadcast(loss):
    name = loss.__name__
    with pytest.raises(ValueError, match=rf"{name}: input shape \(4,1\) and target shape \(4,\) "
                                         r"differ"):
        loss(T(rnd(4, 1, low=0.1, high=0.9)), T(rnd(4, low=0.1, high=0.9)))
    with pytest.raises(ValueError, match=rf"{name}: input shape \(3,\) and target shape \(3,1\)"):
        loss(T(rnd(3, low=0.1, high=0.9)), T(rnd(3, 1, low=0.1, high=0.9)))


def test_loss_layers_reject_bad_reduction_and_nll_checks():
    with pytest.raises(ValueError, match=r"MSELoss: reduction must be 'mean', 'sum' or 'none'"):
        nn.MSELoss(reduction="avg")
    with pytest.raises(ValueError, match=r"mse_loss: reduction must be"):
        F.mse_loss(T(rnd(2)), T(rnd(2)), reduction="avg")
    with pytest.raises(TypeError, match=r"nll_loss: target must hold integer class indices"):
        F.nll_loss(T(rnd(2, 3)), T(rnd(2)))
    with pytest.raises(IndexError, match=r"nll_loss: target value 3 is out of range"):
        F.nll_loss(T(rnd(2, 3)), lucid.tensor([0, 3]))
    with pytest.raises(ValueError, match=r"nll_loss: input \(2,3\) and target \(3,\)"):
        F.nll_loss(T(rnd(2, 3)), lucid.tensor([0, 1, 2]))


# --------------------------------------------------------------------------------------------
# Dropout


def test_dropout_is_deterministic_under_seed_and_scales():
    x = T(np.ones((200, 50)))
    lucid.random.seed(7)
    a = F.dropout(x, 0.3).numpy()
    lucid.random.seed(7)
    b = nn.Dropout(0.3)(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.02


def test_dropout_gradient_is_the_scaled_mask():
    x = T(rnd(30, 20), requires_grad=True)
    lucid.random.seed(1)
    y = F.dropout(x, 0.4)
    y.backward()
    mask = y.numpy() != 0
    np.testing.assert_allclose(x.grad, mask / 0.6)
    np.testing.assert_allclose(y.numpy(), x.numpy() * mask / 0.6)


def test_dropout_eval_identity_and_edges():
    layer = nn.Dropout(0.5)
    x = T(rnd(4, 4))
    layer.eval()
    assert layer(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"Dropout: p must be a probability in \[0, 1\]"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match=r"dropout: p must be a probability"):
        F.dropout(x, -0.1)
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25)"


# --------------------------------------------------------------------------------------------
# BatchNorm


def bn_ref(x, mean, var, w, b, eps=1e-5):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape) \
        + b.reshape(shape)


def test_batchnorm2d_training_uses_batch_stats_and_updates_running_stats():
    bn = nn.BatchNorm2d(3, dtype=lucid.Float64)
    with lucid.no_grad():
        bn.weight.data = np.array([1.0, 2.0, 0.5])
        bn.bias.data = np.array([0.0, -1.0, 3.0])
    x = rnd(4, 3, 5, 5)
    y = bn(T(x))
    axes = (0, 2, 3)
    mean, var = x.mean(axes), x.var(axes)
    np.testing.assert_allclose(y.numpy(), bn_ref(x, mean, var, bn.weight.numpy(),
                                                 bn.bias.numpy()), rtol=1e-10, atol=1e-10)
    n = 4 * 5 * 5
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1
    bn(T(x))
    assert bn.num_batches_tracked.item() == 2
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean * (1 + 0.9), rtol=1e-12)
    assert not bn.running_mean.requires_grad


def test_batchnorm_eval_uses_running_stats_and_freezes_them():
    bn = nn.BatchNorm1d(4, dtype=lucid.Float64)
    for _ in range(3):
        bn(T(rnd(8, 4) * 3 + 1))
    rm, rv = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    bn.eval()
    x = rnd(5, 4)
    y = bn(T(x))
    np.testing.assert_allclose(y.numpy(), bn_ref(x, rm, rv, np.ones(4), np.zeros(4)),
                               rtol=1e-12)
    np.testing.assert_array_equal(bn.running_mean.numpy(), rm)
    assert bn.num_batches_tracked.item() == 3
    # gradients flow to x and the affine parameters only
    xt = T(x, requires_grad=True)
    bn(xt).sum().backward()
    np.testing.assert_allclose(xt.grad, np.broadcast_to(1 / np.sqrt(rv + 1e-5), (5, 4)))


def test_batchnorm_options():
    bn = nn.BatchNorm1d(3, momentum=None, dtype=lucid.Float64)
    xs = [rnd(6, 3, 2) for _ in range(3)]
    for x in xs:
        bn(T(x))
    want = np.mean([x.mean((0, 2)) for x in xs], axis=0)  # cumulative average
    np.testing.assert_allclose(bn.running_mean.numpy(), want, rtol=1e-12)
    free = nn.BatchNorm1d(3, affine=False, track_running_stats=False, dtype=lucid.Float64)
    assert list(free.state_dict()) == [] and free.running_mean is None
    free.eval()  # no running statistics: batch statistics even in eval
    x = rnd(6, 3)
    np.testing.assert_allclose(free(T(x)).numpy(), bn_ref(x, x.mean(0), x.var(0), np.ones(3),
                                                          np.zeros(3)), rtol=1e-10, atol=1e-12)
    assert list(nn.BatchNorm2d(2).state_dict()) == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert nn.BatchNorm2d(2).num_batches_tracked.dtype == lucid.Int64
    assert repr(nn.BatchNorm2d(2)) == (
        "BatchNorm2d(2, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)")


def test_batchnorm_errors():
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4-D \(N, C, H, W\) input, got "
                                         r"shape \(2,3\)"):
        nn.BatchNorm2d(3)(T(rnd(2, 3)))
    with pytest.raises(ValueError, match=r"BatchNorm1d: input \(2,5\) has 5 channels"):
        nn.BatchNorm1d(3)(T(rnd(2, 5)))
    with pytest.raises(ValueError, match=r"batch_norm: expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(T(rnd(1, 3)))


def test_batch_norm_gradcheck():
    rm, rv = T(np.zeros(3)), T(np.ones(3))
    w, b = T(rnd(3), requires_grad=True), T(rnd(3), requires_grad=True)
    assert gradcheck(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                     T(rnd(4, 3, 2), requires_grad=True), w, b)
    assert gradcheck(lambda x: F.batch_norm(x, rm, rv, training=False),
                     T(rnd(4, 3), requires_grad=True))


# --------------------------------------------------------------------------------------------
# LayerNorm, GroupNorm


def test_layer_norm_against_numpy_and_gradcheck():
    ln = nn.LayerNorm((3, 4), dtype=lucid.Float64)
    with lucid.no_grad():
        ln.weight.data = rnd(3, 4)
        ln.bias.data = rnd(3, 4)
    x = rnd(2, 3, 4)
    mu = x.mean((1, 2), keepdims=True)
    var = x.var((1, 2), keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-5) * ln.weight.numpy() + ln.bias.numpy()
    np.testing.assert_allclose(ln(T(x)).numpy(), want, rtol=1e-10, atol=1e-12)
    assert repr(nn.LayerNorm(8)) == "LayerNorm((8,), eps=1e-05, elementwise_affine=True)"
    assert gradcheck(lambda x, w, b: F.layer_norm(x, 4, w, b), T(rnd(3, 4), requires_grad=True),
                     T(rnd(4), requires_grad=True), T(rnd(4), requires_grad=True))
    with pytest.raises(ValueError, match=r"layer_norm: input of shape \(2,3\) does not end with "
                                         r"normalized_shape \(4,\)"):
        F.layer_norm(T(rnd(2, 3)), 4)


def test_group_norm_against_numpy_and_gradcheck():
    gn = nn.GroupNorm(2, 6, dtype=lucid.Float64)
    x = rnd(3, 6, 4)
    g = x.reshape(3, 2, -1)
    want = ((g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)).reshape(
        x.shape)
    np.testing.assert_allclose(gn(T(x)).numpy(), want, rtol=1e-10, atol=1e-12)
    assert list(gn.state_dict()) == ["weight", "bias"]
    assert gradcheck(lambda x, w: F.group_norm(x, 3, w), T(rnd(2, 6, 2), requires_grad=True),
                     T(rnd(6), requires_grad=True))
    with pytest.raises(ValueError, match=r"GroupNorm: num_channels \(6\) must be divisible"):
        nn.GroupNorm(4, 6)


# --------------------------------------------------------------------------------------------
# Embedding


def test_embedding_lookup_and_scatter_add_gradient():
    lucid.random.seed(3)
    emb = nn.Embedding(10, 4, dtype=lucid.Float64)
    idx = lucid.tensor([[1, 3, 1], [0, 9, 3]])
    out = emb(idx)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[idx.numpy()])
    out.sum().backward()
    counts = np.bincount(idx.numpy().ravel(), minlength=10)
    np.testing.assert_array_equal(emb.weight.grad, np.repeat(counts[:, None], 4, axis=1))
    assert abs(emb.weight.numpy().std() - 1) < 0.5  # N(0, 1) init
    assert repr(emb) == "Embedding(10, 4)"


def test_embedding_padding_idx_and_errors():
    emb = nn.Embedding(5, 3, padding_idx=0, dtype=lucid.Float64)
    np.testing.assert_array_equal(emb.weight.numpy()[0], np.zeros(3))
    out = emb(lucid.tensor([0, 2, 0]))
    (out * 2).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad[0], np.zeros(3))
    np.testing.assert_array_equal(emb.weight.grad[2], np.full(3, 2.0))
    with pytest.raises(IndexError, match=r"embedding: index 5 is out of range for 5 embeddings"):
        emb(lucid.tensor([1, 5]))
    with pytest.raises(TypeError, match=r"embedding: indices must be integers"):
        emb(T(np.array([1.0])))


# --------------------------------------------------------------------------------------------
# attention


def mha_ref(q, k, v, w_in, b_in, w_out, b_out, heads, block=None):
    """NumPy multi-head attention: (output, weights averaged over heads)."""
    n, length, e = q.shape
    d = e // heads
    proj = [x @ w_in[i * e:(i + 1) * e].T + b_in[i * e:(i + 1) * e] for i, x in
            enumerate((q, k, v))]
    qh, kh, vh = (p.reshape(n, -1, heads, d).transpose(0, 2, 1, 3) for p in proj)
    scores = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if block is not None:
        scores = np.where(block, -np.inf, scores)
    w = softmax_ref(scores, -1)
    out = (w @ vh).transpose(0, 2, 1, 3).reshape(n, length, e)
    return out @ w_out.T + b_out, w.mean(1)


def _mha(e=8, h=2, **kw):
    lucid.random.seed(5)
    m = nn.MultiHeadAttention(e, h, dtype=lucid.Float64, **kw)
    with lucid.no_grad():  # non-zero biases so they are tested too
        m.in_proj_bias.data = rnd(3 * e)
        m.out_proj.bias.data = rnd(e)
    return m


def _weights(m):
    return (m.in_proj_weight.numpy(), m.in_proj_bias.numpy(), m.out_proj.weight.numpy(),
            m.out_proj.bias.numpy())


def test_mha_self_and_cross_attention_against_numpy():
    m = _mha()
    x = rnd(2, 5, 8)
    out, w = m(T(x), T(x), T(x))
    ref_out, ref_w = mha_ref(x, x, x, *_weights(m), 2)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-10, atol=1e-12)
    q, kv = rnd(2, 3, 8), rnd(2, 6, 8)
    out, w = m(T(q), T(kv), T(kv))
    ref_out, ref_w = mha_ref(q, kv, kv, *_weights(m), 2)
    assert out.shape == (2, 3, 8) and w.shape == (2, 3, 6)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-10, atol=1e-12)


def test_mha_masks_layouts_and_weights_options():
    m = _mha()
    x = rnd(2, 4, 8)
    causal = np.triu(np.ones((4, 4), bool), 1)  # True = not allowed (PyTorch MHA)
    pad = np.array([[False, False, False, True], [False, False, False, False]])
    out, w = m(T(x), T(x), T(x), attn_mask=T(causal), key_padding_mask=T(pad))
    block = causal[None, None] | pad[:, None, None, :]
    ref_out, ref_w = mha_ref(x, x, x, *_weights(m), 2, block=block)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), ref_w, rtol=1e-10, atol=1e-12)
    out_c, _ = m(T(x), T(x), T(x), is_causal=True)
    np.testing.assert_allclose(out_c.numpy(), mha_ref(x, x, x, *_weights(m), 2,
                                                      block=causal)[0], rtol=1e-10, atol=1e-12)
    # float mask: added to the scores
    out_f, _ = m(T(x), T(x), T(x), attn_mask=T(np.where(causal, -np.inf, 0.0)))
    np.testing.assert_allclose(out_f.numpy(), out_c.numpy(), rtol=1e-12)
    _, w_heads = m(T(x), T(x), T(x), average_attn_weights=False)
    assert w_heads.shape == (2, 2, 4, 4)
    assert m(T(x), T(x), T(x), need_weights=False)[1] is None
    # unbatched and sequence-first layouts give the same numbers
    out_u, w_u = m(T(x[0]), T(x[0]), T(x[0]))
    full, w_full = m(T(x), T(x), T(x))
    np.testing.assert_allclose(out_u.numpy(), full.numpy()[0], rtol=1e-12)
    assert w_u.shape == (4, 4)
    seq_first = nn.MultiHeadAttention(8, 2, batch_first=False, dtype=lucid.Float64)
    seq_first.load_state_dict(m.state_dict())
    xs = x.transpose(1, 0, 2)
    np.testing.assert_allclose(seq_first(T(xs), T(xs), T(xs))[0].numpy(),
                               full.numpy().transpose(1, 0, 2), rtol=1e-12)


def test_mha_gradients_and_state_dict_layout():
    m = _mha()
    x = T(rnd(2, 3, 8), requires_grad=True)
    out, _ = m(x, x, x)
    out.sum().backward()
    assert m.in_proj_weight.grad.shape == (24, 8) and x.grad.shape == (2, 3, 8)
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                    "out_proj.bias"]
    lucid.random.seed(0)
    fresh = nn.MultiHeadAttention(8, 2)
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform over (3E, E)
    assert np.abs(fresh.in_proj_weight.numpy()).max() <= bound
    np.testing.assert_array_equal(fresh.in_proj_bias.numpy(), np.zeros(24))
    with pytest.raises(ValueError, match=r"embed_dim \(10\) must be divisible by num_heads"):
        nn.MultiHeadAttention(10, 3)


def test_mha_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    m = _mha()
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=True).double()
    tm.load_state_dict({k: torch.from_numpy(v) for k, v in m.state_dict().items()})
    q, kv = rnd(2, 3, 8), rnd(2, 5, 8)
    pad = np.array([[False] * 4 + [True], [False] * 5])
    out, w = m(T(q), T(kv), T(kv), key_padding_mask=T(pad))
    t_out, t_w = tm(torch.from_numpy(q), torch.from_numpy(kv), torch.from_numpy(kv),
                    key_padding_mask=torch.from_numpy(pad))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w.numpy(), t_w.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_scaled_dot_product_attention():
    q, k, v = rnd(2, 3, 4), rnd(2, 5, 4), rnd(2, 5, 6)
    want = softmax_ref(q @ k.transpose(0, 2, 1) / 2.0) @ v
    np.testing.assert_allclose(F.scaled_dot_product_attention(T(q), T(k), T(v)).numpy(), want,
                               rtol=1e-12)
    keep = np.tril(np.ones((3, 5), bool))
    masked = softmax_ref(np.where(keep, q @ k.transpose(0, 2, 1) / 2.0, -np.inf)) @ v
    got = F.scaled_dot_product_attention(T(q), T(k), T(v), attn_mask=T(keep))
    np.testing.assert_allclose(got.numpy(), masked, rtol=1e-12)
    got = F.scaled_dot_product_attention(T(q), T(k), T(v), is_causal=True)
    np.testing.assert_allclose(got.numpy(), masked, rtol=1e-12)
    assert gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                     T(q, requires_grad=True), T(k, requires_grad=True),
                     T(v, requires_grad=True))
    with pytest.raises(ValueError, match=r"scaled_dot_product_attention: query \(2,3,4\) and "
                                         r"key \(2,5,3\) must have the same last axis"):
        F.scaled_dot_product_attention(T(q), T(rnd(2, 5, 3)), T(v))


# --------------------------------------------------------------------------------------------
# init


def test_init_statistics_dtype_device_and_identity():
    lucid.random.seed(0)
    p = nn.Parameter(np.zeros((400, 300)), dtype=lucid.Float32)
    version = p._version
    assert init.uniform_(p, -0.5, 1.5) is p
    v = p.numpy()
    assert p.dtype == lucid.Float32 and p._version == version + 1
    assert v.min() >= -0.5 and v.max() < 1.5 and abs(v.mean() - 0.5) < 0.01
    init.normal_(p, 2.0, 0.5)
    assert abs(p.numpy().mean() - 2.0) < 0.01 and abs(p.numpy().std() - 0.5) < 0.01
    init.xavier_uniform_(p)
    bound = math.sqrt(6 / 700)
    assert np.abs(p.numpy()).max() <= bound and abs(p.numpy().std() - bound / 3**0.5) < 1e-3
    init.xavier_normal_(p, gain=2.0)
    assert abs(p.numpy().std() - 2 * math.sqrt(2 / 700)) < 1e-3
    init.kaiming_normal_(p, nonlinearity="relu")
    assert abs(p.numpy().std() - math.sqrt(2 / 300)) < 1e-3
    init.kaiming_uniform_(p, mode="fan_out", nonlinearity="relu")
    assert np.abs(p.numpy()).max() <= math.sqrt(2) * math.sqrt(3 / 400)
    init.constant_(p, 0.25)
    assert np.all(p.numpy() == 0.25) and p.requires_grad
    init.zeros_(p)
    assert not p.numpy().any()
    init.ones_(p)
    assert np.all(p.numpy() == 1)


def test_init_seeded_and_errors():
    a, b = nn.Parameter(np.zeros((3, 4))), nn.Parameter(np.zeros((3, 4)))
    lucid.random.seed(11)
    init.kaiming_uniform_(a)
    lucid.random.seed(11)
    init.kaiming_uniform_(b)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert init._calculate_fan_in_and_fan_out(lucid.zeros(16, 8, 3, 3)) == (72, 144)
    with pytest.raises(ValueError, match=r"Fan in and fan out can not be computed"):
        init.xavier_uniform_(nn.Parameter(np.zeros(5)))
    with pytest.raises(ValueError, match=r"unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert init.calculate_gain("sigmoid") == 1.0


def test_init_keeps_gpu_device_and_float16():
    gpu()
    p = nn.Parameter(np.zeros((4, 4)), dtype=lucid.Float16, device="gpu")
    init.normal_(p)
    assert p.device == "gpu" and p.dtype == lucid.Float16 and p.numpy().std() > 0


# --------------------------------------------------------------------------------------------
# training and devices


def test_small_mlp_trains():
    lucid.random.seed(0)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 4)).astype(np.float32)
    x = T(xs)
    y = lucid.tensor((xs[:, 0] * xs[:, 1] > 0).astype(np.int64))  # XOR of two signs
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    losses = []
    for _ in range(200):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        with lucid.no_grad():
            for p in model.parameters():
                p.data = p.data - 0.5 * p.grad
                p.grad = None
        losses.append(loss.item())
    assert losses[-1] < 0.4 * losses[0]


def _net():
    lucid.random.seed(0)
    return nn.Sequential(
        nn.Linear(6, 8), nn.GELU(), nn.LayerNorm(8), nn.Linear(8, 8), nn.SiLU(),
        nn.BatchNorm1d(8), nn.Dropout(0.2), nn.Linear(8, 4), nn.Sigmoid(), nn.Linear(4, 3),
    )


def test_modules_on_gpu_match_cpu():
    gpu()
    x = rnd(5, 6).astype(np.float32)
    t = lucid.tensor([0, 2, 1, 1, 0])
    results = {}
    for device in ("cpu", "gpu"):
        model = _net().to(device)
        model.eval()  # dropout off, batchnorm on running stats
        xt = T(x, device=device)
        loss = F.cross_entropy(model(xt), t.to(device))
        loss.backward()
        model.train()
        with lucid.no_grad():
            train_out = model[:6](xt)  # batch statistics
        results[device] = (loss.numpy(), [p.grad for p in model.parameters()],
                           train_out.numpy(), model[5].running_mean.numpy())
    c, g = results["cpu"], results["gpu"]
    np.testing.assert_allclose(g[0], c[0], rtol=1e-5, atol=1e-6)
    for gc, gg in zip(c[1], g[1]):
        np.testing.assert_allclose(np.asarray(gg), gc, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[2], c[2], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g[3], c[3], rtol=1e-5, atol=1e-6)


def test_attention_embedding_and_losses_on_gpu_match_cpu():
    gpu()
    idx = np.array([[1, 4, 2], [0, 3, 3]])
    out = {}
    for device in ("cpu", "gpu"):
        lucid.random.seed(2)
        emb = nn.Embedding(5, 8, padding_idx=0).to(device)
        mha = nn.MultiHeadAttention(8, 2).to(device)
        h = emb(lucid.tensor(idx, device=device))
        y, w = mha(h, h, h, key_padding_mask=T(idx == 0, device=device))
        target = T(rnd(2, 3, 8).astype(np.float32) if device == "cpu" else out["t"],
                   device=device)
        loss = F.mse_loss(y, target) + F.binary_cross_entropy_with_logits(
            y, (target > 0).astype(lucid.Float32)) + F.huber_loss(y, target)
        loss.backward()
        out[device] = (loss.item(), w.numpy(), emb.weight.grad, mha.in_proj_weight.grad)
        out["t"] = target.numpy()
    c, g = out["cpu"], out["gpu"]
    assert abs(c[0] - g[0]) < 1e-5
    for a, b in zip(c[1:], g[1:]):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)


def test_dropout_same_mask_on_gpu_under_same_seed():
    gpu()
    x = np.ones((10, 10), np.float32)
    lucid.random.seed(4)
    a = F.dropout(T(x), 0.5)
    lucid.random.seed(4)
    b = F.dropout(T(x, device="gpu"), 0.5)
    assert b.device == "gpu"
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_functional_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x, t = rnd(6, 4, 3), np.array([[0, 3, 1], [2, 2, 0], [1, -100, 3], [0, 0, 0], [3, 1, 2],
                                    [1, 2, 3]])
    w = rnd(4, low=0.5, high=2.0)
    p, q = rnd(5, 3, low=0.05, high=0.95), rnd(5, 3, low=0.0, high=1.0)
    tt = torch.from_numpy
    pairs = [
        (F.cross_entropy(T(x), T(t), weight=T(w)),
         tf.cross_entropy(tt(x), tt(t), weight=tt(w))),
        (F.cross_entropy(T(x), T(np.abs(t) % 4), ignore_index=0, reduction="none"),
         tf.cross_entropy(tt(x), tt(np.abs(t) % 4), ignore_index=0, reduction="none")),
        (F.nll_loss(T(x), T(t), reduction="sum"), tf.nll_loss(tt(x), tt(t), reduction="sum")),
        (F.binary_cross_entropy(T(p), T(q), weight=T(w[:3])),
         tf.binary_cross_entropy(tt(p), tt(q), weight=tt(w[:3]))),
        (F.binary_cross_entropy_with_logits(T(x[:, 0]), T(x[:, 1] > 0).astype(lucid.Float64),
                                            pos_weight=T(w[:3])),
         tf.binary_cross_entropy_with_logits(tt(x[:, 0]), tt((x[:, 1] > 0).astype(float)),
                                             pos_weight=tt(w[:3]))),
        (F.huber_loss(T(p), T(q), delta=0.3), tf.huber_loss(tt(p), tt(q), delta=0.3)),
        (F.layer_norm(T(x), (4, 3)), tf.layer_norm(tt(x), (4, 3))),
        (F.group_norm(T(x), 2), tf.group_norm(tt(x), 2)),
        (F.gelu(T(x)), tf.gelu(tt(x))),
        (F.gelu(T(x), "tanh"), tf.gelu(tt(x), approximate="tanh")),
        (F.elu(T(x), 0.5), tf.elu(tt(x), 0.5)),
        (F.silu(T(x)), tf.silu(tt(x))),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
    # BatchNorm running statistics after two training steps, then eval
    bn, tbn = nn.BatchNorm1d(4, dtype=lucid.Float64), torch.nn.BatchNorm1d(4).double()
    for _ in range(2):
        xb = rnd(8, 4, 3)
        np.testing.assert_allclose(bn(T(xb)).numpy(), tbn(tt(xb)).detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    for key, value in tbn.state_dict().items():
        np.testing.assert_allclose(bn.state_dict()[key], value.numpy(), rtol=1e-12)
