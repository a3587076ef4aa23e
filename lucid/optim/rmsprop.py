"""RMSprop: divide each coordinate's step by a running root-mean-square of its gradient."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""``RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False)``.

    Hinton's RMSprop (lecture 6e), as PyTorch implements it::

        g_t   <- g_t + weight_decay * theta                (L2 penalty, if weight_decay)
        v_t   =  alpha * v_{t-1} + (1 - alpha) * g_t^2     (mean square, v_0 = 0)
        a_t   =  alpha * a_{t-1} + (1 - alpha) * g_t       (mean, only if centered)
        d_t   =  sqrt(v_t - a_t^2) + eps   if centered  else  sqrt(v_t) + eps
        b_t   =  momentum * b_{t-1} + g_t / d_t            (if momentum, b_0 = 0)
        theta <- theta - lr * b_t     if momentum  else  theta - lr * g_t / d_t

    ``centered`` divides by an estimate of the gradient's standard deviation instead of its
    root mean square.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False, *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "alpha": alpha, "eps": eps, "weight_decay": weight_decay,
                 "momentum": momentum, "centered": centered}
        super().__init__(params, merge_defaults("RMSprop", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        self._check_number(group, index, "alpha", low=0.0, high=1.0)
        self._check_number(group, index, "eps", low=0.0)
        self._check_number(group, index, "weight_decay", low=0.0)
        self._check_number(group, index, "momentum", low=0.0)
        if not isinstance(group["centered"], bool):
            raise TypeError(f"RMSprop: centered must be True or False, got "
                            f"{group['centered']!r}")

    def update(self, xp, param, grad, state, group):
        alpha, eps, momentum = group["alpha"], group["eps"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(param)
            if momentum > 0:
                state["momentum_buffer"] = xp.zeros_like(param)
            if group["centered"]:
                state["grad_avg"] = xp.zeros_like(param)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        v = state["square_avg"] = alpha * state["square_avg"] + (1 - alpha) * (grad * grad)
        if group["centered"]:
            a = state["grad_avg"] = (alpha * state.get("grad_avg", xp.zeros_like(param))
                                     + (1 - alpha) * grad)
            denom = xp.sqrt(v - a * a) + eps
        else:
            denom = xp.sqrt(v) + eps
        if momentum > 0:
            buf = state.get("momentum_buffer", xp.zeros_like(param))
            buf = state["momentum_buffer"] = momentum * buf + grad / denom
            return param - group["lr"] * buf
        return param - group["lr"] * (grad / denom)
