"""``lucid.einops``: einops' readable tensor reshaping on Lucid tensors, differentiable.

::

    from lucid.einops import rearrange, reduce, repeat, einsum
    x = lucid.random.randn(8, 3, 32, 32)                         # b c h w
    rearrange(x, "b c h w -> b (h w) c")                           # tokens for attention
    reduce(x, "b c (h 2) (w 2) -> b c h w", "max")                 # 2x2 max pooling
    repeat(x[0], "c h w -> b c h w", b=4)                          # a batch of copies
    einsum(x, x, "b c h w, b d h w -> b c d")                      # named axes, any length

The patterns are parsed by the `einops <https://einops.rocks>`_ package itself (a core
dependency): this module only registers a *backend* that tells einops how to reshape,
transpose, reduce, tile and contract Lucid tensors.  Each of those is a Lucid op
(``reshape``, ``transpose``, ``sum`` ..., ``broadcast_to``, ``einsum``), so the results carry
gradients, run on "cpu" and "gpu" alike, and show up in the graph and in FLOPs counts.

A pattern that does not fit the tensor raises einops' ``EinopsError``, its message starting
with the function's name here (``lucid.einops.rearrange: ...``) and explaining what is wrong.
NumPy arrays and lists of numbers become tensors first, as everywhere in Lucid; a list of
tensors is stacked along a new first axis (einops' rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import einops as _einops
import numpy as np
from einops import EinopsError
from einops._backends import AbstractBackend

from lucid import ops
from lucid.creation import arange as _arange
from lucid.tensor import Tensor

__all__ = ["rearrange", "reduce", "repeat", "einsum", "pack", "unpack", "parse_shape",
           "EinopsError"]


class LucidBackend(AbstractBackend):
    """How einops handles a Lucid tensor: every step is a Lucid op (so gradients flow).

    einops finds this class by itself: it looks through ``AbstractBackend``'s subclasses for
    one whose ``framework_name`` is an imported module and whose ``is_appropriate_type``
    accepts the tensor.
    """

    framework_name = "lucid"

    def is_appropriate_type(self, tensor: Any) -> bool:
        return isinstance(tensor, Tensor)

    def from_numpy(self, x: np.ndarray) -> Tensor:
        return Tensor(x)

    def to_numpy(self, x: Tensor) -> np.ndarray:
        return x.numpy()

    def arange(self, start: int, stop: int) -> Tensor:
        return _arange(start, stop)

    def shape(self, x: Tensor) -> tuple[int, ...]:
        return x.shape

    def reshape(self, x: Tensor, shape: tuple[int, ...]) -> Tensor:
        return ops.reshape(x, tuple(shape))

    def transpose(self, x: Tensor, axes: tuple[int, ...]) -> Tensor:
        return ops.transpose(x, tuple(axes))

    def reduce(self, x: Tensor, operation: str, axes: tuple[int, ...]) -> Tensor:
        # einops' reductions are Lucid's of the same name: min, max, sum, mean, prod, any, all
        return getattr(ops, operation)(x, axis=tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list[Tensor]) -> Tensor:
        return ops.stack(list(tensors), axis=0)

    def add_axis(self, x: Tensor, new_position: int) -> Tensor:
        return ops.expand_dims(x, new_position)

    def add_axes(self, x: Tensor, n_axes: int, pos2len: dict[int, int]) -> Tensor:
        # new axes of size 1, then one broadcast to their lengths (a view whose gradient is
        # summed back, instead of einops' default tile, which copies)
        shape = []
        for position in range(n_axes):
            if position in pos2len:
                x = ops.expand_dims(x, position)
        for position, size in enumerate(x.shape):
            shape.append(pos2len.get(position, size))
        return ops.broadcast_to(x, tuple(shape))

    def tile(self, x: Tensor, repeats: tuple[int, ...]) -> Tensor:
        return ops.tile(x, tuple(repeats))

    def concat(self, tensors: list[Tensor], axis: int) -> Tensor:
        return ops.concatenate(list(tensors), axis=axis)

    def is_float_type(self, x: Tensor) -> bool:
        return x.dtype.is_floating_point

    def einsum(self, pattern: str, *x: Tensor) -> Tensor:
        return ops.einsum(pattern, *x)


def _tensor(x: Any) -> Any:
    """Lucid's promotion rule: NumPy arrays and (nested) number lists become tensors; a list
    or tuple of tensors stays a list (einops stacks it)."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)) and x and any(isinstance(t, Tensor) for t in x):
        return [_tensor(t) for t in x]
    return Tensor(x)


