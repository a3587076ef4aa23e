"""B1: per-op overhead.  A 200-op chain of add/mul/tanh on an (8, 8) float32 tensor, forward
plus backward, in microseconds per op.  Tiny tensors make the framework's own Python cost (the
dispatcher, graph recording, the backward walk) the whole story.  Also: the cost of FLOPs
counting (the same chain inside ``count_flops()``)."""

from __future__ import annotations

import numpy as np

import lucid
from benchmarks.common import Row, optional, timeit_many

N_OPS = 200


def _lucid_chain(count_flops: bool = False):
    rng = np.random.default_rng(0)
    x0 = lucid.Tensor(rng.standard_normal((8, 8)).astype(np.float32), requires_grad=True)
    a = lucid.Tensor(rng.standard_normal((8, 8)).astype(np.float32) * 0.1)
    b = lucid.Tensor(np.full((8, 8), 0.9, np.float32))

    def step():
        x = x0
        for i in range(N_OPS):
            k = i % 3
            x = x + a if k == 0 else (x * b if k == 1 else lucid.tanh(x))
        x.backward()
        x0.grad = None

    if not count_flops:
        return step

    def counted():
        with lucid.count_flops():
            step()

    return counted


def _torch_chain(torch):
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(8, 8, generator=g, requires_grad=True)
    a = torch.randn(8, 8, generator=g) * 0.1
    b = torch.full((8, 8), 0.9)

    def step():
        x = x0
        for i in range(N_OPS):
            k = i % 3
            x = x + a if k == 0 else (x * b if k == 1 else torch.tanh(x))
        x.backward(torch.ones_like(x))
        x0.grad = None

    return step


def run(quick: bool = False) -> list[Row]:
    number = 5 if quick else 20
    per_op = 1e6 / N_OPS
    fns = {"lucid": _lucid_chain(), "lucid+flops": _lucid_chain(count_flops=True)}
    torch = optional("torch")
    if torch:
        fns["torch"] = _torch_chain(torch)
    # Each batch takes about 15 ms: the best of 25 rather than 9 outlasts a busy second of a
    # shared machine, which would otherwise decide the count_flops ratio.
    t = {k: v * per_op for k, v in timeit_many(fns, repeat=25, number=number).items()}
    row = Row("B1 per-op overhead, fwd+bwd, (8,8) f32", "us/op", target="lucid <= 2x torch")
    row.values = {"lucid": t["lucid"], "torch": t.get("torch")}
    flops = Row("B1 with count_flops() on", "us/op", target="-")
    flops.values["lucid"] = t["lucid+flops"]
    ratio = Row("  count_flops on / off", "ratio", target="<= 1.3")
    ratio.values["lucid"] = t["lucid+flops"] / t["lucid"]
    return [row, flops, ratio]
