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


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_activation_derivatives_at_the_corners(device):
    """Where the pieces meet, the derivative PyTorch picks: hardswish 0 at -3 and 1 at 3,
    hardsigmoid and relu6 0 at their corners (finite differences cannot decide these)."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    corners = np.array([-3.0, 0.0, 3.0, 6.0])
    want = {"hardswish": [0.0, 0.5, 1.0, 1.0], "hardsigmoid": [0.0, 1 / 6, 0.0, 0.0],
            "relu6": [0.0, 0.0, 1.0, 0.0]}
    for name, grads in want.items():
        x = lucid.Tensor(corners, requires_grad=True, device=device)
        getattr(F, name)(x).sum().backward()
        np.testing.assert_allclose(np.asarray(x.grad), grads, rtol=1e-6, err_msg=name)


def test_softplus_negative_beta_and_threshold():
    x = np.array([-30.0, -3.0, -0.5, 0.0, 0.5, 3.0, 30.0])
    for beta, threshold in ((-1.0, 20.0), (-0.5, 1.0), (2.0, 5.0)):
        bx = beta * x
        want = np.where(bx > threshold, x, np.log1p(np.exp(bx)) / beta)
        got = nn.Softplus(beta, threshold)(lucid.Tensor(x)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


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


def test_losses_on_gpu_match_cpu():
    pytest.importorskip("mlx.core")
    logp = X - np.log(np.exp(X).sum(1, keepdims=True))
    q = np.exp(T) / np.exp(T).sum(1, keepdims=True)
    for fn, a, b in ((F.l1_loss, X, T), (F.smooth_l1_loss, X, T), (F.kl_div, logp, q),
                     (lambda u, v: F.kl_div(u, v, "batchmean", True), logp, np.log(q))):
        values, grads = [], []
        for device in ("cpu", "gpu"):
            u = lucid.Tensor(a.astype(np.float32), requires_grad=True, device=device)
            loss = fn(u, lucid.Tensor(b.astype(np.float32), device=device))
            loss.backward()
            values.append(loss.item())
            grads.append(lucid.Tensor(u.grad, device=device).numpy())
        assert values[1] == pytest.approx(values[0], rel=1e-5)
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-7)


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
    with pytest.raises(TypeError, match=r"ParameterList: expected an nn.Parameter or a Tensor, "
                                        "got list"):
        net.ws.append([1.0, 2.0])
    with pytest.raises(IndexError, match="ParameterList: index 5 out of range for 3"):
        net.ws[5]


def test_parameter_containers_wrap_tensors_and_keep_places():
    """As PyTorch: a plain Tensor becomes a Parameter; replacing an entry keeps its key's
    place in the state dict; a slice is a ParameterList."""
    ws = nn.ParameterList([lucid.zeros(2), lucid.ones(3), lucid.ones(4)])
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in ws)
    ws[0] = lucid.ones(5)
    assert list(ws.state_dict()) == ["0", "1", "2"] and [p.shape for p in ws] == [(5,), (3,), (4,)]
    part = ws[1:]
    assert isinstance(part, nn.ParameterList) and [p.shape for p in part] == [(3,), (4,)]
    assert part[0] is ws[1]
    d = nn.ParameterDict([("a", lucid.zeros(1)), ("b", nn.Parameter(lucid.zeros(2)))])
    d["a"] = lucid.ones(4)
    assert list(d.state_dict()) == ["a", "b"] and d["a"].shape == (4,)
    d.update({"c": lucid.zeros(3), "a": lucid.zeros(1)})
    assert list(d) == ["a", "b", "c"] and d["a"].shape == (1,)
    assert d.pop("b").shape == (2,) and list(d) == ["a", "c"] and d.get("b") is None
    del d["a"]
    assert list(d.keys()) == ["c"] and len(d) == 1
    with pytest.raises(KeyError, match=r"ParameterDict: no parameter 'zz'; the keys are \['c'\]"):
        d["zz"]
    with pytest.raises(TypeError, match="ParameterDict: expected an nn.Parameter or a Tensor"):
        d.update({"e": lucid.zeros(1), "f": "not a tensor"})
    assert list(d) == ["c"]  # the refused update changed nothing
    md = nn.ModuleDict({"x": nn.Linear(2, 2), "y": nn.Linear(2, 3)})
    md["x"] = nn.Linear(2, 4)
    assert list(md.state_dict()) == ["x.weight", "x.bias", "y.weight", "y.bias"]


def test_parameter_containers_load_pytorch_state_dicts():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Module()
    theirs.ws = torch.nn.ParameterList([torch.nn.Parameter(torch.randn(2, 3)),
                                        torch.nn.Parameter(torch.randn(4))])
    theirs.named = torch.nn.ParameterDict({"scale": torch.nn.Parameter(torch.randn(1)),
                                           "shift": torch.nn.Parameter(torch.randn(3))})
    ours = nn.Module()
    ours.ws = nn.ParameterList([lucid.zeros(2, 3, dtype=lucid.Float32),
                                lucid.zeros(4, dtype=lucid.Float32)])
    ours.named = nn.ParameterDict({"scale": lucid.zeros(1, dtype=lucid.Float32),
                                   "shift": lucid.zeros(3, dtype=lucid.Float32)})
    want = theirs.state_dict()
    assert list(ours.state_dict()) == list(want)
    ours.load_state_dict({k: v.numpy() for k, v in want.items()})
    for k, v in ours.state_dict().items():
        np.testing.assert_array_equal(v, want[k].numpy())


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


def test_clip_grad_norm_non_finite_totals_scale_like_pytorch():
    nan = _with_grads([[np.nan, 1.0], [2.0]])
    assert math.isnan(clip_grad_norm_(nan, 1.0).item())
    assert np.isnan(nan[1].grad).all()  # scaled by clamp(1 / NaN, max=1) = NaN
    inf = _with_grads([[np.inf, 1.0], [2.0]])
    with np.errstate(invalid="ignore"):  # inf * 0 in the first gradient
        assert clip_grad_norm_(inf, 1.0).item() == math.inf
    np.testing.assert_array_equal(inf[1].grad, [0.0])  # scaled by 1 / inf = 0


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_clip_grad_norm_on_a_device(device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    model = nn.Linear(3, 2).to(device)
    model(lucid.Tensor(X[:, :3], dtype=lucid.Float32, device=device)).sum().backward()
    grads = [np.asarray(lucid.Tensor(p.grad, device=device).numpy(), dtype=np.float64)
             for p in model.parameters()]
    want = math.sqrt(sum((g**2).sum() for g in grads))
    total = clip_grad_norm_(model.parameters(), max_norm=0.5)
    assert total.device == device and total.dtype == lucid.Float32
    assert total.item() == pytest.approx(want, rel=1e-6)
    for p, g in zip(model.parameters(), grads):
        np.testing.assert_allclose(lucid.Tensor(p.grad, device=device).numpy(),
                                   g * 0.5 / (want + 1e-6), rtol=1e-5)


def test_parameters_to_vector_is_part_of_the_graph():
    """As in PyTorch: a loss of the flat vector sends gradients back to the parameters."""
    model = nn.Sequential(nn.Linear(3, 2, dtype=lucid.Float64), nn.Linear(2, 1,
                                                                          dtype=lucid.Float64))
    vec = parameters_to_vector(model.parameters())
    (vec * vec).sum().backward()  # d/dp sum p^2 = 2p
    for p in model.parameters():
        np.testing.assert_allclose(p.grad, 2 * p.numpy(), rtol=1e-12)


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
                                                          torch.nn.Softplus(2.0, 5.0)),
                         (nn.Softplus(-1.0), torch.nn.Softplus(-1.0))]:
        np.testing.assert_allclose(ours(lucid.Tensor(X)).numpy(), theirs(x).numpy(), rtol=1e-12)
    corners = np.array([-3.0, 0.0, 3.0, 6.0])
    for name in ("hardswish", "hardsigmoid", "relu6"):
        ours, theirs = lucid.Tensor(corners, requires_grad=True), \
            torch.tensor(corners, requires_grad=True)
        getattr(F, name)(ours).sum().backward()
        getattr(torch.nn.functional, name)(theirs).sum().backward()
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-6, err_msg=name)
    t = torch.tensor(T)
    assert nn.SmoothL1Loss(beta=2.0)(lucid.Tensor(X), lucid.Tensor(T)).item() == pytest.approx(
        torch.nn.SmoothL1Loss(beta=2.0)(x, t).item(), rel=1e-12)


# -- layers of the second half: 3-d convolutions and pools, resampling, padding, norms ---------

def _np_pool(x, k, reduce):
    n, c, *s = x.shape
    out = np.empty((n, c, *[d // k for d in s]))
    for idx in np.ndindex(*out.shape[2:]):
        window = x[(slice(None), slice(None)) + tuple(slice(i * k, i * k + k) for i in idx)]
        out[(slice(None), slice(None)) + idx] = reduce(window.reshape(n, c, -1), axis=2)
    return out


def test_3d_pools_and_adaptive_max_pool_against_numpy():
    x = RNG.standard_normal((2, 3, 4, 6, 4))
    np.testing.assert_allclose(nn.MaxPool3d(2)(lucid.Tensor(x)).numpy(), _np_pool(x, 2, np.max))
    np.testing.assert_allclose(nn.AvgPool3d(2)(lucid.Tensor(x)).numpy(),
                               _np_pool(x, 2, np.mean), rtol=1e-12)
    img = RNG.standard_normal((2, 3, 7, 5))
    got = nn.AdaptiveMaxPool2d((3, 2))(lucid.Tensor(img)).numpy()
    for i in range(3):
        for j in range(2):
            r0, r1 = (i * 7) // 3, -((-(i + 1) * 7) // 3)
            c0, c1 = (j * 5) // 2, -((-(j + 1) * 5) // 2)
            np.testing.assert_array_equal(got[..., i, j], img[..., r0:r1, c0:c1].max((-2, -1)))
    assert gradcheck(lambda t: F.adaptive_max_pool2d(t, (3, 2)),
                     lucid.Tensor(img, requires_grad=True))


def _np_adaptive_max_first(img, oh, ow):
    """Values, flat indices and the gradient of sum(output) of PyTorch's adaptive max pool:
    the first maximum of each window in row-major order."""
    h, w = img.shape[-2:]
    out = np.empty(img.shape[:-2] + (oh, ow))
    where = np.empty(out.shape, dtype=np.int64)
    grad = np.zeros(img.shape)
    for lead in np.ndindex(*img.shape[:-2]):
        for i in range(oh):
            for j in range(ow):
                r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
                c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
                win = img[lead][r0:r1, c0:c1]
                r, c = np.unravel_index(np.argmax(win), win.shape)
                out[lead + (i, j)] = win[r, c]
                where[lead + (i, j)] = (r0 + r) * w + c0 + c
                grad[lead + (r0 + r, c0 + c)] += 1.0
    return out, where, grad


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("size", [(3, 2), (2, 5), (7, 5), (4, 1)])
def test_adaptive_max_pool_ties_and_indices(device, size):
    """Windows full of ties (a ReLU's zeros): the gradient goes to the first maximum only."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    img = np.maximum(np.round(RNG.standard_normal((2, 3, 7, 5))), 0.0).astype(np.float32)
    want, where, grad = _np_adaptive_max_first(img.astype(np.float64), *size)
    x = lucid.Tensor(img, requires_grad=True, device=device)
    out, idx = F.adaptive_max_pool2d(x, size, return_indices=True)
    np.testing.assert_array_equal(out.numpy(), want)
    np.testing.assert_array_equal(idx.numpy(), where)
    assert idx.dtype == lucid.Int64 and idx.device == device
    out.sum().backward()
    np.testing.assert_array_equal(lucid.Tensor(x.grad, device=device).numpy(), grad)
    y = nn.AdaptiveMaxPool2d(size)(lucid.Tensor(img, device=device))
    np.testing.assert_array_equal(y.numpy(), want)
    # sizes that divide take max_pool2d's path: the same first-maximum rule
    x = lucid.Tensor(img[..., :6, :4], requires_grad=True, device=device)
    F.adaptive_max_pool2d(x, (3, 2)).sum().backward()
    np.testing.assert_array_equal(lucid.Tensor(x.grad, device=device).numpy(),
                                  _np_adaptive_max_first(img[..., :6, :4], 3, 2)[2])


def test_adaptive_max_pool_against_pytorch():
    torch = pytest.importorskip("torch")
    img = np.maximum(np.round(RNG.standard_normal((2, 3, 9, 6)) * 2), 0.0)
    for size in ((3, 2), (4, 4), (9, 6), (5, None), 2):
        ours = lucid.Tensor(img, requires_grad=True)
        theirs = torch.tensor(img, requires_grad=True)
        y, i = F.adaptive_max_pool2d(ours, size, return_indices=True)
        t, ti = torch.nn.functional.adaptive_max_pool2d(theirs, size, return_indices=True)
        np.testing.assert_array_equal(y.numpy(), t.detach().numpy())
        np.testing.assert_array_equal(i.numpy(), ti.numpy())
        g = RNG.standard_normal(t.shape)
        (y * lucid.Tensor(g)).sum().backward()
        (t * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12)


def test_conv3d_and_transposed_modules_shapes_and_pytorch_state_dicts():
    lucid.random.seed(0)
    conv = nn.Conv3d(2, 4, 3, padding=1)
    assert [n for n, _ in conv.named_parameters()] == ["weight", "bias"]
    assert conv.weight.shape == (4, 2, 3, 3, 3)
    assert conv(lucid.zeros(1, 2, 5, 5, 5)).shape == (1, 4, 5, 5, 5)
    assert nn.ConvTranspose1d(2, 3, 3, stride=2)(lucid.zeros(1, 2, 5)).shape == (1, 3, 11)
    assert nn.ConvTranspose3d(2, 3, 2, stride=2)(lucid.zeros(1, 2, 2, 2, 2)).shape == \
        (1, 3, 4, 4, 4)
    torch = pytest.importorskip("torch")
    for ours, theirs, shape in [
            (nn.Conv3d(2, 4, 3, padding=1), torch.nn.Conv3d(2, 4, 3, padding=1), (1, 2, 4, 5, 3)),
            (nn.ConvTranspose1d(2, 3, 3, stride=2), torch.nn.ConvTranspose1d(2, 3, 3, stride=2),
             (1, 2, 5)),
            (nn.Bilinear(3, 4, 2), torch.nn.Bilinear(3, 4, 2), None)]:
        ours.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        if shape is None:
            a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 4))
            want = theirs(torch.tensor(a, dtype=torch.float32),
                          torch.tensor(b, dtype=torch.float32)).detach().numpy()
            got = ours(lucid.Tensor(a, dtype=lucid.Float32), lucid.Tensor(b, dtype=lucid.Float32))
        else:
            x = RNG.standard_normal(shape)
            want = theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy()
            got = ours(lucid.Tensor(x, dtype=lucid.Float32))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode,np_mode", [("constant", "constant"), ("reflect", "reflect"),
                                          ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes_against_numpy(mode, np_mode):
    x = RNG.standard_normal((2, 3, 5, 4))
    got = F.pad(lucid.Tensor(x), (1, 2, 3, 0), mode=mode).numpy()
    np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (3, 0), (1, 2)), mode=np_mode))
    assert gradcheck(lambda t: F.pad(t, (1, 2, 3, 0), mode=mode),
                     lucid.Tensor(x, requires_grad=True))


