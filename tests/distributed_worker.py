"""The program tests/test_distributed.py runs on several ranks (through the launcher).

    python -m lucid.distributed.launch -n 2 tests/distributed_worker.py MODE OUT_DIR

Each rank writes what it found to OUT_DIR/rank<r>.json; the test reads the files.  Modes:

* ``exact``: an MLP and a small CNN trained 20 steps with DDP, each rank on its shard of every
  batch, against the same model trained in this process alone on the whole batch ("cpu" and
  "gpu", float64 and float32); the collectives' values and gradients; no_sync accumulation.
* ``mismatch``: rank 1 builds a wider model; wrapping it must fail on every rank.
* ``kill``: rank 1 kills itself mid-training; the others must stop with an error.
* ``hang``: rank 1 stops answering; the others must give up after the timeout.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

import lucid
import lucid.distributed as dist
import lucid.nn as nn
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.optim import SGD

STEPS = 20
BATCH = 12  # splits evenly over 2, 3 and 4 ranks


def mlp(dtype):
    return nn.Sequential(nn.Linear(6, 16, dtype=dtype), nn.Tanh(), nn.Linear(16, 3, dtype=dtype))


def cnn(dtype):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, dtype=dtype), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 4 * 4, 3, dtype=dtype))


def data(kind, step, dtype):
    rng = np.random.default_rng(100 + step)
    shape = (BATCH, 6) if kind == "mlp" else (BATCH, 1, 8, 8)
    x = rng.normal(size=shape).astype(dtype)
    y = rng.integers(0, 3, size=BATCH)
    return x, y


def train(kind, device, dtype, rank, world, use_ddp):
    """Parameters after STEPS steps of SGD with momentum, as NumPy float64 arrays."""
    lucid.random.seed(rank if use_ddp else 0)  # ranks start apart: DDP must copy rank 0's
    ldtype = lucid.Float64 if dtype == np.float64 else lucid.Float32
    model = (mlp if kind == "mlp" else cnn)(ldtype).to(device)
    net = DDP(model, bucket_cap_mb=0.001) if use_ddp else model
    opt = SGD(net.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    share = BATCH // world
    for step in range(STEPS):
        x, y = data(kind, step, dtype)
        if use_ddp:
            x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
        loss = loss_fn(net(lucid.Tensor(x).to(device)), lucid.Tensor(y).to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
    params = {k: np.asarray(v, dtype=np.float64) for k, v in net.state_dict().items()}
    return params, (net.reducer.all_reduces if use_ddp else 0)


def exact(rank, world):
    found = {}
    for kind in ("mlp", "cnn"):
        for device in ("cpu", "gpu"):
            for dtype in (np.float64, np.float32):
                ddp, calls = train(kind, device, dtype, rank, world, True)
                ref, _ = train(kind, device, dtype, rank, world, False)
                diff = max(float(np.abs(ddp[k] - ref[k]).max()) for k in ref)
                found[f"{kind}-{device}-{np.dtype(dtype).name}"] = {
                    "max_diff": diff, "all_reduces": calls, "keys": sorted(ddp)}
    found["collectives"] = collectives(rank, world)
    found["no_sync"] = no_sync(rank, world)
    found["magic"] = magic()
    found["batchnorm"] = batchnorm(rank, world)
    return found


def batchnorm(rank, world):
    """BatchNorm under DDP: local statistics in training, rank 0's running ones copied to
    every rank before the next forward."""
    lucid.random.seed(0)
    f64 = lucid.Float64
    net = DDP(nn.Sequential(nn.Linear(6, 4, dtype=f64), nn.BatchNorm1d(4, dtype=f64)))
    x, _ = data("mlp", rank, np.float64)  # a different batch on each rank
    net(lucid.Tensor(x)).sum().backward()
    after_train = net.module[1].running_mean.numpy().tolist()
    net.eval()
    net(lucid.Tensor(x))
    return {"after_train": after_train,
            "after_next_forward": net.module[1].running_mean.numpy().tolist()}


def magic():
    """What %lucid_flops --backward prints for a DDP step: bytes sent beside the FLOPs."""
    from lucid_viz.magic import count_source

    lucid.random.seed(0)
    ns = {"model": DDP(mlp(lucid.Float64)), "x": lucid.Tensor(np.ones((4, 6)))}
    report, _ = count_source("model(x).sum()", ns, backward=True)
    return report.summary


def collectives(rank, world):
    out = {}
    for device in ("cpu", "gpu"):
        x = lucid.Tensor(np.arange(4.0) + 10 * rank, requires_grad=True)
        y = dist.all_reduce(x.to(device), op="sum")
        (y * (rank + 1)).sum().backward()
        g = lucid.Tensor(np.full((2, 3), float(rank)), requires_grad=True)
        z = dist.all_gather(g.to(device))
        (z * lucid.Tensor(np.arange(6.0 * world).reshape(2 * world, 3)).to(device)).sum().backward()
        b = lucid.Tensor(np.full(3, 5.0 + rank)).to(device)
        dist.broadcast(b, src=world - 1)
        out[device] = {
            "sum": y.numpy().tolist(), "sum_grad": x.grad.tolist(),
            "mean": dist.all_reduce(lucid.Tensor([1.0 * rank]).to(device), op="mean").item(),
            "max": dist.all_reduce(lucid.Tensor([1.0 * rank]).to(device), op="max").item(),
            "min": dist.all_reduce(lucid.Tensor([1.0 * rank]).to(device), op="min").item(),
            "gather": z.numpy().tolist(), "gather_grad": g.grad.tolist(),
            "broadcast": b.numpy().tolist()}
    with lucid.count_flops():
        y = dist.all_reduce(lucid.Tensor(np.ones(1000, dtype=np.float32), requires_grad=True))
    out["bytes"] = [y._op.bytes_sent, y._op.bytes_sent_bwd, y.cost.flops]
    dist.barrier()
    return out


def no_sync(rank, world):
    """Two micro-batches, the first under no_sync, then one step: equal to one process
    stepping on both whole micro-batches (their summed mean-loss gradients)."""
    results = []
    for use_ddp in (True, False):
        lucid.random.seed(rank if use_ddp else 0)
        model = mlp(lucid.Float64)
        net = DDP(model) if use_ddp else model
        opt = SGD(net.parameters(), lr=0.1)
        loss_fn = nn.CrossEntropyLoss()
        share = BATCH // world
        calls = []
        for micro in range(2):
            x, y = data("mlp", micro, np.float64)
            if use_ddp:
                x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
            before = net.reducer.all_reduces if use_ddp else 0
            if use_ddp and micro == 0:
                with net.no_sync():
                    loss_fn(net(lucid.Tensor(x)), lucid.Tensor(y)).backward()
            else:
                loss_fn(net(lucid.Tensor(x)), lucid.Tensor(y)).backward()
            calls.append((net.reducer.all_reduces if use_ddp else 0) - before)
        opt.step()
        results.append(({k: np.asarray(v) for k, v in net.state_dict().items()}, calls))
    (ddp, calls), (ref, _) = results
    return {"max_diff": max(float(np.abs(ddp[k] - ref[k]).max()) for k in ref), "calls": calls}


def mismatch(rank, world):
    lucid.random.seed(0)
    model = nn.Sequential(nn.Linear(6, 16 if rank == 0 else 17), nn.Tanh(), nn.Linear(16, 3))
    try:
        DDP(model)
    except RuntimeError as exc:
        return {"error": str(exc)}
    return {"error": None}


def failing(rank, world, how):
    model = DDP(mlp(lucid.Float32))
    opt = SGD(model.parameters(), lr=0.1)
    for step in range(1000):
        if rank == 1 and step == 3:
            if how == "kill":
                os.kill(os.getpid(), 9)
            time.sleep(120)  # hang: alive, silent
        x, y = data("mlp", step, np.float32)
        loss = nn.CrossEntropyLoss()(model(lucid.Tensor(x)), lucid.Tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"finished": True}


def main():
    mode, out_dir = sys.argv[1], sys.argv[2]
    dist.init()
    rank, world = dist.get_rank(), dist.get_world_size()
    if mode == "exact":
        found = exact(rank, world)
    elif mode == "mismatch":
        found = mismatch(rank, world)
    else:
        found = failing(rank, world, mode)
    found["world"] = world
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(found, f)


if __name__ == "__main__":
    main()