def _named(fn_name: str, run: Callable[[], Any]) -> Any:
    """Run ``run()``; an EinopsError is raised again with ``lucid.einops.<fn>`` in front."""
    try:
        return run()
    except EinopsError as exc:
        raise EinopsError(f"lucid.einops.{fn_name}: {str(exc).strip()}") from None


def rearrange(tensor: Any, pattern: str, **axes_lengths: int) -> Tensor:
    """Reorder, merge and split axes: ``rearrange(x, "b c h w -> b (h w) c")``.

    Names on the left label the input's axes; the right side says where each goes.
    ``(h w)`` merges axes (h outer), ``(h 2)`` on the left splits one (give unknown lengths
    as keywords: ``rearrange(x, "(b t) c -> b t c", t=4)``).  No element is lost or added:
    a transpose plus reshapes, differentiable (the gradient is rearranged back).
    """
    return _named("rearrange",
                  lambda: _einops.rearrange(_tensor(tensor), pattern, **axes_lengths))


def reduce(tensor: Any, pattern: str, reduction: str | Callable, **axes_lengths: int) -> Tensor:
    """Rearrange and reduce the axes missing on the right with ``reduction``: "sum", "mean",
    "max", "min", "prod", "any", "all" (or a function ``f(tensor, axes)``).

    ``reduce(x, "b c h w -> b c", "mean")`` is global average pooling;
    ``reduce(x, "b c (h 2) (w 2) -> b c h w", "max")`` is 2x2 max pooling.  Differentiable
    through the Lucid reduction used (mean spreads g / n, max sends g to the maxima).
    """
    return _named("reduce",
                  lambda: _einops.reduce(_tensor(tensor), pattern, reduction, **axes_lengths))


def repeat(tensor: Any, pattern: str, **axes_lengths: int) -> Tensor:
    """Rearrange and add new axes (their lengths as keywords), copying the values along them:
    ``repeat(img, "h w -> h w c", c=3)``, ``repeat(x, "h w -> (h 2) (w 2)")`` (upsampling).
    The gradient of each input element is the sum over its copies.
    """
    return _named("repeat",
                  lambda: _einops.repeat(_tensor(tensor), pattern, **axes_lengths))


def einsum(*tensors_and_pattern: Any) -> Tensor:
    """``einsum(a, b, "batch i j, batch j k -> batch i k")``: lucid.einsum with named axes
    (any length, separated by spaces) and the pattern last, einops' convention.  Each name
    maps to one letter and the contraction runs through ``lucid.einsum`` (its gradient).

    With the pattern *first* (``einsum("ij,jk->ik", a, b)``, Lucid 2.x's and NumPy's order)
    it is ``lucid.einsum`` itself: one letter per axis.
    """
    if tensors_and_pattern and isinstance(tensors_and_pattern[0], str):
        pattern, *tensors = tensors_and_pattern
        return ops.einsum(pattern, *(_tensor(t) for t in tensors))
    if len(tensors_and_pattern) < 2 or not isinstance(tensors_and_pattern[-1], str):
        raise EinopsError(
            "lucid.einops.einsum: give the tensors first and the pattern (a string) last, "
            "e.g. einsum(a, b, 'i j, j k -> i k')"
        )
    *tensors, pattern = tensors_and_pattern
    tensors = [_tensor(t) for t in tensors]
    return _named("einsum", lambda: _einops.einsum(*tensors, pattern))


def pack(tensors: Any, pattern: str) -> tuple[Tensor, list]:
    """einops' ``pack``: flatten each tensor's ``*`` axes and concatenate them (returns the
    packed tensor and the shapes ``unpack`` needs)."""
    return _named("pack", lambda: _einops.pack([_tensor(t) for t in tensors], pattern))


def unpack(tensor: Any, packed_shapes: list, pattern: str) -> list[Tensor]:
    """einops' ``unpack``: the inverse of :func:`pack`."""
    return _named("unpack", lambda: _einops.unpack(_tensor(tensor), packed_shapes, pattern))


def parse_shape(tensor: Any, pattern: str) -> dict[str, int]:
    """The sizes of the named axes: ``parse_shape(x, "b c _ _")`` -> ``{"b": 8, "c": 3}``."""
    return _named("parse_shape", lambda: _einops.parse_shape(_tensor(tensor), pattern))
