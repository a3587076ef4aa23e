"""One training step, lucid vs PyTorch CPU, timed side by side, with peak memory (B2, B3).

A benchmark module describes its network twice (``lucid_model()`` and
``torch_model(torch, lucid_model)`` starting from the same weights) and its data
(``data(batch) -> (x, y)`` NumPy arrays); :func:`compare` does the rest.  One step is forward,
cross-entropy, backward and an SGD update (each framework's own ``optim.SGD``).

Time is ms per step, best of interleaved batches (``timeit_many``, with a pause before each
batch so the other framework's BLAS/OpenMP threads have stopped spinning); PyTorch gets every
core, as NumPy's BLAS does.  The first losses must agree before anything is timed.

Peak memory of a step, two ways (both stated in the table):

* ``RSS``: in a fresh Python process, build the model and run one step on a batch of 2 (it pays
  the one-off costs -- BLAS buffers, lazy imports -- with almost no data); then reset the
  kernel's resident-set high-water mark (``echo 5 > /proc/self/clear_refs``), run the first
  full step and report that high-water mark (``VmHWM``) minus the resident set before the step
  (``VmRSS``).  The same method for both frameworks; it sees every allocator.  (Without
  clear_refs the row falls back to ``ru_maxrss`` and says so.)
* ``tracemalloc`` (lucid only): the peak of traced allocations during a warm step, minus what
  was allocated before it -- NumPy reports its buffers to tracemalloc, PyTorch does not.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from types import ModuleType

import lucid
import lucid.nn.functional as F
from benchmarks.common import Row, optional, timeit_many

LR = 0.01


def lucid_step_fn(bench: ModuleType, model, batch: int):
    xs, ys = bench.data(batch)
    x, y = lucid.Tensor(xs), lucid.Tensor(ys)
    opt = lucid.optim.SGD(model.parameters(), lr=LR)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def torch_step_fn(bench: ModuleType, torch, lucid_model, batch: int):
    net = bench.torch_model(torch)
    with torch.no_grad():
        for tp, lp in zip(net.parameters(), lucid_model.parameters()):
            tp.copy_(torch.from_numpy(lp.numpy().copy()))
    xs, ys = bench.data(batch)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    opt = torch.optim.SGD(net.parameters(), lr=LR)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1))


def rss_peak_of_one_step(bench: ModuleType, system: str) -> tuple[float, bool]:
    """(Run in a fresh process.)  MB the first full step adds to the resident set at its peak,
    and whether the high-water mark could be reset after the small warm-up step."""
    model = bench.lucid_model()
    if system == "torch":
        import torch

        small = torch_step_fn(bench, torch, model, 2)
        step = torch_step_fn(bench, torch, model, bench.BATCH)
    else:
        small, step = lucid_step_fn(bench, model, 2), lucid_step_fn(bench, model, bench.BATCH)
    small()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to the current resident set
        reset = True
    except OSError:
        reset = False
    before = _status_kb("VmRSS")
    step()
    peak = _status_kb("VmHWM") if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return (peak - before) / 1024, reset


def rss_peak(bench: ModuleType, system: str) -> tuple[float | None, bool]:
    """``rss_peak_of_one_step`` in a fresh interpreter ((None, False) without /proc)."""
    if not Path("/proc/self/status").exists():
        return None, False
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.train_step", bench.__name__, system],
        cwd=root, capture_output=True, text=True, check=True,
    )
    peak, reset = json.loads(out.stdout.strip().splitlines()[-1])
    return peak, reset


def tracemalloc_peak(step) -> float:
    """MB: peak of traced (NumPy) allocations during one warm step above the start."""
    step()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - start) / 2**20


def compare(bench: ModuleType, label: str, target: str, quick: bool = False) -> list[Row]:
    """Time one step of ``bench``'s network in lucid and (when importable) PyTorch."""
    model = bench.lucid_model()
    fns = {"lucid": lucid_step_fn(bench, model, bench.BATCH)}
    torch = optional("torch")
    threads = None
    if torch:
        threads = torch.get_num_threads()
        torch.set_num_threads(os.cpu_count() or 1)
        fns["torch"] = torch_step_fn(bench, torch, bench.lucid_model(), bench.BATCH)
        first = {k: float(f().item()) for k, f in fns.items()}
        if abs(first["lucid"] - first["torch"]) > 1e-3 * max(1.0, abs(first["torch"])):
            raise RuntimeError(f"{label}: lucid and torch disagree on the first loss: {first}")
    try:
        t = timeit_many(fns, repeat=3 if quick else 7, number=3 if quick else 10, warmup=2,
                        pause=0.1)
    finally:
        if threads is not None:
            torch.set_num_threads(threads)
    row = Row(label, "ms/step", target=target)
    row.values = {k: v * 1e3 for k, v in t.items()}
    lucid_mb, reset = rss_peak(bench, "lucid")
    torch_mb = rss_peak(bench, "torch")[0] if torch else None
    how = "VmHWM - VmRSS" if reset else "ru_maxrss delta"
    mem = Row(f"  peak memory of a step (RSS: {how})", "MB", target="lucid <= 2x torch")
    mem.values = {"lucid": lucid_mb, "torch": torch_mb}
    traced = Row("  peak memory of a step (tracemalloc, NumPy arrays)", "MB", target="-")
    traced.values = {"lucid": tracemalloc_peak(fns["lucid"])}
    return [row, mem, traced]


if __name__ == "__main__":  # python -m benchmarks.train_step benchmarks.b2_mlp lucid
    print(json.dumps(rss_peak_of_one_step(importlib.import_module(sys.argv[1]), sys.argv[2])))
