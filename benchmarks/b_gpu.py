"""B-GPU: Lucid's "gpu" device (MLX) against native MLX eager code on the same backend.

Two workloads, every contender timed side by side in one process (``timeit_many``):

* **B1 on gpu** -- the 200-op add/mul/tanh chain of B1 on an (8, 8) float32 tensor, forward
  plus backward, microseconds per op.  Lucid builds the chain from Tensors on "gpu" and
  evaluates the result and the gradient at the end (``lucid.evaluate``), so the work is really
  done; native MLX writes the same chain with ``mlx.core`` ops, differentiates it with
  ``mx.value_and_grad`` and calls ``mx.eval``.  Here the cost is per-op Python overhead: Lucid's
  dispatcher and backward walk on top of MLX's own graph building.  A third contender, the
  *floor* row, runs the chain through the barest engine of Lucid's shape (graph nodes with
  their inputs and a rule, one visit per node; no checks at all): the part of the gap that
  any autodiff written in Python pays, which Lucid cannot go below.
* **MLP training step** -- 784-512-512-10, ReLU, cross-entropy, batch 128, plain SGD, float32,
  milliseconds per step.  Lucid (the same code on "cpu" and on "gpu") is written from
  primitives (``x @ w.T + b``, maximum, a log-softmax), so it measures the op layer alone;
  native MLX uses ``mlx.nn.Linear``,
  ``mlx.nn.losses.cross_entropy``, ``nn.value_and_grad`` and ``mlx.optimizers.SGD`` and
  evaluates the parameters and the optimizer state after each step; PyTorch (CPU) when
  installed.

The ratio that matters is lucid-gpu / mlx (a column of the table): the same backend, so the
difference is what Lucid adds.  Target: within 1.3x on both workloads.

Caveat for Linux: the ``mlx[cpu]`` wheel runs MLX on its CPU device with a slow reference GEMM
(a few GFLOP/s: 2-7 measured, against 100+ GFLOP/s for NumPy's OpenBLAS on the same 2 cores),
so for GEMM-bound work such as the MLP the "gpu" columns are *slower* than the "cpu" (NumPy)
column there.  That says
nothing about Lucid; on Apple silicon (Metal) or with ``mlx[cuda]`` the "gpu" columns run on a
real GPU.
"""

from __future__ import annotations

import heapq
import os
import warnings

import numpy as np

import lucid
from benchmarks.b1_overhead import N_OPS, _lucid_chain, _torch_chain
from benchmarks.common import Row, optional, timeit_many

IN, HIDDEN, OUT, BATCH, LR = 784, 512, 10, 128, 0.01


# ---------------------------------------------------------------------------------------------
# B1 chain on gpu


def _lucid_gpu_chain():
    rng = np.random.default_rng(0)
    x0 = lucid.Tensor(rng.standard_normal((8, 8)).astype(np.float32), requires_grad=True,
                      device="gpu")
    a = lucid.Tensor(rng.standard_normal((8, 8)).astype(np.float32) * 0.1, device="gpu")
    b = lucid.Tensor(np.full((8, 8), 0.9, np.float32), device="gpu")

    def step():
        x = x0
        for i in range(N_OPS):
            k = i % 3
            x = x + a if k == 0 else (x * b if k == 1 else lucid.tanh(x))
        x.backward()
        lucid.evaluate(x, x0)  # the value and the gradient, as mx.eval(value, grad) below
        x0.grad = None

    return step


def _mlx_chain(mx):
    rng = np.random.default_rng(0)
    x0 = mx.array(rng.standard_normal((8, 8)).astype(np.float32))
    a = mx.array(rng.standard_normal((8, 8)).astype(np.float32) * 0.1)
    b = mx.array(np.full((8, 8), 0.9, np.float32))

    def chain(x):
        for i in range(N_OPS):
            k = i % 3
            x = x + a if k == 0 else (x * b if k == 1 else mx.tanh(x))
        return x.sum()  # Lucid's backward() seeds ones: the gradient of the sum

    value_and_grad = mx.value_and_grad(chain)

    def step():
        value, grad = value_and_grad(x0)
        mx.eval(value, grad)

    return step


