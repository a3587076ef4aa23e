"""``nn.Module``: the base class of every layer and model.

A Module keeps three ordered registries, filled by plain attribute assignment
(``__setattr__``), in the order attributes were assigned -- the order and keys PyTorch uses:

* ``_parameters``: name -> :class:`Parameter` (or None for an optional slot)
* ``_buffers``:    name -> :class:`Buffer` (or None)
* ``_modules``:    name -> child Module (or None)

Everything else walks these registries: ``parameters()`` for optimizers, ``state_dict()`` for
saving, ``to()`` for devices, ``train()/eval()`` for modes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from lucid.engine.mode import MODE, recording
from lucid.nn.parameter import Buffer, Parameter
from lucid.shapes import fmt
from lucid.tensor import InPlaceArray, RemovableHandle, Tensor
from lucid.types import Float16, Float32, Float64, Numeric, to_numeric_type

__all__ = ["Module", "IncompatibleKeys"]


class IncompatibleKeys(NamedTuple):
    """What ``load_state_dict(strict=False)`` could not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Module:
    """Base class: subclasses assign Parameters, Buffers and Modules in ``__init__`` and
    define ``forward``.  Calling the module runs forward pre-hooks, ``forward`` and hooks."""

    #: attribute names left out of ``state_dict`` (caches, temporary buffers)
    _state_dict_pass_attr: tuple[str, ...] = ()

    def __init__(self) -> None:
        d = self.__dict__
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["training"] = True

    # -- registration --------------------------------------------------------------------
    def _registries(self) -> tuple[dict, dict, dict]:
        try:
            d = self.__dict__
            return d["_parameters"], d["_buffers"], d["_modules"]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__}: call super().__init__() at the start of __init__ "
                "before assigning parameters, buffers or modules"
            ) from None

    def _forget(self, name: str) -> None:
        for registry in self._registries():
            registry.pop(name, None)
        self.__dict__.pop(name, None)

    def _place(self, which: int, name: str, value: Any) -> None:
        """Store ``value`` under ``name`` in registry ``which`` (0 parameters, 1 buffers,
        2 modules): in its old place when the name is there already (a reassigned weight keeps
        its place in the state dict, as in PyTorch), else last, after the name is forgotten
        everywhere else (a name lives in one registry at a time)."""
        target = self._registries()[which]
        if name not in target:
            self._forget(name)
        target[name] = value
        if value is not None:
            _name_by_path(name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, (Parameter, Buffer, Module)):
            self._place(0 if isinstance(value, Parameter) else
                        1 if isinstance(value, Buffer) else 2, name, value)
            return
        registries = self.__dict__.get("_parameters"), self.__dict__.get("_buffers")
        params, buffers = registries
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"{type(self).__name__}.{name} is a parameter: assign an nn.Parameter or "
                    f"None, not {type(value).__name__} (wrap it: nn.Parameter(value))"
                )
            params[name] = None
            return
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"{type(self).__name__}.{name} is a buffer: assign a Tensor or None, not "
                    f"{type(value).__name__}"
                )
            buffers[name] = None if value is None else Buffer(value)
            return
        modules = self.__dict__.get("_modules")
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"{type(self).__name__}.{name} is a submodule: assign a Module or None, "
                    f"not {type(value).__name__}"
                )
            modules[name] = None
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails: look in the registries
        d = self.__dict__
        for key in ("_parameters", "_buffers", "_modules"):
            registry = d.get(key)
            if registry is not None and name in registry:
                return registry[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for registry in self._registries():
            if name in registry:
                del registry[name]
                return
        object.__delattr__(self, name)

    def _check_name(self, kind: str, name: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(
                f"register_{kind}: name must be a non-empty string without '.', got {name!r}"
            )
        if name in self.__dict__ and name not in ("training",):
            raise KeyError(f"register_{kind}: attribute {name!r} already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (or None: an optional slot, skipped by state_dict)."""
        self._check_name("parameter", name)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"register_parameter: {name!r} must be an nn.Parameter or None, got "
                f"{type(param).__name__} (wrap it: nn.Parameter(tensor))"
            )
        self._place(0, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None) -> None:
        """Register a buffer (a Tensor, kept as a :class:`Buffer`) or None."""
        self._check_name("buffer", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"register_buffer: {name!r} must be a Tensor or None, got {type(tensor).__name__}"
            )
        if tensor is not None and not isinstance(tensor, Buffer):
            tensor = Buffer(tensor)
        self._place(1, name, tensor)

    def add_module(self, name: str, module: Module | None) -> None:
        """Register a child module (or None)."""
        self._check_name("module", name)
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {name!r} must be a Module or None, got "
                            f"{type(module).__name__}")
        self._place(2, name, module)

    register_module = add_module

    # -- walking the tree ----------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module and every descendant, depth first, each once."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is None:
                continue
            sub = f"{prefix}.{name}" if prefix else name
            yield from child.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, module in mods:
            for name, value in module.__dict__[registry].items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{mod_prefix}.{name}" if mod_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(dotted.name, Parameter)`` in registration order, each parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Buffer]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Buffer]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively) and then on this module; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- state ---------------------------------------------------------------------------
    def state_dict(self, destination: OrderedDict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> OrderedDict:
        """``prefix.name -> value`` for every parameter and buffer (None slots skipped).

        Values are NumPy copies (detached from the graph and from the live tensor), or the
        Tensors themselves with ``keep_vars=True``.  The copies also answer PyTorch's tensor
        idioms (``sd["fc.weight"].size()``, ``.clone()``, ``.norm()``: see
        :class:`lucid.tensor.InPlaceArray`).  Names in ``_state_dict_pass_attr`` are left out.
        """
        if destination is None:
            destination = OrderedDict()
        skip = set(self._state_dict_pass_attr)
        for registry in (self._parameters, self._buffers):
            for name, value in registry.items():
                if value is None or name in skip:
                    continue
                destination[prefix + name] = value if keep_vars else \
                    value.numpy().copy().view(InPlaceArray)
        for name, child in self._modules.items():
            if child is not None and name not in skip:
                child.state_dict(destination, prefix + name + ".", keep_vars)
        return destination

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy values from ``state_dict`` into this module's parameters and buffers.

        Every problem is collected first -- missing keys, unexpected keys, shape and dtype
        mismatches -- and reported together in one error.  With ``strict=False`` missing and
        unexpected keys are returned instead (shape and dtype mismatches still raise: those
        values cannot be loaded).  Nothing is changed when an error is raised.

        Values are copied into each parameter's own dtype, as PyTorch's ``load_state_dict``
        does: PyTorch's float32 weights load into a Float64 parameter (and Float64 values into
        a Float32 one, rounded).  A cast across kinds that loses meaning (floats into an
        integer buffer, complex into real) is refused.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        converted = {}
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            arr = value.numpy() if isinstance(value, Tensor) else value
            shape = tuple(getattr(arr, "shape", ()))
            if shape != target.shape:
                problems.append(f"{key}: shape {fmt(shape)} in the state dict, "
                                f"{fmt(target.shape)} in the model")
                continue
            try:
                dtype = to_numeric_type(getattr(arr, "dtype", None) or type(arr))
            except TypeError as exc:
                problems.append(f"{key}: {exc}")
                continue
            if dtype != target.dtype and not np.can_cast(dtype.cpu, target.dtype.cpu,
                                                         casting="same_kind"):
                problems.append(f"{key}: dtype {dtype.name} in the state dict cannot be "
                                f"copied into the model's {target.dtype.name} (convert it "
                                "first)")
                continue
            converted[key] = arr
        if strict:
            problems = [f"missing key {k!r}" for k in missing] + [
                f"unexpected key {k!r}" for k in unexpected] + problems
        if problems:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__} "
                f"({len(problems)} problem(s)):\n  " + "\n  ".join(problems)
            )
        fresh = {key: Tensor(arr, dtype=own[key].dtype, device=own[key].device)
                 for key, arr in converted.items()}
        _write_all([(own[key], new) for key, new in fresh.items()])
        return IncompatibleKeys(missing, unexpected)

    # -- devices and modes ---------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move every parameter and buffer to a device in place (each once); returns self.
        ``to("gpu")``; PyTorch's spellings too: ``to("cuda")``, ``to(lucid.device("cuda"))``,
        ``to(lucid.float64)`` (casts the floating-point parameters and buffers, as PyTorch
        does), ``to(device, dtype)``.

        The tensors keep their identity, so an optimizer built afterwards (or before) sees the
        moved values.  Gradients move with their parameters.
        """
        from lucid.ops.pytorch import device_and_dtype

        device, dtype = device_and_dtype("Module.to", args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"Module.to: only floating-point dtypes are allowed, got {dtype}")
        seen: set[int] = set()
        for module in self.modules():
            for registry in (module._parameters, module._buffers):
                for t in registry.values():
                    if t is None or id(t) in seen:
                        continue
                    seen.add(id(t))
                    if device is not None:
                        _move_in_place(t, device)
                    if dtype is not None and t.dtype.is_floating_point and t.dtype != dtype:
                        _cast_in_place(t, dtype)
        return self

    def float(self) -> Module:  # noqa: A003 -- PyTorch's name
        """Cast floating-point parameters and buffers to Float32 (PyTorch's ``float()``)."""
        return self.to(Float32)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to Float64 (gradient checks)."""
        return self.to(Float64)

    def half(self) -> Module:
        return self.to(Float16)

    def cuda(self, device: Any = None) -> Module:
        """PyTorch's ``cuda()``: ``to("gpu")`` (MLX's device)."""
        return self.to("gpu")

    def cpu(self) -> Module:
        return self.to("cpu")

    def gpu(self) -> Module:
        return self.to("gpu")

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active, BatchNorm updates its running stats) everywhere."""
        for module in self.modules():
            module.__dict__["training"] = bool(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode everywhere (the same as ``train(False)``)."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` on every parameter (freeze with False, as PyTorch's); returns
        self."""
        for p in self.parameters():
            p.requires_grad = bool(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's gradient (set it to None, PyTorch's default), or, with
        ``set_to_none=False``, fill the gradients there are with zeros."""
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = p.grad * 0

    # -- calling -------------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # IPython shows the caller's line, not this frame
        recorder = None if MODE.fast else recording()
        if recorder is None:
            return self._call(args, kwargs)
        index = recorder.enter(self, args)  # a recorder notes which module makes each op
        out = None
        try:
            out = self._call(args, kwargs)
            return out
        finally:
            recorder.exit(index, out)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        """The forward pass between the forward pre-hooks and the forward hooks."""
        __tracebackhide__ = True  # IPython shows the caller's line, not this frame
        for hook in tuple(self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        out = self.forward(*args, **kwargs)
        for hook in tuple(self._forward_hooks.values()):
            result = hook(self, args, out)
            if result is not None:
                out = result
        return out

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args)`` before forward; may return replacement args."""
        return _add_hook(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """``hook(module, args, output)`` after forward; may return a replacement output."""
        return _add_hook(self._forward_hooks, hook)

    # -- display -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """One line of settings shown inside the module's repr (``in_features=..``)."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        if extra:  # settings on a line of their own above the children, as PyTorch prints
            lines = extra.split("\n") + lines
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))


