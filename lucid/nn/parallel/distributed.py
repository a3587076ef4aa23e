"""``DistributedDataParallel``: one model per process, each on its shard of every batch, kept
identical by averaging their gradients.

Why averaging is right: with a loss that is the mean over a batch of B samples split into N
equal shards,

    L = (1/B) Σ_i ℓ_i = (1/N) Σ_r L_r,      L_r = (N/B) Σ_{i in shard r} ℓ_i,

so dL/dw = (1/N) Σ_r dL_r/dw: the full-batch gradient is the mean of the ranks' gradients.
Every rank starts from the same weights (rank 0's, broadcast when the model is wrapped), takes
the same averaged gradient and the same optimizer step, so the weights stay identical without
ever being sent again.

The averaging happens during ``backward()``: each parameter's gradient, once complete, is
marked ready; when every parameter of a *bucket* is ready the bucket's gradients travel as one
flat array in one all-reduce.  Buckets hold about ``bucket_cap_mb`` of gradients, so a step
costs a few all-reduces rather than one per parameter (PyTorch's design; it fills them in
reverse registration order because backward reaches the last layers first).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import lucid.distributed as dist
from lucid.backends import BACKENDS
from lucid.distributed.collectives import broadcast_unchecked, reduce_array
from lucid.engine.mode import grad_enabled
from lucid.nn.module import Module
from lucid.ops.base import Op, apply
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["DistributedDataParallel", "GradientSync"]


class GradientSync(Op):
    """y = x: marks, in the graph, where a DDP step's gradient all-reduce begins.

    Forward and backward pass values through unchanged (dy/dx = 1).  Backward through it tells
    the model's reducer that this backward must average the gradients, which it then does in
    buckets as they become ready.  Counted as 0 FLOPs and, backward, as the bytes this rank
    sends for all the buckets (2(N-1)/N of their size each, the ring).
    """

    name = "gradient_sync"
    function = None
    saves_inputs = False
    communicates = True

    def __init__(self, reducer: _Reducer | None = None) -> None:
        self.reducer = reducer
        self.label = reducer.describe() if reducer is not None else ""

    def forward(self, xp, x):
        return x

    def backward(self, xp, g):
        if self.reducer is not None:
            self.reducer.armed = True
        return (g,)

    def forward_flops(self, out, x):
        return 0

    def backward_flops(self, out, x):
        return 0

    def bytes_rule(self, out, x):
        return 0, (self.reducer.bytes_sent() if self.reducer is not None else 0)

    def traffic(self) -> str:
        """What backward through it moves, in words (drawings label the node with it)."""
        return self.__dict__.get("label") or "all-reduce of gradients"


class _Bucket:
    """Parameters whose gradients travel together, as one flat array."""

    def __init__(self, params: list[Any]) -> None:
        self.params = params
        self.nbytes = sum(p._data.nbytes for p in params)
        self.ready: set[int] = set()
        self.totals: dict[int, Any] = {}  # id(param) -> its gradient total of this backward


class _Reducer:
    """Averages gradients across ranks in buckets as backward completes them."""

    def __init__(self, params: list[Any], cap_bytes: int) -> None:
        self.buckets = _plan_buckets(params, cap_bytes)
        self.bucket_of = {id(p): b for b in self.buckets for p in b.params}
        self.armed = False
        self.all_reduces = 0  # counted over the model's life: a test and a notebook read it

    def describe(self) -> str:
        n, size = len(self.buckets), sum(b.nbytes for b in self.buckets)
        return f"all-reduce of gradients: {size:,} bytes in {n} bucket{'s' if n != 1 else ''}"

    def bytes_reduced(self) -> int:
        return sum(b.nbytes for b in self.buckets)

    def bytes_sent(self) -> int:
        n = dist.get_world_size()
        return sum(dist.ring_bytes(b.nbytes, n) for b in self.buckets)

    def on_gradient(self, p: Any, g: Tensor) -> Any:
        """A parameter's gradient of this backward is complete (a hook on the parameter).

        The hook returns what ``p.grad`` will hold: the total (gradients accumulated under
        ``no_sync`` included, so the bucket averages what ``.grad`` will hold), in an array of
        the reducer's own.  The walk hands every leaf's gradient out only after all hooks ran,
        so when a bucket's last parameter arrives the bucket is averaged with one all-reduce
        and every member's array is overwritten in place with its average.
        """
        if not self.armed:
            return None
        total = g._data if p.grad is None else p.grad + g._data
        total = BACKENDS[p.device].copy(total)  # written into in place: it must be ours
        bucket = self.bucket_of[id(p)]
        bucket.ready.add(id(p))
        bucket.totals[id(p)] = total
        p.grad = None  # (the returned total replaces it, not adds to it)
        if len(bucket.ready) == len(bucket.params):
            self._reduce(bucket, p)
            if all(len(b.ready) == len(b.params) for b in self.buckets):
                self._finish()
        return total

    def _reduce(self, bucket: _Bucket, last: Any) -> None:
        """One all-reduce (mean) of the bucket's gradients, flattened into one array, written
        back into each member's total."""
        xp = BACKENDS[last.device].xp
        totals = [bucket.totals[id(q)] for q in bucket.params]
        flat = xp.concatenate([xp.reshape(t, (-1,)) for t in totals])
        self.all_reduces += 1
        flat = reduce_array("DistributedDataParallel: all_reduce of gradients", flat, "mean")
        start = 0
        for q, total in zip(bucket.params, totals):
            total[...] = xp.reshape(flat[start:start + q.size], q.shape)
            start += q.size
        bucket.totals.clear()

    def _finish(self) -> None:
        self.armed = False
        for b in self.buckets:
            b.ready.clear()

    def check_finished(self) -> None:
        """Before a new forward: the last synchronised backward must have sent every bucket."""
        if not self.armed:
            return
        missing = [q.name or "?" for b in self.buckets for q in b.params if id(q) not in b.ready]
        self._finish()
        raise RuntimeError(
            "DistributedDataParallel: the last backward() gave no gradient to "
            f"{len(missing)} parameter(s) ({', '.join(missing[:5])}), so their bucket was never "
            "averaged across ranks. Use every parameter in forward, or set requires_grad=False "
            "on those you do not train before wrapping the model."
        )


