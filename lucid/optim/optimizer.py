"""The ``Optimizer`` base class: walk the parameters, let the subclass move each one.

An optimizer is a *per-parameter update rule* (STYLE #7).  The base class does the walking and
the bookkeeping that every rule shares; a subclass only says how one parameter moves::

    class SGD(Optimizer):
        def update(self, xp, p, g, state, group):
            return p - group["lr"] * g          # the new value of this parameter

``step()`` calls ``update`` once for every parameter that has a gradient, group by group,
handing it plain backend arrays (``xp`` is ``numpy`` on "cpu" and ``mlx.core`` on "gpu", as
in the ops), the parameter's ``state`` dict (momentum buffers, moment estimates, step counts:
kept between steps) and its ``group`` (the hyperparameters).  The base class then

* writes the returned array into ``param.data`` (same dtype, same shape) and bumps
  ``param._version``, so a graph that saved the old value refuses to run backward through it;
* on "gpu" forces MLX to compute the new values and state now (``lucid.evaluate``): MLX is lazy,
  and without this a training loop would grow one MLX graph across all of its steps.

Parameters are organised in *param groups*: ``[{"params": [...], "lr": 0.1}, ...]``.  Every
group has every hyperparameter, the optimizer's ``defaults`` filling the ones a group leaves
out, so a model can train its body and its head at different learning rates.

``state_dict()`` uses PyTorch's layout -- parameters are replaced by their position (counting
across groups, in order) and state holds NumPy copies -- so it can be written by ``lucid.save``
and loaded into a fresh optimizer over the same parameters.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from lucid.autograd.mode import enable_grad, no_grad
from lucid.backends import get_backend
from lucid.ops import evaluate
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["Optimizer", "merge_defaults"]


def merge_defaults(name: str, hyper: dict[str, Any], defaults: dict | None) -> dict[str, Any]:
    """Combine an optimizer's keyword hyperparameters with a ``defaults=`` dict.

    Both spellings work: ``SGD(params, lr=0.1)`` and seed 000's
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

        All or nothing: every gradient is checked and every new value computed before any
        parameter or state changes, so a step that raises leaves the model and the optimizer
        exactly as they were.  ``closure`` (optional) re-evaluates the model and returns the
        loss; it runs first, with gradients enabled, and its loss is returned.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            todo = [(p, group) for group in self.param_groups for p in group["params"]
                    if p.grad is not None]
            for p, _ in todo:  # 1. every gradient fits its parameter
                self._check_gradient(p)
            moves = [self._new_value(p, group) for p, group in todo]  # 2. nothing changes yet
        on_gpu: list[Any] = []
        for (p, _), (new, state) in zip(todo, moves):  # 3. commit them all
            p.data = new
            p._version += 1
            self.state[p] = state
            if p.device != "cpu":
                array_type = get_backend(p.device).array_type
                on_gpu.append(p)
                on_gpu.extend(v for v in state.values() if isinstance(v, array_type))
        if on_gpu:
            evaluate(*on_gpu)  # compute the new values now: MLX's graph stops at each step
        return loss

    def _check_gradient(self, p: Tensor) -> None:
        grad = p.grad
        if not isinstance(grad, get_backend(p.device).array_type) or tuple(grad.shape) != p.shape:
            raise RuntimeError(
                f"{type(self).__name__}.step: a parameter of shape {fmt(p.shape)} on "
                f"{p.device!r} has a gradient of shape {fmt(tuple(grad.shape))} "
                f"({type(grad).__module__}.{type(grad).__name__}); gradients must match their "
                "parameter's shape and device. No parameter was changed."
            )

    def _new_value(self, p: Tensor, group: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The parameter's new value and new state, computed on a copy of its state (the
        rules replace state arrays rather than write into them), so nothing is committed."""
        backend = get_backend(p.device)
        state = dict(self.state.get(p, {}))
        _state_to_device(state, backend, p)  # the model may have moved since the last step
        new = self.update(backend.xp, p.data, p.grad, state, group)
        if tuple(new.shape) != p.shape:
            raise RuntimeError(
                f"{type(self).__name__}.update returned shape {fmt(tuple(new.shape))} for a "
                f"parameter of shape {fmt(p.shape)}: the rule is wrong"
            )
        if new.dtype != p.data.dtype:
            new = new.astype(p.data.dtype)
        return new, state

    def update(self, xp: Any, param: Any, grad: Any, state: dict[str, Any],
               group: dict[str, Any]) -> Any:
        """The rule: return the new value of one parameter (a backend array).

        ``param`` and ``grad`` are backend arrays of the same shape and dtype; ``state`` is
        this parameter's dict (empty at its first step), to read and update; ``group`` holds
        the hyperparameters.  Never modify ``param`` or ``grad`` in place.
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
        if not isinstance(saved_groups, (list, tuple)) or len(saved_groups) != len(
                self.param_groups):
            n = len(saved_groups) if isinstance(saved_groups, (list, tuple)) else "?"
            raise ValueError(
                f"{name}.load_state_dict: the state dict has {n} param group(s), this "
                f"optimizer has {len(self.param_groups)}"
            )
        for i, saved in enumerate(saved_groups):
            missing = set(self.defaults) - set(saved) if isinstance(saved, dict) else set()
            if missing:
                given = sorted(set(saved) - {"params"})
                raise ValueError(
                    f"{name}.load_state_dict: param group {i} of the state dict has the "
                    f"hyperparameters {', '.join(given)} but not {', '.join(sorted(missing))}, "
                    f"which {name} needs: it was saved by another kind of optimizer. Load it "
                    f"into the optimizer that saved it, or start a fresh {name}. Nothing was "
                    "changed."
                )
        by_index: dict[int, Tensor] = {}
        new_groups = []
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            ids = saved.get("params") if isinstance(saved, dict) else None
            if not isinstance(ids, (list, tuple)) or len(ids) != len(group["params"]):
                n = len(ids) if isinstance(ids, (list, tuple)) else "?"
                raise ValueError(
                    f"{name}.load_state_dict: param group {i} has {n} parameter(s) in the "
                    f"state dict and {len(group['params'])} in this optimizer"
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
        self.param_groups = new_groups
        self.state = new_state

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(k for k in group if k != "params"):
                lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)


# -- helpers ---------------------------------------------------------------------------------
def _check_param(name: str, p: Any, group: int, i: int) -> None:
    """An optimizer moves leaf tensors that require grad (Parameters, or such a Tensor)."""
    if not isinstance(p, Tensor):
        raise TypeError(
            f"{name}: param group {group}, item {i} is a {type(p).__name__}, not a Parameter; "
            "pass model.parameters() (or Tensors made with requires_grad=True)"
        )
    if not p.requires_grad:
        kind = type(p).__name__
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
            f"parameter {idx} has shape {fmt(p.shape)}"
        )
    return get_backend(p.device).asarray(value, dtype=p.data.dtype)


def _state_to_device(state: dict[str, Any], backend: Any, p: Tensor) -> None:
    """Move state arrays left on another device (the model was moved after some steps)."""
    for key, value in state.items():
        if hasattr(value, "shape") and not isinstance(value, backend.array_type):
            state[key] = backend.asarray(np.asarray(value), dtype=p.data.dtype)
