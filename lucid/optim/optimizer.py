"""The ``Optimizer`` base class: walk the parameters, let the subclass move each one.

An optimizer is a *per-parameter update rule*.  The base class does the walking and
the bookkeeping that every rule shares; a subclass only says how one parameter moves::

    class SGD(Optimizer):
        def update(self, xp, p, g, state, group):
            return p - group["lr"] * g          # the new value of this parameter

``step()`` calls ``update`` once for every parameter that has a gradient, group by group,
handing it plain backend arrays (``xp`` is ``numpy`` on "cpu" and ``mlx.core`` on "gpu", as
in the ops), the parameter's ``state`` dict (momentum buffers, moment estimates, step counts:
kept between steps) and its ``group`` (the hyperparameters).

A step is *all or nothing*: it either moves every parameter or changes nothing at all, not
even a step count.  So the base class works in three phases:

1. **check** -- every group's hyperparameters (they may have been edited since), and every
   parameter's gradient (an array of the parameter's backend, shape and kind of number) and
   state (arrays of the parameter's shape), before any work;
2. **compute** -- every new value and new state, on copies of the state dicts; NumPy arrays
   are handed to ``update`` read-only, so a rule cannot change anything in place; on "gpu"
   MLX then runs the computation (``lucid.evaluate``), so its errors come out here too (and
   a training loop's MLX graph never outgrows one step);
3. **commit** -- write each new array into ``param.data`` (same dtype, same shape), bump
   ``param._version`` (a graph that saved the old value then refuses to run backward through
   it) and store the new state.  Nothing here can fail.

A new optimizer gets all of this by defining ``update``.

Parameters are organised in *param groups*: ``[{"params": [...], "lr": 0.1}, ...]``.  Every
group has every hyperparameter, the optimizer's ``defaults`` filling the ones a group leaves
out, so a model can train its body and its head at different learning rates.

``state_dict()`` uses PyTorch's layout -- parameters are replaced by their position (counting
across groups, in order) and state holds NumPy copies -- so it can be written by ``lucid.save``
and loaded into a fresh optimizer over the same parameters.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from lucid.backends import BACKENDS, get_backend
from lucid.engine.mode import enable_grad, no_grad
from lucid.nn.parameter import Parameter
from lucid.ops import evaluate
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

__all__ = ["Optimizer", "merge_defaults"]

#: how every refusal of a step or a load ends: the optimizer checks before it changes anything
_UNCHANGED = "No parameter was changed."
_UNCHANGED_LOAD = "Nothing was changed."
_SAME_LAYOUT = ("load a state dict into an optimizer built like the one that saved it (the same "
                f"parameters, in the same groups and order). {_UNCHANGED_LOAD}")


def merge_defaults(name: str, hyper: dict[str, Any], defaults: dict | None) -> dict[str, Any]:
    """Combine an optimizer's keyword hyperparameters with a ``defaults=`` dict.

    Both spellings work: ``SGD(params, lr=0.1)`` and Lucid 2.x's
    ``SGD(params, defaults={"lr": 0.1})``; a key given in ``defaults`` wins.
    """
    if defaults is None:
        return hyper
    if not isinstance(defaults, dict):
        raise TypeError(f"{name}: defaults must be a dict, got {type(defaults).__name__}")
    unknown = sorted(set(defaults) - set(hyper))
    if unknown:
        raise TypeError(
            f"{name}: unknown hyperparameter(s) {unknown} in defaults; {name} takes "
            f"{sorted(hyper)}"
        )
    return {**hyper, **defaults}


class Optimizer:
    """``Optimizer(params, defaults)``: the walk over parameters shared by every optimizer.

    ``params`` is an iterable of Parameters (``model.parameters()``) or of param-group dicts
    (``[{"params": body, "lr": 1e-3}, {"params": head}]``).  ``defaults`` maps each
    hyperparameter to the value groups get when they do not set it.

    Attributes: ``param_groups`` (list of dicts, each with ``"params"`` and every
    hyperparameter), ``state`` (parameter -> dict of that parameter's state), ``defaults``.
    """

    #: whether the rule is right for complex parameters (rules that square the gradient,
    #: ``g * g``, would need ``|g|^2`` and say False)
    supports_complex: bool = True

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        name = type(self).__name__
        if not isinstance(defaults, dict):
            raise TypeError(f"{name}: defaults must be a dict, got {type(defaults).__name__}")
        self.defaults: dict[str, Any] = dict(defaults)
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, (Tensor, dict)):
            what = "a single Tensor" if isinstance(params, Tensor) else "a single dict"
            raise TypeError(
                f"{name}: params must be an iterable of Parameters or of param-group dicts, got "
                f"{what}; wrap it in a list: {name}([p], ...)"
            )
        try:
            items = list(params)
        except TypeError:
            raise TypeError(
                f"{name}: params must be an iterable of Parameters or of param-group dicts "
                f"(e.g. model.parameters()), got {type(params).__name__}"
            ) from None
        if not items:
            raise ValueError(
                f"{name} got an empty parameter list: pass model.parameters() of a model that "
                "has parameters (a generator can only be used once)"
            )
        n_dicts = sum(isinstance(item, dict) for item in items)
        if n_dicts == 0:
            items = [{"params": items}]
        elif n_dicts != len(items):
            raise TypeError(
                f"{name}: params mixes param-group dicts with bare parameters; pass either a "
                "list of Parameters or a list of dicts each with a 'params' key"
            )
        for group in items:
            self.add_param_group(group)

    # -- param groups --------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group (``{"params": [...], "lr": ...}``); defaults fill missing settings.

        Useful to start training a layer later (unfreezing).  A parameter may belong to one
        group only.
        """
        name = type(self).__name__
        if not isinstance(param_group, dict) or "params" not in param_group:
            raise TypeError(
                f"{name}.add_param_group: a param group is a dict with a 'params' key, got "
                f"{param_group!r:.80}"
            )
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: a param group's params must be an ordered sequence, not a set (the "
                "order decides which saved state belongs to which parameter); use a list"
            )
        else:
            params = list(params)
        index = len(self.param_groups)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            _check_param(name, p, index, i)
            if p.dtype.is_complex and not self.supports_complex:
                raise TypeError(
                    f"{name}: param group {index}, item {i} is complex ({p.dtype.name}); "
                    f"{name}'s rule squares the gradient and is written for real parameters "
                    "(SGD handles complex ones)"
                )
            if id(p) in seen:
                raise ValueError(
                    f"{name}: parameter {i} of group {index} (shape {fmt(p.shape)}) appears "
                    "more than once; a parameter may belong to one param group only"
                )
            seen.add(id(p))
        group = {**param_group, "params": params}
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.check_group(group, index)
        self.param_groups.append(group)

    def check_group(self, group: dict[str, Any], index: int) -> None:
        """Validate a group's hyperparameters; subclasses extend it (call ``super()``)."""
        if "lr" in group:
            self._check_number(group, index, "lr", low=0.0)

    def _check_number(self, group: dict, index: int, key: str, low: float | None = None,
                      high: float | None = None, high_open: bool = False) -> None:
        """``group[key]`` must be a real number in [low, high] (or [low, high) if high_open)."""
        value = group[key]
        where = f"{type(self).__name__}: {key}" + (f" (param group {index})" if index else "")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{where} must be a real number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{where} must be finite, got {value}")
        if low is not None and value < low:
            raise ValueError(f"{where} must be >= {low}, got {value}")
        if high is not None and (value >= high if high_open else value > high):
            bound = f"< {high}" if high_open else f"<= {high}"
            raise ValueError(f"{where} must be {bound}, got {value}")

    def _check_betas(self, group: dict, index: int) -> None:
        """``group["betas"]`` is a pair ``(beta1, beta2)``, each in [0, 1) (Adam's family)."""
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)) or len(betas) != 2:
            raise TypeError(f"{type(self).__name__}: betas must be a pair (beta1, beta2), got "
                            f"{betas!r}")
        group["betas"] = tuple(betas)  # a list (e.g. from a JSON state dict) back to a pair
        for i, beta in enumerate(betas):
            self._check_number({f"betas[{i}]": beta}, index, f"betas[{i}]", low=0.0, high=1.0,
                               high_open=True)

    def _check_flag(self, group: dict, index: int, key: str) -> None:
        """``group[key]`` is True or False."""
        if not isinstance(group[key], bool):
            where = f"{type(self).__name__}: {key}" + (f" (param group {index})" if index else "")
            raise TypeError(f"{where} must be True or False, got {group[key]!r}")

    # -- the step ------------------------------------------------------------------------
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear every parameter's gradient: set it to None (or to zeros)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:  # a new array: never write into one another tensor might share
                    p.grad = get_backend(p.device).xp.zeros_like(p.grad)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Move every parameter that has a gradient by the optimizer's rule.

        All or nothing (see the module docstring): a step that raises leaves the model and the
        optimizer exactly as they were.  ``closure`` (optional) re-evaluates the model and
        returns the loss; it runs first, with gradients enabled, and its loss is returned.
        """
        # The grad-mode switches are decorators, not ``with`` blocks: a decorated call puts the
        # mode back in a ``finally`` even when a Ctrl-C lands inside the switch itself.
        loss = None if closure is None else enable_grad()(closure)()
        todo, moves = self._plan()
        self._compute_now(todo, moves)
        self._commit(todo, moves)
        return loss

    @no_grad()
    def _plan(self) -> tuple[list[tuple[Tensor, dict[str, Any]]], list[tuple[Any, dict]]]:
        """Phases 1-2: check every parameter, then compute its new value and state (nothing
        is written yet)."""
        todo = self._check_step()
        return todo, [self._new_value(p, group) for p, group in todo]

    def _commit(self, todo: list[tuple[Tensor, dict[str, Any]]],
                moves: list[tuple[Any, dict[str, Any]]]) -> None:
        """Phase 3: write every new value and state in.  Nothing here can fail, but it can
        be interrupted (a Ctrl-C): then every parameter and its state get their old values
        back, so the step is still all or nothing."""
        old = [(p, p._data, p._version, self.state.get(p)) for p, _ in todo]
        try:
            for (p, _), (new, state) in zip(todo, moves):
                p._data = new
                p._version += 1
                self.state[p] = state
        except BaseException:
            for p, data, version, state in old:
                p._data, p._version = data, version
                if state is None:
                    self.state.pop(p, None)
                else:
                    self.state[p] = state
            raise

    def _check_step(self) -> list[tuple[Tensor, dict[str, Any]]]:
        """Phase 1: check everything the rules will read; return the (parameter, group) pairs
        to move (those with a gradient)."""
        for index, group in enumerate(self.param_groups):
            self.check_group(group, index)
        todo = [(p, group) for group in self.param_groups for p in group["params"]
                if p.grad is not None]
        for p, _ in todo:
            self._check_gradient(p)
            self._check_state(p)
        return todo

    def _check_gradient(self, p: Tensor) -> None:
        """``p.grad`` is an array of ``p``'s backend, of ``p``'s shape, of floating-point
        numbers (or complex ones, for a complex parameter)."""
        grad = p.grad
        array_type = get_backend(p.device).array_type
        if not isinstance(grad, array_type):
            other = [d for d, b in BACKENDS.items() if isinstance(grad, b.array_type)]
            if other:
                raise RuntimeError(
                    f"{self._where(p)} has a {_type_name(BACKENDS[other[0]].array_type)} "
                    "gradient (an array for "
                    f"{other[0]!r}); gradients live on their parameter's device: "
                    f"p.grad = lucid.Tensor(g, device={p.device!r}).data. {_UNCHANGED}"
                )
            raise TypeError(
                f"{type(self).__name__}.step: the gradient of a parameter of shape "
                f"{fmt(p.shape)} on {p.device!r} is a {type(grad).__name__}, not a "
                f"{_type_name(array_type)}; p.grad holds a backend array, as backward() "
                f"leaves it (for a Tensor t, set p.grad = t.data). {_UNCHANGED}"
            )
        if tuple(grad.shape) != p.shape:
            raise RuntimeError(
                f"{self._where(p)} has a gradient of shape {fmt(tuple(grad.shape))}; "
                f"gradients must match their parameter's shape. {_UNCHANGED}"
            )
        try:
            kind = to_numeric_type(grad.dtype)
        except TypeError:  # not a number at all (MLX's bfloat16 included)
            kind = None
        if kind is None or not (kind.is_floating_point or kind.is_complex):
            raise TypeError(
                f"{self._where(p)} has a gradient of dtype {kind or grad.dtype}; gradients "
                f"are floating-point numbers, like the parameter ({p.dtype.name}). "
                f"{_UNCHANGED}"
            )
        if kind.is_complex and not p.dtype.is_complex:
            raise TypeError(
                f"{self._where(p)} has a gradient of dtype {kind.name} for a real parameter "
                f"({p.dtype.name}): stepping would drop its imaginary part. Give it a real "
                f"gradient (e.g. g.real). {_UNCHANGED}"
            )

    def _where(self, p: Tensor) -> str:
        return f"{type(self).__name__}.step: a parameter of shape {fmt(p.shape)} on {p.device!r}"

    def _check_state(self, p: Tensor) -> None:
        """The arrays kept for ``p`` still have ``p``'s shape (a parameter reshaped or
        replaced after some steps would otherwise broadcast against its old moments)."""
        for key, value in self.state.get(p, {}).items():
            shape = getattr(value, "shape", None)
            if shape is not None and len(shape) and tuple(shape) != p.shape:
                raise RuntimeError(
                    f"{type(self).__name__}.step: state[{key!r}] of a parameter of shape "
                    f"{fmt(p.shape)} has shape {fmt(tuple(shape))}: the parameter changed "
                    "shape since its last step. Drop its old state with opt.state.pop(p) (it "
                    f"then starts afresh), or build a new optimizer. {_UNCHANGED}"
                )

    def _new_value(self, p: Tensor, group: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """Phase 2: the parameter's new value and new state, nothing committed.

        The rule gets a copy of the state dict, and NumPy arrays as read-only views, so that
        whatever it does can only reach the result; rules replace state arrays rather than
        write into them.
        """
        name = type(self).__name__
        backend = get_backend(p.device)
        kept = dict(self.state.get(p, {}))
        _state_to_device(kept, backend, p)  # the model may have moved since the last step
        state = {key: _read_only(value) for key, value in kept.items()}
        handed = dict(state)
        try:
            new = self.update(backend.xp, _read_only(p._data), _read_only(p.grad), state, group)
        except ValueError as err:
            if "read-only" not in str(err):
                raise
            raise ValueError(
                f"{name}.update wrote into an array it was given (param, grad or a state "
                "array): a rule must return new arrays, e.g. state['buf'] = momentum * "
                "state['buf'] + grad, not buf *= momentum, so that a step that fails can "
                f"leave everything unchanged. {_UNCHANGED}"
            ) from err
        if tuple(new.shape) != p.shape:
            raise RuntimeError(
                f"{name}.update returned shape {fmt(tuple(new.shape))} for a parameter of "
                f"shape {fmt(p.shape)}: the rule is wrong"
            )
        if new.dtype != p._data.dtype:
            new = new.astype(p._data.dtype)
        elif isinstance(new, np.ndarray) and not new.flags.writeable:
            new = new.copy()  # the rule returned (a view of) its read-only input
        for key, value in state.items():
            if key in handed and value is handed[key]:
                state[key] = kept[key]  # left as it was: keep the array, not our view of it
        return new, state

    def _compute_now(self, todo: list[tuple[Tensor, dict[str, Any]]],
                     moves: list[tuple[Any, dict[str, Any]]]) -> None:
        """On "gpu", have MLX compute the new values and state now, before anything is
        committed: MLX is lazy, so its own errors would otherwise surface later, and a
        training loop would grow one MLX graph across all of its steps."""
        arrays: list[Any] = []
        for (p, _), (new, state) in zip(todo, moves):
            if p.device != "cpu":
                array_type = get_backend(p.device).array_type
                arrays.extend((new, p.grad))
                arrays.extend(v for v in state.values() if isinstance(v, array_type))
        if arrays:
            evaluate(*arrays)

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        """The rule: return the new value of one parameter (a backend array).

        ``param`` and ``grad`` are backend arrays of the same shape; ``state`` is this
        parameter's dict (empty at its first step), to read and update; ``group`` holds the
        hyperparameters.  Replace arrays, never write into them (``state["m"] = beta * m + g``,
        not ``m *= beta``): until every parameter's rule has run, nothing may change.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must define update(xp, param, grad, state, group)"
        )

    # -- saving and loading --------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``.

        Parameters are numbered in the order they appear across groups (PyTorch's layout);
        arrays in the state are NumPy copies, so the dict can be saved with ``lucid.save``.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    state[index[id(p)]] = {
                        k: _to_numpy(v, p) for k, v in self.state[p].items()
                    }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by :meth:`state_dict`.

        The optimizer must hold the same parameters, grouped the same way (the number of
        groups and their sizes are checked).  State arrays are checked against their
        parameter's shape and moved to its device.  Nothing changes when an error is raised.
        """
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(
                f"{name}.load_state_dict: expected a dict with keys 'state' and 'param_groups' "
                "(as returned by state_dict())"
            )
        saved_groups = state_dict["param_groups"]
        if not isinstance(saved_groups, (list, tuple)):
            raise ValueError(f"{name}.load_state_dict: 'param_groups' must be a list of dicts")
        for i, saved in enumerate(saved_groups):
            self._check_saved_kind(saved, i)
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the state dict has {len(saved_groups)} param "
                f"group(s), this optimizer has {len(self.param_groups)}: {_SAME_LAYOUT}"
            )
        by_index: dict[int, Tensor] = {}
        new_groups = []
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            ids = saved.get("params") if isinstance(saved, dict) else None
            if not isinstance(ids, (list, tuple)) or len(ids) != len(group["params"]):
                n = len(ids) if isinstance(ids, (list, tuple)) else "?"
                raise ValueError(
                    f"{name}.load_state_dict: param group {i} has {n} parameter(s) in the "
                    f"state dict and {len(group['params'])} in this optimizer: {_SAME_LAYOUT}"
                )
            for saved_id, p in zip(ids, group["params"]):
                by_index[_as_index(name, saved_id)] = p
            new_group = {**{k: v for k, v in saved.items() if k != "params"},
                         "params": group["params"]}
            self.check_group(new_group, i)
            new_groups.append(new_group)
        saved_state = state_dict["state"]
        if not isinstance(saved_state, dict):
            raise ValueError(f"{name}.load_state_dict: 'state' must be a dict")
        new_state: dict[Tensor, dict[str, Any]] = {}
        for key, entry in saved_state.items():
            idx = _as_index(name, key)
            if idx not in by_index:
                raise ValueError(
                    f"{name}.load_state_dict: state for parameter {idx}, but the param groups "
                    f"number {len(by_index)} parameter(s)"
                )
            if not isinstance(entry, dict):
                raise ValueError(f"{name}.load_state_dict: state[{idx}] must be a dict")
            p = by_index[idx]
            new_state[p] = {k: _from_saved(name, idx, k, v, p) for k, v in entry.items()}
        old = self.param_groups, self.state
        try:  # two assignments, both or neither (a Ctrl-C between them)
            self.param_groups = new_groups
            self.state = new_state
        except BaseException:
            self.param_groups, self.state = old
            raise

    def _check_saved_kind(self, saved: Any, index: int) -> None:
        """A saved param group has every hyperparameter this optimizer needs; if not, the
        state dict came from another kind of optimizer, which the message names."""
        name = type(self).__name__
        if not isinstance(saved, dict):
            raise ValueError(f"{name}.load_state_dict: param group {index} of the state dict "
                             f"must be a dict, got {type(saved).__name__}")
        given = sorted(set(saved) - {"params"})
        own = set(self.defaults)
        missing = sorted(own - set(saved))
        savers = _optimizers_with(set(given))
        if missing:
            self._refuse_kind(savers, index, given, f"without {', '.join(missing)}, which "
                                                    f"{name} needs")
        # every hyperparameter is there, but so are all of a kind that has more of them
        # (Adam's state dict holds all of Adamax's hyperparameters, NAdam's all of RAdam's)
        keywords = _keywords()
        bigger = [s for s in savers if keywords[s] > own]
        if bigger:
            extra = sorted(set().union(*(keywords[s] for s in bigger)) - own)
            self._refuse_kind(bigger, index, given, f"with {', '.join(extra)}, which {name} "
                                                    "does not take")

    def _refuse_kind(self, savers: list[str], index: int, given: list[str], what: str) -> None:
        name = type(self).__name__
        kinds = " or ".join(savers)
        fix = (f"Load it into {kinds} built over the same parameters" if kinds else
               "Load it into the kind of optimizer that saved it")
        raise ValueError(
            f"{name}.load_state_dict: this state dict was saved by "
            f"{kinds or 'another kind of optimizer'}: its param group {index} holds the "
            f"hyperparameters {', '.join(given)}, {what}. {fix}, or leave this {name} as it "
            f"is (it starts afresh). {_UNCHANGED_LOAD}"
        )

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


# -- helpers ---------------------------------------------------------------------------------
def _keywords() -> dict[str, set[str]]:
    """Each lucid.optim optimizer's hyperparameters (its constructor's keywords), by name."""
    found, todo = {}, list(Optimizer.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("lucid.optim.") and "__init__" in vars(cls):
            found[cls.__name__] = set(inspect.signature(cls).parameters) - {"params", "defaults"}
    return found


def _optimizers_with(hyperparameters: set[str]) -> list[str]:
    """The lucid.optim optimizers that saved a param group holding ``hyperparameters``: those
    all of whose hyperparameters are among them -- the most specific ones only (Adam's
    ``lr, betas, eps, weight_decay, amsgrad`` also hold all of Adamax's; Adam saved them)."""
    fits = {name: keys for name, keys in _keywords().items() if keys <= hyperparameters}
    return sorted(name for name, keys in fits.items()
                  if not any(keys < other for other in fits.values()))


def _check_param(name: str, p: Any, group: int, i: int) -> None:
    """An optimizer moves Parameters (frozen ones too: without a gradient a step skips them,
    as in PyTorch, and unfreezing them later needs no new optimizer) and leaf tensors that
    require grad."""
    if not isinstance(p, Tensor):
        raise TypeError(
            f"{name}: param group {group}, item {i} is a {type(p).__name__}, not a Parameter; "
            "pass model.parameters() (or Tensors made with requires_grad=True)"
        )
    if not p.requires_grad and not isinstance(p, Parameter):  # a frozen Parameter may stay:
        kind = type(p).__name__  # it has no gradient, so a step leaves it (as PyTorch's)
        raise ValueError(
            f"{name}: param group {group}, item {i} (a {kind} of shape {fmt(p.shape)}) does not "
            "require grad, so it never gets a gradient to step with (Buffers are model state, "
            "not parameters)"
        )
    if p._op is not None:
        raise ValueError(
            f"{name}: param group {group}, item {i} (shape {fmt(p.shape)}) is the result of "
            f"{p.op_name}, not a leaf; an optimizer can only update leaf tensors (Parameters)"
        )


def _as_index(name: str, key: Any) -> int:
    """A parameter index from a state dict (an int, or its string if it went through JSON)."""
    if isinstance(key, str) and key.isdigit():
        return int(key)
    if isinstance(key, bool) or not isinstance(key, numbers.Integral) or key < 0:
        raise ValueError(
            f"{name}.load_state_dict: parameter indices must be non-negative ints, got {key!r}"
        )
    return int(key)


def _to_numpy(value: Any, p: Tensor) -> Any:
    """A state value for ``state_dict``: arrays become NumPy copies, the rest stays."""
    if isinstance(value, Tensor):
        return value.numpy().copy()
    if isinstance(value, np.ndarray):
        return value.copy()
    if p.device != "cpu" and isinstance(value, get_backend(p.device).array_type):
        arr = get_backend(p.device).to_numpy(value)
        # a Float64 parameter stored as float32 on an MLX GPU saves its state as Float64 too
        return arr.astype(p.dtype.cpu) if p._dtype is not None else arr
    return value


def _from_saved(name: str, idx: int, key: str, value: Any, p: Tensor) -> Any:
    """A saved state value back on ``p``'s device with ``p``'s storage dtype."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        if value is not None and p.device != "cpu" and isinstance(
                value, get_backend(p.device).array_type):
            value = get_backend(p.device).to_numpy(value)
        else:
            return value
    if value.ndim == 0:
        return value.item()  # a step count saved as a 0-d array
    if value.shape != p.shape:
        raise ValueError(
            f"{name}.load_state_dict: state[{idx}][{key!r}] has shape {fmt(value.shape)}, but "
            f"parameter {idx} has shape {fmt(p.shape)}: {_SAME_LAYOUT}"
        )
    return get_backend(p.device).asarray(value, dtype=p._data.dtype)


def _read_only(value: Any) -> Any:
    """A NumPy array as a read-only view (no copy), so a rule cannot write into it; anything
    else as it is (MLX arrays are values: a rule builds new ones)."""
    if isinstance(value, np.ndarray):
        value = value.view(np.ndarray)  # plain (a .grad or .data may carry PyTorch's methods)
        value.flags.writeable = False
    return value


def _type_name(kind: type) -> str:
    """``numpy.ndarray``, ``mlx.core.array``: a type with its module, for messages."""
    return f"{kind.__module__}.{kind.__name__}"


def _state_to_device(state: dict[str, Any], backend: Any, p: Tensor) -> None:
    """Move state arrays left on another device (the model was moved after some steps)."""
    for key, value in state.items():
        if hasattr(value, "shape") and not isinstance(value, backend.array_type):
            state[key] = backend.asarray(np.asarray(value), dtype=p._data.dtype)
