"""What B-DIST runs on every rank: ``dist_worker.py MODE STEPS OUT`` (rank 0 writes OUT).

``step``: a DDP training step of a 784-512-10 MLP on this rank's share of a batch of 256;
``all_reduce``: an all-reduce of 4 MB of float32.  Both report the median seconds.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import lucid
import lucid.distributed as dist
import lucid.nn as nn
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.optim import SGD

BATCH = 256


def step_seconds(steps: int, rank: int, world: int) -> float:
    lucid.random.seed(0)
    model = DDP(nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 10)))
    opt = SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    rng = np.random.default_rng(rank)
    share = BATCH // world
    x = lucid.Tensor(rng.standard_normal((share, 784)).astype(np.float32))
    y = lucid.Tensor(rng.integers(0, 10, share))
    times = []
    for _ in range(steps + 3):
        start = time.perf_counter()
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
    return float(np.median(times[3:]))


def all_reduce_seconds(steps: int) -> float:
    t = lucid.Tensor(np.ones(4 * 2**20 // 4, dtype=np.float32), requires_grad=True)
    times = []
    for _ in range(steps + 2):
        dist.barrier()
        start = time.perf_counter()
        dist.all_reduce(t)
        times.append(time.perf_counter() - start)
    return float(np.median(times[2:]))


def main() -> None:
    mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    dist.init()
    rank, world = dist.get_rank(), dist.get_world_size()
    if mode == "step":
        found = {"step_s": step_seconds(steps, rank, world)}
    else:
        found = {"all_reduce_s": all_reduce_seconds(steps)}
    if rank == 0:
        with open(out, "w") as f:
            json.dump(found, f)


if __name__ == "__main__":
    main()
