"""Collectives on Tensors: ``all_reduce`` and ``all_gather`` (differentiable ops), ``broadcast``.

Every rank calls the same collective with a tensor of the same shape and dtype; every rank
gets the same answer.  Two of them are ops with a backward rule, and the rule is itself a
collective -- the adjoint of the forward one:

* ``y = all_reduce(x)``: every rank gets y = Σ_s x_s.  Think of the loss as the sum of the
  ranks' losses, L = Σ_r L_r(y_r); then  dL/dx_s = Σ_r dL_r/dy_r : the gradient of an
  all-reduce is the all-reduce of the gradients.
* ``y = all_gather(x)``: every rank gets [x_0; x_1; ...; x_{N-1}] (rows stacked).  Rank s's
  rows appear on every rank, so  dL/dx_s = Σ_r (g_r)[rows of s] : all-reduce the gradient,
  keep your own rows.

Their cost is not arithmetic but traffic, so under ``count_flops()`` they count 0 FLOPs and
record ``bytes_sent``: what this rank sends over the wire with MLX's ring algorithms --
2(N-1)/N of the data for an all-reduce (a reduce-scatter, then an all-gather), (N-1) times the
input for an all-gather.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends import BACKENDS
from lucid.distributed import world
from lucid.ops.base import Op, apply
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

__all__ = ["AllGather", "AllReduce", "all_gather", "all_reduce", "broadcast", "ring_bytes"]

REDUCE_OPS = ("sum", "mean", "max", "min")


def ring_bytes(nbytes: int, world_size: int) -> int:
    """Bytes one rank sends in a ring all-reduce of ``nbytes``: 2(N-1)/N of them.

    The ring cuts the data into N chunks.  N-1 steps pass chunks on and add them up
    (reduce-scatter: afterwards each rank holds one chunk fully summed), N-1 more pass the
    summed chunks on (all-gather).  Each step sends one chunk, nbytes/N, so each rank sends
    2(N-1)·nbytes/N in all -- nearly 2·nbytes however many ranks there are.
    """
    return 2 * (world_size - 1) * nbytes // world_size


def _sum(mx: Any, a: Any) -> Any:
    return mx.distributed.all_sum(a)


_COLLECTIVE = {"sum": _sum, "mean": _sum,
               "max": lambda mx, a: mx.distributed.all_max(a),
               "min": lambda mx, a: mx.distributed.all_min(a)}


def reduce_array(what: str, a: Any, op: str = "sum") -> Any:
    """All-reduce one backend array (NumPy or MLX): the same on every rank afterwards."""
    if world.get_world_size() == 1:
        return a.copy() if isinstance(a, np.ndarray) else a
    out = world.transfer(what, a, _COLLECTIVE[op])
    return out / world.get_world_size() if op == "mean" else out


def _gather_array(what: str, a: Any) -> Any:
    if world.get_world_size() == 1:
        return a.copy() if isinstance(a, np.ndarray) else a
    return world.transfer(what, a, lambda mx, x: mx.distributed.all_gather(x))


def _check_agreement(op: Op, x: Any) -> None:
    """Every rank must bring the same shape and dtype: compare them (one small all-gather)
    before the real transfer, which would otherwise hang or mix up data."""
    if world.get_world_size() == 1:
        return
    mine = _signature(x)
    table = _gather_array(f"{op.name} (checking shapes)", mine[None, :])
    for rank, theirs in enumerate(table):
        if not np.array_equal(theirs, mine):
            raise op.error(
                f"rank {world.get_rank()} has {_describe(mine)} but rank {rank} has "
                f"{_describe(theirs)}; every rank must pass a tensor of the same shape and "
                "dtype", ValueError)


_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
           "bfloat16", "complex64")


def _signature(x: Any) -> np.ndarray:
    """(dtype code, ndim, shape padded to 8 axes) as an int64 row."""
    dims = list(x.shape)[:8] + [0] * (8 - min(x.ndim, 8))
    name = str(x.dtype).replace("mlx.core.", "")
    code = _DTYPES.index(name) if name in _DTYPES else -1
    return np.array([code, x.ndim, *dims], dtype=np.int64)


def _describe(sig: np.ndarray) -> str:
    code, ndim = int(sig[0]), int(sig[1])
    dtype = _DTYPES[code] if code >= 0 else "another dtype"
    return f"{dtype} {fmt(tuple(int(d) for d in sig[2:2 + ndim]))}"


def _nbytes(x: Any) -> int:
    """The size of an array -- or of a Tensor's data (backward with ``create_graph=True``)."""
    return int((x._data if isinstance(x, Tensor) else x).nbytes)


