"""DataLoader worker processes: ``DataLoader(ds, batch_size=64, num_workers=2)``.

How it works (PyTorch's design, in a few dozen lines):

* The main process starts ``num_workers`` processes.  Each has its own *index queue*; all share
  one *result queue*.
* The main process sends each batch's indices, numbered, to the workers in turn, keeping at
  most ``prefetch_factor * num_workers`` batches in flight.
* A worker makes the batch (``loader.fetch(indices)``: read, transform, collate) and sends it
  back as plain NumPy arrays (a Tensor travels as its array, its dtype and device and is
  rebuilt here); multiprocessing's own transport carries them.
* Batches can come back out of order (one worker is faster); the main process holds early
  ones until their turn, so the loader yields them in the sampler's order.
* An exception in a worker comes back as its type and traceback and is raised here:
  ``ValueError: Caught ValueError in DataLoader worker process 1. Original Traceback ...``.

Every worker is seeded with ``base_seed + worker_id`` (``lucid.random``, NumPy's legacy global
generator and Python's ``random``), where ``base_seed`` is drawn from ``lucid.random`` once
per pool: random augmentations differ between workers and repeat under
``lucid.random.seed(n)``.  :func:`get_worker_info` tells code running in a worker which one
it is (``None`` in the main process).
"""

from __future__ import annotations

import itertools
import multiprocessing
import queue
import random
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from lucid import random as lucid_random
from lucid.data.sampler import _numpy_rng
from lucid.tensor import Tensor

__all__ = ["WorkerInfo", "get_worker_info", "WorkerPool"]

_TENSOR = "\0lucid.Tensor"  # marks a Tensor sent as (marker, array, dtype name, device)


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker process."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_WORKER_INFO: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker: its id, the number of workers, its seed and its copy of the
    dataset (to split an iterable dataset between workers).  In the main process: None."""
    return _WORKER_INFO


# --------------------------------------------------------------------------------------------
# batches as NumPy arrays, and back


def to_arrays(batch: Any) -> Any:
    """``batch`` with every Tensor replaced by ``(marker, array, dtype name, device)``."""
    if isinstance(batch, Tensor):
        return (_TENSOR, batch.numpy(), batch.dtype.name, batch.device)
    if isinstance(batch, tuple):
        return tuple(to_arrays(b) for b in batch)
    if isinstance(batch, list):
        return [to_arrays(b) for b in batch]
    if isinstance(batch, dict):
        return {k: to_arrays(v) for k, v in batch.items()}
    return batch


def from_arrays(batch: Any) -> Any:
    """The inverse of :func:`to_arrays`: the Tensors rebuilt on their devices."""
    if isinstance(batch, tuple):
        if len(batch) == 4 and isinstance(batch[0], str) and batch[0] == _TENSOR:
            _, array, dtype, device = batch
            from lucid import types

            return Tensor(array, dtype=getattr(types, dtype, None), device=device)
        return tuple(from_arrays(b) for b in batch)
    if isinstance(batch, list):
        return [from_arrays(b) for b in batch]
    if isinstance(batch, dict):
        return {k: from_arrays(v) for k, v in batch.items()}
    return batch


# --------------------------------------------------------------------------------------------
# the worker's side


def _worker_loop(loader: Any, worker_id: int, seed: int, index_queue: Any,
                 result_queue: Any) -> None:
    """Seed, run ``worker_init_fn``, then turn index lists into batches until told to stop."""
    global _WORKER_INFO
    lucid_random.seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
    _WORKER_INFO = WorkerInfo(worker_id, loader.num_workers, seed, loader.dataset)
    init_error = None
    if loader.worker_init_fn is not None:
        try:
            loader.worker_init_fn(worker_id)
        except Exception as exc:  # reported with the first batch this worker is given
            init_error = _failure(exc, worker_id)
    while True:
        task = index_queue.get()
        if task is None:  # the main process is done with us
            return
        epoch, number, indices = task
        if init_error is not None:
            result_queue.put((epoch, number, None, init_error))
            continue
        try:
            result_queue.put((epoch, number, to_arrays(loader.fetch(indices)), None))
        except Exception as exc:
            result_queue.put((epoch, number, None, _failure(exc, worker_id)))


def _failure(exc: BaseException, worker_id: int) -> tuple[type, str]:
    """The exception's type and a message carrying the worker's traceback."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    message = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n"
               f"Original {tb}")
    return type(exc), message


def _raise(failure: tuple[type, str]) -> None:
    kind, message = failure
    try:
        exc = kind(message)
    except Exception:  # an exception class that takes other arguments
        exc = RuntimeError(message)
    raise exc


# --------------------------------------------------------------------------------------------
# the main process's side


