"""Learning-rate schedules: change each param group's ``lr`` as training goes on.

A scheduler wraps an optimizer.  Call ``scheduler.step()`` once per epoch (after the epoch's
``optimizer.step()`` calls); it counts epochs in ``last_epoch`` and writes the learning rate for
the new epoch into every param group.  Each schedule here is a *closed form* of the epoch
number and the group's initial learning rate (``base_lrs``), written in its docstring::

    opt = SGD(model.parameters(), lr=0.1)
    sched = StepLR(opt, step_size=30, gamma=0.1)    # 0.1 for epochs 0-29, 0.01 for 30-59 ...
    for epoch in range(90):
        train_one_epoch(model, opt)
        sched.step()

``ReduceLROnPlateau`` is the exception: it reacts to a measured metric (``sched.step(val_loss)``)
instead of following a formula.

``state_dict()`` / ``load_state_dict()`` save and restore a scheduler's counters and settings
(plain numbers and lists, so ``lucid.save`` can write them); the optimizer is saved separately.
To resume a run, PyTorch's recipe::

    opt.load_state_dict(saved["optimizer"])     # its groups carry "lr" and "initial_lr"
    sched = StepLR(opt, step_size=30, gamma=0.1)
    sched.load_state_dict(saved["scheduler"])   # last_epoch, base_lrs, _last_lr

(or ``StepLR(opt, 30, 0.1, last_epoch=k)`` for a run stopped after epoch ``k``); the rates then
go on exactly as in the uninterrupted run.  A scheduler built on a loaded optimizer *without*
loading its state starts its schedule over from ``initial_lr`` -- PyTorch's multiplicative
schedulers instead scale the loaded rate from epoch 0 on; neither continues the run.
"""

from __future__ import annotations

import bisect
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from lucid.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "StepLR",
    "MultiStepLR",
    "ExponentialLR",
    "CosineAnnealingLR",
    "LambdaLR",
    "ReduceLROnPlateau",
]


def _check_optimizer(name: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{name}: expected a lucid.optim optimizer, got "
                        f"{type(optimizer).__name__}")


def _real(name: str, key: str, value: Any, low: float | None = None, low_open: bool = False,
          high: float | None = None, high_open: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: {key} must be a real number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name}: {key} must be finite, got {value}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name}: {key} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and (value >= high if high_open else value > high):
        raise ValueError(f"{name}: {key} must be {'<' if high_open else '<='} {high}, got "
                         f"{value}")
    return value


def _int(name: str, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: {key} must be an int, got {value!r}")
    if value < low:
        raise ValueError(f"{name}: {key} must be >= {low}, got {value}")
    return int(value)


class LRScheduler:
    """Base class: ``LRScheduler(optimizer, last_epoch=-1)``.

    Subclasses define :meth:`lr_at` -- the learning rate of one group at ``last_epoch`` from
    its ``base_lr``.  Construction records each group's starting ``lr`` as ``initial_lr`` (the
    ``base_lrs``) and sets epoch 0's rate; each ``step()`` moves to the next epoch.

    Pass ``last_epoch=k`` to resume at epoch ``k + 1`` (the groups must then already carry
    ``initial_lr``, as they do after a scheduler has run on them).
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        name = type(self).__name__
        _check_optimizer(name, optimizer)
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int) or last_epoch < -1:
            raise ValueError(f"{name}: last_epoch must be an int >= -1, got {last_epoch!r}")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"{name}: resuming at last_epoch={last_epoch} needs 'initial_lr' in "
                        f"param group {i}; it is set when a scheduler first wraps the optimizer"
                    )
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._last_lr: list[float] = []
        self.step()

    def lr_at(self, base_lr: float, group_index: int) -> float:
        """The learning rate of group ``group_index`` at epoch ``self.last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} must define lr_at(base_lr, index)")

    def get_lr(self) -> list[float]:
        """The learning rates of every group at ``last_epoch``."""
        return [self.lr_at(base, i) for i, base in enumerate(self.base_lrs)]

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step()`` set (one per param group)."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and set every group's ``lr``."""
        if epoch is None:
            self.last_epoch += 1
        else:
            self.last_epoch = _int(type(self).__name__, "epoch", epoch, 0)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    # -- saving --------------------------------------------------------------------------
    _not_saved: tuple[str, ...] = ("optimizer",)

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's counters and settings (everything but the optimizer and any
        functions, which cannot be saved)."""
        return {k: (list(v) if isinstance(v, (list, tuple)) else v)  # copies of lists
                for k, v in self.__dict__.items() if k not in self._not_saved and not callable(v)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore counters and settings saved by :meth:`state_dict` of a scheduler of the
        same kind (checked: another kind's state would quietly mix two schedules).  Nothing
        changes when an error is raised."""
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise TypeError(f"{name}.load_state_dict: expected a dict, got "
                            f"{type(state_dict).__name__}")
        own = set(self.state_dict())
        unknown, missing = sorted(set(state_dict) - own), sorted(own - set(state_dict))
        if unknown or missing:
            has = f"; it has {', '.join(unknown)}, which a {name} does not keep" if unknown else ""
            lacks = f"; it lacks {', '.join(missing)}" if missing else ""
            raise ValueError(
                f"{name}.load_state_dict: this state dict does not fit a {name}{has}{lacks}: "
                f"it was saved by another kind of scheduler. Load it into a scheduler of the "
                f"kind that saved it, or leave this {name} as it is. Nothing was changed."
            )
        last = state_dict["_last_lr"]
        groups = self.optimizer.param_groups
        if not isinstance(last, (list, tuple)) or len(last) != len(groups):
            raise ValueError(
                f"{name}.load_state_dict: the state dict has learning rates for "
                f"{len(last) if isinstance(last, (list, tuple)) else '?'} param group(s), the "
                f"optimizer has {len(groups)}. Nothing was changed."
            )
        self.__dict__.update({k: list(v) if isinstance(v, list) else v
                              for k, v in state_dict.items()})
        # resume at the rate the saved scheduler had set: building this one set epoch 0's
        # (the optimizer's state dict, if loaded, carries the same rate)
        for group, lr in zip(groups, last):
            group["lr"] = lr

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, lr={self.get_last_lr()})"


