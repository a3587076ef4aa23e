# %% [markdown]
# # 23 · Past one machine: data parallelism and the all-reduce
#
# Every model so far trained in one process. Large models train on many GPUs at once, and the
# commonest way is **data parallelism**: every process ("rank") holds a full copy of the model,
# works on its own share of each batch, and the ranks average their gradients before every
# optimizer step. This chapter shows why that gives exactly the single-process result, how the
# averaging travels between machines, and runs it for real with two processes on this machine:
#
# | § | what | from |
# |---|---|---|
# | 1 | averaging shard gradients = the full-batch gradient (derived, then checked) | `lucid` |
# | 2 | the ring all-reduce, step by step, and what it sends | `lucid.distributed` |
# | 3 | `DistributedDataParallel` and `DistributedSampler` in one process | `lucid.nn.parallel` |
# | 4 | two processes launched from here, compared with one | `lucid.distributed.launch` |
# | 5 | honest timings, and what changes on several machines | |
#
# The transport is MLX's distributed engine (`mlx.core.distributed`: a ring over TCP, MPI, or
# NCCL on CUDA machines); Lucid adds no network code of its own.
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) (the training loop),
# [14 · Optimizers, schedules and data](14_optimizers_and_data.ipynb) (`DataLoader`) and
# [06 · FLOPs](06_flops.ipynb) (counting work).

# %%
import json
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

import lucid
import lucid.distributed as dist
import lucid.nn as nn
import lucid_viz
from lucid.data import DataLoader, DistributedSampler, TensorDataset
from lucid.distributed import launch
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.optim import SGD
from lucid_viz.distributed import plot_ring_all_reduce
from lucid_viz.exercises import check, check_function

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
warnings.filterwarnings("ignore", message="MLX has no GPU")
np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## 1. Why averaging gradients over shards gives the full-batch gradient
#
# Take a batch of $B$ samples and a loss that is the **mean** of per-sample losses,
# $L = \frac{1}{B}\sum_{i=1}^{B} \ell_i(w)$. Split the batch into $N$ shards of $B/N$ samples,
# one per rank. Rank $r$ computes the mean over its own shard,
# $L_r = \frac{N}{B}\sum_{i \in S_r} \ell_i(w)$. Then
#
# $$\frac{1}{N}\sum_{r=1}^{N} L_r = \frac{1}{N}\cdot\frac{N}{B}\sum_{r}\sum_{i\in S_r}\ell_i
#   = \frac{1}{B}\sum_{i=1}^{B}\ell_i = L,$$
#
# and because differentiation is linear, the same holds for gradients:
#
# $$\nabla_w L = \frac{1}{N}\sum_{r=1}^{N} \nabla_w L_r .$$
#
# So if every rank starts from the **same weights**, computes the gradient of its own shard,
# and all ranks replace their gradient by the **average** over ranks, every rank holds the
# full-batch gradient, takes the same optimizer step, and the weights stay identical - without
# ever sending the weights again. Two conditions hide in the derivation: the shards are the
# same size (otherwise the average needs weights, exercise 23.3), and nothing in the forward
# pass mixes samples across the batch (BatchNorm does: each rank normalises with its own
# shard's statistics, as in PyTorch without `SyncBatchNorm`).
#
# Checked numerically, in one process: the gradient of a small MLP on 8 digits, against the
# average of the gradients on two shards of 4.

# %% tags=["nbval-check-output"]
digits = load_digits()
X_all = ((digits.data - digits.data.mean(0)) / (digits.data.std(0) + 1e-8)).astype(np.float64)
y_all = digits.target.astype(np.int64)


def make_mlp(seed=0, dtype=lucid.Float64):
    lucid.random.seed(seed)
    return nn.Sequential(nn.Linear(64, 32, dtype=dtype), nn.ReLU(), nn.Linear(32, 10, dtype=dtype))


def gradients(model, X, y):
    """d(mean cross-entropy)/dw on (X, y), as NumPy arrays."""
    model.zero_grad()
    nn.CrossEntropyLoss()(model(lucid.Tensor(X)), lucid.Tensor(y)).backward()
    return [p.grad.copy() for p in model.parameters()]


model = make_mlp()
full = gradients(model, X_all[:8], y_all[:8])
shard_a = gradients(model, X_all[:4], y_all[:4])
shard_b = gradients(model, X_all[4:8], y_all[4:8])
worst = max(np.abs(f - (a + b) / 2).max() for f, a, b in zip(full, shard_a, shard_b))
print(f"largest |full-batch gradient - average of the shards'|: {worst:.1e}")
print("equal up to rounding:", worst < 1e-14)