def test_pad_negative_crops_and_value():
    x = RNG.standard_normal((2, 3, 5, 4))
    got = F.pad(lucid.Tensor(x), (-1, 2, 1, -2), value=1.5).numpy()
    want = np.pad(x[:, :, :3, 1:], ((0, 0), (0, 0), (1, 0), (0, 2)), constant_values=1.5)
    np.testing.assert_array_equal(got, want)
    assert F.pad(lucid.Tensor(x), (-2, -2)).shape == (2, 3, 5, 0)
    assert gradcheck(lambda t: F.pad(t, (-1, 2, 1, -2)), lucid.Tensor(x, requires_grad=True))


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_on_gpu_matches_cpu(mode):
    pytest.importorskip("mlx.core")
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    cpu = lucid.Tensor(x, requires_grad=True)
    gpu = lucid.Tensor(x, requires_grad=True, device="gpu")
    ys = [F.pad(t, (1, 2, 3, 0), mode=mode) for t in (cpu, gpu)]
    np.testing.assert_array_equal(ys[1].numpy(), ys[0].numpy())
    g = RNG.standard_normal(ys[0].shape).astype(np.float32)
    for y, d in zip(ys, ("cpu", "gpu")):
        (y * lucid.Tensor(g, device=d)).sum().backward()
    np.testing.assert_allclose(lucid.Tensor(gpu.grad, device="gpu").numpy(), cpu.grad,
                               rtol=1e-6)


