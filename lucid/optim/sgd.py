"""Stochastic gradient descent, with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lucid.optim.optimizer import Optimizer, merge_defaults

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""``SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False)``.

    For a parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`
    (PyTorch's formulation)::

        g_t  <- g_t + weight_decay * theta                      (L2 penalty, if weight_decay)
        b_t  =  g_t                                             (first step)
        b_t  =  momentum * b_{t-1} + (1 - dampening) * g_t      (later steps)
        g_t  <- g_t + momentum * b_t     if nesterov  else  b_t (if momentum)
        theta <- theta - lr * g_t

    Without momentum this is plain gradient descent, ``theta <- theta - lr * g``.  Momentum
    keeps a running direction ``b`` (the "velocity"), so steps build up along directions the
    gradient keeps pointing to and cancel along directions where it flips sign.  Nesterov's
    variant looks one momentum step ahead.

    Lucid 2.x spelled the hyperparameters as a dict:
    ``SGD(model.parameters(), defaults={"lr": 1e-2})``; that works too.
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 *, defaults: dict[str, Any] | None = None) -> None:
        hyper = {"lr": lr, "momentum": momentum, "dampening": dampening,
                 "weight_decay": weight_decay, "nesterov": nesterov}
        super().__init__(params, merge_defaults("SGD", hyper, defaults))

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        self._check_number(group, index, "momentum", low=0.0)
        self._check_number(group, index, "dampening", low=0.0, high=1.0)
        self._check_number(group, index, "weight_decay", low=0.0)
        if not isinstance(group["nesterov"], bool):
            raise TypeError(f"SGD: nesterov must be True or False, got {group['nesterov']!r}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                "SGD: Nesterov momentum needs momentum > 0 and dampening = 0, got "
                f"momentum={group['momentum']}, dampening={group['dampening']}"
            )

    def update(self, xp, param, grad, state, group):
        lr, momentum = group["lr"], group["momentum"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        if momentum:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = xp.array(grad)  # a copy: the buffer must not alias the gradient
            else:
                buf = momentum * buf + (1 - group["dampening"]) * grad
            state["momentum_buffer"] = buf
            grad = grad + momentum * buf if group["nesterov"] else buf
        if grad.dtype != param.dtype:  # a hand-set gradient of another dtype: promote
            return param - lr * grad
        # theta - lr * g, with one new array instead of two: -lr * g is fresh, so theta can be
        # added into it in place (about 30% less time for the update on NumPy)
        new = grad * -lr
        new += param
        return new
