"""PyTorch's automatic mixed precision names (``torch.amp``), for programs renamed to Lucid.

Lucid computes every op in the dtypes of its tensors; it has no autocast.  ``GradScaler``
therefore passes values through unchanged: what PyTorch's does when CUDA is absent (it warns
and disables itself), so a PyTorch program gives the same numbers.  ``autocast`` with
``enabled=False`` is a no-op; enabled, it raises rather than silently computing in another
precision than the program asked for.
"""

from __future__ import annotations

import contextlib
from typing import Any


class GradScaler:
    """``GradScaler(...)``: ``scale(loss)`` is ``loss``, ``step(optimizer)`` is
    ``optimizer.step()``, ``unscale_`` and ``update`` do nothing (no loss scaling: Lucid has
    no float16 autocast to protect against underflow)."""

    def __init__(self, *args: Any, enabled: bool = True, **kwargs: Any) -> None:
        self.enabled = False  # as PyTorch's scaler without CUDA

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        pass

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        pass

    def get_scale(self) -> float:
        return 1.0

    def is_enabled(self) -> bool:
        return False

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        pass


def autocast(device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
             cache_enabled: Any = None) -> contextlib.AbstractContextManager:
    """PyTorch's ``autocast``: ``enabled=False`` gives a context that changes nothing; enabled,
    it raises, because Lucid has no mixed precision (it would run in full precision and
    silently differ from the program's intent)."""
    if enabled:
        raise NotImplementedError(
            "autocast: Lucid has no automatic mixed precision; every op computes in its "
            "tensors' dtypes. Remove the autocast block (or pass enabled=False), or cast the "
            "model and inputs yourself: model.half(), x.half()."
        )
    return contextlib.nullcontext()


__all__ = ["GradScaler", "autocast"]