def test_pad_against_pytorch():
    torch = pytest.importorskip("torch")
    x4 = RNG.standard_normal((2, 3, 5, 4))
    for mode, pad, x in (("constant", (1, 2, 3, 0), x4), ("constant", (-1, 2, 1, -2), x4),
                         ("reflect", (3, 1, 4, 2), x4), ("replicate", (2, 5, 0, 1), x4),
                         ("circular", (4, 1, 2, 5), x4), ("reflect", (2, 1), x4[0]),
                         ("replicate", (1, 2, 0, 1, 2, 2), x4[None])):
        ours = lucid.Tensor(x, requires_grad=True)
        theirs = torch.tensor(x, requires_grad=True)
        y, t = F.pad(ours, pad, mode), torch.nn.functional.pad(theirs, pad, mode)
        np.testing.assert_array_equal(y.numpy(), t.detach().numpy())
        g = RNG.standard_normal(t.shape)
        (y * lucid.Tensor(g)).sum().backward()
        (t * torch.tensor(g)).sum().backward()
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_pad_errors():
    x = lucid.zeros(1, 2, 3)
    with pytest.raises(ValueError, match="pad: mode must be one of constant, reflect"):
        F.pad(x, (1, 1), mode="mirror")
    with pytest.raises(ValueError, match=r"pad: reflect padding \(3, 0\) must be smaller"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="pad: pad must hold"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match=r"pad: negative pad sizes crop only in 'constant'"):
        F.pad(x, (-1, 1), mode="replicate")
    with pytest.raises(ValueError, match=r"pad: axis 2 of size 3 padded by \(-2, -2\) would"):
        F.pad(x, (-2, -2))
    with pytest.raises(ValueError, match="pad: value applies only to mode 'constant'"):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    with pytest.raises(TypeError, match=r"pad: pad sizes must be ints, got \(1.5, 1\)"):
        F.pad(x, (1.5, 1))


