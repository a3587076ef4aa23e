"""PyTorch's ``torch.accelerator`` for programs renamed to Lucid: the accelerator is Lucid's
"gpu" device (MLX) when it runs on a real GPU (see :mod:`lucid.cuda`)."""

from __future__ import annotations

from lucid.backends import device, gpu_available


def is_available() -> bool:
    """True when Lucid's "gpu" device runs on a real GPU."""
    return gpu_available()


def current_accelerator(check_available: bool = False) -> device | None:
    """``lucid.device("gpu")`` when a GPU is available, else None (PyTorch's answer when there
    is none); ``.type`` is then "gpu", a device name Lucid accepts everywhere."""
    return device("gpu") if gpu_available() else None


def device_count() -> int:
    return int(gpu_available())


__all__ = ["is_available", "current_accelerator", "device_count"]
