"""lucid.optim: every update rule against NumPy float64 references written from the published
equations, on cpu and gpu; param groups, state_dict round trips, device moves, errors."""

from __future__ import annotations

import importlib.util
import io
import math
import os

import numpy as np
import pytest

import lucid
import lucid.optim as optim
from lucid.nn import Buffer, Module, Parameter
from lucid.serialization import load, save

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]


# --------------------------------------------------------------------------------------------
# references: one function per rule, from the papers / PyTorch's documented algorithms,
# in float64, returning the parameter after every step


def ref_sgd(x, grads, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    out, buf = [], None
    for t, g in enumerate(grads, start=1):
        d = g + weight_decay * x
        if momentum:
            buf = d.copy() if t == 1 else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        x = x - lr * d
        out.append(x)
    return out


def ref_adam(x, grads, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             decoupled=False):
    b1, b2 = betas
    m = np.zeros_like(x)
    v = np.zeros_like(x)
    vmax = np.zeros_like(x)
    out = []
    for t, g in enumerate(grads, start=1):
        if decoupled:
            x = x - lr * weight_decay * x
        else:
            g = g + weight_decay * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat = m / (1 - b1**t)
        if amsgrad:
            vmax = np.maximum(vmax, v)
            v_hat = vmax / (1 - b2**t)
        else:
            v_hat = v / (1 - b2**t)
        x = x - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(x)
    return out


def ref_adamw(x, grads, lr, weight_decay=1e-2, **kw):
    return ref_adam(x, grads, lr, weight_decay=weight_decay, decoupled=True, **kw)


def ref_rmsprop(x, grads, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False):
    sq = np.zeros_like(x)
    avg = np.zeros_like(x)
    buf = np.zeros_like(x)
    out = []
    for g in grads:
        g = g + weight_decay * x
        sq = alpha * sq + (1 - alpha) * g * g
        if centered:
            avg = alpha * avg + (1 - alpha) * g
            denom = np.sqrt(sq - avg**2) + eps
        else:
            denom = np.sqrt(sq) + eps
        if momentum:
            buf = momentum * buf + g / denom
            x = x - lr * buf
        else:
            x = x - lr * g / denom
        out.append(x)
    return out


def ref_adagrad(x, grads, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                eps=1e-10):
    acc = np.full_like(x, initial_accumulator_value)
    out = []
    for t, g in enumerate(grads, start=1):
        g = g + weight_decay * x
        clr = lr / (1 + (t - 1) * lr_decay)
        acc = acc + g * g
        x = x - clr * g / (np.sqrt(acc) + eps)
        out.append(x)
    return out


def ref_nadam(x, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              momentum_decay=4e-3, decoupled_weight_decay=False):
    b1, b2 = betas
    m, v, mu_prod = np.zeros_like(x), np.zeros_like(x), 1.0
    out = []
    for t, g in enumerate(grads, start=1):
        if decoupled_weight_decay:
            x = x * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * x
        mu_t = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_t1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_prod = mu_prod * mu_t
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        v_hat = v / (1 - b2**t)
        m_bar = (mu_t1 * m / (1 - mu_prod * mu_t1)) + ((1 - mu_t) * g / (1 - mu_prod))
        x = x - lr * m_bar / (np.sqrt(v_hat) + eps)
        out.append(x)
    return out


def ref_radam(x, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              decoupled_weight_decay=False):
    b1, b2 = betas
    m, v = np.zeros_like(x), np.zeros_like(x)
    rho_inf = 2 / (1 - b2) - 1
    out = []
    for t, g in enumerate(grads, start=1):
        if decoupled_weight_decay:
            x = x * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * x
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g**2
        m_hat = m / (1 - b1**t)
        rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho_t > 5:
            l_t = np.sqrt(1 - b2**t) / (np.sqrt(v) + eps)
            r_t = np.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                          / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            x = x - lr * m_hat * l_t * r_t
        else:
            x = x - lr * m_hat
        out.append(x)
    return out


def ref_adamax(x, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    m, u = np.zeros_like(x), np.zeros_like(x)
    out = []
    for t, g in enumerate(grads, start=1):
        g = g + weight_decay * x
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        x = x - lr / (1 - b1**t) * m / u
        out.append(x)
    return out


def ref_adadelta(x, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0):
    v, u = np.zeros_like(x), np.zeros_like(x)
    out = []
    for g in grads:
        g = g + weight_decay * x
        v = rho * v + (1 - rho) * g**2
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta**2
        x = x - lr * delta
        out.append(x)
    return out


CASES = [
    ("SGD", ref_sgd, {"lr": 0.1}),
    ("SGD", ref_sgd, {"lr": 0.1, "momentum": 0.9}),
    ("SGD", ref_sgd, {"lr": 0.05, "momentum": 0.8, "dampening": 0.25, "weight_decay": 0.1}),
    ("SGD", ref_sgd, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", ref_sgd, {"lr": 0.1, "momentum": 0.7, "nesterov": True, "weight_decay": 0.05}),
    ("Adam", ref_adam, {"lr": 0.01}),
    ("Adam", ref_adam, {"lr": 0.02, "betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", ref_adam, {"lr": 0.01, "amsgrad": True}),
    ("Adam", ref_adam, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.2, "betas": (0.5, 0.9)}),
    ("AdamW", ref_adamw, {"lr": 0.01}),
    ("AdamW", ref_adamw, {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01, "alpha": 0.9, "momentum": 0.5}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01, "centered": True}),
    ("RMSprop", ref_rmsprop, {"lr": 0.01, "centered": True, "momentum": 0.3,
                              "weight_decay": 0.1}),
    ("Adagrad", ref_adagrad, {"lr": 0.1}),
    ("Adagrad", ref_adagrad, {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.05,
                              "initial_accumulator_value": 0.5, "eps": 1e-8}),
    ("NAdam", ref_nadam, {}),
    ("NAdam", ref_nadam, {"lr": 0.01, "betas": (0.8, 0.95), "weight_decay": 0.1,
                          "momentum_decay": 0.05}),
    ("NAdam", ref_nadam, {"lr": 0.01, "weight_decay": 0.2, "decoupled_weight_decay": True}),
    ("RAdam", ref_radam, {}),
    # beta2 = 0.9: rho_inf = 19, so the rectified (adaptive) step starts at step 4
    ("RAdam", ref_radam, {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
    ("RAdam", ref_radam, {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.2,
                          "decoupled_weight_decay": True}),
    ("Adamax", ref_adamax, {}),
    ("Adamax", ref_adamax, {"lr": 0.01, "betas": (0.5, 0.9), "eps": 1e-6,
                            "weight_decay": 0.1}),
    ("Adadelta", ref_adadelta, {}),
    ("Adadelta", ref_adadelta, {"lr": 0.5, "rho": 0.5, "eps": 1e-4, "weight_decay": 0.1}),
]


def _problem(seed=0, n=6, steps=7):
    rng = np.random.default_rng(seed)
    x0 = rng.standard_normal((2, 3))
    # gradients of very different sizes from step to step (a burst at step 2)
    grads = [rng.standard_normal((2, 3)) * (20.0 if t == 1 else 1.0) for t in range(steps)]
    return x0, grads


def _run(name, kw, x0, grads, device, dtype=np.float64):
    p = Parameter(x0.astype(dtype), device=device)
    opt = getattr(optim, name)([p], **kw)
    out = []
    for g in grads:
        p.grad = lucid.Tensor(g.astype(dtype), device=device).data
        opt.step()
        out.append(p.numpy().astype(np.float64))
    return out, p, opt


def _tol(device):
    return {"rtol": 1e-12, "atol": 1e-13} if device == "cpu" else {"rtol": 2e-5, "atol": 2e-6}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,ref,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_matches_reference_every_step(name, ref, kw, device):
    x0, grads = _problem()
    dtype = np.float64 if device == "cpu" else np.float32
    # the reference sees exactly the inputs the optimizer sees (float32 on gpu)
    x0 = x0.astype(dtype).astype(np.float64)
    grads = [g.astype(dtype).astype(np.float64) for g in grads]
    got, p, _ = _run(name, kw, x0, grads, device, dtype)
    want = ref(x0, grads, **kw)
    for t, (a, b) in enumerate(zip(got, want), start=1):
        np.testing.assert_allclose(a, b, **_tol(device), err_msg=f"step {t}")
    assert p.data.dtype == (np.float64 if device == "cpu" else lucid.Float32.gpu)


# --------------------------------------------------------------------------------------------
# hand-computed steps (small numbers you can check with a pencil)


def test_sgd_momentum_two_steps_by_hand():
    p = Parameter(np.array([1.0]))
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = np.array([1.0])
    opt.step()  # buf = 1, x = 1 - 0.1 = 0.9
    assert p.item() == pytest.approx(0.9, abs=1e-15)
    p.grad = np.array([1.0])
    opt.step()  # buf = 0.9 + 1 = 1.9, x = 0.9 - 0.19 = 0.71
    assert p.item() == pytest.approx(0.71, abs=1e-15)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"], [1.9])


def test_sgd_nesterov_two_steps_by_hand():
    p = Parameter(np.array([1.0]))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    p.grad = np.array([1.0])
    opt.step()  # buf = 1, d = 1 + 0.9 = 1.9, x = 1 - 0.19
    assert p.item() == pytest.approx(0.81, abs=1e-15)
    p.grad = np.array([1.0])
    opt.step()  # buf = 1.9, d = 1 + 1.71 = 2.71, x = 0.81 - 0.271
    assert p.item() == pytest.approx(0.539, abs=1e-15)


def test_adam_first_step_moves_each_coordinate_by_about_lr():
    # m_hat = g and v_hat = g^2 at t = 1, so the step is lr * g / (|g| + eps) ~ lr * sign(g)
    p = Parameter(np.zeros(3))
    opt = optim.Adam([p], lr=0.01)
    p.grad = np.array([1e-3, -5.0, 200.0])
    opt.step()
    np.testing.assert_allclose(p.numpy(), [-0.01, 0.01, -0.01], rtol=1e-4)


def test_adamw_decays_weights_even_with_zero_gradient():
    p = Parameter(np.array([2.0, -4.0]))
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.5)
    p.grad = np.zeros(2)
    opt.step()  # the Adam part is 0 / (0 + eps) = 0; the weights shrink by (1 - lr * wd)
    np.testing.assert_allclose(p.numpy(), [2.0 * 0.95, -4.0 * 0.95], rtol=1e-15)


def test_adam_l2_and_adamw_decoupled_decay_differ():
    x0, grads = _problem(3)
    adam, _, _ = _run("Adam", {"lr": 0.01, "weight_decay": 0.1}, x0, grads, "cpu")
    adamw, _, _ = _run("AdamW", {"lr": 0.01, "weight_decay": 0.1}, x0, grads, "cpu")
    assert not np.allclose(adam[-1], adamw[-1])


@pytest.mark.parametrize("device", DEVICES)
def test_amsgrad_keeps_the_max_of_raw_second_moments(device):
    # a gradient burst, then small gradients: v decays but the max stays, so AMSGrad steps are
    # smaller than Adam's, and the result matches the reference that bias-corrects the max
    x0 = np.array([0.5, -0.5])
    grads = [np.array([10.0, -10.0])] + [np.array([0.1, -0.1])] * 30
    dtype = np.float64 if device == "cpu" else np.float32
    plain, _, _ = _run("Adam", {"lr": 0.01, "betas": (0.9, 0.9)}, x0, grads, device, dtype)
    ams, p, opt = _run("Adam", {"lr": 0.01, "betas": (0.9, 0.9), "amsgrad": True}, x0, grads,
                       device, dtype)
    want = ref_adam(x0, grads, 0.01, betas=(0.9, 0.9), amsgrad=True)
    for a, b in zip(ams, want):
        np.testing.assert_allclose(a, b, **_tol(device))
    state = opt.state[p]
    vmax = np.asarray(state["max_exp_avg_sq"])
    v = np.asarray(state["exp_avg_sq"])
    assert (vmax > 10 * v).all()  # the burst is remembered
    # Adam's steps grew back after the burst; AMSGrad's did not: it moved less overall
    assert (np.abs(ams[-1] - ams[0]) < np.abs(plain[-1] - plain[0])).all()
    # the max is over *raw* v, bias-corrected afterwards (not a max of bias-corrected v_hat)
    wrong, x, m, v, vhat_max = [], x0.copy(), np.zeros(2), np.zeros(2), np.zeros(2)
    for t, g in enumerate(grads, start=1):
        m = 0.9 * m + 0.1 * g
        v = 0.9 * v + 0.1 * g * g
        vhat_max = np.maximum(vhat_max, v / (1 - 0.9**t))
        x = x - 0.01 * (m / (1 - 0.9**t)) / (np.sqrt(vhat_max) + 1e-8)
        wrong.append(x)
    assert not np.allclose(ams[-1], wrong[-1], rtol=1e-4)


def test_defaults_are_pytorchs():
    p = Parameter(np.ones(2))
    assert optim.NAdam([p]).defaults == {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                         "weight_decay": 0.0, "momentum_decay": 4e-3,
                                         "decoupled_weight_decay": False}
    assert optim.RAdam([p]).defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                         "weight_decay": 0.0, "decoupled_weight_decay": False}
    assert optim.Adamax([p]).defaults == {"lr": 2e-3, "betas": (0.9, 0.999), "eps": 1e-8,
                                          "weight_decay": 0.0}
    assert optim.Adadelta([p]).defaults == {"lr": 1.0, "rho": 0.9, "eps": 1e-6,
                                            "weight_decay": 0.0}


def test_radam_first_steps_are_momentum_steps_then_rectified():
    # beta2 = 0.9: rho_inf = 19, rho_t = 19 - 2t 0.9^t / (1 - 0.9^t) = 1, 1.95, 2.86, 3.74,
    # 4.58 for t = 1..5 and 5.39 at t = 6, so steps 1-5 are lr * m_hat and step 6 is adaptive
    p = Parameter(np.array([1.0]))
    opt = optim.RAdam([p], lr=0.1, betas=(0.5, 0.9))
    p.grad = np.array([4.0])
    opt.step()  # m_hat = g = 4: x = 1 - 0.4
    assert p.item() == pytest.approx(0.6, abs=1e-15)
    x = p.item()
    for _ in range(4):
        p.grad = np.array([4.0])
        opt.step()  # m_hat stays 4 for a constant gradient
        assert p.item() == pytest.approx(x - 0.4, abs=1e-14)
        x = p.item()
    p.grad = np.array([4.0])
    opt.step()  # rectified: lr * m_hat * r_6 * sqrt(1 - b2^6) / (sqrt(v_6) + eps), with
    # v_6 = 16 (1 - 0.9^6): the adaptive factor is ~1 / |g|, so the step is ~lr * r_6
    b2t = 0.9**6
    rho_t = 19 - 2 * 6 * b2t / (1 - b2t)
    r = math.sqrt((rho_t - 4) * (rho_t - 2) * 19 / (15 * 17 * rho_t))
    step = 0.1 * 4 * r * math.sqrt(1 - b2t) / (math.sqrt(16 * (1 - b2t)) + 1e-8)
    assert rho_t > 5 and p.item() == pytest.approx(x - step, abs=1e-14)
    assert step < 0.1 * 0.4  # r_6 ~ 0.26: the first adaptive steps are damped


def test_adamax_first_step_and_inf_norm_by_hand():
    p = Parameter(np.array([0.0, 0.0]))
    opt = optim.Adamax([p], lr=0.1, betas=(0.5, 0.5), eps=0.0)
    p.grad = np.array([2.0, -1.0])
    opt.step()  # m = (1, -0.5), u = |g| = (2, 1), step = lr / 0.5 * m / u = (0.1, -0.1)
    np.testing.assert_allclose(p.numpy(), [-0.1, 0.1], rtol=1e-15)
    p.grad = np.array([0.5, -4.0])
    opt.step()  # u = max(0.5 u, |g|) = (1, 4): the old maximum, decayed, still wins for x0
    np.testing.assert_allclose(opt.state[p]["exp_inf"], [1.0, 4.0], rtol=1e-15)
    np.testing.assert_allclose(opt.state[p]["exp_avg"], [0.75, -2.25], rtol=1e-15)


def test_adadelta_first_step_by_hand():
    p = Parameter(np.array([1.0]))
    opt = optim.Adadelta([p], rho=0.9, eps=1e-6)
    p.grad = np.array([2.0])
    opt.step()  # v = 0.4, delta = sqrt(1e-6) / sqrt(0.4 + 1e-6) * 2, u = 0.1 delta^2
    delta = math.sqrt(1e-6) / math.sqrt(0.4 + 1e-6) * 2.0
    assert p.item() == pytest.approx(1.0 - delta, abs=1e-15)
    assert opt.state[p]["acc_delta"][0] == pytest.approx(0.1 * delta**2, rel=1e-14)
    assert opt.state[p]["step"] == 1


def test_nadam_keeps_the_product_of_its_momenta():
    p = Parameter(np.array([1.0]))
    opt = optim.NAdam([p], momentum_decay=0.5)
    mus = [0.9 * (1 - 0.5 * 0.96 ** (t * 0.5)) for t in (1, 2, 3)]
    for _ in range(3):
        p.grad = np.array([1.0])
        opt.step()
    assert opt.state[p]["mu_product"] == pytest.approx(mus[0] * mus[1] * mus[2], rel=1e-15)
    assert list(opt.state[p]) == ["step", "mu_product", "exp_avg", "exp_avg_sq"]


@pytest.mark.parametrize("make,exc,match", [
    (lambda p: optim.NAdam([p], momentum_decay=-1e-3), ValueError, "momentum_decay must be >= 0"),
    (lambda p: optim.NAdam([p], decoupled_weight_decay=1), TypeError,
     "NAdam: decoupled_weight_decay must be True or False"),
    (lambda p: optim.RAdam([p], betas=(0.9, 1.0)), ValueError, r"betas\[1\] must be < 1"),
    (lambda p: optim.RAdam([p], betas=0.9), TypeError, "betas must be a pair"),
    (lambda p: optim.Adamax([p], eps=-1.0), ValueError, "Adamax: eps must be >= 0"),
    (lambda p: optim.Adamax([p], decoupled_weight_decay=True), TypeError, "unexpected keyword"),
    (lambda p: optim.Adadelta([p], rho=1.5), ValueError, "Adadelta: rho must be <= 1"),
    (lambda p: optim.Adadelta([p], lr=-1.0), ValueError, "Adadelta: lr must be >= 0"),
])
def test_new_optimizers_check_their_hyperparameters(make, exc, match):
    with pytest.raises(exc, match=match):
        make(Parameter(np.ones(2)))


# --------------------------------------------------------------------------------------------
# param groups, defaults, constructor spellings


def test_param_groups_with_different_learning_rates():
    a = Parameter(np.array([1.0]))
    b = Parameter(np.array([1.0]))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.01}], lr=0.1, momentum=0.5)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.01
    assert all(g["momentum"] == 0.5 for g in opt.param_groups)  # defaults fill both groups
    for _ in range(3):
        a.grad = np.array([1.0])
        b.grad = np.array([1.0])
        opt.step()
    np.testing.assert_allclose(a.numpy(), ref_sgd(np.array([1.0]), [np.ones(1)] * 3, 0.1, 0.5)[-1])
    np.testing.assert_allclose(b.numpy(),
                               ref_sgd(np.array([1.0]), [np.ones(1)] * 3, 0.01, 0.5)[-1])