def _plan_buckets(params: list[Any], cap_bytes: int) -> list[_Bucket]:
    """Reverse registration order, a new bucket when the cap, the device or the dtype says."""
    buckets, current = [], []
    for p in reversed(params):
        if current and (sum(q._data.nbytes for q in current) + p._data.nbytes > cap_bytes
                        or p.device != current[0].device or p.dtype != current[0].dtype):
            buckets.append(_Bucket(current))
            current = []
        current.append(p)
    if current:
        buckets.append(_Bucket(current))
    return buckets


class DistributedDataParallel(Module):
    """``DistributedDataParallel(module, bucket_cap_mb=25.0, broadcast_buffers=True)``:
    data-parallel training of ``module``, as PyTorch's.

    * Wrapping checks that every rank built the same model (the first parameter or buffer
      whose name, shape or dtype differs is named, on every rank), then copies rank 0's
      parameters and buffers to all ranks.
    * Calling it runs ``module``; the ``backward()`` that follows averages the gradients over
      the ranks, in buckets of about ``bucket_cap_mb`` MB (one all-reduce each).
    * ``with model.no_sync():`` runs forward and backward without averaging: gradients
      accumulate locally, and the first synchronised backward after averages the total
      (gradient accumulation over micro-batches).
    * ``broadcast_buffers``: rank 0's buffers (BatchNorm's running statistics) are copied to
      every rank before each forward.  BatchNorm still normalises with each rank's own batch
      statistics, as in PyTorch without ``SyncBatchNorm``.
    * ``.module`` is the wrapped model.  ``state_dict()`` has the module's own keys (no
      ``module.`` prefix); ``load_state_dict`` takes them with or without that prefix.

    ``device_ids`` and ``output_device`` are accepted for PyTorch code and must be None or
    name one device: each process drives the one MLX device it has.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 broadcast_buffers: bool = True, bucket_cap_mb: float = 25.0,
                 find_unused_parameters: bool = False) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: expected an nn.Module, got "
                            f"{type(module).__name__}")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("DistributedDataParallel: one device per process; start one "
                             "process per device with the launcher instead of device_ids="
                             f"{device_ids!r}")
        if find_unused_parameters:
            raise NotImplementedError("DistributedDataParallel: find_unused_parameters=True "
                                      "is not supported; set requires_grad=False on the "
                                      "parameters a step does not use")
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be > 0, got "
                             f"{bucket_cap_mb!r}")
        self.module = module
        self.broadcast_buffers = bool(broadcast_buffers)
        _check_same_model(module)
        for _, t in _named_tensors(module):  # (shapes checked just above, once)
            broadcast_unchecked(t, src=0)
        params = [p for p in module.parameters() if p.requires_grad]
        for name, p in module.named_parameters():
            if p.name is None:
                p.name = name
        self.__dict__["reducer"] = _Reducer(params, int(bucket_cap_mb * 2**20))
        self.__dict__["_sync"] = True
        self.__dict__["_hooks_of"] = [p.register_hook(self._hook_for(p)) for p in params]

    def _hook_for(self, p: Any) -> Any:
        reducer = self.reducer

        def average_across_ranks(g: Tensor) -> Any:
            return reducer.on_gradient(p, g)

        return average_across_ranks

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self.reducer.check_finished()
        if self.broadcast_buffers and dist.get_world_size() > 1:
            for b in self.module.buffers():
                broadcast_unchecked(b, src=0)
        out = self.module(*args, **kwargs)
        if self._sync and grad_enabled():
            out = _mark(out, self.reducer)
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forward and backward inside this block leave gradients un-averaged (they
        accumulate); the next synchronised backward averages the accumulated total."""
        old = self._sync
        self.__dict__["_sync"] = False
        try:
            yield
        finally:
            self.__dict__["_sync"] = old

    def bytes_per_step(self) -> dict[str, int]:
        """What one synchronised step moves: the gradient bytes all-reduced, the number of
        all-reduces (buckets) and the bytes this rank sends for them over the ring."""
        r = self.reducer
        return {"bytes_all_reduced": r.bytes_reduced(), "all_reduces": len(r.buckets),
                "bytes_sent": r.bytes_sent()}

    def state_dict(self, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        return self.module.state_dict(destination, prefix, keep_vars)

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> Any:
        """The module's state dict, with or without PyTorch's ``module.`` prefix."""
        if state_dict and all(k.startswith("module.") for k in state_dict):
            state_dict = {k[len("module."):]: v for k, v in state_dict.items()}
        return self.module.load_state_dict(state_dict, strict)

    def extra_repr(self) -> str:
        return f"world_size={dist.get_world_size()}, {self.reducer.describe()}"


def _mark(out: Any, reducer: _Reducer) -> Any:
    """The output passed through :class:`GradientSync` (each tensor of a tuple output)."""
    if isinstance(out, Tensor):
        return apply(GradientSync(reducer), out) if out.requires_grad else out
    if isinstance(out, tuple):
        return tuple(_mark(o, reducer) for o in out)
    return out


def _named_tensors(module: Module) -> list[tuple[str, Tensor]]:
    return [*module.named_parameters(), *module.named_buffers()]


def _entry(name: str, t: Tensor) -> str:
    return f"{name!r} {fmt(t.shape)} {t.dtype.name}"


def _check_same_model(module: Module) -> None:
    """Every rank must hold the same parameters and buffers (names, shapes, dtypes): compare a
    checksum of each entry across ranks, and name the first that differs."""
    if dist.get_world_size() == 1:
        return
    entries = [_entry(n, t) for n, t in _named_tensors(module)]
    sums = [zlib.crc32(e.encode()) for e in entries]
    longest = int(reduce_array("DistributedDataParallel: checking the model",
                               np.array([len(sums)], dtype=np.int64), "max")[0])
    mine = np.full(longest + 1, -1, dtype=np.int64)
    mine[0], mine[1:len(sums) + 1] = len(sums), sums
    table = _gather("DistributedDataParallel: checking the model", mine)
    for i in range(1, longest + 1):
        column = table[:, i]
        if (column != column[0]).any():
            rank = int(np.argmax(column != column[0]))
            texts = _gather_text(entries[i - 1] if i <= len(entries) else "nothing")
            raise RuntimeError(
                f"DistributedDataParallel: rank {rank} built a different model from rank 0's: "
                f"entry {i - 1} of the parameters and buffers is {texts[0]} on rank 0 but "
                f"{texts[rank]} on rank {rank}. Every rank must build the same model.")


def _gather(what: str, row: np.ndarray) -> np.ndarray:
    from lucid.distributed.world import transfer

    return transfer(what, row[None, :], lambda mx, a: mx.distributed.all_gather(a))


def _gather_text(text: str, width: int = 256) -> list[str]:
    raw = np.zeros(width, dtype=np.uint8)
    data = text.encode()[:width]
    raw[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    table = _gather("DistributedDataParallel: checking the model", raw)
    return [bytes(r).rstrip(b"\0").decode(errors="replace") for r in table]
