"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.tensor import Tensor

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


class Sequential(Module):
    """Runs its modules in order: ``Sequential(m0, m1, ...)`` or ``Sequential(OrderedDict)``.

    Children are named ``"0"``, ``"1"``, ... (or by the dict's keys), as in PyTorch.
    """

    def __init__(self, *modules: Module | OrderedDict) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        __tracebackhide__ = True  # IPython shows the caller's line, not this frame
        for m in self._modules.values():
            x = m(x)
        return x

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, index: int | slice) -> Module:
        items = list(self._modules.items())
        if isinstance(index, slice):
            return Sequential(OrderedDict(items[index]))
        try:
            return items[index][1]
        except IndexError:
            raise IndexError(
                f"Sequential: index {index} out of range for {len(items)} modules") from None

    def __setitem__(self, index: int, module: Module) -> None:
        """``seq[2] = nn.Linear(16, 10)``: replace a layer (fine-tuning a head), keeping its
        place and name."""
        names = list(self._modules)
        try:
            name = names[index]
        except (IndexError, TypeError):
            raise IndexError(
                f"Sequential: index {index!r} out of range for {len(names)} modules") from None
        setattr(self, name, module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ModuleList(Module):
    """A list of modules whose parameters the parent sees (a plain list would hide them)."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, index: int) -> Module:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        try:
            return items[index]
        except IndexError:
            raise IndexError(
                f"ModuleList: index {index} out of range for {len(items)} modules") from None

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ModuleDict(Module):
    """A dict of named modules whose parameters the parent sees."""

    def __init__(self, modules: dict[str, Module] | None = None) -> None:
        super().__init__()
        for name, m in (modules or {}).items():
            self.add_module(name, m)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        _set_module(self, key, module)  # a replaced key keeps its place

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


def _keep_place(registry: OrderedDict, key: str, register: Any) -> None:
    """Run ``register()`` (which stores ``key`` at the end of ``registry``) and put ``key``
    back where it was, so replacing an entry keeps its place, as a dict (and PyTorch's
    containers) do: ``ws[0] = p`` must not make "0" the last key of the state dict."""
    keys = list(registry)
    later = keys[keys.index(key) + 1:] if key in registry else []
    register()
    for k in later:
        registry.move_to_end(k)


def _set_module(owner: Module, key: str, module: Module) -> None:
    _keep_place(owner._modules, key, lambda: owner.add_module(key, module))


def _as_parameter(kind: str, value: Any) -> Parameter:
    """A Parameter as it is, a plain Tensor wrapped in one (PyTorch's containers do the same:
    ``ParameterList([torch.zeros(3)])`` holds a Parameter); anything else is refused."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, Tensor):
        return Parameter(value)
    raise TypeError(f"{kind}: expected an nn.Parameter or a Tensor, got "
                    f"{type(value).__name__}")


def _set_parameter(owner: Module, kind: str, key: str, value: Any) -> None:
    param = _as_parameter(kind, value)
    _keep_place(owner._parameters, key, lambda: owner.register_parameter(key, param))


def _parameters_repr(owner: Module) -> str:
    """One line per entry, as PyTorch prints its parameter containers."""
    lines = [f"({k}): Parameter of shape {tuple(p.shape)} ({p.dtype.name}, {p.device})"
             for k, p in owner._parameters.items()]
    if not lines:
        return f"{type(owner).__name__}()"
    return f"{type(owner).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ParameterList(Module):
    """A list of parameters the parent module sees, registered as ``"0"``, ``"1"``, ... (the
    keys of PyTorch's ``ParameterList``, so state dicts match).  Tensors that are not
    Parameters are wrapped in one, as PyTorch does; a slice is a new ParameterList holding
    the same Parameters."""

    def __init__(self, values: Iterable[Any] = ()) -> None:
        super().__init__()
        for p in values:
            self.append(p)

    def append(self, value: Any) -> ParameterList:
        _set_parameter(self, "ParameterList", str(len(self._parameters)), value)
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for p in values:
            self.append(p)
        return self

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._parameters.values())
        if isinstance(index, slice):
            return ParameterList(items[index])
        try:
            return items[index]
        except IndexError:
            raise IndexError(f"ParameterList: index {index} out of range for {len(items)} "
                             "parameters") from None

    def __setitem__(self, index: int, value: Any) -> None:
        n = len(self._parameters)
        if not -n <= index < n:
            raise IndexError(f"ParameterList: index {index} out of range for {n} parameters")
        _set_parameter(self, "ParameterList", str(index % n), value)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    __repr__ = _parameters_repr


class ParameterDict(Module):
    """A dict of named parameters the parent module sees, registered under their keys (so
    state dict names match PyTorch's ``ParameterDict``).  Takes a dict or (key, value)
    pairs; Tensors that are not Parameters are wrapped in one; replacing a key keeps its
    place."""

    def __init__(self, values: Any = None) -> None:
        super().__init__()
        if values is not None:
            self.update(values)

    def __getitem__(self, key: str) -> Parameter:
        try:
            return self._parameters[key]
        except KeyError:
            raise KeyError(f"ParameterDict: no parameter {key!r}; the keys are "
                           f"{list(self._parameters)}") from None

    def __setitem__(self, key: str, value: Any) -> None:
        _set_parameter(self, "ParameterDict", key, value)

    def __delitem__(self, key: str) -> None:
        self[key]  # the KeyError above, naming the keys
        del self._parameters[key]

    def __contains__(self, key: str) -> bool:
        return key in self._parameters

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._parameters.get(key, default)

    def pop(self, key: str) -> Parameter:
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        self._parameters.clear()

    def update(self, values: Any) -> None:
        """Add or replace entries from a dict (or ParameterDict) or an iterable of
        (key, value) pairs; every value is checked before any entry changes."""
        pairs = list(values.items() if hasattr(values, "items") else values)
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ValueError(f"ParameterDict.update: entry {i} is not a (key, value) pair: "
                                 f"{pair!r}")
        checked = [(k, _as_parameter("ParameterDict", v)) for k, v in pairs]
        for k, v in checked:
            self[k] = v

    __repr__ = _parameters_repr