class StepLR(LRScheduler):
    """``lr = base_lr * gamma ** (epoch // step_size)``: decay by ``gamma`` every
    ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = _int("StepLR", "step_size", step_size, 1)
        self.gamma = _real("StepLR", "gamma", gamma, low=0.0)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        return base_lr * self.gamma ** (self.last_epoch // self.step_size)


class MultiStepLR(LRScheduler):
    """``lr = base_lr * gamma ** (number of milestones <= epoch)``: decay by ``gamma`` at each
    milestone epoch."""

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        stones = [_int("MultiStepLR", "each milestone", m, 0) for m in milestones]
        if stones != sorted(stones):
            raise ValueError(f"MultiStepLR: milestones must be increasing, got {stones}")
        self.milestones = stones
        self.gamma = _real("MultiStepLR", "gamma", gamma, low=0.0)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        return base_lr * self.gamma ** bisect.bisect_right(self.milestones, self.last_epoch)


class ExponentialLR(LRScheduler):
    """``lr = base_lr * gamma ** epoch``: decay by ``gamma`` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = _real("ExponentialLR", "gamma", gamma, low=0.0)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        return base_lr * self.gamma**self.last_epoch


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from ``base_lr`` down to ``eta_min`` over ``T_max`` epochs
    (Loshchilov & Hutter, SGDR, without restarts)::

        lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2

    Past ``T_max`` the cosine carries on, rising back towards ``base_lr`` (as in PyTorch).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = _int("CosineAnnealingLR", "T_max", T_max, 1)
        self.eta_min = _real("CosineAnnealingLR", "eta_min", eta_min, low=0.0)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        cos = math.cos(math.pi * self.last_epoch / self.T_max)
        return self.eta_min + (base_lr - self.eta_min) * (1 + cos) / 2


class LambdaLR(LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``; one function for all groups or one per group.

    The functions are not part of ``state_dict`` (functions cannot be saved); build the
    scheduler with the same ones before loading.
    """

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        _check_optimizer("LambdaLR", optimizer)
        n = len(optimizer.param_groups)
        if callable(lr_lambda):
            lambdas = [lr_lambda] * n
        else:
            lambdas = list(lr_lambda)
            if len(lambdas) != n or not all(callable(f) for f in lambdas):
                raise ValueError(
                    f"LambdaLR: expected one function or {n} functions (one per param group), "
                    f"got {len(lambdas)} item(s)"
                )
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    _not_saved = ("optimizer", "lr_lambdas")

    def lr_at(self, base_lr: float, group_index: int) -> float:
        factor = self.lr_lambdas[group_index](self.last_epoch)
        return base_lr * _real("LambdaLR", "lr_lambda(epoch)", factor)


class ReduceLROnPlateau(LRScheduler):
    """Cut the learning rate when a metric stops improving: ``sched.step(val_loss)``.

    ``ReduceLROnPlateau(optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
    threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8)``.

    After each ``step(metric)``: a metric *better* than the best so far resets the count of bad
    epochs, anything else adds one.  Better means, for ``mode="min"``,
    ``metric < best * (1 - threshold)`` (``threshold_mode="rel"``) or
    ``metric < best - threshold`` (``"abs"``); mirrored for ``"max"``.  When more than
    ``patience`` bad epochs pile up, every group's rate becomes
    ``max(lr * factor, min_lr)`` (changes smaller than ``eps`` are skipped) and the count
    pauses for ``cooldown`` epochs.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0.0,
                 eps: float = 1e-8) -> None:
        name = "ReduceLROnPlateau"
        _check_optimizer(name, optimizer)
        if mode not in ("min", "max"):
            raise ValueError(f"{name}: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{name}: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.factor = _real(name, "factor", factor, low=0.0, high=1.0, high_open=True)
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"{name}: expected {n} min_lr values (one per param group), "
                                 f"got {len(min_lr)}")
            self.min_lrs = [_real(name, "min_lr", m, low=0.0) for m in min_lr]
        else:
            self.min_lrs = [_real(name, "min_lr", min_lr, low=0.0)] * n
        self.optimizer = optimizer
        self.mode = mode
        self.patience = _int(name, "patience", patience, 0)
        self.threshold = _real(name, "threshold", threshold, low=0.0)
        self.threshold_mode = threshold_mode
        self.cooldown = _int(name, "cooldown", cooldown, 0)
        self.eps = _real(name, "eps", eps, low=0.0)
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self.base_lrs = [g["lr"] for g in optimizer.param_groups]
        self._last_lr = list(self.base_lrs)

    def is_better(self, current: float, best: float) -> bool:
        """Whether ``current`` improves on ``best`` by more than the threshold."""
        if self.mode == "min":
            bar = best * (1 - self.threshold) if self.threshold_mode == "rel" else (
                best - self.threshold)
            return current < bar
        bar = best * (1 + self.threshold) if self.threshold_mode == "rel" else (
            best + self.threshold)
        return current > bar

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics: Any) -> None:  # type: ignore[override]
        """Record this epoch's metric (a number or a one-element Tensor)."""
        current = float(metrics)
        if math.isnan(current):
            raise ValueError("ReduceLROnPlateau.step: the metric is NaN")
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self) -> None:
        for group, min_lr in zip(self.optimizer.param_groups, self.min_lrs):
            old = group["lr"]
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                group["lr"] = new