class _Node:
    """A bare graph node: its value, its inputs, the rule that maps its gradient to theirs."""

    __slots__ = ("data", "prev", "rule", "seq", "g", "requires_grad")

    def __init__(self, data, prev=(), rule=None, seq=0, requires_grad=False) -> None:
        self.data, self.prev, self.rule, self.seq = data, prev, rule, seq
        self.g, self.requires_grad = None, requires_grad


def _floor_backward(mx, root) -> None:
    """Visit each node once, latest first (a heap on ``seq``), accumulating into inputs."""
    root.g = mx.ones_like(root.data)
    heap = [(-root.seq, root)]
    while heap:
        node = heapq.heappop(heap)[1]
        for parent, pg in zip(node.prev, node.rule(node.g)):
            if pg is None or not parent.requires_grad:
                continue
            if parent.g is None:
                parent.g = pg
                if parent.rule is not None:
                    heapq.heappush(heap, (-parent.seq, parent))
            else:
                parent.g = parent.g + pg
        node.g = None


def _floor_chain(mx):
    """The B1 chain through the barest engine of Lucid's shape, on the same MLX ops.

    The graph lives in the nodes (each knows its inputs and its local rule, as a Lucid Tensor
    knows ``_prev`` and ``_op``), and backward visits each node once after all its users.
    Nothing else: no checks, hooks, version counters, dtype/device rules or FLOPs.  So this
    row is the floor under lucid-gpu: what differentiating in Python, over a graph of Python
    objects, costs per op on top of MLX (``mx.value_and_grad`` builds its backward graph in
    C++).  Lucid's engine does all of that work plus the checks a teaching engine owes.
    """
    rng = np.random.default_rng(0)
    x0 = _Node(mx.array(rng.standard_normal((8, 8)).astype(np.float32)), requires_grad=True)
    a = _Node(mx.array(rng.standard_normal((8, 8)).astype(np.float32) * 0.1))
    b = _Node(mx.array(np.full((8, 8), 0.9, np.float32)))

    def add(x, y, seq):
        return _Node(x.data + y.data, (x, y), lambda g: (g, g), seq, True)

    def mul(x, y, seq):  # builds only the gradients that are needed, as Lucid's Mul does
        def rule(g):
            return (g * y.data if x.requires_grad else None,
                    g * x.data if y.requires_grad else None)

        return _Node(x.data * y.data, (x, y), rule, seq, True)

    def tanh(x, seq):
        out = _Node(mx.tanh(x.data), (x,), None, seq, True)
        out.rule = lambda g: (g - g * out.data * out.data,)
        return out

    def step():
        x = x0
        for i in range(N_OPS):
            k = i % 3
            x = add(x, a, i) if k == 0 else (mul(x, b, i) if k == 1 else tanh(x, i))
        _floor_backward(mx, x)
        mx.eval(x.data, x0.g)
        x0.g = None

    return step


# ---------------------------------------------------------------------------------------------
# MLP training step


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, IN)).astype(np.float32)
    y = rng.integers(0, OUT, BATCH)
    return x, y