# %% [markdown]
# ## 2. The all-reduce, and the ring that computes it
#
# "Every rank replaces its gradient by the average over ranks" is one collective operation, the
# **all-reduce**: every rank brings an array, every rank leaves with the sum (or mean). The
# simplest way - send everything to rank 0, add, send it back - makes rank 0 move $2(N-1)$
# times the data while the others wait. The **ring all-reduce** (what MLX's ring backend and
# NCCL do) keeps every link busy instead: the ranks sit in a ring, each array is cut into $N$
# chunks, and
#
# 1. **reduce-scatter** ($N-1$ steps): each rank sends one chunk to the next rank, which adds
#    it to its own; after $N-1$ steps each rank holds one chunk summed over all ranks;
# 2. **all-gather** ($N-1$ steps): the finished chunks travel round the ring once more.
#
# Below, 4 ranks (a, b, c, d) and 4 chunks: a cell names whose values it holds so far,
# Σ means all four, and the outline marks the chunk a rank has just received.

# %%
plot_ring_all_reduce(4)

# %% [markdown]
# Each of the $2(N-1)$ steps sends one chunk, $1/N$ of the data, so every rank sends
#
# $$\text{bytes sent per rank} = 2\,\frac{N-1}{N}\,S$$
#
# for an array of $S$ bytes: less than $2S$ however many ranks there are. That is why data
# parallelism scales: the traffic per rank hardly grows with $N$.
# `lucid.distributed.ring_bytes` is this formula, and the simulation behind the picture checks
# it.

# %% tags=["nbval-check-output"]
from lucid.distributed.ring import simulate_ring_all_reduce

S = 4 * 1_000_000  # a 1M-parameter float32 model: 4 MB of gradients
for n in (2, 3, 4, 8, 64):
    print(f"N = {n:2d}: each rank sends {dist.ring_bytes(S, n) / 1e6:.3f} MB "
          f"= {2 * (n - 1) / n:.3f} x the gradients")
steps = simulate_ring_all_reduce(np.arange(16.0).reshape(4, 4))
print("after", len(steps) - 1, "steps every rank holds the column sums:",
      steps[-1].values[0], "=", np.arange(16.0).reshape(4, 4).sum(0))

# %% [markdown]
# ## 3. `lucid.distributed`, `DistributedDataParallel` and `DistributedSampler`
#
# This notebook is one process, so `lucid.distributed` sees a **world of one**: rank 0 of 1,
# every collective returns its input. The same code runs unchanged on many ranks - the launcher
# in section 4 starts them.
#
# * `dist.all_reduce(t, op="sum" | "mean" | "max" | "min")`, `dist.all_gather(t)`,
#   `dist.broadcast(t, src=0)`, `dist.barrier()`; `all_reduce` and `all_gather` are
#   differentiable ops (the gradient of an all-reduce is the all-reduce of the gradients);
# * `DistributedDataParallel(model)` copies rank 0's weights to every rank and averages the
#   gradients during `backward()`, a few buckets at a time;
# * `DistributedSampler` gives every rank its own shard of the dataset.

# %% tags=["nbval-check-output"]
dist.init()
print("rank", dist.get_rank(), "of", dist.get_world_size(), "- backend:", dist.get_backend())
x = lucid.Tensor([1.0, 2.0, 3.0])
print("all_reduce in a world of one:", dist.all_reduce(x, op="sum").numpy())

ddp = DDP(make_mlp(), bucket_cap_mb=0.01)
print(ddp.bytes_per_step())

# %% [markdown]
# DDP marks, in the graph, where the gradient all-reduce begins: the `GradientSync` node,
# coloured apart from the devices' colours, labelled with the bytes it averages. (The bytes
# *sent* are $2(N-1)/N$ of them - 0 here, with one rank.)

# %%
with lucid.count_flops():
    loss = nn.CrossEntropyLoss()(ddp(lucid.Tensor(X_all[:4])), lucid.Tensor(y_all[:4]))
lucid_viz.draw(loss)

# %% [markdown]
# The sampler deals indices round the ranks like cards. Ten samples on 3 ranks do not split
# evenly, so the list is padded with its first indices (every rank must take the same number
# of steps, or one would wait for ever in an all-reduce); `set_epoch` reshuffles, the same way
# on every rank.

