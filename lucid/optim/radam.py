"""RAdam: Adam whose adaptive step is switched on only once its variance estimate is reliable."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from lucid.optim.adam import adam_moments, check_adam_hypers
from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""``RAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False)``.

    Liu et al. (2020), "On the Variance of the Adaptive Learning Rate and Beyond", as PyTorch
    implements it.  At step ``t = 1, 2, ...``::

        g_t    <- g_t + weight_decay * theta        (L2 penalty, if weight_decay and not
                                                     decoupled_weight_decay)
        theta  <- theta * (1 - lr * weight_decay)   (instead, if decoupled_weight_decay)
        m_t    =  beta1 * m_{t-1} + (1 - beta1) * g_t
        v_t    =  beta2 * v_{t-1} + (1 - beta2) * g_t^2
        m_hat  =  m_t / (1 - beta1^t)
        rho_inf = 2 / (1 - beta2) - 1               (the longest "moving average" length)
        rho_t  =  rho_inf - 2 t beta2^t / (1 - beta2^t)
        if rho_t > 5:                               (the variance of v_t is tractable)
            r_t   = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
            theta <- theta - lr * m_hat * r_t * sqrt(1 - beta2^t) / (sqrt(v_t) + eps)
        else:                                       (the first few steps: momentum SGD)
            theta <- theta - lr * m_hat

    Note that ``eps`` is added to ``sqrt(v_t)``, before the bias correction (as in PyTorch;
    Adam adds it after).  With the default ``beta2 = 0.999`` the first 5 steps are plain
    momentum steps.

    State per parameter (PyTorch's keys): ``step``, ``exp_avg`` (m), ``exp_avg_sq`` (v).
    Lucid has no ``maximize``, ``foreach``, ``capturable`` or ``differentiable`` options.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False,
                 *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                 "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, merge_defaults("RAdam", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        check_adam_hypers(self, group, index)
        self._check_flag(group, index, "decoupled_weight_decay")

    def update(self, xp, param, grad, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        param, grad, m, v, t = adam_moments(xp, param, grad, state, group,
                                            group["decoupled_weight_decay"])
        bias1 = 1 - beta1**t
        bias2 = 1 - beta2**t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / bias2
        if rho_t <= 5:
            return param - (lr / bias1) * m
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return param - (lr * rect * math.sqrt(bias2) / bias1) * (m / (xp.sqrt(v) + eps))
