"""Parameter and Buffer: Tensors whose *role* in a model is fixed at creation.

* ``Parameter`` -- learnable: ``requires_grad=True`` and ``keep_grad=True`` always; optimizers
  update it; saved in ``state_dict``; moved by ``Module.to``.
* ``Buffer`` -- model state that is not learned (BatchNorm's running statistics): never
  requires grad, ignored by optimizers, but saved in ``state_dict`` and moved by ``to``.

A Tensor argument is unwrapped to its data, so a Parameter never shares a graph with the
tensor it was made from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.tensor import Tensor


def _unwrap(data: Any, device: str | None) -> tuple[Any, str]:
    if isinstance(data, Tensor):
        return data.detach(), device or data.device
    return data, device or "cpu"


def _legacy_length(data: Any) -> bool:
    """A 0-d integer tensor: ``torch.Tensor(n)`` in PyTorch is n uninitialised floats (the old
    way to make a bias before an init call), ``lucid.Tensor(n)`` the number n; an integer
    number cannot be a parameter (it has no gradient), so here it can only mean PyTorch's."""
    return (isinstance(data, Tensor) and data.ndim == 0 and not data.dtype.is_floating_point
            and not data.dtype.is_complex and data.dtype.name != "Bool")


class Parameter(Tensor):
    """A learnable tensor: ``Parameter(data, dtype=None, device=None)``.

    ``Parameter(lucid.Tensor(n))`` with an integer n is PyTorch's ``nn.Parameter(
    torch.Tensor(n))``: n Float32 zeros, for an ``nn.init`` call to fill."""

    def __init__(self, data: Any, dtype: Any = None, device: str | None = None) -> None:
        data, device = _unwrap(data, device)
        if _legacy_length(data):  # nn.Parameter(torch.Tensor(n)): PyTorch's n floats
            data = np.zeros(int(data.item()), dtype=np.float32)
        super().__init__(data, requires_grad=True, keep_grad=True, dtype=dtype, device=device)
        self._free = False

    def __repr__(self) -> str:
        return "Parameter(" + super().__repr__()[len("Tensor("):]


class Buffer(Tensor):
    """Non-learnable model state: ``Buffer(data, dtype=None, device=None)``."""

    def __init__(self, data: Any, dtype: Any = None, device: str | None = None) -> None:
        data, device = _unwrap(data, device)
        super().__init__(data, requires_grad=False, keep_grad=False, dtype=dtype, device=device)
        self._free = False

    def __repr__(self) -> str:
        return "Buffer(" + super().__repr__()[len("Tensor("):]
