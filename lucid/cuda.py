"""PyTorch's ``torch.cuda`` for programs renamed to Lucid.

Lucid has two devices: "cpu" (NumPy) and "gpu" (MLX, which runs on Apple's Metal or on NVIDIA's
CUDA).  A PyTorch program asks ``lucid.cuda.is_available()`` before moving to "cuda"; the
answer is whether Lucid's "gpu" device runs on a real GPU, and "cuda" / "cuda:0" then mean
that device.  With MLX on a CPU only (Linux ``mlx[cpu]``) the answer is False, so the program
stays on NumPy, which is faster there.
"""

from __future__ import annotations

from lucid import amp
from lucid.backends import gpu_available


def is_available() -> bool:
    """True when Lucid's "gpu" device runs on a real GPU (MLX on Metal or CUDA)."""
    return gpu_available()


def device_count() -> int:
    """1 when a GPU is available (MLX uses one), else 0."""
    return int(gpu_available())


def current_device() -> int:
    return 0


def get_device_name(device: object = None) -> str:
    from lucid.backends import gpu_status

    return {"gpu": "MLX GPU", "mlx-cpu": "MLX (CPU)"}.get(gpu_status(), "none")


def manual_seed(seed: int) -> None:
    """Seed Lucid's one random stream (every device draws from it): ``lucid.manual_seed``."""
    from lucid.random import seed as _seed

    _seed(seed)


manual_seed_all = manual_seed


def synchronize(device: object = None) -> None:
    """Nothing to wait for: Lucid evaluates MLX work when a value is read."""


def empty_cache() -> None:
    """MLX manages its own memory; nothing to free here."""


__all__ = ["amp", "is_available", "device_count", "current_device", "get_device_name",
           "manual_seed", "manual_seed_all", "synchronize", "empty_cache"]
