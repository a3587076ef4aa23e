"""Padding layers (``nn.ZeroPad2d``, ``nn.ConstantPad1d``, ``nn.ReflectionPad2d``,
``nn.ReplicationPad3d`` ...), as PyTorch's: each calls ``F.pad`` on its last 1, 2 or 3 axes."""

from __future__ import annotations

from typing import Any

from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d"]


class _Pad(Module):
    """``F.pad(x, padding, mode, value)``; an int pads every side of the last ``n`` axes."""

    mode = "constant"
    axes = 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.axes)
        self.padding = tuple(padding)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, "constant", self.value)
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


def _pad_class(name: str, mode: str, axes: int, constant: bool) -> type:
    def init(self: Any, padding: Any, value: float = 0.0) -> None:
        _Pad.__init__(self, padding, value if constant else 0.0)

    if not constant:
        def init(self: Any, padding: Any) -> None:  # noqa: F811 (no value to give)
            _Pad.__init__(self, padding)

    doc = (f"Pad the last {axes} axes ({mode} padding, PyTorch's nn.{name}): "
           "``padding`` is an int or (left, right" + (", top, bottom" if axes > 1 else "")
           + (", front, back" if axes > 2 else "") + ").")
    return type(name, (_Pad,), {"mode": mode, "axes": axes, "__init__": init, "__doc__": doc,
                                "__module__": __name__})


ZeroPad1d = _pad_class("ZeroPad1d", "constant", 1, False)
ZeroPad2d = _pad_class("ZeroPad2d", "constant", 2, False)
ConstantPad1d = _pad_class("ConstantPad1d", "constant", 1, True)
ConstantPad2d = _pad_class("ConstantPad2d", "constant", 2, True)
ConstantPad3d = _pad_class("ConstantPad3d", "constant", 3, True)
ReflectionPad1d = _pad_class("ReflectionPad1d", "reflect", 1, False)
ReflectionPad2d = _pad_class("ReflectionPad2d", "reflect", 2, False)
ReplicationPad1d = _pad_class("ReplicationPad1d", "replicate", 1, False)
ReplicationPad2d = _pad_class("ReplicationPad2d", "replicate", 2, False)
ReplicationPad3d = _pad_class("ReplicationPad3d", "replicate", 3, False)
