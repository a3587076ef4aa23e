"""The ring all-reduce, simulated step by step (what MLX's ring backend does over TCP).

N ranks sit in a ring; rank r only ever sends to rank r+1 (mod N).  Each rank cuts its array
into N chunks.

1. **Reduce-scatter**, N-1 steps.  In step s, rank r sends chunk (r - s) mod N to rank r+1,
   which adds it to its own copy of that chunk.  A chunk picks up one more rank's values per
   step; after N-1 steps rank r holds chunk (r+1) mod N summed over all N ranks.
2. **All-gather**, N-1 steps.  In step s, rank r sends chunk (r + 1 - s) mod N -- a finished
   sum -- to rank r+1, which keeps it.  After N-1 steps every rank holds every summed chunk.

Every step each rank sends one chunk, 1/N of the array, so over 2(N-1) steps it sends
2(N-1)/N of the array: less than twice the data however many ranks take part, and every
link of the ring busy at every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RingStep", "simulate_ring_all_reduce"]


@dataclass(frozen=True)
class RingStep:
    """The ring after one step: ``phase`` ("start", "reduce-scatter" or "all-gather"), its
    step number (1-based within the phase), the ``sends`` made ((from rank, to rank, chunk)
    each), ``values`` (N ranks x N chunks) and ``holds`` (per rank and chunk, the ranks whose
    values that chunk now contains)."""

    phase: str
    step: int
    sends: tuple[tuple[int, int, int], ...]
    values: np.ndarray
    holds: tuple[tuple[frozenset[int], ...], ...]


def simulate_ring_all_reduce(values: np.ndarray) -> list[RingStep]:
    """Run the ring all-reduce on ``values`` (N ranks x N chunks: rank r's array, one number
    per chunk) and return the start and each of the 2(N-1) steps.  The last step's values are
    the column sums on every rank."""
    values = np.array(values, dtype=np.float64)
    n = values.shape[0]
    if values.shape != (n, n) or n < 2:
        raise ValueError(f"simulate_ring_all_reduce: expected N x N values (N ranks, N chunks), "
                         f"N >= 2, got shape {values.shape}")
    holds = [[frozenset({r}) for _ in range(n)] for r in range(n)]
    steps = [_snapshot("start", 0, (), values, holds)]
    for phase, offset in (("reduce-scatter", 0), ("all-gather", 1)):
        for s in range(n - 1):
            sends = tuple((r, (r + 1) % n, (r + offset - s) % n) for r in range(n))
            sent = {(dst, c): (values[src, c], holds[src][c]) for src, dst, c in sends}
            for (dst, c), (v, who) in sent.items():  # all sends of a step happen at once
                if phase == "reduce-scatter":
                    values[dst, c] += v
                    holds[dst][c] = holds[dst][c] | who
                else:
                    values[dst, c] = v
                    holds[dst][c] = who
            steps.append(_snapshot(phase, s + 1, sends, values, holds))
    return steps


def _snapshot(phase: str, step: int, sends: tuple, values: np.ndarray,
              holds: list[list[frozenset[int]]]) -> RingStep:
    return RingStep(phase, step, sends, values.copy(), tuple(tuple(row) for row in holds))
