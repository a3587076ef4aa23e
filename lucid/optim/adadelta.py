"""Adadelta: steps whose size is a running RMS of past steps over a running RMS of gradients."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""``Adadelta(params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0)``.

    Zeiler (2012), as PyTorch implements it.  At each step::

        g_t   <- g_t + weight_decay * theta                     (L2 penalty, if weight_decay)
        v_t   =  rho * v_{t-1} + (1 - rho) * g_t^2               (state "square_avg", v_0 = 0)
        d_t   =  sqrt(u_{t-1} + eps) / sqrt(v_t + eps) * g_t     (the step, in theta's units)
        u_t   =  rho * u_{t-1} + (1 - rho) * d_t^2               (state "acc_delta", u_0 = 0)
        theta <- theta - lr * d_t

    The ratio of two RMS values gives the step the units of ``theta`` (Zeiler's argument), so
    the paper has no learning rate at all -- ``lr = 1.0`` is that choice.

    State per parameter (PyTorch's keys): ``step``, ``square_avg`` (v), ``acc_delta`` (u).
    Lucid has no ``maximize``, ``foreach``, ``capturable`` or ``differentiable`` options.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0.0,
                 *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, merge_defaults("Adadelta", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        self._check_number(group, index, "rho", low=0.0, high=1.0)
        self._check_number(group, index, "eps", low=0.0)
        self._check_number(group, index, "weight_decay", low=0.0)

    def update(self, xp, param, grad, state, group):
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            state["acc_delta"] = xp.zeros_like(param)
        state["step"] += 1
        if wd:
            grad = grad + wd * param
        v = state["square_avg"] = rho * state["square_avg"] + (1 - rho) * (grad * grad)
        delta = xp.sqrt(state["acc_delta"] + eps) / xp.sqrt(v + eps) * grad
        state["acc_delta"] = rho * state["acc_delta"] + (1 - rho) * (delta * delta)
        return param - group["lr"] * delta