# %% tags=["nbval-check-output"]
ten = TensorDataset(lucid.Tensor(np.arange(10.0)))
for r in range(3):
    print(f"rank {r} of 3:", list(DistributedSampler(ten, num_replicas=3, rank=r, shuffle=False)))
sampler = DistributedSampler(ten, num_replicas=2, rank=0, seed=0)
for epoch in range(2):
    sampler.set_epoch(epoch)
    print(f"epoch {epoch}, rank 0 of 2, shuffled:", list(sampler))
loader = DataLoader(ten, batch_size=2, sampler=DistributedSampler(ten, 2, 1, shuffle=False))
print("rank 1's batches:", [b[0].numpy().tolist() for b in loader])

# %% [markdown]
# ## 4. Two processes, launched from this notebook
#
# A data-parallel program is an ordinary training script that every rank runs. The script
# below differs from a single-process one in three lines: `dist.init()`, wrapping the model in
# `DDP`, and each rank taking its half of every batch. The launcher
# `python -m lucid.distributed.launch -n 2 train.py` (a thin wrapper on `mlx.launch`) starts it
# twice, connected in a ring over this machine's loopback. We call the same launcher from
# Python with `launch.run`.
#
# Every rank starts from **different** random weights on purpose (`seed(rank)`): wrapping the
# model must copy rank 0's weights to all ranks.

# %%
SCRIPT = '''
import json, sys, time
import numpy as np
import lucid, lucid.nn as nn, lucid.distributed as dist
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.optim import SGD

dist.init()
rank, world = dist.get_rank(), dist.get_world_size()
data = np.load(sys.argv[1])
X, y, steps, batch = data["X"], data["y"], int(data["steps"]), int(data["batch"])

lucid.random.seed(rank)  # ranks start apart on purpose: DDP copies rank 0's weights
model = DDP(nn.Sequential(nn.Linear(64, 256, dtype=lucid.Float64), nn.ReLU(),
                          nn.Linear(256, 10, dtype=lucid.Float64)))
opt = SGD(model.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
share = batch // world
seconds = []
for step in range(steps):
    lo = step * batch
    xb = X[lo + rank * share: lo + (rank + 1) * share]  # this rank's half of the batch
    yb = y[lo + rank * share: lo + (rank + 1) * share]
    t0 = time.perf_counter()
    loss = loss_fn(model(lucid.Tensor(xb)), lucid.Tensor(yb))
    opt.zero_grad()
    loss.backward()
    opt.step()
    seconds.append(time.perf_counter() - t0)

from lucid_viz.magic import count_source  # what %lucid_flops reports for one step
report, _ = count_source("model(x).sum()", {"model": model, "x": lucid.Tensor(X[:share])},
                         backward=True)
if rank == 0:
    np.savez(sys.argv[2], **model.state_dict())
    json.dump({"step_s": float(np.median(seconds[3:])), "flops": report.summary,
               "all_reduces": model.reducer.all_reduces}, open(sys.argv[3], "w"))
'''

STEPS, BATCH = 20, 64
# One BLAS thread per process, here and in section 5's single process: the timings then
# compare like with like (matrix products this small gain nothing from more threads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
work = Path(tempfile.mkdtemp(prefix="lucid-ddp-"))
(work / "train_ddp.py").write_text(SCRIPT)
np.savez(work / "data.npz", X=X_all[:STEPS * BATCH], y=y_all[:STEPS * BATCH], steps=STEPS,
         batch=BATCH)

t0 = time.perf_counter()
job = launch.run(str(work / "train_ddp.py"),
                 [str(work / "data.npz"), str(work / "ddp.npz"), str(work / "ddp.json")],
                 n=2, timeout=60, capture=True, deadline=240)
launch_s = time.perf_counter() - t0
print("exit status of the two ranks:", job.returncode)
two_ranks = dict(np.load(work / "ddp.npz"))
info = json.loads((work / "ddp.json").read_text())

# %% [markdown]
# Now the same training in this one process, on the **whole** batch, from rank 0's starting
# weights (`seed(0)`):

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
single = nn.Sequential(nn.Linear(64, 256, dtype=lucid.Float64), nn.ReLU(),
                       nn.Linear(256, 10, dtype=lucid.Float64))