def _init(rng, fan_in: int, fan_out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's Linear layout and init: W (fan_out, fan_in), W and b ~ U(+-1/sqrt(fan_in)).

    The same layout as ``mlx.nn.Linear`` (y = x W^T + b), so both compute the same GEMMs on
    the same memory layouts (MLX's CPU GEMM speed depends on which operand is transposed).
    """
    bound = 1.0 / np.sqrt(fan_in)
    w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
    b = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return w, b


def _lucid_mlp(device: str):
    rng = np.random.default_rng(1)
    params = []
    for fan_in, fan_out in ((IN, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, OUT)):
        for arr in _init(rng, fan_in, fan_out):
            params.append(lucid.Tensor(arr, requires_grad=True, device=device))
    w1, b1, w2, b2, w3, b3 = params
    xs, ys = _data()
    x = lucid.Tensor(xs, device=device)
    labels = lucid.Tensor(ys, device=device)

    def step():
        h = lucid.maximum(x @ w1.T + b1, 0.0)
        h = lucid.maximum(h @ w2.T + b2, 0.0)
        logits = h @ w3.T + b3
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - lucid.log(lucid.exp(z).sum(axis=1, keepdims=True))
        loss = -lucid.gather(logp, 1, labels[:, None]).mean()
        loss.eval()
        loss.backward()
        with lucid.no_grad():
            for p in params:
                # SGD on the raw arrays (see tests/test_gpu_memory.py for why not ``p -= ...``)
                p.data = p.data - LR * p.grad
                p.grad = None
        lucid.evaluate(*params)  # what an optimizer does after each step
        return loss

    return step


def _mlx_mlp(mx):
    import mlx.nn as nn
    import mlx.optimizers as optim

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.l1 = nn.Linear(IN, HIDDEN)
            self.l2 = nn.Linear(HIDDEN, HIDDEN)
            self.l3 = nn.Linear(HIDDEN, OUT)

        def __call__(self, x):
            return self.l3(nn.relu(self.l2(nn.relu(self.l1(x)))))

    mx.random.seed(1)
    model = MLP()
    mx.eval(model.parameters())
    xs, ys = _data()
    x, y = mx.array(xs), mx.array(ys.astype(np.int32))

    def loss_fn(model, x, y):
        return nn.losses.cross_entropy(model(x), y, reduction="mean")

    loss_and_grad = nn.value_and_grad(model, loss_fn)
    optimizer = optim.SGD(learning_rate=LR)

    def step():
        loss, grads = loss_and_grad(model, x, y)
        optimizer.update(model, grads)
        mx.eval(loss, model.parameters(), optimizer.state)
        return loss

    return step


def _torch_mlp(torch):
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Linear(IN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, OUT),
    )
    xs, ys = _data()
    x, y = torch.from_numpy(xs), torch.from_numpy(ys)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    return step


# ---------------------------------------------------------------------------------------------


def run(quick: bool = False) -> list[Row]:
    mx = optional("mlx.core")
    torch = optional("torch")
    with warnings.catch_warnings():
        # On Linux mlx[cpu] Lucid warns once that "gpu" runs on MLX's CPU device; the module
        # docstring says so, and the table header names MLX's device.
        warnings.filterwarnings("ignore", message="MLX has no GPU here")
        return _run(mx, torch, quick)


def _run(mx, torch, quick: bool) -> list[Row]:
    threads = torch.get_num_threads() if torch else 0
    try:
        # B1: tiny tensors, per-op overhead (PyTorch on one thread, as in B1)
        fns = {"lucid": _lucid_chain()}
        if mx:
            fns["lucid-gpu"] = _lucid_gpu_chain()
            fns["mlx"] = _mlx_chain(mx)
            fns["floor"] = _floor_chain(mx)
        if torch:
            fns["torch"] = _torch_chain(torch)
        per_op = 1e6 / N_OPS
        t = {k: v * per_op for k, v in timeit_many(fns, number=5 if quick else 20).items()}
        floor = t.pop("floor", None)
        b1 = Row("B1 on gpu: per-op fwd+bwd, (8,8) f32", "us/op", dict(t),
                 target="lucid-gpu <= 1.3x mlx")
        rows = [b1]
        if floor is not None:
            # the "lucid-gpu" column of this row holds the floor engine's time (_floor_chain)
            rows.append(Row("  bare Python autodiff on MLX (floor)", "us/op",
                            {"lucid-gpu": floor, "mlx": t["mlx"]}, target="-"))

        # MLP: GEMM-bound, every library on all cores (B1 left PyTorch on one thread); a
        # pause before each batch so that one library's spinning BLAS threads do not slow the
        # next (on a 2-core machine PyTorch ran 2x slower right after NumPy without it).
        if torch:
            torch.set_num_threads(os.cpu_count() or 1)
        fns = {"lucid": _lucid_mlp("cpu")}
        if mx:
            fns["lucid-gpu"] = _lucid_mlp("gpu")
            fns["mlx"] = _mlx_mlp(mx)
        if torch:
            fns["torch"] = _torch_mlp(torch)
        repeat, number = (3, 2) if quick else (7, 4)
        best = timeit_many(fns, repeat=repeat, number=number, warmup=2, pause=0.3)
        t = {k: v * 1e3 for k, v in best.items()}
        mlp = Row(f"MLP {IN}-{HIDDEN}-{HIDDEN}-{OUT} SGD step, batch {BATCH}", "ms/step",
                  dict(t), target="lucid-gpu <= 1.3x mlx")
        rows.append(mlp)
        return rows
    finally:
        if torch:
            torch.set_num_threads(threads)