def _reduce(op: Op, a: Any, how: str, check: bool = False) -> Any:
    """All-reduce an array -- or, when backward runs on Tensors (``create_graph=True``), a
    Tensor, through the recorded op, so that second derivatives see it too.  ``check``: first
    make sure every rank brings the same shape (backward's gradients have the forward's)."""
    if isinstance(a, Tensor):
        return apply(AllReduce(how), a)
    if check:
        _check_agreement(op, a)
    return reduce_array(f"{op.name}({how})", a, how)


class AllReduce(Op):
    """y = x_0 ⊕ x_1 ⊕ ... ⊕ x_{N-1} on every rank, ⊕ one of sum, mean, max, min.

    Backward: the loss is the sum of the ranks' losses, so dL/dx_s = Σ_r g_r (sum);
    (1/N) Σ_r g_r (mean); for max/min the summed gradient goes to the ranks whose x_s equals
    y, shared equally among ties.  0 FLOPs; bytes sent 2(N-1)/N · x.nbytes (the ring), the
    same again in backward.
    """

    name = "all_reduce"
    function = None  # spelled lucid.distributed.all_reduce(t, op=...), below
    saves_inputs = False
    communicates = True

    def __init__(self, op: str = "sum") -> None:
        if op not in REDUCE_OPS:
            raise self.error(f"op must be one of {REDUCE_OPS}, got {op!r}")
        self.op = op

    def forward(self, xp, x):
        kind = to_numeric_type(x.dtype)
        if self.op == "mean" and not (kind.is_floating_point or kind.is_complex):
            raise self.error(f"op='mean' needs a float tensor, got {kind.name} "
                             f"{fmt(tuple(x.shape))}; use op='sum' or cast with "
                             ".astype(lucid.Float32)", TypeError)
        self.nbytes = _nbytes(x)
        y = _reduce(self, x, self.op, check=True)
        if self.op in ("max", "min"):
            self.hit = x == y  # which entries this rank supplied
        return y

    def backward(self, xp, g):
        total = _reduce(self, g, "sum")
        if self.op == "sum":
            return (total,)
        if self.op == "mean":
            return (total / world.get_world_size(),)
        hit = self.hit.astype(g.dtype)
        return (total * hit / _reduce(self, hit, "sum"),)

    def forward_flops(self, out, x):
        return 0  # the work is traffic: see bytes_rule

    def backward_flops(self, out, x):
        return 0

    def bytes_rule(self, out, x):
        n = world.get_world_size()
        return ring_bytes(x.nbytes, n), ring_bytes(x.nbytes, n)

    def traffic(self) -> str:
        """What it moves, in words (drawings label the node with it)."""
        if "nbytes" not in self.__dict__:  # released after backward
            return "all-reduce"
        return f"all-reduce ({self.op}) of {self.nbytes:,} bytes"