def _np_nearest_axis(x, axis, n_out, factor=None, two_d=False):
    """PyTorch's "nearest" index, written out: floor(i * scale) of a float32 product (its
    kernels floor with floorf), scale = 1 / factor or in / out; the 2-D kernel computes in
    float32 and copies (out == in) or halves (out == 2 in) outright."""
    n_in = x.shape[axis]
    if two_d and n_out == n_in:
        return x.copy()
    if two_d and n_out == 2 * n_in:
        return np.take(x, np.arange(n_out) // 2, axis)
    real = np.float32 if two_d or x.dtype == np.float32 else np.float64
    scale = real(1.0 / factor) if factor else real(n_in) / real(n_out)
    src = (np.arange(n_out).astype(real) * scale).astype(np.float32)
    return np.take(x, np.minimum(np.floor(src).astype(int), n_in - 1), axis)


def _np_linear_axis(x, axis, n_out, align, factor=None):
    """PyTorch's linear index and weight: s = i (in-1)/(out-1) (align_corners) or
    (i + 0.5) scale - 0.5 clamped at 0; an axis of unchanged size is copied."""
    n_in = x.shape[axis]
    if n_out == n_in:
        return x.copy()
    out = []
    for i in range(n_out):
        if align:
            src = i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        else:
            scale = 1.0 / factor if factor else n_in / n_out
            src = max((i + 0.5) * scale - 0.5, 0.0)
        i0 = min(int(np.floor(src)), n_in - 1)
        i1 = min(i0 + 1, n_in - 1)
        w = src - i0
        out.append(np.take(x, i0, axis) * (1 - w) + np.take(x, i1, axis) * w)
    return np.stack(out, axis)


@pytest.mark.parametrize("size", [(7, 9), (3, 2), (5, 4), (10, 3)])
def test_interpolate_against_numpy(size):
    x = RNG.standard_normal((2, 3, 5, 4))
    want = _np_nearest_axis(_np_nearest_axis(x, 2, size[0], two_d=True), 3, size[1], two_d=True)
    np.testing.assert_array_equal(F.interpolate(lucid.Tensor(x), size=size).numpy(), want)
    for align in (False, True):
        want = _np_linear_axis(_np_linear_axis(x, 2, size[0], align), 3, size[1], align)
        got = nn.Upsample(size=size, mode="bilinear", align_corners=align)(lucid.Tensor(x))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda t: F.interpolate(t, size=size, mode="bilinear"),
                     lucid.Tensor(x, requires_grad=True))
    assert gradcheck(lambda t: F.interpolate(t, size=size), lucid.Tensor(x, requires_grad=True))