opt = SGD(single.parameters(), lr=0.1, momentum=0.9)
loss_fn = nn.CrossEntropyLoss()
for step in range(STEPS):
    xb = X_all[step * BATCH:(step + 1) * BATCH]
    yb = y_all[step * BATCH:(step + 1) * BATCH]
    loss = loss_fn(single(lucid.Tensor(xb)), lucid.Tensor(yb))
    opt.zero_grad()
    loss.backward()
    opt.step()

worst = max(np.abs(two_ranks[k] - v).max() for k, v in single.state_dict().items())
print("parameters compared:", ", ".join(two_ranks))
print(f"largest |2 ranks on halves - 1 process on the whole batch| after {STEPS} steps: "
      f"{'below 1e-12' if worst < 1e-12 else worst}")
print("all-reduces over the run:", info["all_reduces"], "(one bucket per step)")

# %% [markdown]
# The two ranks, each on half of every batch, reach the single-process weights to rounding
# error, in float64. (The tests of `lucid.distributed` check the same for a small CNN, on both
# devices, in float32 and float64.) Rank 0 also ran `%lucid_flops` on one step: the backward
# pass now has **bytes sent** beside its FLOPs - the gradient all-reduce, $2(N-1)/N$ of the
# gradient bytes with $N = 2$:

# %%
print(info["flops"])

# %% [markdown]
# ## 5. Honest timings
#
# For a fair comparison the single process runs the same script, started the same way, as a
# world of one (`-n 1`): the same Python, one BLAS thread per process in both runs. (By
# default the launcher gives each rank's NumPy cores/N threads for its matrix products, as
# `torchrun` does: N ranks that each started one thread per core would fight over the cores.)
# The numbers are from this run; they change from run to run and machine to machine.

# %%
t0 = time.perf_counter()
alone = launch.run(str(work / "train_ddp.py"),
                   [str(work / "data.npz"), str(work / "one.npz"), str(work / "one.json")],
                   n=1, timeout=60, capture=True, deadline=240)
one = json.loads((work / "one.json").read_text())
print(f"1 process, batch {BATCH}:             {one['step_s'] * 1e3:6.2f} ms per step")
print(f"2 ranks, batch {BATCH // 2} each (rank 0):   {info['step_s'] * 1e3:6.2f} ms per step")
print(f"speed-up: {one['step_s'] / info['step_s']:.2f}x  (ideal: 2x)")
print(f"starting the two processes and running the job took {launch_s:.1f} s")


# %% [markdown]
# On a small machine, for a model this small, expect little speed-up or a slowdown: a step is
# a fraction of a millisecond of arithmetic, each rank needs a core of its own (and the
# notebook's kernel, the launcher and other users want them too), and every step waits for the
# slower rank and for the all-reduce. A simple model of one step on $N$ ranks:
#
# $$T_N \approx \frac{T_1}{N} + 2(N-1)\,\alpha + 2\,\frac{N-1}{N}\,\frac{S}{\beta}$$
#
# with $T_1$ the single-process compute time, $\alpha$ the latency of one message, $S$ the
# gradient bytes and $\beta$ the bandwidth of a link. Data parallelism pays off when the
# compute term dominates: large batches, large models per byte of gradient (convolutions reuse
# each weight many times), fast links - and it gets worse with many tiny messages, which is why
# DDP sends gradients in a few large buckets. On several machines the same script runs with a
# host file (`mlx.launch --hostfile hosts.json`), and on NVIDIA machines with NCCL
# (`--backend nccl`); the README shows both.

# %% [markdown]
# ## Exercises
#
# ### Exercise 23.1 · The ring's bytes
#
# Write `ring_bytes_sent(nbytes, world_size)`: the bytes one rank sends in a ring all-reduce of
# an array of `nbytes` bytes (a multiple of `world_size`) on `world_size` ranks. A world of one
# sends nothing.

# %% tags=["solution"]
def ring_bytes_sent(nbytes, world_size):
    """2(N-1)/N of the array: 2(N-1) steps, one chunk of nbytes/N each."""
    return 2 * (world_size - 1) * nbytes // world_size


# %% tags=["check"]
check_function("Exercise 23.1", ring_bytes_sent, dist.ring_bytes,
               [(400, 1), (400, 2), (1200, 3), (4_000_000, 4), (64_000, 64)],
               hint="count the steps (reduce-scatter, then all-gather: N-1 each) and what one "
                    "step sends (one of the N chunks).")

# %% [markdown]
# ### Exercise 23.2 · A sampler's shards
#
# Ten samples, 4 ranks, `shuffle=False`: which indices does **rank 3** visit in one epoch, in
# order? Work it out from the rules in section 3 (deal round the ranks, pad with the first
# indices), as a list of ints.

