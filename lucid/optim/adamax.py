"""Adamax: Adam with the infinity norm -- a running maximum of |g| in place of sqrt(mean g^2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.adam import check_adam_hypers, weight_decayed
from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""``Adamax(params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0)``.

    Kingma & Ba (2015), section 7.1, as PyTorch implements it.  At step ``t = 1, 2, ...``::

        g_t   <- g_t + weight_decay * theta             (L2 penalty, if weight_decay)
        m_t   =  beta1 * m_{t-1} + (1 - beta1) * g_t
        u_t   =  max(beta2 * u_{t-1}, |g_t| + eps)      (exponentially weighted inf-norm)
        theta <- theta - lr / (1 - beta1^t) * m_t / u_t

    ``u`` needs no bias correction: a maximum is not pulled towards its zero start.  ``eps``
    sits inside the maximum (as in PyTorch), so ``u_t >= eps`` and the division is safe.

    State per parameter (PyTorch's keys): ``step``, ``exp_avg`` (m), ``exp_inf`` (u).
    PyTorch's Adamax has no decoupled weight decay, nor does this one; Lucid has no
    ``maximize``, ``foreach``, ``capturable`` or ``differentiable`` options.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, merge_defaults("Adamax", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        check_adam_hypers(self, group, index)

    def update(self, xp, param, grad, state, group):
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(param)
            state["exp_inf"] = xp.zeros_like(param)
        t = state["step"] = state["step"] + 1
        param, grad = weight_decayed(param, grad, group, decoupled=False)
        m = state["exp_avg"] = beta1 * state["exp_avg"] + (1 - beta1) * grad
        u = state["exp_inf"] = xp.maximum(beta2 * state["exp_inf"], xp.abs(grad) + eps)
        return param - (lr / (1 - beta1**t)) * (m / u)
