"""Viz: how long the backward stepper takes to show one new frame of a 50-node graph.

Each frame is a fresh picture (DOT written, Graphviz run); a class clicking through the
backward pass waits this long per step.  Frames are cached once drawn, so each timed frame is
one never shown before.
"""

from __future__ import annotations

import time

import numpy as np

import lucid
from benchmarks.common import Row, optional


def _stepper():
    import lucid_viz

    rng = np.random.default_rng(0)
    x = lucid.Tensor(rng.standard_normal((4, 4)), requires_grad=True)
    h = x
    with lucid.count_flops():
        while True:  # a chain of small ops until the graph has 50 nodes
            h = lucid.tanh(h * 0.9 + 0.1)
            if len(lucid_viz.trace(h.sum()).nodes) >= 50:
                break
        loss = h.sum()
    return lucid_viz.step_backward(loss)


def run(quick: bool = False) -> list[Row]:
    row = Row("stepper: one new frame, 50-node graph", "s/frame", target="<= 0.3")
    if optional("lucid_viz") is None:
        return [row]
    from lucid_viz import graphviz_bin

    try:
        graphviz_bin.find_dot()
    except graphviz_bin.GraphvizNotFound:
        return [row]  # no Graphviz: nothing to time
    stepper = _stepper()
    frames = range(1, min(len(stepper), 4 if quick else 12) + 1)
    times = []
    for k in frames:
        start = time.perf_counter()
        stepper.frame_svg(k)
        times.append(time.perf_counter() - start)
    row.values["lucid"] = float(np.median(times))
    return [row]