# %% tags=["solution"]
rank_3_of_4 = [3, 7, 1]

# %% tags=["check"]
check("Exercise 23.2", rank_3_of_4,
      list(DistributedSampler(ten, num_replicas=4, rank=3, shuffle=False)),
      hint="4 ranks need the same number of samples each: ceil(10 / 4) = 3, so the list is "
           "padded to 12; rank r takes positions r, r + 4, r + 8.")

# %% [markdown]
# ### Exercise 23.3 · Shards of unequal size
#
# Two ranks hold shards of 3 and 5 samples, and each computes the gradient of its own mean
# loss, $g_a$ and $g_b$. With which weights $w_a, w_b$ is $w_a g_a + w_b g_b$ the gradient of
# the mean loss over all 8 samples? Give `[w_a, w_b]` (plain averaging, `[0.5, 0.5]`, is
# wrong here). The check finds the weights that fit real gradients.

# %% tags=["solution"]
unequal_weights = [3 / 8, 5 / 8]

# %% tags=["check"]
g_a = np.concatenate([g.ravel() for g in gradients(model, X_all[:3], y_all[:3])])
g_b = np.concatenate([g.ravel() for g in gradients(model, X_all[3:8], y_all[3:8])])
g_full = np.concatenate([g.ravel() for g in gradients(model, X_all[:8], y_all[:8])])
fitted = np.linalg.lstsq(np.stack([g_a, g_b], axis=1), g_full, rcond=None)[0]
check("Exercise 23.3", unequal_weights, fitted,
      hint="write each shard's mean loss as a sum over its samples divided by its size, and "
           "the full mean as the sum over all 8 divided by 8.")


# %% [markdown]
# ### Exercise 23.4 · Gradient accumulation with `no_sync`
#
# A batch too large for memory is split into micro-batches whose gradients add up before one
# optimizer step. With DDP, averaging after every micro-batch wastes traffic: run every
# micro-batch but the last inside `with model.no_sync():` (gradients accumulate locally), the
# last one outside (its backward averages the accumulated total), then step.
#
# Write `accumulate_and_step(model, opt, micro_batches)`: `micro_batches` is a list of `(X, y)`
# NumPy pairs of equal size; use `nn.CrossEntropyLoss()` divided by the number of
# micro-batches (so the sum of the micro-gradients is the gradient of the whole batch's mean
# loss), zero the gradients first and take one `opt.step()` at the end. The check compares the
# weights with one step on the whole batch at once.

# %% tags=["solution"]
def accumulate_and_step(model, opt, micro_batches):
    """One optimizer step on the mean loss of all micro-batches, averaging gradients once."""
    loss_fn = nn.CrossEntropyLoss()
    k = len(micro_batches)
    opt.zero_grad()
    for i, (X, y) in enumerate(micro_batches):
        if i < k - 1:
            with model.no_sync():
                (loss_fn(model(lucid.Tensor(X)), lucid.Tensor(y)) / k).backward()
        else:
            (loss_fn(model(lucid.Tensor(X)), lucid.Tensor(y)) / k).backward()
    opt.step()


# %% tags=["check"]
def weights_after(k, accumulate):
    """One step of a fresh DDP model on 24 digits, in k micro-batches or all at once."""
    ddp_model = DDP(make_mlp(seed=3))
    opt = SGD(ddp_model.parameters(), lr=0.5)
    X, y = X_all[:24], y_all[:24]
    if accumulate:
        accumulate_and_step(ddp_model, opt, list(zip(np.split(X, k), np.split(y, k))))
    else:
        opt.zero_grad()
        nn.CrossEntropyLoss()(ddp_model(lucid.Tensor(X)), lucid.Tensor(y)).backward()
        opt.step()
    calls = ddp_model.reducer.all_reduces
    return [p.numpy() for p in ddp_model.parameters()] + [np.array(float(calls))]


check_function("Exercise 23.4", lambda k: weights_after(k, True),
               lambda k: weights_after(k, False), [2, 3, 4], atol=1e-12,
               hint="the loss of each micro-batch is its mean divided by the number of "
                    "micro-batches; only the last backward runs outside no_sync(), so the "
                    "gradients are averaged once per step.")

# %% [markdown]
# **Next:** back to [00 · Start here](00_start_here.ipynb), which lists the whole course:
# pick a chapter to revisit, or work through the exercises of the student edition.
