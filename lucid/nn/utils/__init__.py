"""``lucid.nn.utils``: gradient clipping and the parameters as one flat vector (PyTorch's
``torch.nn.utils`` functions of the same names and semantics)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.ops import concatenate
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]


def _params(parameters: Any) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _grad_array(p: Tensor, fn: str) -> Any:
    g = p.grad
    if isinstance(g, Tensor):  # after backward(create_graph=True)
        raise TypeError(f"{fn}: the gradient of a parameter of shape {fmt(p.shape)} is a Tensor "
                        "with a graph (backward(create_graph=True)); clip values, not graphs: "
                        "use p.grad.detach()")
    return g


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False) -> Tensor:
    """Scale the gradients of ``parameters`` in place so that their total norm (all gradients
    as one vector) is at most ``max_norm``; return the total norm before clipping.

        total = ||(g_1, ..., g_n)||_p      (p = ``norm_type``; ``inf`` is the largest |g|)
        g_i <- g_i * min(1, max_norm / (total + 1e-6))

    A non-finite total (NaN or inf) raises when ``error_if_nonfinite``; otherwise the
    gradients are scaled as PyTorch does: by NaN for a NaN total (every gradient becomes NaN),
    by 0 for an infinite one.  Parameters without a gradient are skipped.  The total comes
    back as a 0-d Tensor of the first gradient's dtype, on its device (PyTorch's too).
    """
    fn = "clip_grad_norm_"
    params = [p for p in _params(parameters) if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not params:
        return Tensor(0.0)
    norms = []
    for p in params:
        g = np.asarray(get_backend(p.device).to_numpy(_grad_array(p, fn)), dtype=np.float64)
        norms.append(np.max(np.abs(g), initial=0.0) if math.isinf(norm_type) else
                     np.sum(np.abs(g) ** norm_type) ** (1.0 / norm_type))
    norms = np.array(norms)
    total = (float(np.max(norms)) if math.isinf(norm_type) else
             float(np.sum(norms ** norm_type) ** (1.0 / norm_type)))
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"{fn}: the total norm of order {norm_type} of the gradients is {total}, so they "
            "cannot be clipped. Set error_if_nonfinite=False to scale them anyway, or find the "
            "step that made them non-finite.")
    scale = max_norm / (total + 1e-6)
    if not scale >= 1.0:  # NaN too: PyTorch multiplies by clamp(scale, max=1) = NaN
        for p in params:  # (a Python float keeps each gradient's dtype, on both backends)
            p.grad = p.grad * scale
    return Tensor(total, dtype=params[0].dtype, device=params[0].device)


def clip_grad_value_(parameters: Iterable[Tensor] | Tensor, clip_value: float) -> None:
    """Clamp every gradient entry into ``[-clip_value, clip_value]`` in place."""
    fn = "clip_grad_value_"
    clip_value = float(clip_value)
    if clip_value < 0:
        raise ValueError(f"{fn}: clip_value must be >= 0, got {clip_value}")
    for p in _params(parameters):
        if p.grad is not None:
            xp = get_backend(p.device).xp
            p.grad = xp.clip(_grad_array(p, fn), -clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters' values, flattened and concatenated in order, as one 1-D Tensor.

    Built from ops (reshape, concatenate), so, as in PyTorch, the vector is part of the
    graph: a loss computed from it (an L2 penalty, a flat-vector Hessian product) sends its
    gradient back to each parameter.  Detach it (``.detach()``) to keep a snapshot."""
    params = list(parameters)
    if not params:
        raise ValueError("parameters_to_vector: no parameters given")
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise RuntimeError(f"parameters_to_vector: parameters on {sorted(devices)}; move them to "
                           "one device first (model.to(device))")
    return concatenate([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into the parameters (each its own shape),
    the inverse of :func:`parameters_to_vector`.  Checked before anything is written."""
    params = list(parameters)
    if not isinstance(vec, Tensor) or vec.ndim != 1:
        got = fmt(vec.shape) if isinstance(vec, Tensor) else type(vec).__name__
        raise TypeError(f"vector_to_parameters: vec must be a 1-D Tensor, got {got}")
    need = sum(p.size for p in params)
    if vec.size != need:
        raise ValueError(f"vector_to_parameters: vec has {vec.size} values, the parameters "
                         f"hold {need}")
    start = 0
    pieces = []
    for p in params:
        piece = vec._data[start:start + p.size].reshape(p.shape)
        pieces.append(get_backend(p.device).asarray(
            get_backend(vec.device).to_numpy(piece), dtype=p._data.dtype))
        start += p.size
    for p, piece in zip(params, pieces):
        p._data = piece
        p._version += 1
from lucid.nn.utils import rnn  # noqa: E402,F401  (nn.utils.rnn.pad_sequence)
