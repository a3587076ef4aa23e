"""PyTorch's ``torch.backends.cudnn`` switches, accepted so that renamed programs run.

Lucid does not use cuDNN: ``benchmark`` and ``deterministic`` may be set and read, and change
nothing (Lucid's kernels are deterministic: the same seed gives the same numbers)."""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False


def is_available() -> bool:
    return False
