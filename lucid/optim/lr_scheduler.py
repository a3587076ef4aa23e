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
instead of following a formula.  ``SequentialLR`` runs other schedulers one after another
(a warm-up, then a decay).  ``OneCycleLR``, ``CyclicLR`` and ``NoamScheduler`` are meant to
step after every *batch* (their "epoch" counts optimizer steps); the first two also cycle the
optimizer's momentum (Adam's beta1) against the rate, as PyTorch's do.  A ``step()`` that
raises (a OneCycleLR stepped past its total_steps) changes nothing.

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
import contextlib
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
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
    "LinearLR",
    "OneCycleLR",
    "CyclicLR",
    "NoamScheduler",
    "SequentialLR",
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


def _per_group(name: str, key: str, value: Any, optimizer: Optimizer, **bounds: Any) -> list:
    """One real number per param group: a list of them, or one number for every group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name}: {key} has {len(value)} values, the optimizer has {n} "
                             "param group(s): give one per group, or one number for all")
        return [_real(name, key, v, **bounds) for v in value]
    return [_real(name, key, value, **bounds)] * n


def _set_momenta(optimizer: Optimizer, momenta: list[float]) -> None:
    """Write a cycled momentum into every group: Adam's family keeps it as beta1."""
    for group, m in zip(optimizer.param_groups, momenta):
        if "betas" in group:
            group["betas"] = (m, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = m


@contextlib.contextmanager
def _all_or_nothing(sched: LRScheduler) -> Iterator[None]:
    """Undo everything a scheduler call changed if it raises or is interrupted (Ctrl-C)
    half-way: the counters of ``sched`` and of the schedulers inside it, and every
    param group's hyperparameters.  (Shallow copies suffice: a scheduler replaces its lists,
    never writes into them.)"""
    scheds = [sched]
    for inner in scheds:  # SequentialLR's schedulers, nested ones too
        scheds.extend(getattr(inner, "_schedulers", []))
    saved = [(s, dict(s.__dict__)) for s in scheds]
    groups = [(g, dict(g)) for g in sched.optimizer.param_groups]
    try:
        yield
    except BaseException:
        for s, state in saved:
            s.__dict__.clear()
            s.__dict__.update(state)
        for group, old in groups:
            group.clear()
            group.update(old)
        raise


class LRScheduler:
    """Base class: ``LRScheduler(optimizer, last_epoch=-1)``.

    Subclasses define :meth:`lr_at` -- the learning rate of one group at ``last_epoch`` from
    its ``base_lr``.  Construction records each group's starting ``lr`` as ``initial_lr`` (the
    ``base_lrs``) and sets epoch 0's rate; each ``step()`` moves to the next epoch.

    Pass ``last_epoch=k`` to resume at epoch ``k + 1`` (the groups must then already carry
    ``initial_lr``, as they do after a scheduler has run on them).
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1, *,
                 base_lrs: list[float] | None = None) -> None:
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
        # a schedule with its own lower end (CyclicLR's base_lr) passes base_lrs
        self.base_lrs: list[float] = (list(base_lrs) if base_lrs is not None else
                                      [g["initial_lr"] for g in optimizer.param_groups])
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

    def get_momenta(self) -> list[float] | None:
        """The momentum (or Adam's beta1) of every group at ``last_epoch``, for schedules
        that cycle it too (OneCycleLR, CyclicLR); None for the others."""
        return None

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and set every group's ``lr``.

        All or nothing: if the new rates cannot be computed (a OneCycleLR stepped past its
        total_steps, a LambdaLR's function raising), nothing changes, not even the count.
        """
        with _all_or_nothing(self):
            if epoch is None:
                self.last_epoch += 1
            else:
                self.last_epoch = _int(type(self).__name__, "epoch", epoch, 0)
            lrs = self.get_lr()
            momenta = self.get_momenta()
            for group, lr in zip(self.optimizer.param_groups, lrs):
                group["lr"] = lr
            if momenta is not None:
                _set_momenta(self.optimizer, momenta)
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
        self._check_kind(state_dict)
        name = type(self).__name__
        last = state_dict["_last_lr"]
        groups = self.optimizer.param_groups
        if not isinstance(last, (list, tuple)) or len(last) != len(groups):
            raise ValueError(
                f"{name}.load_state_dict: the state dict has learning rates for "
                f"{len(last) if isinstance(last, (list, tuple)) else '?'} param group(s), the "
                f"optimizer has {len(groups)}. Nothing was changed."
            )
        with _all_or_nothing(self):
            self.__dict__.update({k: list(v) if isinstance(v, list) else v
                                  for k, v in state_dict.items()})
            # resume at the rate the saved scheduler had set: building this one set epoch 0's
            # (the optimizer's state dict, if loaded, carries the same rate)
            for group, lr in zip(groups, last):
                group["lr"] = lr
            momenta = self.get_momenta()  # a cycled momentum resumes too (PyTorch's waits)
            if momenta is not None:
                _set_momenta(self.optimizer, momenta)

    def _check_kind(self, state_dict: Any) -> None:
        """``state_dict`` is a dict with this scheduler's keys, neither more nor fewer."""
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, lr={self.get_last_lr()})"


class StepLR(LRScheduler):
    """``lr = base_lr * gamma ** (epoch // step_size)``: decay by ``gamma`` every
    ``step_size`` epochs.  A whole-number float (``StepLR(opt, 1.0)``, as PyTorch's tutorials
    write it) is taken as that int; 2.5 epochs is refused."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if isinstance(step_size, float) and step_size.is_integer():
            step_size = int(step_size)  # PyTorch's tutorials pass 1.0; it counts epochs the same
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
        with _all_or_nothing(self):
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


class LinearLR(LRScheduler):
    """Scale ``base_lr`` by a factor that moves linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then stays there (a linear warm-up by
    default)::

        lr = base_lr * (start_factor + (end_factor - start_factor) * min(epoch, total_iters)
                                                                   / total_iters)

    ``LinearLR(optimizer, start_factor=1/3, end_factor=1.0, total_iters=5)``: PyTorch's
    defaults, ``start_factor`` in (0, 1], ``end_factor`` in [0, 1].  (PyTorch updates the
    rate step by step, multiplying by ratios; this closed form gives the same rates.)
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        self.start_factor = _real("LinearLR", "start_factor", start_factor, low=0.0,
                                  low_open=True, high=1.0)
        self.end_factor = _real("LinearLR", "end_factor", end_factor, low=0.0, high=1.0)
        self.total_iters = _int("LinearLR", "total_iters", total_iters, 1)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        done = min(self.last_epoch, self.total_iters) / self.total_iters
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * done)


