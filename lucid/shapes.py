"""Shape arithmetic shared by the ops and the backward walk: broadcasting and its reverse.

Broadcasting (NumPy's rule): align shapes on the right; two sizes agree when they are equal
or one of them is 1.  Its reverse, ``sum_to``, is what a gradient needs: an input that was
stretched along an axis in the forward pass receives the *sum* of the gradient along it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def fmt(shape: tuple[int, ...]) -> str:
    """``(2, 3)`` as ``(2,3)``; used in every error message so shapes read the same."""
    return "(" + ",".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shape(op: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast result of ``shapes``, or a ValueError naming ``op`` and every shape."""
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(-ndim, 0):
        size = 1
        for s in shapes:
            if -axis > len(s):
                continue
            d = s[axis]
            if d == 1:
                continue
            if size != 1 and d != size:
                listed = " and ".join(fmt(s) for s in shapes)
                raise ValueError(
                    f"{op}: shapes {listed} cannot be broadcast together (axis {axis}: "
                    f"sizes {size} and {d} differ and neither is 1). Reshape or index one "
                    "operand so that each axis matches or is 1."
                )
            size = d
        out.append(size)
    return tuple(out)


def sum_to(xp: Any, grad: Any, shape: tuple[int, ...]) -> Any:
    """Sum ``grad`` down to ``shape``: the adjoint of broadcasting ``shape`` up to grad.shape.

    Leading axes that broadcasting added are summed away, then every axis where ``shape`` has
    size 1 and ``grad`` does not is summed with ``keepdims``.  The caller has already checked
    that ``shape`` broadcasts to ``grad.shape``.
    """
    if grad.size == 0:  # nothing to add up (and MLX may hang summing an empty axis)
        return xp.zeros(shape, dtype=grad.dtype)
    lead = grad.ndim - len(shape)
    if lead:
        grad = grad.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and grad.shape[i] != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return grad


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True when ``shape`` broadcasts to exactly ``target``."""
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def normalize_axis(op: str, axis: int, ndim: int) -> int:
    """``axis`` in ``[-ndim, ndim)`` made non-negative, or an IndexError naming ``op``."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(
            f"{op}: axis must be an int, got {type(axis).__name__} {axis!r}; axes count "
            "from 0 (or from -1 at the end)"
        )
    if not -ndim <= axis < ndim:
        raise IndexError(
            f"{op}: axis {axis} is out of range for a tensor with {ndim} dimension(s) "
            f"(valid: {-ndim}..{ndim - 1})"
        )
    return int(axis) % ndim


def normalize_axes(op: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``None`` → all axes; an int or a sequence → sorted non-negative axes (no repeats)."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (list, tuple)):
        return (normalize_axis(op, axis, ndim),)
    axes = tuple(sorted(normalize_axis(op, a, ndim) for a in axis))
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: repeated axis in {tuple(axis)}")
    return axes
