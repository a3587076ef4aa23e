"""PyTorch's ``torch.cuda`` for programs renamed to Lucid.

Lucid has two devices: "cpu" (NumPy) and "gpu" (MLX, which runs on Apple's Metal or on NVIDIA's
CUDA).  A PyTorch program asks ``lucid.cuda.is_available()`` before moving to "cuda"; the
answer is whether Lucid's "gpu" device runs on an NVIDIA GPU (on a Mac it is False, as
PyTorch's, and ``lucid.backends.mps.is_available()`` answers), and "cuda" / "cuda:0" then mean
that device.  With MLX on a CPU only (Linux ``mlx[cpu]``) the answer is False, so the program
stays on NumPy, which is faster there.
"""

from __future__ import annotations

from lucid import amp
from lucid.backends import gpu_available


def is_available() -> bool:
    """True when Lucid's "gpu" device runs on an NVIDIA GPU (MLX on CUDA).  On a Mac, as in
    PyTorch, it is False and ``lucid.backends.mps.is_available()`` answers for Apple's GPU."""
    from lucid.backends import mps

    return gpu_available() and not mps.metal()


def device_count() -> int:
    """1 when an NVIDIA GPU is available (MLX uses one), else 0."""
    return int(is_available())


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


def set_device(device: object) -> None:
    """Lucid's "gpu" is one device; nothing to choose (nanoGPT's DDP setup calls this)."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: Lucid has no bfloat16 (NumPy has none), so programs pick float16 or float32."""
    return False


__all__ = ["amp", "is_available", "device_count", "current_device", "get_device_name",
           "manual_seed", "manual_seed_all", "synchronize", "empty_cache", "set_device",
           "is_bf16_supported"]
