"""Ops a backend cannot run: compute them with NumPy on the CPU and move the results back.

An op class sets ``fallback = True`` when its body needs something MLX lacks.  The dispatcher
and the backward walk then hand it NumPy arrays and ``numpy`` as ``xp`` and convert on the way
in and out, warning once per op so nobody mistakes the round trip for a GPU kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends.base import Backend, warn_user

_WARNED: set[str] = set()


class FallbackWarning(UserWarning):
    """An op ran on the CPU because the "gpu" backend has no kernel for it."""


def _warn_once(op: Any, device: str) -> None:
    name = type(op).__name__
    if name not in _WARNED:
        _WARNED.add(name)
        warn_user(
            f"{op.name}: no {device!r} kernel; computed on the CPU with NumPy and moved back "
            "(correct, but it pays two copies)",
            FallbackWarning
        )


def forward(op: Any, backend: Backend, datas: list[Any]) -> Any:
    _warn_once(op, backend.device)
    host = [backend.to_numpy(d) for d in datas]
    out = op.forward(np, *host)
    return backend.asarray(out)


def backward(op: Any, backend: Backend, g: Any) -> tuple[Any, ...]:
    grads = op.backward(np, backend.to_numpy(g))
    # a gradient of one part of an input (the autograd walk's PartGrad) is written out in full
    return tuple(None if x is None else backend.asarray(x.dense(np) if hasattr(x, "dense") else x)
                 for x in grads)
