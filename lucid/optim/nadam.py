"""NAdam: Adam with Nesterov momentum -- the step looks ahead along the momentum it keeps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.adam import adam_moments, check_adam_hypers
from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""``NAdam(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False)``.

    Dozat (2016), "Incorporating Nesterov Momentum into Adam", as PyTorch implements it.  At
    step ``t = 1, 2, ...``::

        g_t    <- g_t + weight_decay * theta            (L2 penalty, if weight_decay and not
                                                         decoupled_weight_decay)
        theta  <- theta * (1 - lr * weight_decay)       (instead, if decoupled_weight_decay)
        mu_t   =  beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))   (momentum schedule)
        mu_{t+1} likewise with t + 1
        P_t    =  mu_1 * mu_2 * ... * mu_t              (state "mu_product", P_0 = 1)
        m_t    =  beta1 * m_{t-1} + (1 - beta1) * g_t
        v_t    =  beta2 * v_{t-1} + (1 - beta2) * g_t^2
        d_t    =  sqrt(v_t / (1 - beta2^t)) + eps
        theta  <- theta - lr * (1 - mu_t) / (1 - P_t) * g_t / d_t
                        - lr * mu_{t+1} / (1 - P_t * mu_{t+1}) * m_t / d_t

    The first term is this step's gradient, the second the momentum of the *next* step
    (Nesterov's look-ahead), each bias-corrected by its own product of momenta.

    State per parameter (PyTorch's keys): ``step``, ``mu_product``, ``exp_avg`` (m),
    ``exp_avg_sq`` (v).  ``step`` and ``mu_product`` are Python numbers here (PyTorch keeps
    0-d tensors).  Lucid has no ``maximize``, ``foreach``, ``capturable`` or ``differentiable``
    options.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False,
                 *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                 "momentum_decay": momentum_decay,
                 "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, merge_defaults("NAdam", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        check_adam_hypers(self, group, index)
        self._check_number(group, index, "momentum_decay", low=0.0)
        self._check_flag(group, index, "decoupled_weight_decay")

    def update(self, xp, param, grad, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        if not state:  # (PyTorch's order of the state's entries)
            state["step"] = 0
            state["mu_product"] = 1.0
        param, grad, m, v, t = adam_moments(xp, param, grad, state, group,
                                            group["decoupled_weight_decay"])
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * group["momentum_decay"]))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * group["momentum_decay"]))
        product = state["mu_product"] = state["mu_product"] * mu
        denom = xp.sqrt(v / (1 - beta2**t)) + eps
        now = lr * (1 - mu) / (1 - product)             # weight of this step's gradient
        ahead = lr * mu_next / (1 - product * mu_next)  # weight of next step's momentum
        return param - now * (grad / denom) - ahead * (m / denom)
