"""Adagrad: each coordinate's step shrinks with the sum of its squared gradients so far."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""``Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10)``.

    Duchi, Hazan & Singer (2011), as PyTorch implements it.  At step ``t = 1, 2, ...``::

        g_t   <- g_t + weight_decay * theta          (L2 penalty, if weight_decay)
        lr_t  =  lr / (1 + (t - 1) * lr_decay)
        s_t   =  s_{t-1} + g_t^2                     (s_0 = initial_accumulator_value)
        theta <- theta - lr_t * g_t / (sqrt(s_t) + eps)

    Coordinates with large past gradients take small steps and rarely-updated coordinates
    large ones (good for sparse features); the sum only grows, so steps keep shrinking.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "lr_decay": lr_decay, "weight_decay": weight_decay,
                 "initial_accumulator_value": initial_accumulator_value, "eps": eps}
        super().__init__(params, merge_defaults("Adagrad", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        self._check_number(group, index, "lr_decay", low=0.0)
        self._check_number(group, index, "weight_decay", low=0.0)
        self._check_number(group, index, "initial_accumulator_value", low=0.0)
        self._check_number(group, index, "eps", low=0.0)

    def update(self, xp, param, grad, state, group):
        if not state:
            state["step"] = 0
            state["sum"] = xp.full(param.shape, group["initial_accumulator_value"],
                                   dtype=param.dtype)
        t = state["step"] = state["step"] + 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        lr_t = group["lr"] / (1 + (t - 1) * group["lr_decay"])
        s = state["sum"] = state["sum"] + grad * grad
        return param - lr_t * (grad / (xp.sqrt(s) + group["eps"]))