def test_interpolate_index_roundings_and_scale_factors():
    """The cases where PyTorch's arithmetic decides: a float32 floor (55 * 18/66 is
    14.99... in float64, 15 in float32), a scale_factor that keeps the size (1-D nearest
    still scales by 1/1.1; 2-D nearest and every linear mode copy), recompute_scale_factor."""
    row = np.arange(18.0).reshape(1, 1, 18)
    got = F.interpolate(lucid.Tensor(row), size=66).numpy()[0, 0]
    assert got[55] == 15.0
    np.testing.assert_array_equal(got, _np_nearest_axis(row, 2, 66)[0, 0])
    five = np.arange(5.0).reshape(1, 1, 5)
    np.testing.assert_array_equal(F.interpolate(lucid.Tensor(five), scale_factor=1.1).numpy(),
                                  [[[0.0, 0.0, 1.0, 2.0, 3.0]]])
    np.testing.assert_array_equal(
        F.interpolate(lucid.Tensor(five), scale_factor=1.1, mode="linear").numpy(), five)
    np.testing.assert_array_equal(
        F.interpolate(lucid.Tensor(five.reshape(1, 1, 5, 1)), scale_factor=(1.1, 1)).numpy(),
        five.reshape(1, 1, 5, 1))
    # scale_factor 1.5 on 4 samples: 6 outputs, scale 1/1.5; recomputed: scale 4/6 (the same)
    # but 1.3 on 7: 9 outputs, scale 1/1.3 against 7/9
    seven = RNG.standard_normal((1, 2, 7))
    for recompute, factor in ((None, 1.3), (True, None)):
        got = F.interpolate(lucid.Tensor(seven), scale_factor=1.3, mode="linear",
                            recompute_scale_factor=recompute).numpy()
        np.testing.assert_allclose(got, _np_linear_axis(seven, 2, 9, False, factor), rtol=1e-12)
        got = F.interpolate(lucid.Tensor(seven), scale_factor=1.3,
                            recompute_scale_factor=recompute).numpy()
        np.testing.assert_array_equal(got, _np_nearest_axis(seven, 2, 9, factor))
    vol = RNG.standard_normal((1, 2, 3, 4, 2))
    want = vol
    for axis, n in ((2, 5), (3, 3), (4, 4)):
        want = _np_linear_axis(want, axis, n, True)
    got = F.interpolate(lucid.Tensor(vol), size=(5, 3, 4), mode="trilinear", align_corners=True)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda t: F.interpolate(t, scale_factor=(1.5, 0.5, 2), mode="trilinear"),
                     lucid.Tensor(vol, requires_grad=True))


def test_interpolate_on_gpu_matches_cpu():
    pytest.importorskip("mlx.core")
    x = RNG.standard_normal((2, 3, 5, 4)).astype(np.float32)
    for mode, align in (("nearest", None), ("bilinear", False), ("bilinear", True)):
        for kw in ({"size": (9, 3)}, {"scale_factor": 1.7}):
            cpu = lucid.Tensor(x, requires_grad=True)
            gpu = lucid.Tensor(x, requires_grad=True, device="gpu")
            ys = [F.interpolate(t, mode=mode, align_corners=align, **kw) for t in (cpu, gpu)]
            np.testing.assert_allclose(ys[1].numpy(), ys[0].numpy(), rtol=1e-6, atol=1e-6)
            for y in ys:
                (y * y).sum().backward()
            np.testing.assert_allclose(lucid.Tensor(gpu.grad, device="gpu").numpy(),
                                       cpu.grad, rtol=1e-5, atol=1e-5)


def test_interpolate_against_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for _ in range(150):
        d = int(rng.integers(1, 4))
        spatial = tuple(int(v) for v in rng.integers(1, 10, d))
        if rng.random() < 0.5:
            kw = {"size": tuple(int(v) for v in rng.integers(1, 30, d))}
        else:
            kw = {"scale_factor": tuple(float(v) for v in rng.choice(
                [0.5, 1.0, 1.1, 1.5, 2.0, 2.01, 1 / 3, 0.7, 3.3], d))}
            if min(int(s * f) for s, f in zip(spatial, kw["scale_factor"])) < 1:
                continue
        x = rng.standard_normal((2, 3) + spatial).astype(np.float32)
        linear = {1: "linear", 2: "bilinear", 3: "trilinear"}[d]
        for mode, align in (("nearest", None), (linear, False), (linear, True)):
            want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode,
                                                   align_corners=align, **kw).numpy()
            got = F.interpolate(lucid.Tensor(x), mode=mode, align_corners=align, **kw).numpy()
            if mode == "nearest":
                np.testing.assert_array_equal(got, want, err_msg=f"{spatial} {kw}")
            else:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{mode} {align} {spatial} {kw}")


