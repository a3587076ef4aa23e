"""B4: graph scaling.  Build and backward a chain of N small ops for N = 1e3, 1e4, 1e5 and
report seconds per 1e4 nodes at each N: a flat column means time grows linearly with the graph
(no recursion, no quadratic walk, no garbage-collector blow-up)."""

from __future__ import annotations

import numpy as np

import lucid
from benchmarks.common import Row, optional, timeit_many

SIZES = (1_000, 10_000, 100_000)


def _lucid(n: int):
    c = lucid.Tensor(np.full(4, 1.0001))

    def step():
        x = lucid.Tensor(np.ones(4), requires_grad=True)
        y = x
        for i in range(n):
            y = y * c if i % 2 else y + c
        y.backward()

    return step


def _torch(torch, n: int):
    c = torch.full((4,), 1.0001, dtype=torch.float64)

    def step():
        x = torch.ones(4, dtype=torch.float64, requires_grad=True)
        y = x
        for i in range(n):
            y = y * c if i % 2 else y + c
        y.backward(torch.ones_like(y))

    return step


def run(quick: bool = False) -> list[Row]:
    torch = optional("torch")
    rows = []
    for n in SIZES:
        # every batch spans 1e5 nodes, so the garbage collector works alike at each N
        number = 1 if quick else max(1, 100_000 // n)
        repeat = 3
        fns = {"lucid": _lucid(n)}
        if torch:
            fns["torch"] = _torch(torch, n)
        t = timeit_many(fns, repeat=repeat, number=number, warmup=1)
        row = Row(f"B4 chain build+backward, N={n:.0e}", "s/1e4 nodes",
                  target="flat in N; <= 3x torch")
        row.values = {k: v * 1e4 / n for k, v in t.items()}
        rows.append(row)
    first, last = rows[0].values["lucid"], rows[-1].values["lucid"]
    lin = Row("  B4 lucid: (per 1e4 at 1e5) / (per 1e4 at 1e3)", "ratio", target="<= 1.5")
    lin.values["lucid"] = last / first
    return rows + [lin]
