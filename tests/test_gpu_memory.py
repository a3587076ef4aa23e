"""Laziness on "gpu" (MLX) does not leak: a 1,000-step training loop keeps flat memory.

MLX records work lazily.  Without evaluation every step's update would hang on the previous
step's unevaluated graph, so the graph -- and the process -- would grow with every step.  The
contract: ``loss.eval()`` before ``backward()`` and ``lucid.evaluate(*params)`` after
each update (what optimizers do) keep one step's graph at most.  Checked for a spelled-out SGD
and for ``lucid.optim`` optimizers whose state (momentum, moments) must be evaluated as well.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys

import numpy as np
import pytest

import lucid

pytest.importorskip("mlx.core", reason="MLX is not installed; `make test` installs mlx[cpu]")

STEPS, WARMUP = 1000, 100
# Evaluated, the loop grows by well under 1 MiB from step 100 to 1000.  Left lazy (no eval at
# all) the hand-written loop grows by about 45 MiB of unevaluated MLX graph (MLX 0.32, Linux),
# so the ceiling sits far below that, not at a round 50 MiB that such a leak could slip under.
MAX_GROWTH_MIB = 16


def _release_free_heap() -> None:
    """Give the C heap's free pages back to the OS (glibc), so that memory freed by earlier
    tests cannot hide a leak: growth after this call shows up in the resident size."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to trim
        pass


def _rss_mib() -> float:
    """Resident memory of this process now (Linux), else its peak so far (macOS)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # bytes on macOS, KiB on Linux
        return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _mlp(rng: np.random.Generator, sizes: tuple[int, ...], device: str) -> list[lucid.Tensor]:
    """Weights and biases of an MLP, PyTorch's Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        for shape in ((fan_in, fan_out), (fan_out,)):
            values = rng.uniform(-bound, bound, shape).astype(np.float32)
            params.append(lucid.Tensor(values, requires_grad=True, device=device))
    return params


def _cross_entropy(logits: lucid.Tensor, labels: lucid.Tensor) -> lucid.Tensor:
    """Mean of -log softmax(logits)[label], through a numerically stable log-softmax."""
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - lucid.log(lucid.exp(z).sum(axis=1, keepdims=True))
    return -lucid.gather(logp, 1, labels[:, None]).mean()


class HandWrittenSGD:
    """``p <- p - lr * grad`` on the raw arrays, then ``lucid.evaluate`` -- what an optimizer
    does, spelled out.  MLX builds ``p.data - lr * grad`` lazily, so nothing here forces
    evaluation; only the evaluate() call does.  (``p -= lr * p.grad`` would route the raw MLX
    gradient through NumPy, which evaluates it and would hide a missing evaluate.)"""

    def __init__(self, params: list[lucid.Tensor], lr: float) -> None:
        self.params, self.lr = params, lr

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        with lucid.no_grad():
            for p in self.params:
                p.data = p.data - self.lr * p.grad
        lucid.evaluate(*self.params)


OPTIMIZERS = {
    "hand-written-sgd": lambda params: HandWrittenSGD(params, lr=0.05),
    # optimizers with state: momentum buffers and moments must be evaluated every step too
    "optim.SGD-momentum": lambda params: lucid.optim.SGD(params, lr=0.05, momentum=0.9),
    "optim.Adam": lambda params: lucid.optim.Adam(params, lr=0.01),
}