def test_seed_spelling_defaults_dict_and_keywords_agree():
    x0, grads = _problem(5)
    p1, p2 = Parameter(x0), Parameter(x0)
    o1 = optim.SGD([p1], defaults={"lr": 1e-2, "momentum": 0.9})
    o2 = optim.SGD([p2], lr=1e-2, momentum=0.9)
    assert o1.defaults == o2.defaults
    for g in grads:
        p1.grad, p2.grad = g, g
        o1.step()
        o2.step()
    np.testing.assert_array_equal(p1.numpy(), p2.numpy())
    base = optim.Optimizer([Parameter(x0)], {"lr": 0.5})
    assert base.param_groups[0]["lr"] == 0.5
    with pytest.raises(NotImplementedError, match="update"):
        base.param_groups[0]["params"][0].grad = x0
        base.step()


def test_add_param_group_fills_defaults_and_steps_it():
    a, b = Parameter(np.ones(2)), Parameter(np.ones(2))
    opt = optim.Adam([a], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.2})
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    b.grad = np.ones(2)
    opt.step()
    np.testing.assert_allclose(b.numpy(), 1 - 0.2, rtol=1e-6)
    np.testing.assert_array_equal(a.numpy(), np.ones(2))  # no grad: not moved, no state
    assert a not in opt.state


