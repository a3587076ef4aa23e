"""Loss layers: each holds its options and calls the function of ``lucid.nn.functional``.

Class weights are registered as buffers (as in PyTorch), so ``.to(device)`` moves them and
``state_dict`` saves them.
"""

from __future__ import annotations

import functools
from typing import Any

from lucid.nn import functional as F
from lucid.nn.functional.loss import legacy_reduction
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "HuberLoss",
           "L1Loss", "SmoothL1Loss", "KLDivLoss"]


def _accept_legacy_init(cls: type) -> None:
    """``nn.NLLLoss(size_average=False)``: PyTorch's old arguments, as ``reduction``."""
    init = cls.__dict__.get("__init__")
    if init is None:
        return

    @functools.wraps(init)
    def accepting(self: Any, *args: Any, size_average: Any = None, reduce: Any = None,
                  **kwargs: Any) -> None:
        if size_average is not None or reduce is not None:
            kwargs["reduction"] = legacy_reduction(cls.__name__, size_average, reduce,
                                                     kwargs.get("reduction", "mean"))
        init(self, *args, **kwargs)

    cls.__init__ = accepting


class _Loss(Module):
    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _accept_legacy_init(cls)

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(
                f"{type(self).__name__}: reduction must be 'mean', 'sum' or 'none', got "
                f"{reduction!r}"
            )
        self.reduction = reduction


_accept_legacy_init(_Loss)


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self._set_buffer("weight", weight)

    def _set_buffer(self, name: str, value: Any) -> None:
        if value is None:
            self.register_buffer(name, None)
        else:
            self.register_buffer(name, value if isinstance(value, Tensor) else Tensor(value))


class MSELoss(_Loss):
    """mean((input - target)^2) (``reduction`` "mean", "sum" or "none")."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class HuberLoss(_Loss):
    """Quadratic for |input - target| < delta, linear beyond (see ``F.huber_loss``)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, self.reduction, self.delta)


class L1Loss(_Loss):
    """mean(|input - target|) (``reduction`` "mean", "sum" or "none")."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic for |input - target| < beta, linear beyond (see ``F.smooth_l1_loss``)."""

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class KLDivLoss(Module):
    """KL divergence of log-probabilities ``input`` from ``target`` (see ``F.kl_div``);
    ``reduction="batchmean"`` gives the per-sample KL divergence."""

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(f"KLDivLoss: reduction must be 'mean', 'batchmean', 'sum' or "
                             f"'none', got {reduction!r}")
        self.reduction = reduction
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, self.reduction, self.log_target)


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits (N, C, ...) against class indices (N, ...) or probabilities.

    One fused op for class indices: log-softmax and the negative log-likelihood together.
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                               self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities (N, C, ...) at class indices (N, ...)."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(weight, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities in [0, 1] (apply sigmoid first)."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy on raw scores (sigmoid included, computed stably)."""

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(weight, reduction)
        self._set_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                  self.pos_weight)


_accept_legacy_init(KLDivLoss)