def _add_hook(registry: dict, hook: Callable) -> RemovableHandle:
    key = max(registry, default=-1) + 1
    registry[key] = hook
    return RemovableHandle(registry, key)


def _cast_in_place(t: Tensor, dtype: Numeric) -> None:
    """Cast a parameter or buffer's data (and grad) to ``dtype`` keeping the object."""
    fresh = Tensor(t.numpy(), dtype=dtype, device=t.device)
    if t.grad is not None:
        grad = Tensor._wrap(t.grad, t.device)
        grad._dtype = t._dtype
        t.grad = Tensor(grad.numpy(), dtype=dtype, device=t.device)._data
    t._data = fresh._data
    t._dtype = fresh._dtype
    t._version += 1


def _move_in_place(t: Tensor, device: str) -> None:
    """Move a parameter or buffer's data (and grad) to ``device`` keeping the object."""
    if t.device == device:
        return
    moved = t.detach().to(device)
    grad = None
    if t.grad is not None:
        grad = Tensor._wrap(t.grad, t.device)
        grad._dtype = t._dtype
        grad = grad.to(device)._data
    t._data = moved._data
    t._dtype = moved._dtype
    t.device = moved.device
    t.grad = grad


def _name_by_path(name: str, value: Any) -> None:
    """Name parameters and buffers by their module path (``fc1.weight``), as they are
    registered: a tensor's own name when it has none, and, when a module is registered under
    ``name``, ``name.`` before the names its tensors were given by path inside it.  A name the
    user chose (``Parameter(..., name="w")``; one that is not its path) is kept."""
    if isinstance(value, Tensor):
        if value.name is None:
            value.name = name
        return
    for path, t in [*value.named_parameters(), *value.named_buffers()]:
        if t.name == path:
            t.name = f"{name}.{path}"


def _write_all(pairs: list[tuple[Tensor, Tensor]]) -> None:
    """Write each new value into its parameter or buffer (bumping its version), all or
    nothing: interrupted half-way (a Ctrl-C), every tensor gets its old value back."""
    old = [(target, target._data, target._dtype, target._version) for target, _ in pairs]
    try:
        for target, new in pairs:
            target._data = new._data
            target._dtype = new._dtype
            target._version += 1
    except BaseException:
        for target, data, dtype, version in old:
            target._data, target._dtype, target._version = data, dtype, version
        raise