def test_step_bumps_version_keeps_dtype_and_skips_params_without_grad():
    a = Parameter(np.ones(3, np.float32))
    h = Parameter(np.ones(3, np.float16))
    c = Parameter(np.ones(3))
    opt = optim.SGD([a, h, c], lr=0.5)
    a.grad = np.ones(3, np.float32)
    h.grad = np.ones(3, np.float16)
    opt.step()
    assert a._version == 1 and h._version == 1 and c._version == 0
    assert a.data.dtype == np.float32 and h.data.dtype == np.float16
    np.testing.assert_array_equal(a.numpy(), 0.5)
    np.testing.assert_array_equal(c.numpy(), 1.0)


def test_step_makes_backward_through_the_old_value_fail():
    p = Parameter(np.array([1.0, 2.0]))
    y = (p * p).sum()
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.ones(2)
    opt.step()
    with pytest.raises(RuntimeError, match="modified in place"):
        y.backward()


def test_zero_grad_sets_none_or_zeros():
    p = Parameter(np.ones(2))
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.ones(2)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(p.grad, [0.0, 0.0])
    np.testing.assert_array_equal(g, [1.0, 1.0])  # a new array: the old one is not written
    opt.zero_grad()
    assert p.grad is None


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    p = Parameter(np.array([3.0]))
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with lucid.no_grad():
        loss = opt.step(closure)
    assert loss.item() == 9.0
    assert p.item() == pytest.approx(3.0 - 0.25 * 6.0)


