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
    BACKENDS[TENSOR_DEVICES["gpu"]] = backend
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
    """A device: PyTorch's ``torch.device`` that is also the string Lucid uses.

    ``x.device`` of every tensor is one of these, so both languages read it: Lucid's
    ``x.device == "gpu"`` and ``t.to(x.device)``, and PyTorch's ``x.device.type``,
    ``x.device.index``, ``str(x.device)`` and ``x.device == "cpu"``.  Its string value is
    Lucid's name, "cpu" (NumPy) or "gpu" (MLX); ``lucid.device("cuda:0")`` remembers the name
    it was given in ``type`` and ``index``.  A "gpu" device also equals PyTorch's names for it
    ("cuda", "cuda:0", "mps"), so a renamed ``if x.device == "cuda":`` keeps its meaning.  A
    tensor's own device reports ``type`` "cpu" (index None) or "gpu" (index 0: MLX uses one
    device, as a PyTorch tensor on ``cuda`` reports index 0).
    """

    type: str
    index: int | None

    def __new__(cls, type: str = "cpu", index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device) and index is None:
            return type
        name, _, number = str(type).partition(":")
        lucid_name = _lucid_name(name)
        self = super().__new__(_GPUDevice if lucid_name == "gpu" else cls, lucid_name)
        self.type = name
        self.index = int(number) if number else index
        return self

    def __repr__(self) -> str:
        if (self.type, self.index) in (("cpu", None), ("gpu", 0)):
            return str.__repr__(self)  # a tensor's own device reads as Lucid's string
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"

    def __reduce__(self) -> tuple:
        return (device, (f"{self.type}:{self.index}" if self.index is not None else self.type,))


class _GPUDevice(device):
    """The "gpu" device, equal to PyTorch's names for it too (``== "cuda"``).  Only this one
    compares in Python: "cpu" keeps str's own comparison, the engine's fast path."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return str.__eq__(self, other) or other.partition(":")[0] in GPU_ALIASES
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = str.__hash__


def check_device(device: str) -> device:
    """Validate a device name and return Lucid's own: "cpu" or "gpu" (PyTorch's "cuda",
    "cuda:0" and "mps" mean "gpu"), as the :class:`device` object tensors carry.  The error
    lists the valid names."""
    return TENSOR_DEVICES[_lucid_name(device)]


def _lucid_name(device: str) -> str:
    if device in DEVICES:
        return "gpu" if device == "gpu" else "cpu"
    name = device.partition(":")[0] if isinstance(device, str) else device
    if name in GPU_ALIASES:
        return "gpu"
    if name == "cpu":
        return "cpu"
    raise ValueError(f"Unknown device {device!r}: expected one of {DEVICES} (or PyTorch's "
                     "'cuda', 'cuda:0', 'mps', which mean 'gpu')")


#: each tensor's ``device``: one object per device (the ops compare and look them up often)
TENSOR_DEVICES = {d: d for d in (device("cpu"), device("gpu", 0))}

# The registry keyed by those same objects: the op path looks a backend up by a tensor's
# device many times per op, and a key that is the very object matches without comparing.
BACKENDS[TENSOR_DEVICES["cpu"]] = BACKENDS.pop("cpu")


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
    "TENSOR_DEVICES",
    "get_backend",
    "gpu_available",
    "gpu_status",
]

from lucid.backends import cuda, cudnn, mps  # noqa: E402,F401  (PyTorch's lucid.backends.mps ...)
