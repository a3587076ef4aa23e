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


def _load_gpu() -> Backend | None:
    """Import MLX and register the "gpu" backend on first use (None when MLX is missing).

    Loading is lazy so that ``import lucid`` stays cheap and works without MLX; every gpu
    tensor is made through :func:`get_backend`, so the registry is filled before any op runs.
    """
    try:
        from lucid.backends.mlx_backend import MLXBackend
    except ImportError:
        return None
    backend = MLXBackend()
    BACKENDS["gpu"] = backend
    BY_XP[backend.xp] = backend
    return backend


def gpu_status() -> str:
    """Which "gpu" Lucid has: ``"gpu"`` (MLX on Metal or CUDA), ``"mlx-cpu"`` (MLX on its CPU
    device, Linux ``mlx[cpu]``) or ``"missing"`` (MLX not installed)."""
    try:
        from lucid.backends.mlx_backend import has_gpu
    except ImportError:
        return "missing"
    return "gpu" if has_gpu() else "mlx-cpu"


def gpu_available() -> bool:
    """True when "gpu" tensors run on a real GPU (MLX with Metal or CUDA)."""
    return gpu_status() == "gpu"


#: PyTorch's device names for Lucid's "gpu" (MLX, on Metal or CUDA): "cuda", "cuda:0", "mps"
GPU_ALIASES = ("cuda", "mps")


class device(str):  # noqa: N801 -- PyTorch's name (lucid.device("cuda"))
    """A device name, PyTorch's ``lucid.device("cuda")``: the string Lucid uses ("cpu" or
    "gpu"), so it goes wherever a device string goes, remembering the name it was given in
    ``type`` (and ``index``).  "cuda", "cuda:0" and "mps" all mean Lucid's "gpu" device
    (MLX, which runs on Metal or CUDA); "cpu" is NumPy."""

    def __new__(cls, type: str = "cpu", index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device) and index is None:
            return type
        name, _, number = str(type).partition(":")
        self = super().__new__(cls, check_device(name))
        self.type = name
        self.index = int(number) if number else index
        return self

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"


def check_device(device: str) -> str:
    """Validate a device name and return Lucid's own: "cpu" or "gpu" (PyTorch's "cuda",
    "cuda:0" and "mps" mean "gpu").  The error lists the valid names."""
    if device in DEVICES:
        return str(device)
    name = device.partition(":")[0] if isinstance(device, str) else device
    if name in GPU_ALIASES:
        return "gpu"
    if name == "cpu":
        return "cpu"
    raise ValueError(f"Unknown device {device!r}: expected one of {DEVICES} (or PyTorch's "
                     "'cuda', 'cuda:0', 'mps', which mean 'gpu')")


def get_backend(device: str) -> Backend:
    """The backend for ``device``; raises a clear error when it is not available."""
    backend = BACKENDS.get(device)
    if backend is None:
        given, device = device, check_device(device)
        backend = BACKENDS.get(device)
        if backend is None and device == "gpu":
            backend = _load_gpu()
        if backend is None:
            alias = "" if given == device else f" ({given!r} means Lucid's 'gpu' device, MLX)"
            raise RuntimeError(
                f"The {device!r} device{alias} needs MLX, which is not installed. Install it "
                "with `pip install mlx` on Apple silicon, "
                "`pip install 'mlx[cpu]'` on Linux without a GPU, or `pip install 'mlx[cuda]'` "
                "on an NVIDIA machine."
            )
    return backend


__all__ = [
    "BACKENDS",
    "BY_XP",
    "DEVICES",
    "Backend",
    "backend_for",
    "check_device",
    "device",
    "get_backend",
    "gpu_available",
    "gpu_status",
]

from lucid.backends import cuda, cudnn, mps  # noqa: E402,F401  (PyTorch's lucid.backends.mps ...)
