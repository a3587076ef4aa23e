"""Moving tensors between devices: ``Tensor.to(device)``, ``.cpu()``, ``.gpu()``.

A move is an op like any other: the result remembers where it came from, so gradients travel
back across the device boundary (``dL/dx = dL/dy`` moved to x's device).  The logical dtype
survives the trip: a Float64 tensor stored as float32 on an MLX GPU comes back as float64.
"""

from __future__ import annotations

from typing import Any

from lucid.backends import check_device, get_backend
from lucid.ops.base import Op, apply, public
from lucid.tensor import Tensor
from lucid.types import Numeric, to_numeric_type


class ToDevice(Op):
    """y = x on another device.   dy/dx = 1: the gradient is moved back to x's device."""

    name = "to"
    function = None  # spelled x.to(device), below
    saves_inputs = False

    def __init__(self, src: str, dst: str, logical: Numeric) -> None:
        self.src = src
        self.dst = dst
        self.logical = logical

    def forward(self, xp, x):
        self.in_dtype = x.dtype
        if isinstance(x, Tensor):  # create_graph: the move itself, recorded
            return x.to(self.dst)
        host = get_backend(self.src).to_numpy(x)
        return get_backend(self.dst).asarray(host, dtype=self.logical.parse(self.dst))

    def backward(self, xp, g):
        if isinstance(g, Tensor):  # create_graph: moved back by the same op, recorded
            return (g.to(self.src),)
        host = get_backend(self.dst).to_numpy(g)
        return (get_backend(self.src).asarray(host, dtype=self.in_dtype),)

    def forward_flops(self, out, x):
        return 0  # a copy, no arithmetic

    def backward_flops(self, out, x):
        return 0


@public(method=True, function=False)
def to(self: Tensor, device: str) -> Tensor:
    """This tensor on ``device`` ("cpu" or "gpu"); the tensor itself when already there.

    The result is a new tensor connected to this one in the graph (gradients flow back);
    a free tensor stays free.
    """
    device = check_device(device)
    if device == self.device:
        return self
    get_backend(device)  # raises, with install instructions, when MLX is missing
    logical = self.dtype
    out = apply(ToDevice(self.device, device, logical), self)
    out.device = device
    if to_numeric_type(out._data.dtype) != logical:
        out._dtype = logical  # e.g. Float64 stored as float32 on an MLX GPU
    return out


@public(method=True, function=False)
def cpu(self: Tensor) -> Tensor:
    return to(self, "cpu")


@public(method=True, function=False)
def gpu(self: Tensor) -> Tensor:
    return to(self, "gpu")


@public
def evaluate(*tensors: Any) -> None:
    """Force lazy (MLX) values now: each tensor's data and grad, and any raw arrays given.

    Optimizers call this after every step so that MLX's own graph never outgrows one step.
    """
    by_backend: dict[str, list[Any]] = {}
    for t in tensors:
        if isinstance(t, Tensor):
            if t.device != "cpu":
                by_backend.setdefault(t.device, []).extend((t._data, t.grad))
        elif t is not None:
            by_backend.setdefault("gpu", []).append(t)
    for device, arrays in by_backend.items():
        get_backend(device).evaluate(*arrays)
