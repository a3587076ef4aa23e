"""Ops a backend cannot run: compute them with NumPy on the CPU and move the results back.

An op class sets ``fallback = True`` when its body needs something MLX lacks.  The dispatcher
and the backward walk then hand it NumPy arrays and ``numpy`` as ``xp`` and convert on the way
in and out, warning once per op so nobody mistakes the round trip for a GPU kernel.

A backend with *limits* (MLX: ``Backend.max_size``) is also never handed what it cannot run,
whatever the op: :func:`run_within_limits` is the one place every op call on such a device
goes through.

* **Empty arrays** never reach MLX.  On arrays with no elements MLX spins forever (a
  reduction over an empty axis of a transposed array), kills the process (SIGFPE in ``inv``
  or ``solve`` of a (0, 0) matrix, in an empty scatter) or answers wrongly (``any`` of nothing
  is True).  An op with an empty input or an empty result runs with NumPy instead -- it costs
  nothing, there is nothing to compute -- and is marked so that its backward runs with NumPy
  too.
* **Oversized arrays** are refused, naming the op: MLX indexes elements with 32-bit integers,
  and a reduction over a broadcast view of 2^40 elements (each axis under the limit) dies
  with SIGSEGV.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lucid.backends.base import Backend, warn_user
from lucid.shapes import fmt

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


def run_within_limits(op: Any, backend: Backend, datas: list[Any],
                      recorded: Callable[[], bool]) -> Any:
    """``op.forward`` on a backend with limits, keeping empty and oversized arrays from it.

    ``recorded()`` says whether the result becomes a graph node, so that its backward must
    be able to run (an empty result is then computed with NumPy too, not made as zeros).
    The usual call -- every array non-empty and within the limit -- costs one size read per
    array.
    """
    limit = backend.max_size
    for d in datas:
        n = d.size
        if not n or n > limit:  # the rare cases, one by one
            for a in datas:
                _check_size(backend, a, "input")
            out = forward(op, backend, datas) if op.fallback else _on_host(op, backend, datas)
            _check_size(backend, out, "result")
            return out
    if op.fallback:
        out = forward(op, backend, datas)
    else:
        try:
            out = op.forward(backend.xp, *datas)
        except TypeError as exc:  # MLX's bindings refuse an int past 32 bits by its type
            big = _largest_int(op.__dict__)
            if "incompatible function arguments" not in str(exc) or big <= limit:
                raise
            raise OverflowError(f"an argument of {big:,} is more than the {limit:,} the "
                                f"{backend.device!r} device can index") from None
    n = out.size
    if not n:  # made lazily, not computed yet: MLX must not compute it
        return _on_host(op, backend, datas) if recorded() else backend.xp.zeros(
            out.shape, dtype=out.dtype)
    if n > limit:
        _check_size(backend, out, "result")
    return out


def _on_host(op: Any, backend: Backend, datas: list[Any]) -> Any:
    """``op`` computed with NumPy, its arrays included (an index it was given, say); marked
    so that its backward runs with NumPy as well."""
    op.fallback = True
    op.__dict__.update({k: _to_host(v, backend) for k, v in op.__dict__.items()})
    return backend.asarray(op.forward(np, *[backend.to_numpy(d) for d in datas]))


def _to_host(value: Any, backend: Backend) -> Any:
    """``value`` with every array of ``backend`` in it (in tuples and lists too) in NumPy."""
    if isinstance(value, backend.array_type):
        return backend.to_numpy(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_to_host(v, backend) for v in value)
    return value


def _largest_int(value: Any) -> int:
    """The largest int among an op's parameters (in tuples, lists and dicts too), or 0."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return max((_largest_int(v) for v in value), default=0)
    return abs(value) if isinstance(value, int) else 0


def _check_size(backend: Backend, array: Any, what: str) -> None:
    """Refuse an array with more elements than ``backend`` can index (the dispatcher adds the
    op's name and inputs to the message)."""
    if array.size > backend.max_size:
        raise OverflowError(
            f"the {what} of shape {fmt(tuple(array.shape))} has {array.size:,} elements, more "
            f"than the {backend.max_size:,} the {backend.device!r} device can index"
        )
