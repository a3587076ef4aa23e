"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any

from lucid.nn.module import Module
from lucid.nn.parameter import Parameter

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
        self.add_module(key, module)

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


def _as_parameter(kind: str, value: Any) -> Parameter:
    if isinstance(value, Parameter):
        return value
    raise TypeError(f"{kind}: expected an nn.Parameter, got {type(value).__name__} (wrap it: "
                    "nn.Parameter(tensor))")


class ParameterList(Module):
    """A list of parameters the parent module sees, registered as ``"0"``, ``"1"``, ... (the
    keys of PyTorch's ``ParameterList``, so state dicts match)."""

    def __init__(self, values: Iterable[Parameter] = ()) -> None:
        super().__init__()
        for p in values:
            self.append(p)

    def append(self, value: Parameter) -> ParameterList:
        self.register_parameter(str(len(self._parameters)), _as_parameter("ParameterList", value))
        return self

    def extend(self, values: Iterable[Parameter]) -> ParameterList:
        for p in values:
            self.append(p)
        return self

    def __getitem__(self, index: int) -> Parameter:
        items = list(self._parameters.values())
        try:
            return items[index]
        except IndexError:
            raise IndexError(f"ParameterList: index {index} out of range for {len(items)} "
                             "parameters") from None

    def __setitem__(self, index: int, value: Parameter) -> None:
        n = len(self._parameters)
        if not -n <= index < n:
            raise IndexError(f"ParameterList: index {index} out of range for {n} parameters")
        self.register_parameter(str(index % n), _as_parameter("ParameterList", value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())


class ParameterDict(Module):
    """A dict of named parameters the parent module sees (keys as in PyTorch)."""

    def __init__(self, values: dict[str, Parameter] | None = None) -> None:
        super().__init__()
        for name, p in (values or {}).items():
            self[name] = p

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Parameter) -> None:
        self.register_parameter(key, _as_parameter("ParameterDict", value))

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
