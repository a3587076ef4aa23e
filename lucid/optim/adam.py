"""Adam and AdamW: per-coordinate step sizes from running moments of the gradient."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["Adam", "AdamW"]


def check_adam_hypers(opt: Optimizer, group: dict[str, Any], index: int) -> None:
    """The checks of the hyperparameters Adam's family shares: betas, eps, weight_decay."""
    opt._check_betas(group, index)
    opt._check_number(group, index, "eps", low=0.0)
    opt._check_number(group, index, "weight_decay", low=0.0)


def weight_decayed(param: Any, grad: Any, group: dict[str, Any],
                   decoupled: bool) -> tuple[Any, Any]:
    """(param, grad) after weight decay: added to the gradient as an L2 penalty
    (g + wd·θ), or, ``decoupled`` (AdamW's way), shrinking θ directly (θ·(1 - lr·wd))."""
    wd = group["weight_decay"]
    if not wd:
        return param, grad
    if decoupled:
        return param * (1 - group["lr"] * wd), grad
    return param, grad + wd * param


def adam_moments(xp: Any, param: Any, grad: Any, state: dict[str, Any], group: dict[str, Any],
                 decoupled: bool) -> tuple[Any, Any, Any, Any, int]:
    """What Adam, AdamW, NAdam and RAdam do first at every step: count the step, apply weight
    decay, and update the moving averages m (``exp_avg``) and v (``exp_avg_sq``), both zero
    before the first step.  Returns (param, grad, m, v, t)."""
    beta1, beta2 = group["betas"]
    if "exp_avg" not in state:
        state.setdefault("step", 0)
        state["exp_avg"] = xp.zeros_like(param)
        state["exp_avg_sq"] = xp.zeros_like(param)
    t = state["step"] = state["step"] + 1
    param, grad = weight_decayed(param, grad, group, decoupled)
    m = state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
    v = state["exp_avg_sq"] = beta2 * state["exp_avg_sq"] + (1 - beta2) * (grad * grad)
    return param, grad, m, v, t


class Adam(Optimizer):
    r"""``Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False)``.

    Kingma & Ba (2015), as PyTorch implements it.  At step ``t = 1, 2, ...``::

        g_t   <- g_t + weight_decay * theta            (L2 penalty, if weight_decay)
        m_t   =  beta1 * m_{t-1} + (1 - beta1) * g_t   (first moment: mean of g)
        v_t   =  beta2 * v_{t-1} + (1 - beta2) * g_t^2 (second moment: mean of g^2)
        m_hat =  m_t / (1 - beta1^t)                   (bias correction: m_0 = v_0 = 0
        v_hat =  v_t / (1 - beta2^t)                    pulls early averages towards 0)
        theta <- theta - lr * m_hat / (sqrt(v_hat) + eps)

    Each coordinate moves by about ``lr`` in the direction of its average gradient, scaled down
    where the gradient is noisy (large ``v``).

    **AMSGrad** (Reddi et al., 2018) keeps the largest second moment seen so far,
    ``v_max_t = max(v_max_{t-1}, v_t)`` (of the raw ``v``, before bias correction), and uses
    ``v_hat = v_max_t / (1 - beta2^t)`` instead, so a coordinate's step size never grows back
    after a burst of large gradients.
    """

    supports_complex = False

    _decoupled = False  # AdamW: weight decay shrinks theta directly instead of adding to g

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False,
                 *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                 "amsgrad": amsgrad}
        super().__init__(params, merge_defaults(type(self).__name__, hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        check_adam_hypers(self, group, index)
        self._check_flag(group, index, "amsgrad")

    def update(self, xp, param, grad, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        param, grad, m, v, t = adam_moments(xp, param, grad, state, group, self._decoupled)
        if group["amsgrad"]:
            if "max_exp_avg_sq" not in state:  # the first step (or amsgrad switched on later)
                state["max_exp_avg_sq"] = v
            v = state["max_exp_avg_sq"] = xp.maximum(state["max_exp_avg_sq"], v)
        bias1 = 1 - beta1**t
        bias2 = 1 - beta2**t
        # lr * m_hat / (sqrt(v_hat) + eps), with the corrections folded into scalars
        denom = xp.sqrt(v) / math.sqrt(bias2) + eps
        return param - (lr / bias1) * (m / denom)


class AdamW(Adam):
    r"""``AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
    amsgrad=False)``: Adam with *decoupled* weight decay (Loshchilov & Hutter, 2019).

    Adam's L2 penalty adds ``weight_decay * theta`` to the gradient, where the adaptive
    scaling then shrinks it for coordinates with large gradients.  AdamW instead decays the
    weights directly, before the Adam step, by the same fraction for every coordinate::

        theta <- theta * (1 - lr * weight_decay)
        theta <- theta - lr * m_hat / (sqrt(v_hat) + eps)      (m, v from the raw gradient)
    """

    _decoupled = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False,
                 *, defaults: dict[str, Any] | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, defaults=defaults)
