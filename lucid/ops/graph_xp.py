"""Higher-order gradients: the backward rules, run on a namespace of Lucid ops.

Every op's ``forward`` and ``backward`` are written against ``xp`` -- ``numpy`` for "cpu",
``mlx.core`` for "gpu" -- and plain arrays.  Hand them :class:`GraphXP` instead, a namespace
whose ``xp.exp``, ``xp.where``, ``xp.matmul`` ... are Lucid's own functions, and Tensors
instead of arrays, and the very same code records a graph: the gradient it computes can be
differentiated again.  That is how ``backward(create_graph=True)`` and
``lucid.autograd.grad(..., create_graph=True)`` work (the way JAX writes its rules with
primitives): for each node the engine

1. copies the node's op (its parameters: axis, stride, ...),
2. runs the copy's ``forward`` on the node's input *Tensors*, so the values the rule reads
   (``self.y``, ``self.a`` ...) are recomputed as Tensors connected to the inputs, and
3. runs the copy's ``backward`` on the incoming gradient, a Tensor.

One rule serves first and higher order; nothing here knows any particular op.  A rule that
uses something this namespace cannot give (a scatter-add, an in-place write) stops with an
error naming the op: it is not twice differentiable yet.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from lucid import types
from lucid.backends import BACKENDS, BY_XP, backend_for
from lucid.backends.base import Backend
from lucid.engine.grads import KINDS
from lucid.engine.mode import enable_grad
from lucid.engine.walk import released_error, shape_error
from lucid.ops.base import FUNCTIONS, Op, apply
from lucid.ops.decomp import QR, SVD, Cholesky, Det, Eigh, Inv, SLogDet, Solve, _unpack
from lucid.ops.indexing import IndexPut
from lucid.shapes import broadcasts_to, fmt, sum_to
from lucid.tensor import Tensor

__all__ = ["GraphRules", "GraphXP", "NotTwiceDifferentiable"]


class NotTwiceDifferentiable(RuntimeError):
    """A backward rule used something that cannot be recorded as a graph (raised, naming the
    op and the reason, when ``create_graph=True`` reaches such an op)."""


class _GraphBackend(Backend):
    """The backend helpers the rules call (``backend_for(xp).sum``, ``.scatter_add``), on
    Tensors; anything else (array types, ``asarray`` for index lists) is the device's own."""

    name = "lucid-graph"
    int_matmul = True
    float_dtypes = frozenset({types.Float16, types.Float32, types.Float64})

    def __init__(self, xp: GraphXP) -> None:
        self.xp = xp
        self.device = xp.device

    def __getattr__(self, name: str) -> Any:
        return getattr(BACKENDS[self.device], name)

    def sum(self, array: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return array.sum(axis=axes, keepdims=keepdims)

    def scatter_add(self, shape: tuple[int, ...], dtype: Any, index: Any, values: Any) -> Any:
        return apply(_Scatter(shape, index), values)

    def assign(self, array: Any, index: Any, value: Any) -> Any:
        return apply(IndexPut(index), array, value)  # copy[index] = value, differentiable

    @property
    def linalg(self) -> Any:
        return _GraphLinalg(self.device)


class _GraphLinalg:
    """The matrix routines the rules call (``backend_for(xp).linalg.inv``), as Lucid's ops,
    so every matrix rule records a graph (the factorisations with several outputs -- qr,
    svd, eigh -- as their one packed op, cut into factors)."""

    def __init__(self, device: str) -> None:
        self.device = device

    def __getattr__(self, name: str) -> Any:
        raise NotTwiceDifferentiable(f"its backward uses linalg.{name}, which has no "
                                     "differentiable form yet")

    def inv(self, a: Tensor) -> Tensor:
        return apply(Inv(), a)

    def det(self, a: Tensor) -> Tensor:
        return apply(Det(), a)

    def slogdet(self, a: Tensor) -> tuple[Tensor, Tensor]:
        sign, _ = BACKENDS[self.device].linalg.slogdet(a._data)
        return Tensor._wrap(sign, self.device), apply(SLogDet(), a)

    def solve(self, a: Tensor, b: Tensor) -> Tensor:
        return apply(Solve(), a, b)

    def cholesky(self, a: Tensor) -> Tensor:
        return apply(Cholesky(), a)

    # the factorisations with several outputs: one op, its packed result cut into factors
    def qr(self, a: Tensor) -> tuple[Tensor, Tensor]:
        m, n = a.shape[-2], a.shape[-1]
        k = min(m, n)
        return tuple(_unpack(apply(QR(), a), [(m, k), (k, n)]))

    def svd(self, a: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
        m, n = a.shape[-2], a.shape[-1]
        k = min(m, n)
        shapes = [(m, m), (k,), (n, n)] if full_matrices else [(m, k), (k,), (k, n)]
        return tuple(_unpack(apply(SVD(full_matrices), a), shapes))

    def eigh(self, a: Tensor, uplo: str) -> tuple[Tensor, Tensor]:
        n = a.shape[-1]
        return tuple(_unpack(apply(Eigh(uplo), a), [(n,), (n, n)]))


class _Scatter(Op):
    """dx = zeros of x's shape, with g added at ``index``: the backward of ``x[index]`` as an
    op of its own, so that it too can be differentiated (its backward reads ``g[index]``)."""

    inputs = ("g",)
    saves_inputs = False

    def __init__(self, shape: tuple[int, ...], index: Any) -> None:
        self.shape = shape
        # index arrays that a rule built with this namespace (``xp.arange``) are Tensors: the
        # scatter indexes the device's arrays with their data (MLX takes no other type)
        parts = index if isinstance(index, tuple) else (index,)
        parts = tuple(p._data if isinstance(p, Tensor) else p for p in parts)
        self.index = parts if isinstance(index, tuple) else parts[0]

    def forward(self, xp, g):
        if isinstance(g, Tensor):  # differentiated once more: the same op, recorded
            return apply(_Scatter(self.shape, self.index), g)
        return backend_for(xp).scatter_add(self.shape, g.dtype, self.index, g)

    def backward(self, xp, g):
        return (g[self.index],)

    def forward_flops(self, out, g):
        return g.size

    def backward_flops(self, out, g):
        return 0


_Scatter.name = "indexing backward"  # named after the class is made: not a public op


class GraphXP:
    """``xp`` for backward rules that build graphs: Lucid's functions under NumPy's names, and
    creation functions that make tensors on one device."""

    def __init__(self, device: str) -> None:
        self.device = device
        BY_XP[self] = _GraphBackend(self)

    def __getattr__(self, name: str) -> Any:
        fn = FUNCTIONS.get(name)
        if fn is not None:
            return fn
        value = getattr(BACKENDS[self.device].xp, name, None)
        if value is not None and not callable(value) or _is_dtype(value):  # xp.float32 ...
            return value
        raise NotTwiceDifferentiable(f"its backward rule uses xp.{name}, which Lucid cannot "
                                     "record as a graph yet")

    def __hash__(self) -> int:
        return hash(("lucid-graph", self.device))

    # creation on this namespace's device (constants: no gradient flows into them)
    def _dtype(self, dtype: Any) -> Any:
        if dtype is None:
            return None
        if isinstance(dtype, types.Numeric) or not _is_dtype(dtype):
            return types.as_numeric(dtype).parse(self.device)
        return dtype

    def _make(self, array: Any) -> Tensor:
        return Tensor._wrap(array, self.device)

    def zeros(self, shape: Any, dtype: Any = None) -> Tensor:
        xp = BACKENDS[self.device].xp
        dtype = self._dtype(dtype)
        return self._make(xp.zeros(_shape(shape)) if dtype is None else
                          xp.zeros(_shape(shape), dtype=dtype))

    def ones(self, shape: Any, dtype: Any = None) -> Tensor:
        xp = BACKENDS[self.device].xp
        dtype = self._dtype(dtype)
        return self._make(xp.ones(_shape(shape)) if dtype is None else
                          xp.ones(_shape(shape), dtype=dtype))

    def full(self, shape: Any, value: Any, dtype: Any = None) -> Tensor:
        xp = BACKENDS[self.device].xp
        return self._make(xp.full(_shape(shape), value, dtype=self._dtype(dtype)))

    def eye(self, n: int, m: int | None = None, k: int = 0, dtype: Any = None) -> Tensor:
        return self._make(BACKENDS[self.device].xp.eye(n, m, k=k, dtype=self._dtype(dtype)))

    def arange(self, *args: Any, dtype: Any = None) -> Tensor:
        return self._make(BACKENDS[self.device].xp.arange(*args, dtype=self._dtype(dtype)))

    def array(self, value: Any, dtype: Any = None) -> Tensor:
        return self._make(BACKENDS[self.device].xp.array(value, dtype=self._dtype(dtype)))

    def zeros_like(self, a: Any, dtype: Any = None) -> Tensor:
        return self.zeros(a.shape, dtype if dtype is not None else a.dtype)

    def ones_like(self, a: Any, dtype: Any = None) -> Tensor:
        return self.ones(a.shape, dtype if dtype is not None else a.dtype)

    # NumPy's functions that Lucid spells with other ops
    def expm1(self, x: Tensor) -> Tensor:
        return FUNCTIONS["exp"](x) - 1.0

    def log1p(self, x: Tensor) -> Tensor:
        return FUNCTIONS["log"](x + 1.0)

    def floor_divide(self, a: Any, b: Any) -> Tensor:
        return FUNCTIONS["floordiv"](a, b)

    def fmod(self, a: Any, b: Any) -> Tensor:
        return a - b * FUNCTIONS["sign"](a / b) * FUNCTIONS["floor"](FUNCTIONS["abs"](a / b))

    def take(self, a: Tensor, index: Any, axis: int | None = None) -> Tensor:
        if axis is None:
            return a.reshape(-1)[_raw(index)]
        return a[(slice(None),) * (axis % a.ndim) + (_raw(index),)]

    def take_along_axis(self, a: Tensor, index: Any, axis: int) -> Tensor:
        return FUNCTIONS["gather"](a, axis, _raw(index))


class GraphRules:
    """How the walk runs with ``create_graph=True`` (see ``lucid.engine.walk.run_backward``):
    each node's rule on Lucid ops, so the gradients are Tensors recorded as a graph; parts and
    factors written out as Lucid ops; the graph kept."""

    def __init__(self) -> None:
        self.grad_mode = enable_grad()

    def __enter__(self) -> None:  # ``with rules:`` runs the walk recording its own graph
        self.grad_mode.__enter__()

    def __exit__(self, *exc: object) -> None:
        self.grad_mode.__exit__(*exc)

    def seed(self, root: Tensor, seed: Any) -> Tensor:
        return _as_tensor(seed, root.device)

    def take(self, node: Tensor) -> Tensor:
        if node._hooks and node._op is not None:
            raise RuntimeError(
                f"backward(create_graph=True): a tensor of shape {fmt(node.shape)} has a "
                "hook; hooks see arrays, not graphs. Remove the hook (handle.remove()) "
                "or differentiate without create_graph."
            )
        g, node._g = node._g, None
        return g

    def backward(self, node: Tensor) -> tuple[Tensor, tuple[Tensor | None, ...]]:
        """``node``'s gradient ``g`` (:meth:`take`) and its backward rule as a graph: its op's
        forward re-run on the input Tensors (the saved values, recomputed as Tensors), then
        its backward on ``g``."""
        g = self.take(node)
        op: Op = node._op
        if op.versions is None:
            raise released_error(node)
        xp = _namespace(node.device)
        shadow = copy.copy(op)
        shadow.__dict__ = dict(op.__dict__)
        try:
            shadow.forward(xp, *node._prev)
            grads = shadow.backward(xp, g)
        except NotTwiceDifferentiable as exc:
            raise NotTwiceDifferentiable(
                f"{op.name}: create_graph=True needs a backward rule made of Lucid ops, but "
                f"{exc}. Differentiate this op only once (create_graph=False)."
            ) from None
        except (AttributeError, TypeError) as exc:
            raise NotTwiceDifferentiable(
                f"{op.name}: its backward rule cannot be recorded as a graph yet "
                f"({type(exc).__name__}: {exc}). Differentiate this op only once "
                "(create_graph=False)."
            ) from exc
        return g, grads

    def send(self, node: Tensor, parent: Tensor, pg: Any, g: Tensor) -> None:
        """Add ``pg`` to ``parent``'s total as a Tensor of its shape and dtype (parts and
        factors written out with Lucid ops, broadcast gradients summed down)."""
        if isinstance(pg, KINDS):
            pg = pg.dense(_namespace(parent.device))
        pg = _as_tensor(pg, parent.device)
        if pg.shape != parent.shape:
            if not (node._op.broadcasts and broadcasts_to(parent.shape, pg.shape)):
                raise shape_error(node._op, pg, parent)
            pg = sum_to(_namespace(parent.device), pg, parent.shape)
        if pg.dtype != parent.dtype:
            pg = pg.astype(parent.dtype)
        total = parent._g
        parent._g = pg if total is None else total + pg

    def keep(self, node: Tensor, g: Tensor) -> Tensor:
        """A Tensor with its graph, as PyTorch leaves it."""
        return g if node.grad is None else node.grad + g


def _as_tensor(array: Any, device: str) -> Tensor:
    return array if isinstance(array, Tensor) else Tensor._wrap(array, device)


def _is_dtype(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, np.generic) or \
        type(value).__name__ == "Dtype"  # numpy's scalar types, MLX's dtypes


def _shape(shape: Any) -> tuple[int, ...]:
    return (shape,) if isinstance(shape, int) else tuple(shape)


def _raw(index: Any) -> Any:
    return index._data if isinstance(index, Tensor) else index


_NAMESPACES: dict[str, GraphXP] = {}


def _namespace(device: str) -> GraphXP:
    ns = _NAMESPACES.get(device)
    if ns is None:
        ns = _NAMESPACES[device] = GraphXP(device)
    return ns

