"""Timing and table helpers shared by the benchmarks."""

from __future__ import annotations

import gc
import importlib
import statistics
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
    """Median seconds per call of ``fn`` over ``repeat`` batches of ``number`` calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples)


@dataclass
class Row:
    benchmark: str
    unit: str
    values: dict[str, float | None] = field(default_factory=dict)
    target: str = ""


def print_table(rows: list[Row], systems: list[str], baseline: str = "lucid") -> None:
    """Print rows with one column per system and ratios lucid / other."""
    others = [s for s in systems if s != baseline]
    head = ["benchmark", "unit", *systems, *[f"{baseline}/{s}" for s in others], "target"]
    lines = []
    for r in rows:
        cells = [r.benchmark, r.unit]
        for s in systems:
            v = r.values.get(s)
            cells.append("-" if v is None else f"{v:.4g}")
        for s in others:
            a, b = r.values.get(baseline), r.values.get(s)
            cells.append("-" if a is None or b is None or b == 0 else f"{a / b:.2f}x")
        cells.append(r.target)
        lines.append(cells)
    widths = [max(len(str(x)) for x in col) for col in zip(head, *lines)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*head))
    print("  ".join("-" * w for w in widths))
    for cells in lines:
        print(fmt.format(*cells))