def test_plain_leaf_tensor_that_requires_grad_is_accepted():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([x], lr=0.5)
    (x * x).sum().backward()
    opt.step()
    np.testing.assert_allclose(x.numpy(), [0.0, 0.0])


def test_repr_lists_groups():
    opt = optim.SGD([Parameter(np.ones(1))], lr=0.1)
    assert "Parameter Group 0" in repr(opt) and "lr: 0.1" in repr(opt)


# --------------------------------------------------------------------------------------------
# errors


def test_errors_for_bad_params():
    p = Parameter(np.ones(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    gen = (q for q in [p])
    list(gen)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD(gen, lr=0.1)
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(p, lr=0.1)
    with pytest.raises(TypeError, match="not a Parameter"):
        optim.SGD([p, 3.0], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        optim.SGD(5, lr=0.1)
    with pytest.raises(ValueError, match="does not require grad"):
        optim.SGD([Buffer(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="not a leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(ValueError, match="more than once"):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)
    with pytest.raises(TypeError, match="mixes"):
        optim.SGD([{"params": [p]}, Parameter(np.ones(1))], lr=0.1)
    with pytest.raises(TypeError, match="not a set"):
        optim.SGD([{"params": {p}}], lr=0.1)
    with pytest.raises(TypeError, match="'params' key"):
        optim.SGD([p], lr=0.1).add_param_group({"lr": 0.1})


@pytest.mark.parametrize("make,match", [
    (lambda p: optim.SGD([p], lr=-0.1), "lr must be >= 0"),
    (lambda p: optim.SGD([p], lr=float("nan")), "lr must be finite"),
    (lambda p: optim.SGD([p], lr="0.1"), "lr must be a real number"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=-1), "momentum must be >= 0"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "Nesterov"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov"),
    (lambda p: optim.SGD([p], lr=0.1, weight_decay=-1e-4), "weight_decay must be >= 0"),
    (lambda p: optim.SGD([p], defaults={"lr": 0.1, "betas": (0.9, 0.9)}), "unknown"),
    (lambda p: optim.Adam([p], betas=(0.9, 1.0)), r"betas\[1\] must be < 1"),
    (lambda p: optim.Adam([p], betas=(-0.1, 0.9)), r"betas\[0\] must be >= 0"),
    (lambda p: optim.Adam([p], betas=0.9), "pair"),
    (lambda p: optim.Adam([p], eps=-1e-8), "eps must be >= 0"),
    (lambda p: optim.AdamW([p], amsgrad=1), "amsgrad must be True or False"),
    (lambda p: optim.RMSprop([p], alpha=1.5), "alpha must be <= 1"),
    (lambda p: optim.Adagrad([p], lr_decay=-1), "lr_decay must be >= 0"),
    (lambda p: optim.Adagrad([p], initial_accumulator_value=-1), "initial_accumulator_value"),
    (lambda p: optim.SGD([{"params": [p], "lr": -1}], lr=0.1), r"lr \(param group|lr must be"),
])
def test_errors_for_bad_hyperparameters(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make(Parameter(np.ones(2)))


def test_complex_parameters_sgd_steps_them_adaptive_rules_refuse():
    z = Parameter(np.array([1 + 1j, 2 - 1j], np.complex64))
    opt = optim.SGD([z], lr=0.5)
    z.grad = np.array([2 + 0j, 0 + 2j], np.complex64)
    opt.step()
    np.testing.assert_array_equal(z.numpy(), [0 + 1j, 2 - 2j])
    assert z.data.dtype == np.complex64
    for cls in (optim.Adam, optim.AdamW, optim.RMSprop, optim.Adagrad):
        with pytest.raises(TypeError, match="complex"):
            cls([z])


def test_wrong_gradient_shape_is_an_error_naming_shapes():
    p = Parameter(np.ones((2, 3)))
    opt = optim.SGD([p], lr=0.1)
    p.grad = np.ones(3)
    with pytest.raises(RuntimeError, match=r"\(2,3\).*\(3,\)"):
        opt.step()


# --------------------------------------------------------------------------------------------
# state_dict


def _steps(opt, params, grads):
    for g in grads:
        for i, p in enumerate(params):
            p.grad = (g * (i + 1)).astype(p.data.dtype)
        opt.step()


@pytest.mark.parametrize("name,kw", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "betas": (0.8, 0.9)}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
])
def test_state_dict_round_trip_through_a_file_continues_identically(name, kw):
    x0, grads = _problem(7, steps=8)
    # uninterrupted run, two param groups
    a, b = Parameter(x0), Parameter(x0 * 2)
    ref = getattr(optim, name)([{"params": [a]}, {"params": [b], "lr": kw["lr"] / 2}], **kw)
    _steps(ref, [a, b], grads)
    # four steps, save, rebuild everything from the saved values, four more steps
    c, d = Parameter(x0), Parameter(x0 * 2)
    first = getattr(optim, name)([{"params": [c]}, {"params": [d], "lr": kw["lr"] / 2}], **kw)
    _steps(first, [c, d], grads[:4])
    buf = io.BytesIO()
    save({"model": {"c": c, "d": d}, "optim": first.state_dict()}, buf)
    buf.seek(0)
    saved = load(buf)
    c2, d2 = Parameter(saved["model"]["c"]), Parameter(saved["model"]["d"])
    second = getattr(optim, name)([{"params": [c2]}, {"params": [d2]}], lr=123.0)
    second.load_state_dict(saved["optim"])
    assert second.param_groups[1]["lr"] == kw["lr"] / 2  # hyperparameters come back too
    _steps(second, [c2, d2], grads[4:])
    np.testing.assert_array_equal(c2.numpy(), a.numpy())  # bit for bit
    np.testing.assert_array_equal(d2.numpy(), b.numpy())


def test_state_dict_layout_is_pytorchs():
    a, b, c = (Parameter(np.ones(2)) for _ in range(3))
    opt = optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
    b.grad = np.ones(2)
    c.grad = np.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sorted(sd["state"]) == [1, 2]  # a never had a gradient
    assert isinstance(sd["state"][1]["momentum_buffer"], np.ndarray)
    sd["state"][1]["momentum_buffer"][:] = 99  # a copy: the optimizer is not affected
    np.testing.assert_array_equal(opt.state[b]["momentum_buffer"], [1.0, 1.0])


def test_load_state_dict_rejects_mismatches_and_changes_nothing():
    a, b = Parameter(np.ones(2)), Parameter(np.ones(3))
    opt = optim.Adam([a, b], lr=0.1)
    a.grad, b.grad = np.ones(2), np.ones(3)
    opt.step()
    sd = opt.state_dict()
    other = optim.Adam([Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(ValueError, match="param group 0 has 2 parameter"):
        other.load_state_dict(sd)
    two_groups = optim.Adam([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match="2 param group"):
        optim.Adam([a, b]).load_state_dict(two_groups.state_dict())
    swapped = optim.Adam([b, a], lr=0.3)
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        swapped.load_state_dict(sd)
    assert swapped.param_groups[0]["lr"] == 0.3 and not swapped.state  # unchanged
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        swapped.load_state_dict({"state": {}})
    bad = {"state": sd["state"], "param_groups": [{**sd["param_groups"][0], "lr": -1}]}
    with pytest.raises(ValueError, match="lr must be >= 0"):
        optim.Adam([a, b]).load_state_dict(bad)


@needs_mlx
def test_state_dict_saved_on_gpu_continues_on_cpu():
    x0, grads = _problem(11, steps=6)
    x0 = x0.astype(np.float32)
    grads = [g.astype(np.float32) for g in grads]
    pg = Parameter(x0, device="gpu")
    og = optim.Adam([pg], lr=0.01, amsgrad=True)
    _steps(og, [pg], [lucid.Tensor(g, device="gpu").data for g in grads[:3]])
    buf = io.BytesIO()
    save({"p": pg, "opt": og.state_dict()}, buf)
    buf.seek(0)
    saved = load(buf)  # on cpu
    pc = saved["p"]
    assert isinstance(pc, Parameter) and pc.device == "cpu"
    oc = optim.Adam([pc], lr=0.01, amsgrad=True)
    oc.load_state_dict(saved["opt"])
    _steps(oc, [pc], grads[3:])
    want = ref_adam(x0.astype(np.float64), [g.astype(np.float64) for g in grads], 0.01,
                    amsgrad=True)[-1]
    np.testing.assert_allclose(pc.numpy(), want, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------------
# devices: a model moved before (seed 000) or after the optimizer is built; laziness


class _Linear(Module):
    def __init__(self, n_in, n_out, rng):
        super().__init__()
        self.w = Parameter(rng.standard_normal((n_in, n_out)).astype(np.float32) * 0.1)
        self.b = Parameter(np.zeros(n_out, np.float32))

    def forward(self, x):
        return x @ self.w + self.b


@needs_mlx
def test_seed_000_training_loop_on_gpu_learns():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 4)).astype(np.float32)
    y = (X @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32) + 0.25).astype(np.float32)
    model = _Linear(4, 1, rng).to("gpu")
    opt = optim.SGD(model.parameters(), defaults={"lr": 1e-1})
    x, t = lucid.Tensor(X, device="gpu"), lucid.Tensor(y, device="gpu")
    losses = []
    for _ in range(100):
        opt.zero_grad()
        out = model(x)
        loss = ((out - t) ** 2).mean()
        loss.eval()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 1e-3 * losses[0]
    assert model.w.device == "gpu" and model.w.data.dtype == lucid.Float32.gpu


@needs_mlx
def test_model_moved_after_steps_carries_its_state_along():
    x0, grads = _problem(13, steps=6)
    x0 = x0.astype(np.float32)
    grads = [g.astype(np.float32) for g in grads]
    model = Module()
    model.p = Parameter(x0)
    opt = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)
    _steps(opt, [model.p], grads[:3])
    model.to("gpu")
    _steps(opt, [model.p], [lucid.Tensor(g, device="gpu").data for g in grads[3:]])
    state = opt.state[model.p]
    assert all(isinstance(v, type(model.p._data)) for k, v in state.items() if k != "step")
    want = ref_rmsprop(x0.astype(np.float64), [g.astype(np.float64) for g in grads], 0.01,
                       momentum=0.5)[-1]
    np.testing.assert_allclose(model.p.numpy(), want, rtol=1e-5, atol=1e-6)


@needs_mlx
def test_gpu_step_evaluates_params_and_state(monkeypatch):
    import lucid.optim.optimizer as base

    seen = []
    real = base.evaluate
    monkeypatch.setattr(base, "evaluate", lambda *xs: (seen.append(xs), real(*xs)))
    p = Parameter(np.ones(3, np.float32), device="gpu")
    cpu_p = Parameter(np.ones(3, np.float32))
    opt = optim.Adam([p, cpu_p], lr=0.1, amsgrad=True)
    p.grad = lucid.Tensor(np.ones(3, np.float32), device="gpu").data
    cpu_p.grad = np.ones(3, np.float32)
    opt.step()
    assert len(seen) == 1  # once per step, for everything together
    (args,) = seen
    ids = {id(a) for a in args}
    assert id(p._data) in ids and id(p.grad) in ids  # the new value, computed before commit
    assert id(cpu_p.data) not in ids and not any(isinstance(a, np.ndarray) for a in args)
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        assert id(opt.state[p][key]) in ids
    cpu_only = optim.SGD([cpu_p], lr=0.1)
    cpu_only.step()
    assert len(seen) == 1  # nothing to evaluate on cpu


@pytest.mark.slow
@needs_mlx
def test_adam_on_gpu_keeps_flat_memory():
    def rss_mib():
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except OSError:  # macOS: peak resident size (bytes)
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    rng = np.random.default_rng(0)
    model = _Linear(64, 64, rng).to("gpu")
    opt = optim.Adam(model.parameters(), lr=1e-3, amsgrad=True)
    x = lucid.Tensor(rng.standard_normal((32, 64)).astype(np.float32), device="gpu")
    start = None
    for step in range(1000):
        # no loss.eval() and no loss.item(): only the optimizer's evaluation stops MLX's graph
        # from chaining every step onto the previous one
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
        if step == 100:
            start = rss_mib()
    growth = rss_mib() - start
    # evaluated: well under 1 MiB; left lazy, the same loop grows by tens of MiB
    assert growth < 16, f"grew {growth:.1f} MiB: MLX's lazy graph grew across steps"


# --------------------------------------------------------------------------------------------
# an independent cross-check against PyTorch, when it is installed


#: PyTorch's options that Lucid does not have (its param groups carry them, Lucid's do not)
TORCH_ONLY_OPTIONS = {"foreach", "maximize", "capturable", "differentiable", "fused"}
#: ... and per optimizer: Lucid's Adam spells decoupled weight decay as the class AdamW
TORCH_ONLY_FOR = {"Adam": {"decoupled_weight_decay"}, "AdamW": {"decoupled_weight_decay"}}


@pytest.mark.parametrize("name,ref,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_pytorch_when_available(name, ref, kw):
    """Every step's parameter, then the state dict: the same state keys with the same values,
    the same hyperparameters in the param group."""
    torch = pytest.importorskip("torch")
    x0, grads = _problem(21, steps=9)
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # else PyTorch keeps step and mu_product in float32
    try:
        tp = torch.tensor(x0.copy(), requires_grad=True)
        topt = getattr(torch.optim, name)([tp], **kw)
        theirs = []
        for g in grads:
            tp.grad = torch.tensor(g)
            topt.step()
            theirs.append(tp.detach().numpy().copy())
        tsd = topt.state_dict()
    finally:
        torch.set_default_dtype(default)
    got, _, opt = _run(name, kw, x0, grads, "cpu")
    for t, (a, b) in enumerate(zip(got, theirs), start=1):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"step {t}")
    assert math.isfinite(got[-1].sum())
    sd = opt.state_dict()
    if tsd["state"]:
        assert list(sd["state"][0]) == list(tsd["state"][0])
        for key, value in tsd["state"][0].items():
            np.testing.assert_allclose(sd["state"][0][key], value.numpy(), rtol=1e-10,
                                       atol=1e-12, err_msg=key)
    ours, theirs_group = sd["param_groups"][0], tsd["param_groups"][0]
    assert set(theirs_group) - set(ours) <= TORCH_ONLY_OPTIONS | TORCH_ONLY_FOR.get(name, set())
    assert set(ours) <= set(theirs_group)
    for key in ours:
        if key != "params":
            assert ours[key] == pytest.approx(theirs_group[key]), key


def test_sgd_promotes_a_hand_set_gradient_of_another_dtype():
    """theta - lr * g in the parameter's precision, also when g was set by hand in float32."""
    p = Parameter(lucid.Tensor(np.array([1.0, 2.0])))  # Float64
    opt = lucid.optim.SGD([p], lr=0.1)
    g = np.array([1e-9, 1.0], np.float32)
    p.grad = g
    opt.step()
    expected = np.array([1.0, 2.0]) - 0.1 * g  # NumPy's promotion: the result is float64
    assert p.data.dtype == np.float64
    np.testing.assert_array_equal(p.data, expected)
    assert p.data[0] < 1.0  # 1 - 1e-10 survives in float64 (in float32 it would round to 1)


# -- all or nothing ------------------------------------------------------------------------


@pytest.mark.parametrize("name,ref,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_failed_step_changes_no_parameter_and_no_state(name, ref, kw):
    a = Parameter(np.array([1.0, 2.0, 3.0]))
    b = Parameter(np.array([[1.0, -1.0], [0.5, 2.0]]))
    opt = getattr(optim, name)([a, b], **kw)
    a.grad, b.grad = np.full(3, 0.5), np.full((2, 2), 0.25)
    opt.step()  # one good step, so there is state to protect
    before = (a.numpy().copy(), b.numpy().copy(), a._version, b._version)
    saved = opt.state_dict()
    a.grad, b.grad = np.full(3, 0.5), np.ones(3)  # b's gradient has the wrong shape
    with pytest.raises(RuntimeError, match=r"a parameter of shape \(2,2\) on 'cpu' has a "
                                           r"gradient of shape \(3,\).*No parameter was changed"):
        opt.step()
    np.testing.assert_array_equal(a.numpy(), before[0])
    np.testing.assert_array_equal(b.numpy(), before[1])
    assert (a._version, b._version) == before[2:]
    after = opt.state_dict()
    assert after["param_groups"] == saved["param_groups"]
    for idx, entry in saved["state"].items():
        for key, value in entry.items():
            np.testing.assert_array_equal(after["state"][idx][key], value)


def test_a_rule_that_raises_midway_commits_nothing():
    class Flaky(optim.SGD):
        calls = 0

        def update(self, xp, param, grad, state, group):
            Flaky.calls += 1
            if Flaky.calls == 2:
                raise FloatingPointError("the second parameter's rule failed")
            return super().update(xp, param, grad, state, group)

    a, b = Parameter(np.ones(2)), Parameter(np.ones(2))
    opt = Flaky([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = np.ones(2), np.ones(2)
    with pytest.raises(FloatingPointError):
        opt.step()
    np.testing.assert_array_equal(a.numpy(), np.ones(2))
    assert opt.state_dict()["state"] == {}


def test_loading_another_optimizers_state_dict_is_refused_unchanged():
    a = Parameter(np.ones(3))
    sgd = optim.SGD([a], lr=0.1, momentum=0.9)
    a.grad = np.ones(3)
    sgd.step()
    adam = optim.Adam([a], lr=0.01)
    before = adam.state_dict()
    with pytest.raises(ValueError, match=r"Adam.load_state_dict: this state dict was saved by "
                                         r"SGD: its param group 0 holds the hyperparameters "
                                         r".*momentum.*, without amsgrad, betas, eps, which "
                                         r"Adam needs\. Load it into SGD built over the same "
                                         r"parameters"):
        adam.load_state_dict(sgd.state_dict())
    assert adam.state_dict() == before


def _after_one_step(name, kw, device="cpu"):
    """Parameters a (3,) and b (2, 2) and an optimizer that has taken one step over them, so
    that there is state to protect."""
    dtype = np.float64 if device == "cpu" else np.float32
    a = Parameter(np.array([1.0, 2.0, 3.0], dtype), device=device)
    b = Parameter(np.array([[1.0, -1.0], [0.5, 2.0]], dtype), device=device)
    opt = getattr(optim, name)([a, b], **kw)
    a.grad = lucid.Tensor(np.full(3, 0.5, dtype), device=device).data
    b.grad = lucid.Tensor(np.full((2, 2), 0.25, dtype), device=device).data
    opt.step()
    a.grad = lucid.Tensor(np.full(3, 0.5, dtype), device=device).data  # a's next gradient: fine
    return a, b, opt


def _snapshot(opt, params):
    return ([p.numpy().copy() for p in params], [p._version for p in params],
            opt.state_dict())


def _assert_unchanged(opt, params, before):
    values, versions, saved = before
    for p, value in zip(params, values):
        np.testing.assert_array_equal(p.numpy(), value)
    assert [p._version for p in params] == versions
    after = opt.state_dict()
    assert after["param_groups"] == saved["param_groups"]
    assert sorted(after["state"]) == sorted(saved["state"])
    for idx, entry in saved["state"].items():
        assert sorted(after["state"][idx]) == sorted(entry)
        for key, value in entry.items():
            np.testing.assert_array_equal(after["state"][idx][key], value)


def _set_grad(value):
    def apply(a, b, opt):
        b.grad = value
    return apply


def _edit_group(key, value):
    def apply(a, b, opt):
        opt.param_groups[0][key] = value
    return apply


# Each way a step can be refused: (what to do to the second parameter b or the optimizer, the
# error's type, its message).  a's gradient is fine and comes first, so an optimizer that
# moved parameters one by one would already have moved a.
BAD_STEPS = {
    "grad-is-a-list": (_set_grad([[0.1, 0.2], [0.3, 0.4]]), TypeError,
                       r"\.step: the gradient of a parameter of shape \(2,2\) on 'cpu' is a "
                       r"list, not a numpy\.ndarray.*No parameter was changed"),
    "grad-is-a-float": (_set_grad(0.5), TypeError, r"is a float, not a numpy\.ndarray"),
    "grad-is-a-tensor": (_set_grad(lucid.Tensor(np.ones((2, 2)))), TypeError,
                         r"is a Tensor, not a numpy\.ndarray.*p\.grad = t\.data"),
    "complex-grad": (_set_grad(np.full((2, 2), 1 + 1j)), TypeError,
                     r"gradient of dtype Complex128 for a real parameter \(Float64\)"),
    "bool-grad": (_set_grad(np.ones((2, 2), bool)), TypeError,
                  r"gradient of dtype Bool.*floating-point"),
    "lr-edited-to-negative": (_edit_group("lr", -0.1), ValueError, r"lr must be >= 0"),
    "lr-edited-to-nan": (_edit_group("lr", float("nan")), ValueError, r"lr must be finite"),
    "weight-decay-edited-to-a-string": (_edit_group("weight_decay", "0.1"), TypeError,
                                        r"weight_decay must be a real number"),
}


@pytest.mark.parametrize("bad", list(BAD_STEPS))
@pytest.mark.parametrize("name,ref,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_every_refused_step_changes_nothing(name, ref, kw, bad):
    a, b, opt = _after_one_step(name, kw)
    before = _snapshot(opt, [a, b])
    apply, exc, match = BAD_STEPS[bad]
    apply(a, b, opt)
    with pytest.raises(exc, match=match):
        opt.step()
    if bad.startswith(("lr-", "weight-")):
        opt.param_groups[0].update(before[2]["param_groups"][0])  # undo the edit to compare
        opt.param_groups[0]["params"] = [a, b]
    _assert_unchanged(opt, [a, b], before)


STATEFUL = [c for c in CASES if c[0] != "SGD" or c[2].get("momentum")]


@pytest.mark.parametrize("name,ref,kw", STATEFUL,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(STATEFUL)])
def test_state_of_another_shape_is_refused_before_anything_moves(name, ref, kw):
    """b was reshaped after its first step: its moment estimates no longer fit it (Adam's
    (2,2) moments would broadcast against a (1,2,2) gradient without a word)."""
    a, b, opt = _after_one_step(name, kw)
    b.data = b.data.reshape(1, 2, 2)
    b.grad = np.ones((1, 2, 2))
    before = _snapshot(opt, [a, b])
    with pytest.raises(RuntimeError, match=r"\.step: state\['\w+'\] of a parameter of shape "
                                           r"\(1,2,2\) has shape \(2,2\).*opt\.state\.pop\(p\)"
                                           r".*No parameter was changed"):
        opt.step()
    _assert_unchanged(opt, [a, b], before)
    opt.state.pop(b)  # the fix the message names
    opt.step()
    assert b.shape == (1, 2, 2) and b._version == before[1][1] + 1


def test_a_rule_that_writes_into_its_state_in_place_is_stopped_before_it_commits():
    """Updating state in place (``buf *= momentum``) would change the committed state before
    the step is known to succeed; on NumPy the rule gets read-only views and is told why."""

    class InPlaceMomentum(optim.SGD):
        def update(self, xp, param, grad, state, group):
            if "momentum_buffer" in state:
                buf = state["momentum_buffer"]
                buf *= group["momentum"]
                buf += grad
                return param - group["lr"] * buf
            return super().update(xp, param, grad, state, group)

    a, b = Parameter(np.ones(2)), Parameter(np.ones(2))
    opt = InPlaceMomentum([a, b], lr=0.1, momentum=0.9)
    a.grad, b.grad = np.ones(2), np.ones(2)
    opt.step()
    before = _snapshot(opt, [a, b])
    with pytest.raises(ValueError, match=r"InPlaceMomentum\.update wrote into an array it was "
                                         r"given.*return new arrays"):
        opt.step()
    _assert_unchanged(opt, [a, b], before)


def test_a_rule_that_returns_its_input_leaves_a_writable_parameter():
    class Frozen(optim.SGD):
        def update(self, xp, param, grad, state, group):
            return param

    p = Parameter(np.ones(2))
    opt = Frozen([p], lr=0.1)
    p.grad = np.ones(2)
    opt.step()
    assert p.data.flags.writeable
    p.data[0] = 5.0  # the parameter's own array, not a read-only view
    np.testing.assert_array_equal(p.numpy(), [5.0, 1.0])


@needs_mlx
def test_a_gradient_on_another_device_is_refused_naming_both():
    a, b, opt = _after_one_step("Adam", {"lr": 0.01}, device="gpu")
    before = _snapshot(opt, [a, b])
    b.grad = np.ones((2, 2), np.float32)
    with pytest.raises(RuntimeError, match=r"a parameter of shape \(2,2\) on 'gpu' has a "
                                           r"numpy\.ndarray gradient \(an array for 'cpu'\)"
                                           r".*device='gpu'"):
        opt.step()
    _assert_unchanged(opt, [a, b], before)


@needs_mlx
def test_a_failure_while_mlx_computes_the_step_commits_nothing(monkeypatch):
    """On "gpu" the new values are only expressions until MLX runs them; the optimizer runs them
    before it commits, so an error there (out of memory, say) also leaves everything as it
    was."""
    import lucid.optim.optimizer as base

    a, b, opt = _after_one_step("Adam", {"lr": 0.01, "amsgrad": True}, device="gpu")
    b.grad = lucid.Tensor(np.ones((2, 2), np.float32), device="gpu").data
    before = _snapshot(opt, [a, b])

    def fail(*arrays):
        raise MemoryError("MLX could not allocate the step")

    monkeypatch.setattr(base, "evaluate", fail)
    with pytest.raises(MemoryError):
        opt.step()
    _assert_unchanged(opt, [a, b], before)


# -- loading a state dict: all or nothing, and say what went wrong -------------------------

KINDS = {"SGD": {"lr": 0.1, "momentum": 0.9}, "Adam": {"lr": 0.01}, "RMSprop": {"lr": 0.01},
         "Adagrad": {"lr": 0.1}, "NAdam": {}, "RAdam": {}, "Adamax": {}, "Adadelta": {}}
OTHER_KIND = [(saver, loader) for saver in [*KINDS, "AdamW"] for loader in [*KINDS, "AdamW"]
              if saver != loader and {saver, loader} != {"Adam", "AdamW"}]
#: a saver whose hyperparameters include all of the loader's: the message says which it has
#: too many of ("with ..., which Adamax does not take") instead of which it lacks
SUPERSETS = {("Adam", "Adamax"), ("AdamW", "Adamax"), ("NAdam", "RAdam"), ("NAdam", "Adamax"),
             ("RAdam", "Adamax")}


@pytest.mark.parametrize("saver,loader", OTHER_KIND)
def test_a_state_dict_of_another_kind_is_refused_naming_both(saver, loader):
    """``Adam(...).load_state_dict(SGD(...).state_dict())``: the message names both kinds,
    what the state dict holds and what to do; the optimizer is left as it was."""
    a, b, donor = _after_one_step(saver, KINDS.get(saver, {"lr": 0.01}))
    c, d, opt = _after_one_step(loader, KINDS.get(loader, {"lr": 0.01}))
    before = _snapshot(opt, [c, d])
    saved_by = "Adam or AdamW" if saver in ("Adam", "AdamW") else saver
    what = (rf"with .*, which {loader} does not take" if (saver, loader) in SUPERSETS else
            rf"without .*, which {loader} needs")
    with pytest.raises(ValueError, match=rf"^{loader}\.load_state_dict: this state dict was "
                                         rf"saved by {saved_by}: its param group 0 holds "
                                         rf"the hyperparameters .*lr.*, {what}\. Load it into "
                                         rf"{saved_by} .*over the same parameters.*Nothing "
                                         r"was changed\.$"):
        opt.load_state_dict(donor.state_dict())
    _assert_unchanged(opt, [c, d], before)


def test_adamax_refuses_adams_state_dict_naming_the_hyperparameter_it_lacks():
    """Adam's param groups hold every hyperparameter Adamax takes (and amsgrad): without this
    check Adamax would load Adam's moments and fail at its next step, lacking exp_inf."""
    _, _, adam = _after_one_step("Adam", {"lr": 0.01})
    c, d, adamax = _after_one_step("Adamax", {})
    before = _snapshot(adamax, [c, d])
    with pytest.raises(ValueError, match=r"Adamax\.load_state_dict: this state dict was saved "
                                         r"by Adam or AdamW: its param group 0 holds the "
                                         r"hyperparameters amsgrad, betas, eps, lr, "
                                         r"weight_decay, with amsgrad, which Adamax does not "
                                         r"take\. Load it into Adam or AdamW"):
        adamax.load_state_dict(adam.state_dict())
    _assert_unchanged(adamax, [c, d], before)
    # the optimizer's own state dict, with a key of the user's in a group, still loads
    adamax.param_groups[0]["name"] = "body"
    adamax.load_state_dict(adamax.state_dict())
    assert adamax.param_groups[0]["name"] == "body"


def test_a_state_dict_of_an_unknown_kind_says_so():
    opt = optim.Adam([Parameter(np.ones(2))])
    with pytest.raises(ValueError, match=r"saved by another kind of optimizer: its param group "
                                         r"0 holds the hyperparameters lr, rho, without "
                                         r"amsgrad, betas, eps, weight_decay"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 1.0, "rho": 0.9,
                                                            "params": [0]}]})


def test_mismatched_groups_are_refused_saying_what_to_do():
    a, b, opt = _after_one_step("Adam", {"lr": 0.01})
    sd = opt.state_dict()
    one = optim.Adam([Parameter(np.ones(3))], lr=0.3)
    before = _snapshot(one, one.param_groups[0]["params"])
    with pytest.raises(ValueError, match=r"Adam\.load_state_dict: param group 0 has 2 "
                                         r"parameter\(s\) in the state dict and 1 in this "
                                         r"optimizer.*same parameters, in the same groups and "
                                         r"order.*Nothing was changed"):
        one.load_state_dict(sd)
    _assert_unchanged(one, one.param_groups[0]["params"], before)
    split = optim.Adam([{"params": [a]}, {"params": [b]}])
    with pytest.raises(ValueError, match=r"the state dict has 1 param group\(s\), this "
                                         r"optimizer has 2.*same parameters, in the same "
                                         r"groups and order.*Nothing was changed"):
        split.load_state_dict(sd)
    swapped = optim.Adam([b, a], lr=0.3)
    with pytest.raises(ValueError, match=r"state\[0\]\['exp_avg'\] has shape \(3,\), but "
                                         r"parameter 0 has shape \(2,2\).*same parameters, in "
                                         r"the same groups and order.*Nothing was changed"):
        swapped.load_state_dict(sd)
    assert swapped.param_groups[0]["lr"] == 0.3 and not swapped.state
