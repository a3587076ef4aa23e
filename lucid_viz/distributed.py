"""Pictures of data parallelism: the ring all-reduce, step by step.

``plot_ring_all_reduce(n)`` draws :func:`lucid.distributed.ring.simulate_ring_all_reduce`:
one panel per step, a row per rank, a column per chunk.  A cell names the ranks whose values
the chunk holds so far (letters a, b, c, ...; Σ: all of them) and is shaded by how many; the
chunk each rank has just received from the rank before it is outlined.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import colormaps
from matplotlib.patches import Rectangle

from lucid.distributed.ring import RingStep, simulate_ring_all_reduce
from lucid_viz.plots import _figure

__all__ = ["plot_ring_all_reduce"]

_SENT = "#d62728"  # the outline of a chunk that has just arrived from the previous rank


def plot_ring_all_reduce(n: int = 4, width: float = 9.0) -> object:
    """The ring all-reduce of N ranks (2 <= N <= 5), one panel per step: a Figure at most
    ``width`` inches wide with text of at least 11 pt."""
    if not (isinstance(n, int) and 2 <= n <= 5):
        raise ValueError(f"plot_ring_all_reduce: n must be an int from 2 to 5 (the cells hold "
                         f"one letter per rank), got {n!r}")
    steps = simulate_ring_all_reduce(np.eye(n))
    cols = min(4, len(steps))
    rows = math.ceil(len(steps) / cols)
    fig = _figure(min(width, 9.0), 2.3 * rows + 0.5)
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.flat[len(steps):]:
        ax.set_axis_off()
    for ax, step in zip(axes.flat, steps):
        _panel(ax, step, n)
    if len(steps) < rows * cols:  # the free panel explains the picture
        last = _letter(n - 1)
        axes.flat[-1].text(0.0, 0.5, f"each step, every rank\nsends one chunk to the\nnext "
                           f"(a → b, ..., {last} → a)\n\noutlined: just received\nletters: "
                           f"whose values\nΣ: the sum of all {n}", fontsize=11, va="center",
                           transform=axes.flat[-1].transAxes)
    fig.suptitle(f"Ring all-reduce on {n} ranks: each rank sends 1/{n} of the data per step, "
                 f"2({n}-1)/{n} in all", fontsize=12)
    return fig


def _panel(ax, step: RingStep, n: int) -> None:
    shades = colormaps["Greens"]
    received = {(dst, c) for _, dst, c in step.sends}
    for r in range(n):
        for c in range(n):
            who = step.holds[r][c]
            full = len(who) == n
            ax.add_patch(Rectangle((c, r), 1, 1, facecolor=shades(0.15 + 0.6 * len(who) / n),
                                   edgecolor=_SENT if (r, c) in received else "white",
                                   linewidth=3 if (r, c) in received else 1))
            ax.text(c + 0.5, r + 0.5, "Σ" if full else "".join(sorted(_letter(k) for k in who)),
                    ha="center", va="center", fontsize=11,
                    color="white" if len(who) > n / 2 else "black")
    ax.set_xlim(0, n)
    ax.set_ylim(n, 0)
    ax.set_aspect("equal")
    ax.set_xticks([c + 0.5 for c in range(n)], [f"c{c}" for c in range(n)], fontsize=11)
    ax.set_yticks([r + 0.5 for r in range(n)], [f"rank {_letter(r)}" for r in range(n)],
                  fontsize=11)
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    title = "start" if step.phase == "start" else f"{step.phase} {step.step}"
    ax.set_title(title, fontsize=11)


def _letter(rank: int) -> str:
    return "abcde"[rank]
