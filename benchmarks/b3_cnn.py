"""B3: one CNN training step, lucid on NumPy vs PyTorch CPU.

The network (a small MNIST classifier)::

    conv 1->32 3x3 pad 1, ReLU, maxpool 2,  conv 32->64 3x3 pad 1, ReLU, maxpool 2,
    flatten, linear 3136->10,  cross-entropy;   batch 64 of 1x28x28, float32

One step is forward, backward and a hand-written SGD update (``p -= lr * p.grad`` under
``no_grad``).  Both frameworks start from the same weights and data, and the benchmark checks
that their first losses agree before timing anything.  Time is ms per step, best of
interleaved batches (``timeit_many``, with a pause before each batch so that the other
framework's BLAS/OpenMP threads have stopped spinning); PyTorch gets every core, as NumPy's
BLAS does.

Peak memory of a step, two ways (both stated in the table):

* ``RSS``: in a fresh Python process, build the model and run one step on a batch of 2 (it
  pays the one-off costs -- BLAS thread buffers, lazy imports, first-call caches -- with
  almost no data); then reset the kernel's resident-set high-water mark
  (``echo 5 > /proc/self/clear_refs``), run the first batch-64 step and report that
  high-water mark (``VmHWM``) minus the resident set before the step (``VmRSS``).  The same
  method for both frameworks; it sees every allocator, PyTorch's included, and counts
  allocator slack.  (The *first* full step, because a second one would measure how much
  freed memory each allocator kept around, not what the step needs.  Without clear_refs the
  row falls back to ``ru_maxrss`` and says so.)
* ``tracemalloc`` (lucid only): the peak of traced allocations during a warm step, minus what
  was allocated before it.  NumPy reports its array buffers to tracemalloc, so this is the
  step's own peak of live arrays (activations, saved ``cols``, gradients); PyTorch's
  allocator is invisible to it.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np

import lucid
import lucid.nn as nn
from benchmarks.common import Row, optional, timeit_many

BATCH, LR = 64, 0.01


# -- lucid -------------------------------------------------------------------------------------

class _ReLU(nn.Module):  # used only while nn.ReLU is missing
    def forward(self, x):
        return lucid.maximum(x, 0.0)


def _data(batch: int = BATCH):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch)
    return x, y


def _cross_entropy(logits, labels):
    """Mean cross-entropy from logits: F.cross_entropy, or a log-softmax composite."""
    fn = getattr(nn.functional, "cross_entropy", None)
    if fn is not None:
        return fn(logits, labels)
    m = lucid.Tensor(logits.numpy().max(axis=1, keepdims=True))
    shifted = logits - m
    logp = shifted - lucid.log(lucid.exp(shifted).sum(axis=1, keepdims=True))
    onehot = np.eye(logits.shape[1], dtype=np.float32)[labels.numpy()]
    return -(logp * onehot).sum() / logits.shape[0]


def lucid_model():
    lucid.random.seed(0)
    relu = getattr(nn, "ReLU", _ReLU)
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), relu(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), relu(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 10),
    )


def lucid_step_fn(model, batch: int = BATCH):
    xs, ys = _data(batch)
    x, y = lucid.Tensor(xs), lucid.Tensor(ys)
    params = list(model.parameters())

    def step():
        loss = _cross_entropy(model(x), y)
        for p in params:
            p.grad = None
        loss.backward()
        with lucid.no_grad():
            for p in params:
                p -= LR * p.grad
        return loss

    return step


# -- torch -------------------------------------------------------------------------------------

def torch_step_fn(torch, model, batch: int = BATCH):
    """The same network in PyTorch, starting from ``model``'s (lucid's) weights."""
    tnn = torch.nn
    net = tnn.Sequential(
        tnn.Conv2d(1, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Conv2d(32, 64, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
        tnn.Flatten(), tnn.Linear(3136, 10),
    )
    with torch.no_grad():
        for tp, lp in zip(net.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(np.array(lp.numpy())))
    xs, ys = _data(batch)
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    params = list(net.parameters())

    def step():
        loss = torch.nn.functional.cross_entropy(net(x), y)
        for p in params:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= LR * p.grad
        return loss

    return step


# -- memory ------------------------------------------------------------------------------------

def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M).group(1))


def _rss_peak_of_one_step(system: str) -> tuple[float, bool]:
    """(Run in a fresh process.)  MB of resident memory the first batch-64 step adds at its
    peak, and whether the high-water mark could be reset after the batch-2 warm-up."""
    model = lucid_model()
    if system == "torch":
        import torch

        small, step = torch_step_fn(torch, model, 2), torch_step_fn(torch, model)
    else:
        small, step = lucid_step_fn(model, 2), lucid_step_fn(model)
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


def rss_peak(system: str) -> tuple[float | None, bool]:
    """``_rss_peak_of_one_step`` in a fresh interpreter ((None, False) without /proc)."""
    if not Path("/proc/self/status").exists():
        return None, False
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.b3_cnn", "--rss", system],
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


# -- the benchmark -----------------------------------------------------------------------------

def run(quick: bool = False) -> list[Row]:
    model = lucid_model()
    fns = {"lucid": lucid_step_fn(model)}
    torch = optional("torch")
    threads = None
    if torch:
        # every core, as NumPy's BLAS uses (an earlier benchmark may have pinned torch to 1)
        threads = torch.get_num_threads()
        torch.set_num_threads(os.cpu_count() or 1)
        fns["torch"] = torch_step_fn(torch, lucid_model())
        first = {k: float(f().item()) for k, f in fns.items()}
        if abs(first["lucid"] - first["torch"]) > 1e-3 * max(1.0, abs(first["torch"])):
            raise RuntimeError(f"B3: lucid and torch disagree on the first loss: {first}")
    # pause: let the other contender's BLAS/OpenMP worker threads stop spinning first
    t = timeit_many(fns, repeat=3 if quick else 7, number=3 if quick else 10, warmup=2,
                    pause=0.1)
    rows = [Row("B3 CNN train step, batch 64 1x28x28 f32", "ms/step", target="lucid <= 2x torch")]
    rows[0].values = {k: v * 1e3 for k, v in t.items()}
    lucid_mb, reset = rss_peak("lucid")
    torch_mb = rss_peak("torch")[0] if torch else None
    how = "VmHWM - VmRSS" if reset else "ru_maxrss delta"
    mem = Row(f"  peak memory of a step (RSS: {how})", "MB", target="-")
    mem.values = {"lucid": lucid_mb, "torch": torch_mb}
    traced = Row("  peak memory of a step (tracemalloc, NumPy arrays)", "MB", target="-")
    traced.values = {"lucid": tracemalloc_peak(fns["lucid"])}
    if threads is not None:
        torch.set_num_threads(threads)
    return rows + [mem, traced]


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--rss":
        print(json.dumps(_rss_peak_of_one_step(sys.argv[2])))
    else:
        from benchmarks.common import print_table

        print_table(run(quick="--quick" in sys.argv), ["lucid", "torch"])