class AllGather(Op):
    """y = [x_0; x_1; ...; x_{N-1}]: every rank's x stacked along axis 0, on every rank.

    Backward: rank s's rows reach every rank, so dL/dx_s = Σ_r g_r[s·n : (s+1)·n] (an
    all-reduce of the gradient, then this rank's rows).  0 FLOPs; bytes sent (N-1)·x.nbytes
    forward, 2(N-1)·x.nbytes backward (the all-reduce of the N-times larger gradient).
    """

    name = "all_gather"
    function = None
    saves_inputs = False
    communicates = True

    def forward(self, xp, x):
        if x.ndim == 0:
            raise self.error("input () is a 0-d tensor; all_gather stacks along axis 0. "
                             "Reshape it to (1,) first.")
        self.rows, self.nbytes = x.shape[0], _nbytes(x)
        if isinstance(x, Tensor):  # create_graph: the op itself, recorded
            return all_gather(x)
        _check_agreement(self, x)
        return _gather_array("all_gather", x)

    def backward(self, xp, g):
        total = _reduce(self, g, "sum")
        start = world.get_rank() * self.rows
        return (total[start:start + self.rows],)

    def forward_flops(self, out, x):
        return 0

    def backward_flops(self, out, x):
        return 0

    def bytes_rule(self, out, x):
        n = world.get_world_size()
        return (n - 1) * x.nbytes, ring_bytes(out.nbytes, n)

    def traffic(self) -> str:
        if "nbytes" not in self.__dict__:
            return "all-gather"
        return f"all-gather of {self.nbytes:,} bytes from each rank"


def all_reduce(t: Any, op: str = "sum") -> Tensor:
    """The reduction of ``t`` over every rank (``op``: "sum", "mean", "max" or "min"), the
    same tensor on every rank; differentiable (see :class:`AllReduce`).

    As ``torch.distributed.all_reduce`` does, ``t`` itself takes the result when it needs no
    gradient (in place, so PyTorch code that ignores the return value keeps working); a
    tensor that requires grad is left as it is, and the result is returned.
    """
    if not isinstance(op, str):  # torch.distributed.ReduceOp.SUM and the like
        op = str(getattr(op, "name", op)).lower().replace("avg", "mean")
    out = apply(AllReduce(op), t)
    _write_back(t, out)
    return out


def all_gather(t: Any, *rest: Any) -> Tensor:
    """Every rank's ``t`` stacked along axis 0 ((N·n, ...) from (n, ...)), on every rank;
    differentiable (see :class:`AllGather`)."""
    if isinstance(t, list):
        raise TypeError("all_gather(tensor_list, tensor) is PyTorch's in-place form; Lucid's "
                        "returns the gathered tensor: out = all_gather(tensor), rank r's rows "
                        "in out[r*n:(r+1)*n]")
    if rest:
        raise TypeError(f"all_gather takes one tensor, got {1 + len(rest)} arguments")
    return apply(AllGather(), t)


def broadcast(t: Tensor, src: int = 0) -> Tensor:
    """Rank ``src``'s values of ``t`` on every rank, written into ``t`` in place (as
    ``torch.distributed.broadcast``); returns ``t``.  Not differentiable.

    It is an all-reduce sum in which every rank but ``src`` brings zeros: x + 0 = x exactly,
    so the values arrive bit for bit (a -0.0 arrives as 0.0).
    """
    if not isinstance(t, Tensor):
        raise TypeError(f"broadcast: expected a Tensor, got {type(t).__name__}")
    size = world.get_world_size()
    if not (isinstance(src, int) and 0 <= src < size):
        raise ValueError(f"broadcast: src must be a rank in 0..{size - 1}, got {src!r}")
    if size == 1:
        return t
    _check_agreement(_BROADCAST, t._data)
    return broadcast_unchecked(t, src)


def broadcast_unchecked(t: Tensor, src: int = 0) -> Tensor:
    """:func:`broadcast` for callers that know every rank holds the same shape and dtype
    (``DistributedDataParallel`` checked the whole model once): one all-reduce, no check."""
    if world.get_world_size() == 1:
        return t
    mine = t._data if world.get_rank() == src else _backend(t).xp.zeros_like(t._data)
    t._data = reduce_array(f"broadcast(src={src})", mine, "sum")
    t._version += 1
    return t


class _Named:
    name = "broadcast"

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(f"broadcast: {message}")


_BROADCAST: Any = _Named()


def _backend(t: Tensor) -> Any:
    return BACKENDS[t.device]


def _write_back(t: Any, out: Tensor) -> None:
    if isinstance(t, Tensor) and not t.requires_grad and t.shape == out.shape:
        t._data = _backend(t).copy(out._data)  # t's own memory: a later t.add_() leaves out be
        t._version += 1