@pytest.mark.parametrize("make_optimizer", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_gpu_training_loop_keeps_flat_memory(make_optimizer):
    rng = np.random.default_rng(0)
    params = _mlp(rng, (64, 64, 10), "gpu")
    x = lucid.Tensor(rng.standard_normal((32, 64)).astype(np.float32), device="gpu")
    labels = lucid.Tensor(rng.integers(0, 10, 32), device="gpu")
    optimizer = make_optimizer(params)

    losses, rss = [], {}
    for step in range(1, STEPS + 1):
        h = x
        for i in range(0, len(params) - 2, 2):
            h = lucid.maximum(h @ params[i] + params[i + 1], 0.0)
        loss = _cross_entropy(h @ params[-2] + params[-1], labels)
        optimizer.zero_grad()
        loss.eval()  # seed 000: evaluate the loss before backward
        loss.backward()
        optimizer.step()
        if step in (1, STEPS):
            losses.append(loss.item())
        if step == WARMUP:
            _release_free_heap()
        if step in (WARMUP, STEPS):
            rss[step] = _rss_mib()

    growth = rss[STEPS] - rss[WARMUP]
    assert growth < MAX_GROWTH_MIB, (
        f"resident memory grew by {growth:.1f} MiB from step {WARMUP} ({rss[WARMUP]:.1f} MiB) "
        f"to step {STEPS} ({rss[STEPS]:.1f} MiB): MLX's lazy graph is outliving the steps"
    )
    first, last = losses
    assert np.isfinite(last)
    # 32 examples with random labels: 1,000 steps fit them almost exactly (ln 10 = 2.3 -> ~0)
    assert last < 0.25 * first, f"the loss did not fall: {first:.4f} -> {last:.4f}"


def test_gpu_training_with_batchnorm_keeps_flat_memory():
    """BatchNorm updates its running statistics during every training forward pass; on "gpu"
    those updates must be computed, not chained lazily step after step."""
    rng = np.random.default_rng(1)
    # 2,048 features: left lazy, each step would keep about 50 KB of statistics alive
    model = lucid.nn.Sequential(lucid.nn.Linear(64, 2048), lucid.nn.BatchNorm1d(2048),
                                lucid.nn.ReLU(), lucid.nn.Linear(2048, 10)).to("gpu")
    optimizer = lucid.optim.SGD(model.parameters(), lr=0.05)
    x = lucid.Tensor(rng.standard_normal((32, 64)).astype(np.float32), device="gpu")
    labels = lucid.Tensor(rng.integers(0, 10, 32), device="gpu")
    bn = model[1]
    rss = {}
    for step in range(1, STEPS + 1):
        loss = lucid.nn.functional.cross_entropy(model(x), labels)
        optimizer.zero_grad()
        loss.eval()
        loss.backward()
        optimizer.step()
        if step == WARMUP:
            _release_free_heap()
        if step in (WARMUP, STEPS):
            rss[step] = _rss_mib()
    growth = rss[STEPS] - rss[WARMUP]
    assert growth < MAX_GROWTH_MIB, (
        f"resident memory grew by {growth:.1f} MiB from step {WARMUP} to {STEPS}: the running "
        "statistics are outliving the steps as lazy MLX graphs"
    )
    assert np.all(np.isfinite(bn.running_mean.numpy())) and bn.running_var.numpy().min() > 0


def _pending_ops(array) -> int:
    """How many operations MLX still has to run to produce ``array`` (0: it holds values)."""
    import io

    import mlx.core as mx

    dot = io.StringIO()
    mx.export_to_dot(dot, array)
    return dot.getvalue().count("shape=rectangle")  # export_to_dot draws operations as boxes


def test_batchnorm_training_forward_leaves_no_buffer_lazy():
    """Every buffer a training forward pass updates holds computed values afterwards -- the
    step counter too -- so nothing chains the next step onto this one."""
    bn = lucid.nn.BatchNorm1d(8).to("gpu")
    x = lucid.Tensor(np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32),
                     device="gpu")
    for _ in range(3):
        bn(x)
    for name, buffer in bn.named_buffers():
        assert _pending_ops(buffer._data) == 0, f"{name} is a lazy MLX expression"
    assert bn.num_batches_tracked.item() == 3


_BN_LOOP = """
import numpy as np, lucid
from tests.test_gpu_memory import _release_free_heap, _rss_mib
steps, warmup = 10_000, 500
bn = lucid.nn.BatchNorm1d(128).to("gpu")
x = lucid.Tensor(np.random.default_rng(3).standard_normal((32, 128)).astype(np.float32),
                 device="gpu")
rss = {}
for step in range(1, steps + 1):
    bn(x).eval()  # MLX-evaluate the output (not Module.eval)
    if step == warmup:
        _release_free_heap()
    if step in (warmup, steps):
        rss[step] = _rss_mib()
print(rss[steps] - rss[warmup])
"""


def test_batchnorm_forward_passes_keep_flat_memory():
    """The report's loop: ``bn(x).eval()`` in training mode, many times.  Each pass updates
    three buffers; a buffer left lazy keeps every earlier pass's update alive (about 1 KB a
    pass for the step counter alone: some 9 MiB over this loop), evaluated it stays flat.
    Measured in a fresh interpreter: the heap of a long test session (whatever earlier tests
    left fragmented) must not blur a 3 MiB line."""
    import subprocess

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", _BN_LOOP], cwd=root, capture_output=True,
                          text=True, timeout=300, check=True)
    growth = float(done.stdout.strip().splitlines()[-1])
    assert growth < 3, (
        f"resident memory grew by {growth:.1f} MiB over 9500 forward passes: a "
        "BatchNorm buffer is outliving the passes as a lazy MLX graph"
    )
