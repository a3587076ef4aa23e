"""Timing and table helpers shared by the benchmarks."""

from __future__ import annotations

import gc
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field


def optional(module: str):
    """The module if it imports, else None (PyTorch is never a dependency)."""
    try:
        return importlib.import_module(module)
    except ImportError:
        return None


def timeit(fn: Callable[[], object], repeat: int = 7, number: int = 20, warmup: int = 3) -> float:
    """Best (minimum) seconds per call of ``fn`` over ``repeat`` batches of ``number`` calls.

    The minimum, as the ``timeit`` docs advise: noise from other processes only ever adds time,
    so the fastest batch is the best estimate of what the code itself costs.
    """
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return min(samples)


def timeit_many(fns: dict[str, Callable[[], object]], repeat: int = 9, number: int = 20,
                warmup: int = 3, pause: float = 0.0) -> dict[str, float]:
    """Best seconds per call for several functions measured in alternating batches.

    Interleaving makes slow drifts of the machine (frequency, a neighbour's load) hit every
    contender alike, so the ratios between them stay honest.  ``pause`` (seconds, untimed)
    before each batch lets the previous contender's thread pools go idle: OpenBLAS and OpenMP
    workers spin for a while after a multi-threaded GEMM and would slow the next contender.
    """
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    best = {k: float("inf") for k in fns}
    for _ in range(repeat):
        for key, fn in fns.items():
            if pause:
                time.sleep(pause)
            gc.collect()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[key] = min(best[key], (time.perf_counter() - start) / number)
    return best


@dataclass
class Row:
    benchmark: str
    unit: str
    values: dict[str, float | None] = field(default_factory=dict)
    target: str = ""


def print_table(rows: list[Row], systems: list[str], baseline: str = "lucid",
                ratios: list[tuple[str, str]] | None = None) -> None:
    """Print rows with one column per system, then one column per ratio ``a/b``.

    ``ratios`` lists the (numerator, denominator) pairs to show; by default ``baseline`` over
    every other system.
    """
    if ratios is None:
        ratios = [(baseline, s) for s in systems if s != baseline]
    head = ["benchmark", "unit", *systems, *[f"{a}/{b}" for a, b in ratios], "target"]
    lines = []
    for r in rows:
        cells = [r.benchmark, r.unit]
        for s in systems:
            v = r.values.get(s)
            cells.append("-" if v is None else f"{v:.4g}")
        for num, den in ratios:
            a, b = r.values.get(num), r.values.get(den)
            cells.append("-" if a is None or b is None or b == 0 else f"{a / b:.2f}x")
        cells.append(r.target)
        lines.append(cells)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*head))
    print("  ".join("-" * w for w in widths))
    for cells in lines:
        print(fmt.format(*cells))
