"""PyTorch's ``torch.backends.mps`` for programs renamed to Lucid: Apple's GPU is Lucid's
"gpu" device (MLX), so these answer for it."""

from __future__ import annotations


def is_available() -> bool:
    """True when the "gpu" device (MLX) runs on Apple's GPU (Metal), as PyTorch's answers on
    a Mac; on an NVIDIA machine ``lucid.cuda.is_available()`` is the one that says True."""
    from lucid.backends import gpu_available

    return gpu_available() and metal()


def metal() -> bool:
    """True when MLX is installed with Metal (Apple silicon)."""
    try:
        import mlx.core as mx
    except ImportError:
        return False
    return bool(mx.metal.is_available())


def is_built() -> bool:
    """True when MLX is installed (the "gpu" device exists, on a GPU or on MLX's CPU)."""
    from lucid.backends import gpu_status

    return gpu_status() != "missing"