def test_interpolate_errors():
    x = lucid.zeros(1, 2, 3, 3)
    with pytest.raises(ValueError, match="interpolate: give exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="interpolate: mode 'linear' needs 1 spatial axis"):
        F.interpolate(x, size=4, mode="linear")
    with pytest.raises(ValueError, match="interpolate: recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=4, recompute_scale_factor=True)
    with pytest.raises(ValueError, match=r"interpolate: scale_factor 0.1 leaves no output"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(ValueError, match="interpolate: align_corners only applies"):
        F.interpolate(x, size=4, align_corners=True)


def test_channel_dropouts_and_drop_path():
    lucid.random.seed(1)
    x = lucid.ones(8, 6, 3, 3)
    y = nn.Dropout2d(0.5)(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y == y[:, :, :1, :1]).all()  # whole feature maps kept or dropped
    assert 0 < (y[:, :, 0, 0] == 0).mean() < 1
    layer = nn.Dropout1d(0.3).eval()
    assert layer(lucid.ones(2, 3, 4)) is not None and \
        np.array_equal(layer(lucid.ones(2, 3, 4)).numpy(), np.ones((2, 3, 4)))
    with pytest.raises(ValueError, match=r"dropout1d: expected a \(N, C, 1 spatial\)"):
        F.dropout1d(lucid.ones(2, 3, 4, 5), 0.5)
    z = nn.DropPath(0.5)(lucid.ones(16, 4)).numpy()
    assert set(np.unique(z)) <= {0.0, 2.0} and (z == z[:, :1]).all()
    assert np.array_equal(nn.DropPath(0.5).eval()(lucid.ones(3, 2)).numpy(), np.ones((3, 2)))


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_channel_dropout_masks_and_rates(device):
    """One Bernoulli(1 - p) draw per (sample, channel), kept maps scaled by 1 / (1 - p);
    unbatched inputs draw one per channel; about p of the channels are dropped."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    lucid.random.seed(3)
    for fn, shape in ((F.dropout1d, (40, 50, 3)), (F.dropout2d, (40, 50, 2, 3)),
                      (F.dropout3d, (40, 50, 2, 2, 2)), (F.dropout2d, (50, 2, 3))):
        x = lucid.Tensor(np.ones(shape, np.float32), requires_grad=True, device=device)
        y = fn(x, 0.3)
        spatial = {F.dropout1d: 1, F.dropout2d: 2, F.dropout3d: 3}[fn]
        maps = y.numpy().reshape(shape[:len(shape) - spatial] + (-1,))
        assert (maps == maps[..., :1]).all()  # whole channels
        np.testing.assert_allclose(np.unique(maps), [0.0, 1 / 0.7], rtol=1e-6)
        draws = maps[..., 0].size  # within 4 standard deviations of p
        assert abs((maps[..., 0] == 0).mean() - 0.3) < 4 * math.sqrt(0.21 / draws)
        y.sum().backward()  # the gradient is the same mask
        np.testing.assert_allclose(lucid.Tensor(x.grad, device=device).numpy(), y.numpy(),
                                   rtol=1e-6)
    x = lucid.Tensor(np.ones((200, 3, 2), np.float32), device=device)
    z = nn.DropPath(0.25).train()(x).numpy()
    assert (z == z[:, :1, :1]).all()
    assert abs((z[:, 0, 0] == 0).mean() - 0.25) < 4 * math.sqrt(0.25 * 0.75 / 200)
    np.testing.assert_allclose(np.unique(z), [0.0, 1 / 0.75], rtol=1e-6)
    z = nn.DropPath(0.25, scale_by_keep=False).train()(x).numpy()
    np.testing.assert_array_equal(np.unique(z), [0.0, 1.0])
    np.testing.assert_array_equal(F.drop_path(x, 1.0, training=True).numpy(), 0 * z)
    with pytest.raises(ValueError, match=r"dropout2d: p must be a probability in \[0, 1\]"):
        F.dropout2d(x, 1.5)
    with pytest.raises(ValueError, match=r"DropPath: drop_prob must be a probability"):
        nn.DropPath(-0.1)


def test_instance_norm_against_numpy_and_errors():
    x = RNG.standard_normal((2, 3, 7))
    w, b = RNG.standard_normal(3), RNG.standard_normal(3)
    mu, var = x.mean(2, keepdims=True), x.var(2, keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-3) * w[:, None] + b[:, None]
    got = F.instance_norm(lucid.Tensor(x), weight=lucid.Tensor(w), bias=lucid.Tensor(b),
                          eps=1e-3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)
    assert gradcheck(lambda t, ww, bb: F.instance_norm(t, None, None, ww, bb),
                     lucid.Tensor(x, requires_grad=True), lucid.Tensor(w, requires_grad=True),
                     lucid.Tensor(b, requires_grad=True))
    layer = nn.InstanceNorm1d(3, affine=True)
    np.testing.assert_allclose(layer(lucid.Tensor(x[0])).numpy(),
                               ((x - mu) / np.sqrt(var + 1e-5))[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"instance_norm: expected more than 1 spatial element "
                                         r"per channel, got input of shape \(2,3,1\)"):
        F.instance_norm(lucid.Tensor(x[..., :1]))
    with pytest.raises(NotImplementedError, match="instance_norm: running statistics"):
        F.instance_norm(lucid.Tensor(x), lucid.zeros(3), lucid.ones(3))
    with pytest.raises(NotImplementedError, match="InstanceNorm2d: track_running_stats=True"):
        nn.InstanceNorm2d(3, track_running_stats=True)
    with pytest.raises(ValueError, match=r"instance_norm: weight must be a Tensor of shape"):
        nn.InstanceNorm1d(4, affine=True)(lucid.Tensor(x))


def test_normalize_bilinear_embedding_against_pytorch():
    torch = pytest.importorskip("torch")
    v = RNG.standard_normal((4, 3, 5))
    v[0, :, 0] = 0.0
    for p, dim in ((2.0, 1), (1.0, -1), (3.0, 0), (math.inf, 2)):
        ours, theirs = lucid.Tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
        y, t = F.normalize(ours, p, dim), torch.nn.functional.normalize(theirs, p, dim)
        np.testing.assert_allclose(y.numpy(), t.detach().numpy(), rtol=1e-12)
        y.sum().backward()
        t.sum().backward()
        np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-10)
    x = RNG.standard_normal((2, 3, 6, 5))
    theirs = torch.nn.InstanceNorm2d(3, affine=True)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = nn.InstanceNorm2d(3, affine=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    np.testing.assert_allclose(ours(lucid.Tensor(x, dtype=lucid.Float32)).numpy(),
                               theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    table = RNG.standard_normal((8, 4)).astype(np.float32) * 2
    for norm_type in (2.0, 1.0, 3.0):
        ours = nn.Embedding(8, 4, max_norm=1.5, norm_type=norm_type)
        ours.weight.data = table.copy()
        theirs = torch.nn.Embedding(8, 4, max_norm=1.5, norm_type=norm_type)
        with torch.no_grad():
            theirs.weight.copy_(torch.tensor(table))
        idx = np.array([[1, 5, 1], [7, 0, 5]])
        np.testing.assert_allclose(ours(lucid.Tensor(idx)).numpy(),
                                   theirs(torch.tensor(idx)).detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(ours.weight.numpy(), theirs.weight.detach().numpy(),
                                   rtol=1e-6)


def test_instance_norm_normalize_bilinear_embedding_max_norm():
    x = RNG.standard_normal((2, 3, 5, 4))
    mu = x.mean((2, 3), keepdims=True)
    ref = (x - mu) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(nn.InstanceNorm2d(3)(lucid.Tensor(x)).numpy(), ref, rtol=1e-10)
    assert list(nn.InstanceNorm2d(3).parameters()) == []
    assert [n for n, _ in nn.InstanceNorm1d(3, affine=True).named_parameters()] == \
        ["weight", "bias"]
    assert gradcheck(lambda t: F.instance_norm(t), lucid.Tensor(x, requires_grad=True))
    v = RNG.standard_normal((4, 3))
    v[0] = 0.0
    want = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    np.testing.assert_allclose(F.normalize(lucid.Tensor(v)).numpy(), want, rtol=1e-12)
    a, b = RNG.standard_normal((5, 3)), RNG.standard_normal((5, 4))
    w, bias = RNG.standard_normal((2, 3, 4)), RNG.standard_normal(2)
    np.testing.assert_allclose(
        F.bilinear(lucid.Tensor(a), lucid.Tensor(b), lucid.Tensor(w), lucid.Tensor(bias)).numpy(),
        np.einsum("bi,oij,bj->bo", a, w, b) + bias, rtol=1e-12)
    with pytest.raises(ValueError, match=r"bilinear: bias must be a Tensor of shape \(2,\)"):
        F.bilinear(lucid.Tensor(a), lucid.Tensor(b), lucid.Tensor(w), lucid.zeros(1))
    assert gradcheck(F.bilinear, *(lucid.Tensor(t, requires_grad=True) for t in (a, b, w, bias)))
    table = RNG.standard_normal((6, 3)) * 3
    emb = nn.Embedding(6, 3, max_norm=1.0, dtype=lucid.Float64)
    emb.weight.data = table.copy()
    version = emb.weight._version
    out = emb(lucid.Tensor(np.array([1, 4, 1]))).numpy()
    norms = np.linalg.norm(table, axis=1)
    expected = table.copy()
    for r in (1, 4):
        if norms[r] > 1:
            expected[r] *= 1.0 / (norms[r] + 1e-7)
    np.testing.assert_allclose(emb.weight.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(out, expected[[1, 4, 1]], rtol=1e-12)
    assert emb.weight._version == version + 1


def test_unfold_and_fold_modules():
    x = RNG.standard_normal((2, 3, 4, 5))
    cols = nn.Unfold(3, padding=1)(lucid.Tensor(x))
    assert cols.shape == (2, 27, 20)
    back = nn.Fold((4, 5), 3, padding=1)(cols).numpy()
    # each pixel comes back once per window that covers it
    ones = np.ones((1, 1, 4, 5))
    counts = nn.Fold((4, 5), 3, padding=1)(nn.Unfold(3, padding=1)(lucid.Tensor(ones))).numpy()
    np.testing.assert_allclose(back, x * counts, rtol=1e-12)
    assert counts[0, 0, 0, 0] == 4 and counts[0, 0, 1, 1] == 9
    single = nn.Fold((4, 5), 3, padding=1)(cols[0]).numpy()  # unbatched (C·k·k, L)
    np.testing.assert_allclose(single, back[0], rtol=1e-12)
    assert nn.Unfold(3, padding=1)(lucid.Tensor(x[0])).shape == (27, 20)


def test_unfold_and_fold_against_pytorch():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((2, 3, 6, 7))
    args = {"kernel_size": (2, 3), "dilation": (2, 1), "padding": 1, "stride": (2, 1)}
    ours, theirs = lucid.Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cols, tcols = F.unfold(ours, **args), torch.nn.functional.unfold(theirs, **args)
    np.testing.assert_allclose(cols.numpy(), tcols.detach().numpy(), rtol=1e-12)
    back = F.fold(cols, (6, 7), **args)
    tback = torch.nn.functional.fold(tcols, (6, 7), **args)
    np.testing.assert_allclose(back.numpy(), tback.detach().numpy(), rtol=1e-12)
    g = RNG.standard_normal(tuple(tback.shape))
    (back * lucid.Tensor(g)).sum().backward()
    (tback * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.grad, theirs.grad.numpy(), rtol=1e-12)


def test_3d_pools_convs_and_transposed_1d_gradients_against_pytorch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x5 = RNG.standard_normal((2, 3, 4, 6, 5))
    x3 = RNG.standard_normal((2, 3, 7))
    cases = [
        (lambda a: F.max_pool3d(a, 2, 1, 1), lambda a: tf.max_pool3d(a, 2, 1, 1), (x5,)),
        (lambda a: F.avg_pool3d(a, (2, 3, 2), 2, (1, 1, 0)),
         lambda a: tf.avg_pool3d(a, (2, 3, 2), 2, (1, 1, 0)), (x5,)),
        (lambda a, w, b: F.conv3d(a, w, b, (1, 2, 1), 1, (1, 1, 2)),
         lambda a, w, b: tf.conv3d(a, w, b, (1, 2, 1), 1, (1, 1, 2)),
         (x5, RNG.standard_normal((4, 3, 2, 3, 2)), RNG.standard_normal(4))),
        (lambda a, w, b: F.conv_transpose1d(a, w, b, 2, 1, 1),
         lambda a, w, b: tf.conv_transpose1d(a, w, b, 2, 1, 1),
         (x3, RNG.standard_normal((3, 4, 3)), RNG.standard_normal(4))),
    ]
    for ours_fn, theirs_fn, arrays in cases:
        ours = [lucid.Tensor(a, requires_grad=True) for a in arrays]
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        y, t = ours_fn(*ours), theirs_fn(*theirs)
        np.testing.assert_allclose(y.numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)
        g = RNG.standard_normal(tuple(t.shape))
        (y * lucid.Tensor(g)).sum().backward()
        (t * torch.tensor(g)).sum().backward()
        for o, th in zip(ours, theirs):
            np.testing.assert_allclose(o.grad, th.grad.numpy(), rtol=1e-10, atol=1e-12)


# -- label smoothing, and a batch whose every target is ignored ------------------------------
def _smoothed_ce_reference(x, t, w, eps, ignore, reduction):
    """PyTorch's definition in float64: (1 - eps) * weighted NLL + eps * the cross-entropy
    against the uniform target, both 0 for ignored samples; "mean" divides each by the sum
    of the weights of the samples kept."""
    c = x.shape[1]
    z = x - x.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    w = np.ones(c) if w is None else w
    kept = t != ignore
    safe = np.where(kept, t, 0)
    picked = np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    nll = np.where(kept, -w[safe] * picked, 0.0)
    uniform = np.where(kept, -(logp * w).sum(1) / c, 0.0)
    per = (1 - eps) * nll + eps * uniform
    if reduction == "none":
        return per
    if reduction == "sum":
        return per.sum()
    return per.sum() / np.where(kept, w[safe], 0.0).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing_matches_pytorchs_definition(reduction, weighted):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(5, 4))
    t = np.array([0, 3, 1, 1, 2])
    w = rng.uniform(0.5, 2.0, 4) if weighted else None
    want = _smoothed_ce_reference(x, t, w, 0.2, 1, reduction)
    for device in ("cpu", "gpu"):
        xt = lucid.Tensor(x, requires_grad=True, device=device)
        got = F.cross_entropy(xt, lucid.Tensor(t, device=device),
                              None if w is None else lucid.Tensor(w, device=device),
                              ignore_index=1, reduction=reduction, label_smoothing=0.2)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10 if device == "cpu" else 1e-7)
        got.sum().backward()
        fd = np.zeros_like(x)  # central differences of the float64 reference
        for i in np.ndindex(x.shape):
            d = np.zeros_like(x)
            d[i] = 1e-6
            fd[i] = (_smoothed_ce_reference(x + d, t, w, 0.2, 1, reduction).sum()
                     - _smoothed_ce_reference(x - d, t, w, 0.2, 1, reduction).sum()) / 2e-6
        np.testing.assert_allclose(np.asarray(xt.grad), fd, rtol=1e-6, atol=1e-7)
    module = nn.CrossEntropyLoss(ignore_index=1, reduction=reduction, label_smoothing=0.2,
                                 weight=None if w is None else lucid.Tensor(w))
    np.testing.assert_allclose(module(lucid.Tensor(x), lucid.Tensor(t)).numpy(), want,
                               rtol=1e-10)


def test_label_smoothing_of_probabilities_mixes_in_the_uniform_distribution():
    rng = np.random.default_rng(4)
    x, p = rng.normal(size=(3, 4)), rng.dirichlet(np.ones(4), 3)
    z = x - x.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    want = -(((1 - 0.3) * p + 0.3 / 4) * logp).sum(1).mean()
    got = F.cross_entropy(lucid.Tensor(x), lucid.Tensor(p), label_smoothing=0.3)
    np.testing.assert_allclose(got.item(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="^cross_entropy: label_smoothing must be between 0 "
                                         "and 1, got 1.5"):
        F.cross_entropy(lucid.Tensor(x), lucid.Tensor(p), label_smoothing=1.5)


@pytest.mark.parametrize("loss", [
    lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=0),
    lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=0, label_smoothing=0.1),
    lambda x, t, w: F.nll_loss(F.log_softmax(x, 1), t, w, ignore_index=0),
], ids=["cross_entropy", "label_smoothing", "nll_loss"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_batch_whose_every_target_is_ignored_has_zero_gradients(loss, weighted):
    """The "mean" of no sample is 0/0, NaN, as in PyTorch; but nothing is learnt from an
    ignored sample, so the gradients are 0 (they were NaN: 0 * 1/0)."""
    for device in ("cpu", "gpu"):
        x = lucid.Tensor(np.array([[1.1, 0.5], [0.9, 1.0]]), requires_grad=True,
                         device=device)
        w = lucid.Tensor(np.array([0.5, 2.0]), device=device) if weighted else None
        y = loss(x, lucid.Tensor(np.array([0, 0]), device=device), w)
        assert math.isnan(y.item())
        y.backward()
        np.testing.assert_array_equal(np.asarray(x.grad), np.zeros((2, 2)))
