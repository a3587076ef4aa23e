"""PyTorch's ``torch.backends.cuda`` switches, accepted so that renamed programs run:
``lucid.backends.cuda.matmul.allow_tf32 = True`` may be set and read, and changes nothing
(Lucid computes in the tensors' own dtypes)."""

from __future__ import annotations

from types import SimpleNamespace

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=False)


def is_built() -> bool:
    return False
