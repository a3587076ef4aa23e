"""Backends: one per device name, each exposing its array namespace as ``xp``.

Ops are written once against ``xp`` (``numpy`` or ``mlx.core``); the dispatcher looks the
backend up by the device of the op's inputs.  A backend also carries the few functions whose
spelling really differs between libraries (scatter-add for gradients of fancy indexing,
conversion to and from NumPy), so op bodies never ask which device they run on.
"""

from __future__ import annotations

from lucid.backends.base import Backend
from lucid.backends.numpy_backend import NumpyBackend

BACKENDS: dict[str, Backend] = {"cpu": NumpyBackend()}

DEVICES = ("cpu", "gpu")

# The same backends keyed by array namespace: an op that needs a backend helper (scatter-add)
# finds it from the ``xp`` it was handed, without asking which device it runs on.
BY_XP = {b.xp: b for b in BACKENDS.values()}


def backend_for(xp) -> Backend:
    return BY_XP[xp]


def check_device(device: str) -> str:
    """Validate a device name; the error lists the valid ones."""
    if device not in DEVICES:
        raise ValueError(f"Unknown device {device!r}: expected one of {DEVICES}")
    return device


def get_backend(device: str) -> Backend:
    """The backend for ``device``; raises a clear error when it is not available."""
    backend = BACKENDS.get(device)
    if backend is None:
        check_device(device)
        raise RuntimeError(
            f"The {device!r} device is not available in this build of Lucid: its backend "
            "(MLX) is not installed. Install it with `pip install mlx` on Apple silicon, "
            "`pip install 'mlx[cpu]'` on Linux without a GPU, or `pip install 'mlx[cuda]'` "
            "on an NVIDIA machine."
        )
    return backend


__all__ = ["BACKENDS", "BY_XP", "DEVICES", "Backend", "backend_for", "check_device", "get_backend"]