def _context(loader: Any) -> Any:
    ctx = loader.multiprocessing_context
    if ctx is None:  # fork where the platform has it: the dataset is inherited, not copied
        methods = multiprocessing.get_all_start_methods()
        return multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    if isinstance(ctx, str):
        return multiprocessing.get_context(ctx)
    return ctx


class WorkerPool:
    """``num_workers`` processes making batches for one DataLoader."""

    def __init__(self, loader: Any) -> None:
        ctx = _context(loader)
        # one draw per pool, from the loader's generator or lucid.random's stream
        base_seed = int(_numpy_rng(loader.generator).integers(0, 2**62))
        self.result_queue = ctx.Queue()
        self.index_queues = [ctx.Queue() for _ in range(loader.num_workers)]
        self.workers = []
        for wid, iq in enumerate(self.index_queues):
            w = ctx.Process(target=_worker_loop, daemon=True,
                            args=(loader, wid, base_seed + wid, iq, self.result_queue))
            w.start()
            self.workers.append(w)
        self.epoch = 0
        self.closed = False

    @classmethod
    def iterate(cls, loader: Any) -> Any:
        """One pass of ``loader`` through a pool: its own, or the loader's kept one
        (``persistent_workers=True``)."""
        # the pass's order is drawn first, then the workers' seed: a seeded shuffle gives
        # the same order with and without workers.  A sampler draws when it starts, so the
        # first batch is taken now and the rest as the workers need them (an "endless"
        # sampler, num_samples=int(1e10), is never listed whole)
        rest = iter(loader.index_batches())
        first = next(rest, None)
        batches = itertools.chain([] if first is None else [first], rest)
        if loader.persistent_workers:
            if loader._pool is None or loader._pool.closed:
                loader._pool = cls(loader)
            return loader._pool.run(loader, batches, close=False)
        return cls(loader).run(loader, batches, close=True)

    def run(self, loader: Any, batches: Iterator[Any], close: bool) -> Any:
        """Yield the batches of one pass, in order; shut the workers down at the end (or on
        an error, or when the loop is left early) unless they are kept."""
        self.epoch += 1
        epoch, tasks = self.epoch, enumerate(batches)
        in_flight, limit = 0, loader.prefetch_factor * len(self.workers)
        done: dict[int, Any] = {}
        next_out, exhausted = 0, False
        try:
            while True:
                while not exhausted and in_flight < limit:
                    task = next(tasks, None)
                    if task is None:
                        exhausted = True
                        break
                    number, indices = task
                    self.index_queues[number % len(self.workers)].put(
                        (epoch, number, np.asarray(indices).tolist()))
                    in_flight += 1
                if in_flight == 0:
                    return
                number, batch = self._receive(epoch, loader.timeout)
                in_flight -= 1
                if not loader.in_order:
                    yield from_arrays(batch)
                    continue
                done[number] = batch
                while next_out in done:
                    yield from_arrays(done.pop(next_out))
                    next_out += 1
        except Exception:  # (leaving the loop early is GeneratorExit: kept workers stay)
            self.shutdown()
            raise
        finally:
            if close:
                self.shutdown()

    def _receive(self, epoch: int, timeout: float) -> tuple[int, Any]:
        """The next result of this pass (results of an abandoned earlier pass are dropped)."""
        start = time.monotonic()
        while True:
            try:
                got_epoch, number, batch, failure = self.result_queue.get(timeout=1.0)
            except queue.Empty:
                self._check_alive()
                if timeout and time.monotonic() - start > timeout:
                    raise RuntimeError(f"DataLoader timed out after {timeout:g} seconds waiting "
                                       "for a batch from its workers") from None
                continue
            if got_epoch != epoch:
                continue
            if failure is not None:
                _raise(failure)
            return number, batch

    def _check_alive(self) -> None:
        for wid, w in enumerate(self.workers):
            if not w.is_alive():
                raise RuntimeError(f"DataLoader worker {wid} (pid {w.pid}) exited unexpectedly "
                                   f"with exit code {w.exitcode}")

    def __del__(self) -> None:  # a pass never started (iter() without next()) still ends them
        self.shutdown()

    def shutdown(self) -> None:
        """Tell every worker to stop, wait briefly, then end any that did not."""
        if getattr(self, "closed", True):
            return
        self.closed = True
        for iq, w in zip(self.index_queues, self.workers):
            if w.is_alive():
                iq.put(None)
        for w in self.workers:
            w.join(timeout=2)  # an idle worker stops at once; a busy one is ended
            if w.is_alive():
                w.terminate()
                w.join()
        for q in (*self.index_queues, self.result_queue):
            q.cancel_join_thread()  # no waiting on results nobody will read
            q.close()