def _anneal(strategy: str, start: float, end: float, pct: float) -> float:
    """From ``start`` (pct = 0) to ``end`` (pct = 1): half a cosine, or a straight line."""
    if strategy == "cos":
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
    return (end - start) * pct + start


def _check_cycle_momentum(name: str, optimizer: Optimizer) -> None:
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"{name}: cycle_momentum=True needs an optimizer with a momentum or betas "
            f"hyperparameter (SGD, RMSprop, Adam, ...); {type(optimizer).__name__} has "
            "neither. Pass cycle_momentum=False"
        )


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin, 2018): warm up to ``max_lr``, then anneal far below
    the start; call ``step()`` after every *batch*.

    ``OneCycleLR(optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
    pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
    max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False)`` --
    PyTorch's signature and defaults.  ``total_steps`` defaults to
    ``epochs * steps_per_epoch``.  With ``initial = max_lr / div_factor`` and
    ``min = initial / final_div_factor``, step ``s`` (``s = 0 .. total_steps``) lies in::

        phase 1: s <= pct_start * T - 1        initial -> max_lr
        phase 2: up to T - 1                   max_lr  -> min        (three_phase=False)

        three_phase=True: initial -> max_lr, up to pct_start * T - 1;
                          max_lr -> initial, up to 2 * pct_start * T - 2; initial -> min

    and within a phase ``lr = anneal(start, end, pct)``, ``pct`` the fraction of the phase
    done, ``anneal`` half a cosine (``"cos"``) or a line (``"linear"``).  The momentum (or
    Adam's beta1) moves the opposite way, ``max_momentum -> base_momentum`` while the rate
    rises and back (PyTorch's ``cycle_momentum``; it needs an optimizer with ``momentum`` or
    ``betas``).  ``max_lr`` and the momenta take one number or one per param group.

    Like PyTorch, the groups get ``initial_lr``, ``max_lr``, ``min_lr`` (and
    ``max_momentum``, ``base_momentum``) keys; the scheduler computes from its own copies.
    Stepping past ``total_steps`` raises ValueError (and changes nothing).  Where PyTorch
    divides by zero (a phase of zero length), Lucid takes the phase as done.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85,
                 max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        name = "OneCycleLR"
        _check_optimizer(name, optimizer)
        if total_steps is not None:
            self.total_steps = _int(name, "total_steps", total_steps, 1)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = (_int(name, "epochs", epochs, 1)
                                * _int(name, "steps_per_epoch", steps_per_epoch, 1))
        else:
            raise ValueError(f"{name}: give total_steps, or epochs and steps_per_epoch "
                             "(total_steps = epochs * steps_per_epoch)")
        self.pct_start = _real(name, "pct_start", pct_start, low=0.0, high=1.0)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{name}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        for key, flag in (("cycle_momentum", cycle_momentum), ("three_phase", three_phase)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name}: {key} must be True or False, got {flag!r}")
        self.three_phase = three_phase
        div = _real(name, "div_factor", div_factor, low=0.0, low_open=True)
        final_div = _real(name, "final_div_factor", final_div_factor, low=0.0, low_open=True)
        self.max_lrs = _per_group(name, "max_lr", max_lr, optimizer, low=0.0)
        initial_lrs = [m / div for m in self.max_lrs]
        self.min_lrs = [i / final_div for i in initial_lrs]
        self.cycle_momentum = cycle_momentum
        self.max_momentums: list[float] | None = None
        self.base_momentums: list[float] | None = None
        if cycle_momentum:
            _check_cycle_momentum(name, optimizer)
            self.max_momentums = _per_group(name, "max_momentum", max_momentum, optimizer,
                                            low=0.0, high=1.0, high_open=True)
            self.base_momentums = _per_group(name, "base_momentum", base_momentum, optimizer,
                                             low=0.0, high=1.0, high_open=True)
        if last_epoch == -1:  # PyTorch's group keys (the scheduler reads its own lists)
            for i, group in enumerate(optimizer.param_groups):
                group.update(initial_lr=initial_lrs[i], max_lr=self.max_lrs[i],
                             min_lr=self.min_lrs[i])
                if cycle_momentum:
                    group.update(max_momentum=self.max_momentums[i],
                                 base_momentum=self.base_momentums[i])
        super().__init__(optimizer, last_epoch, base_lrs=initial_lrs)

    def _phase(self) -> tuple[int, float]:
        """Which phase step ``last_epoch`` is in (0, 1 or 2) and the fraction of it done."""
        t, pct = self.total_steps, self.pct_start
        ends = ([pct * t - 1, 2 * pct * t - 2, t - 1] if self.three_phase else
                [pct * t - 1, t - 1])
        start = 0.0
        for i, end in enumerate(ends):
            if self.last_epoch <= end or i == len(ends) - 1:
                return i, (self.last_epoch - start) / (end - start) if end != start else 1.0
            start = end
        raise AssertionError("unreachable")

    def _check_steps(self) -> None:
        if self.last_epoch > self.total_steps:
            raise ValueError(
                f"OneCycleLR: stepped {self.last_epoch} times, past total_steps = "
                f"{self.total_steps}; build it with the number of batches you will train "
                "(epochs * steps_per_epoch)"
            )

    def lr_at(self, base_lr: float, group_index: int) -> float:
        self._check_steps()
        phase, pct = self._phase()
        initial, top, low = base_lr, self.max_lrs[group_index], self.min_lrs[group_index]
        path = ([(initial, top), (top, initial), (initial, low)] if self.three_phase else
                [(initial, top), (top, low)])
        return _anneal(self.anneal_strategy, *path[phase], pct)

    def get_momenta(self) -> list[float] | None:
        if not self.cycle_momentum:
            return None
        self._check_steps()
        phase, pct = self._phase()
        out = []
        for top, low in zip(self.max_momentums, self.base_momentums):
            path = ([(top, low), (low, top), (top, top)] if self.three_phase else
                    [(top, low), (low, top)])
            out.append(_anneal(self.anneal_strategy, *path[phase], pct))
        return out


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017): the rate goes back and forth between
    ``base_lr`` and ``max_lr``; call ``step()`` after every *batch*.

    ``CyclicLR(optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
    mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True,
    base_momentum=0.8, max_momentum=0.9)`` -- PyTorch's signature and defaults.  A cycle
    lasts ``step_size_up + step_size_down`` steps (``step_size_down`` defaults to
    ``step_size_up``).  At step ``s``::

        cycle  = floor(1 + s / cycle_length)            (1, 2, ...)
        x      = 1 + s / cycle_length - cycle           (fraction of this cycle done)
        height = x / up_ratio if x <= up_ratio else (x - 1) / (up_ratio - 1)   (0 -> 1 -> 0)
        lr     = base_lr + (max_lr - base_lr) * height * scale

    where ``up_ratio = step_size_up / cycle_length`` and ``scale`` is 1 (``"triangular"``),
    ``1 / 2^(cycle - 1)`` (``"triangular2"``: each cycle half as tall) or ``gamma^s``
    (``"exp_range"``).  A ``scale_fn`` replaces the mode: it is called with ``cycle``
    (``scale_mode="cycle"``) or with ``s`` (``"iterations"``).  With ``cycle_momentum`` the
    momentum (or Adam's beta1) moves the other way,
    ``max_momentum - (max_momentum - base_momentum) * height * scale``.

    Building it sets every group's rate to ``base_lr``.  ``scale_fn`` is not part of
    ``state_dict`` (functions cannot be saved): build the scheduler with the same one
    before loading.
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float],
                 max_lr: float | Sequence[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.8,
                 max_momentum: float | Sequence[float] = 0.9, last_epoch: int = -1) -> None:
        name = "CyclicLR"
        _check_optimizer(name, optimizer)
        base_lrs = _per_group(name, "base_lr", base_lr, optimizer, low=0.0)
        self.max_lrs = _per_group(name, "max_lr", max_lr, optimizer, low=0.0)
        up = _int(name, "step_size_up", step_size_up, 1)
        down = up if step_size_down is None else _int(name, "step_size_down",
                                                      step_size_down, 1)
        self.total_size = float(up + down)
        self.step_ratio = up / self.total_size
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{name}: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range' (or give scale_fn), got {mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{name}: scale_fn must be a function, got {scale_fn!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{name}: scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")
        if not isinstance(cycle_momentum, bool):
            raise TypeError(f"{name}: cycle_momentum must be True or False, got "
                            f"{cycle_momentum!r}")
        self.mode = mode
        self.gamma = _real(name, "gamma", gamma, low=0.0)
        self.scale_fn = scale_fn
        if scale_fn is None:  # the modes fix what the scale is a function of
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        self.max_momentums: list[float] | None = None
        self.base_momentums: list[float] | None = None
        if cycle_momentum:
            _check_cycle_momentum(name, optimizer)
            self.base_momentums = _per_group(name, "base_momentum", base_momentum, optimizer,
                                             low=0.0, high=1.0, high_open=True)
            self.max_momentums = _per_group(name, "max_momentum", max_momentum, optimizer,
                                            low=0.0, high=1.0, high_open=True)
            if last_epoch == -1:  # PyTorch's group keys
                for i, group in enumerate(optimizer.param_groups):
                    group.update(max_momentum=self.max_momentums[i],
                                 base_momentum=self.base_momentums[i])
        if last_epoch == -1:
            for group, lr in zip(optimizer.param_groups, base_lrs):
                group["lr"] = lr
        super().__init__(optimizer, last_epoch, base_lrs=base_lrs)

    _not_saved = ("optimizer", "scale_fn")

    def _height_and_scale(self) -> tuple[float, float]:
        """How far up the triangle step ``last_epoch`` is (0 to 1), and its scale."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        height = (x / self.step_ratio if x <= self.step_ratio else
                  (x - 1) / (self.step_ratio - 1))
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        if self.scale_fn is not None:
            scale = _real("CyclicLR", "scale_fn(x)", self.scale_fn(arg))
        elif self.mode == "triangular":
            scale = 1.0
        elif self.mode == "triangular2":
            scale = 1 / (2.0 ** (arg - 1))
        else:
            scale = self.gamma**arg
        return height, scale

    def lr_at(self, base_lr: float, group_index: int) -> float:
        height, scale = self._height_and_scale()
        return base_lr + (self.max_lrs[group_index] - base_lr) * height * scale

    def get_momenta(self) -> list[float] | None:
        if not self.cycle_momentum:
            return None
        height, scale = self._height_and_scale()
        return [top - (top - low) * height * scale
                for low, top in zip(self.base_momentums, self.max_momentums)]


class NoamScheduler(LRScheduler):
    """The Transformer's schedule (Vaswani et al., 2017, "Noam"): a linear warm-up, then
    decay with the inverse square root of the step.  At step ``s = max(epoch, 1)``::

        lr = factor * model_size^-0.5 * min(s^-0.5, s * warmup_steps^-1.5)

    The two terms meet at ``s = warmup_steps``, where the rate peaks at
    ``factor / sqrt(model_size * warmup_steps)``.  The rate is absolute: the optimizer's own
    ``lr`` is not used (build it with ``lr=1.0``, say), as in Lucid 2.x.  Step 0 uses the rate
    of step 1 (``s^-0.5`` is infinite at 0).  Call ``step()`` after every batch.

    ``NoamScheduler(optimizer, model_size, warmup_steps, factor=1.0)``; PyTorch has no such
    class (it is written there as a LambdaLR).
    """

    def __init__(self, optimizer: Optimizer, model_size: int, warmup_steps: int,
                 factor: float = 1.0, last_epoch: int = -1) -> None:
        self.model_size = _int("NoamScheduler", "model_size", model_size, 1)
        self.warmup_steps = _int("NoamScheduler", "warmup_steps", warmup_steps, 1)
        self.factor = _real("NoamScheduler", "factor", factor, low=0.0, low_open=True)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, group_index: int) -> float:
        s = max(self.last_epoch, 1)
        return (self.factor * self.model_size**-0.5
                * min(s**-0.5, s * self.warmup_steps**-1.5))


class SequentialLR(LRScheduler):
    """Run schedulers one after another: ``schedulers[0]`` until ``milestones[0]``, then
    ``schedulers[1]`` (restarted at its epoch 0) until ``milestones[1]``, and so on::

        warmup = LinearLR(opt, start_factor=0.1, total_iters=5)
        decay = CosineAnnealingLR(opt, T_max=95)
        sched = SequentialLR(opt, [warmup, decay], milestones=[5])   # 5 warm-up epochs

    ``SequentialLR(optimizer, schedulers, milestones)``, as in PyTorch: the schedulers wrap
    the same optimizer (ReduceLROnPlateau cannot be one of them: it needs a metric), and
    there is one milestone fewer than schedulers.  ``state_dict`` holds each scheduler's
    state dict; loading restores all of them, or none.
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        name = "SequentialLR"
        _check_optimizer(name, optimizer)
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError(f"{name}: expects at least one scheduler, got none")
        for i, sched in enumerate(schedulers):
            if not isinstance(sched, LRScheduler):
                raise TypeError(f"{name}: scheduler {i} is a {type(sched).__name__}, not a "
                                "lucid.optim.lr_scheduler scheduler")
            if isinstance(sched, ReduceLROnPlateau):
                raise ValueError(f"{name}: scheduler {i} is a ReduceLROnPlateau, which needs "
                                 "a metric at every step; it cannot be sequenced")
            if sched.optimizer is not optimizer:
                raise ValueError(f"{name}: scheduler {i} ({type(sched).__name__}) wraps "
                                 "another optimizer; all must wrap the one given")
        stones = [_int(name, "each milestone", m, 1) for m in milestones]
        if len(stones) != len(schedulers) - 1:
            raise ValueError(f"{name}: expects one milestone fewer than schedulers, got "
                             f"{len(schedulers)} scheduler(s) and {len(stones)} milestone(s)")
        if any(a >= b for a, b in zip(stones, stones[1:])):
            raise ValueError(f"{name}: milestones must be increasing, got {stones}")
        if isinstance(last_epoch, bool) or not isinstance(last_epoch, int) or last_epoch < -1:
            raise ValueError(f"{name}: last_epoch must be an int >= -1, got {last_epoch!r}")
        self.optimizer = optimizer
        self._schedulers = schedulers
        self._milestones = stones
        self.last_epoch = last_epoch + 1
        # as in PyTorch: back to the initial rates, undo the first step every scheduler took
        # when it was built, and take it again for the one that runs at epoch 0 only
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        _undo_first_step(self)
        first = schedulers[bisect.bisect_right(stones, 0)]
        first.step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch: the scheduler in charge steps (restarting at a milestone)."""
        epoch = self.last_epoch + 1
        index = bisect.bisect_right(self._milestones, epoch)
        sched = self._schedulers[index]
        with _all_or_nothing(self):
            if index > 0 and self._milestones[index - 1] == epoch:
                sched.step(0)  # its first epoch, from its base rates
            else:
                sched.step()
            self.last_epoch = epoch
            self._last_lr = sched.get_last_lr()

    def get_momenta(self) -> list[float] | None:
        """The momenta of the scheduler in charge at ``last_epoch`` (if it cycles them)."""
        return self._schedulers[bisect.bisect_right(self._milestones, self.last_epoch)
                                ].get_momenta()

    _not_saved = ("optimizer", "_schedulers")

    def state_dict(self) -> dict[str, Any]:
        """The counters, and every scheduler's own state dict (``"_schedulers"``)."""
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the counters and every scheduler's state; if one refuses, none changes."""
        self._check_kind(state_dict)
        saved = state_dict["_schedulers"]
        if not isinstance(saved, list) or len(saved) != len(self._schedulers):
            n = len(saved) if isinstance(saved, list) else "no"
            raise ValueError(f"SequentialLR.load_state_dict: the state dict holds {n} scheduler "
                             f"state(s), this SequentialLR runs {len(self._schedulers)}: load "
                             "it into one built with the same schedulers. Nothing was changed.")
        with _all_or_nothing(self):
            for sched, state in zip(self._schedulers, saved):
                sched.load_state_dict(state)
            super().load_state_dict({**state_dict, "_schedulers": self._schedulers})


def _undo_first_step(sched: LRScheduler) -> None:
    """Step the schedulers inside ``sched`` (a SequentialLR, maybe nested) back one epoch."""
    for inner in getattr(sched, "_schedulers", []):
        if hasattr(inner, "_schedulers"):
            _undo_first_step(inner)
        else:
            inner.last_epoch -= 1
