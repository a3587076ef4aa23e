# %% [markdown]
# # 06 · FLOPs: how much work does a graph cost?
#
# A **FLOP** counts one floating-point operation. Lucid counts the work of every node of the
# graph in two honest units:
#
# * **matmul, linear layers and convolution** count **MACs** (multiply-accumulates, one per
#   multiply-add): `(m, k) @ (k, n)` costs `m·n·k` MACs;
# * **every other op** counts **FLOPs**: elementwise ops one per output element, reductions one
#   per input element; shape ops (reshape, transpose, indexing) count 0.
#
# A MAC is **2 FLOPs** (one multiply, one add), so Lucid never adds the two units silently: it
# prints `96 MACs + 36 FLOPs`, and `in_flops` converts everything to FLOPs. In this chapter:
# `lucid.count_flops()`, per-node counts in a drawn graph, `summarize`, the `%lucid_flops` /
# `%%lucid_flops` magics and their report, and why FLOPs are not wall time.
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (the graph) and
# matrix multiplication; `nn.Linear` as met in the tour, [00](00_start_here.ipynb).

# %%
import warnings

import lucid
import lucid.nn as nn
import lucid_viz
from lucid_viz.exercises import check, check_function

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (chapter 05 is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")

lucid.random.seed(0)

# %% [markdown]
# ## 1. `with lucid.count_flops():`
#
# Counting is off by default (and then costs nothing). Inside the `with` block every op records its
# work; `tensor.cost` then sums it over the graph below the tensor, each node once, MACs and FLOPs
# apart. (`tensor.flops` is the original Lucid's single number: the two added as they are.)

# %% tags=["nbval-check-output"]
A = lucid.random.randn(4, 8, dtype=lucid.Float32)
W = lucid.random.randn(8, 3, dtype=lucid.Float32, requires_grad=True)   # a weight
b = lucid.zeros(3, dtype=lucid.Float32)

with lucid.count_flops():
    z = lucid.tanh(A @ W + b)
    s = z.sum()

print("counting now?", lucid.flops_enabled())
print("s.cost =", s.cost)
print("by hand: matmul 4*3*8 = 96 MACs; add 12 + tanh 12 + sum 12 =", 12 + 12 + 12, "FLOPs")
print("in FLOPs:", s.cost.in_flops, "= 2 * 96 + 36")

# %% [markdown]
# Outside `count_flops()` nothing is recorded, and the cost is 0:

# %% tags=["nbval-check-output"]
print((lucid.tanh(A @ W + b)).cost)

# %% [markdown]
# ## 2. FLOPs per node
#
# `lucid_viz.trace` turns the graph into plain data: one `Node` per tensor with its op, shape,
# device and cost: forward, and the cost of its backward rule. Leaves (inputs, constants) have
# no op, so no cost. Only `W` requires grad, so the matmul's backward computes one product
# (`A.T @ g`, 96 MACs) and skips the gradient of `A`; each op counts only the gradients it
# computes.

# %% tags=["nbval-check-output"]
graph = lucid_viz.trace(s)
print(f"{'node':10s} {'shape':8s} {'forward':>10s} {'backward':>10s}")
for n in graph.nodes:
    fwd, bwd = n.cost(), n.cost(backward=True)
    print(f"{n.title:10s} {str(n.shape):8s} {str(fwd or '-'):>10s} {str(bwd or '-'):>10s}")

# %% [markdown]
# The drawing puts the same numbers on the nodes, with the total in the title and the units
# explained once, in the legend:

# %%
lucid_viz.draw(s)

# %% [markdown]
# ## 3. MACs vs FLOPs
#
# Everything in one unit: `flops_unit="FLOPs"` counts each multiply-add as 2 FLOPs and leaves
# the other ops as they are (an add is one FLOP in either unit). Always say which unit you quote
# - a factor of 2 is easy to lose.

# %% tags=["nbval-check-output"]
print(f"{s.cost}  =  {s.cost.in_flops} FLOPs  (2 * {s.cost.macs} + {s.cost.flops})")

# %%
lucid_viz.draw(s, flops_unit="FLOPs")

# %% [markdown]
# Only the matmul has multiply-*adds*, so only its count doubles. Tools differ here (some double
# everything, some count MACs only), which is one more reason to state the convention.
#
# ## 4. A whole model: `summarize`
#
# `lucid.models.summarize(model, input_shape)` runs the model once on zeros and reports, per
# layer, shapes, parameters, MACs and FLOPs. A `Linear(in, out)` on a batch of `N` costs
# `N·in·out` MACs for the matmul plus `N·out` FLOPs for the bias add.

# %% tags=["nbval-check-output"]
from lucid.models import summarize

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
summary = summarize(model, (1, 64))

# %%
lucid_viz.plot_flops_per_layer(summary)

# %% [markdown]
# ## 5. The `%lucid_flops` magics
#
# `%load_ext lucid_viz` registers a magic that counts everything a cell does: one summary line
# (MACs and FLOPs, and everything in FLOPs), then a per-op and a per-module table. `--backward`
# adds the work of each op's backward rule (only the gradients it computes).

# %%
# %load_ext lucid_viz

# %% tags=["nbval-check-output"]
# %%lucid_flops
x = lucid.zeros(1, 64, dtype=lucid.Float32)
y = model(x)

# %% [markdown]
# For one expression there is the **line** magic, `%lucid_flops EXPR`: it counts just that
# expression. The same model on a batch of 8 costs exactly 8 times the batch of 1 above - forward
# FLOPs grow linearly with the batch size:

# %% tags=["nbval-check-output"]
# %lucid_flops model(lucid.zeros(8, 64, dtype=lucid.Float32))

# %% [markdown]
# With `--backward`, for a scalar loss, the magic adds what each op's backward rule costs. A
# matmul's backward needs one product per operand that requires grad: the weight's gradient, and
# the input's - except for the first layer, whose input `x` needs no gradient. That is why a
# training step costs roughly 2-3 times the forward pass. (`-o` makes the magic *return* its
# report; the next cell uses it.)

# %% tags=["nbval-check-output"]
# %%lucid_flops -o --backward
x = lucid.zeros(8, 64, dtype=lucid.Float32)
loss = (model(x) ** 2).mean()
loss

# %% [markdown]
# ### The report is data: `-o`
#
# With `-o` the tables above are the cell's *result*: a `FlopsReport` object, which IPython shows
# as `Out[...]` and keeps in `_`. (The line magic can be assigned directly:
# `report = %lucid_flops -o model(x)`.) Its fields are plain numbers and rows, so you can compute
# with them instead of reading them off a table - here, what that training step costs measured in
# forward passes:

# %% tags=["nbval-check-output"]
report = _                                      # IPython keeps the last result in _
print(type(report).__name__)
print("forward:", report.forward, " backward:", report.backward)
ratio = report.total.in_flops / report.forward.in_flops
print(f"forward + backward = {ratio:.2f} x the forward pass (both in FLOPs)")
print("ops:")
for row in report.ops:
    print(f"  {row.op:8s} x{row.count}  forward {str(row.forward):>20s}  "
          f"backward {str(row.backward):>20s}")
print("modules:")
for row in report.modules:
    print(f"  {row.path:18s} {row.kind:11s} forward {str(row.forward):>20s}")
print("ops not counted:", report.uncounted)

# %% [markdown]
# ## 6. FLOPs are not time
#
# FLOPs measure *work*, not *time*. A big matmul does a lot of work very efficiently (BLAS); a long
# chain of tiny ops does almost no work but pays Python and dispatch overhead per op. The timings
# below are not checked; compare the **FLOPs per second**.

# %%
import time

big = lucid.random.randn(256, 256, dtype=lucid.Float32)
tiny = lucid.random.randn(8, 8, dtype=lucid.Float32)

def run_big():
    return big @ big                       # one op

def run_tiny():
    t = tiny
    for _ in range(300):                   # 300 ops on 64 numbers
        t = lucid.tanh(t) * 0.9
    return t

for name, fn in [("one 256x256 matmul", run_big), ("300 tiny elementwise ops", run_tiny)]:
    with lucid.count_flops():
        flops = fn().cost.in_flops
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    print(f"{name:26s} {flops:>12,} FLOPs  {1e3 * dt:8.2f} ms  {flops / dt / 1e6:10.1f} MFLOP/s")

# %% [markdown]
# The matmul does hundreds of times more work and still finishes sooner. For small models the cost
# is dominated by the *number of ops*, not by FLOPs; for big ones, FLOPs (and memory traffic)
# dominate.
#
# ## Exercises
#
# ### Exercise 6.1 · The cost of a Linear layer
#
# A `Linear(100, 50)` layer (with its bias) runs on a batch of 16 inputs. How many MACs and how
# many FLOPs does its forward pass cost? And how many FLOPs is that in all, counting a MAC as 2?

# %% tags=["solution"]
linear_macs = 80_000
linear_flops = 800
linear_in_flops = 160_800

# %% tags=["check"]
with lucid.count_flops():
    out_check = nn.Linear(100, 50)(lucid.zeros(16, 100, dtype=lucid.Float32))
nudge = "Section 1 counts a Linear layer's cost: the matmul, then the bias."
hint = ("the matmul is (16, 100) @ (100, 50); the bias is added once per output number; and a "
        "MAC is 2 FLOPs.")
check("Exercise 6.1 (MACs)", linear_macs, out_check.cost.macs, nudge=nudge, hint=hint)
check("Exercise 6.1 (FLOPs)", linear_flops, out_check.cost.flops, nudge=nudge, hint=hint)
check("Exercise 6.1 (all in FLOPs)", linear_in_flops, out_check.cost.in_flops, nudge=nudge,
      hint=hint)

# %% [markdown]
# ### Exercise 6.2 · The cost of a small graph
#
# `A` has shape `(8, 16)`, `W` has shape `(16, 6)` and `b` has shape `(6,)`. Predict the cost of
# `lucid.tanh(A @ W + b).sum()`: how many MACs, and how many FLOPs?

# %% tags=["solution"]
graph_macs = 768
graph_flops = 144

# %% tags=["check"]
with lucid.count_flops():
    s_check = lucid.tanh(lucid.zeros(8, 16) @ lucid.zeros(16, 6) + lucid.zeros(6)).sum()
nudge = "Section 1 counts this very graph with other shapes."
hint = ("section 1 works the same example with other shapes: the matmul counts MACs; the add, "
        "the tanh and the sum each count one FLOP per number of the (8, 6) result.")
check("Exercise 6.2 (MACs)", graph_macs, s_check.cost.macs, nudge=nudge, hint=hint)
check("Exercise 6.2 (FLOPs)", graph_flops, s_check.cost.flops, nudge=nudge, hint=hint)


# %% [markdown]
# ### Exercise 6.3 · A cost formula
#
# Write `linear_cost(n, d_in, d_out)`: the forward cost of `nn.Linear(d_in, d_out)` (with its bias)
# on a batch of `n` inputs, as a pair `(MACs, FLOPs)`. The check measures real layers with
# `count_flops` and compares.

# %% tags=["solution"]
def linear_cost(n, d_in, d_out):
    """(MACs, FLOPs) of a Linear(d_in, d_out) layer with bias on a batch of n."""
    return n * d_in * d_out, n * d_out


# %% tags=["check"]
def measured_cost(n, d_in, d_out):
    with lucid.count_flops():
        y = nn.Linear(d_in, d_out)(lucid.zeros(n, d_in, dtype=lucid.Float32))
    return y.cost.macs, y.cost.flops


check_function("Exercise 6.3", linear_cost, measured_cost, [(16, 100, 50), (1, 64, 10), (7, 3, 5)],
               nudge="Write Exercise 6.1's counts with letters instead of numbers.",
               hint="Exercise 6.1 with letters: the matmul is (n, d_in) @ (d_in, d_out).")


# %% [markdown]
# ### Exercise 6.4 · The MACs of an MLP
#
# Write `mlp_macs(batch, sizes)`: the MACs of the forward pass of an MLP whose Linear layers
# have the sizes `sizes` (`[64, 32, 10]` is `Linear(64, 32)`, ReLU, `Linear(32, 10)`) on a batch
# of `batch` inputs. The check builds such MLPs and counts them with `count_flops`.

# %% tags=["solution"]
def mlp_macs(batch, sizes):
    """MACs of the Linear layers of an MLP with these layer sizes, on a batch."""
    return sum(batch * a * b for a, b in zip(sizes[:-1], sizes[1:]))


# %% tags=["check"]
def measured_mlp_macs(batch, sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    with lucid.count_flops():
        out = nn.Sequential(*layers[:-1])(lucid.zeros(batch, sizes[0]))
    return out.cost.macs


check_function("Exercise 6.4", mlp_macs, measured_mlp_macs,
               [(5, [64, 32, 10]), (1, [3, 4]), (16, [10, 20, 30, 2])],
               nudge="Exercise 6.3 gives one layer's MACs; an MLP is several layers.",
               hint="each Linear(a, b) costs batch·a·b MACs (ReLU and the bias cost FLOPs, not "
                    "MACs); add them over consecutive pairs of sizes.")

# %% [markdown]
# **Next:** [07 · Parameters, buffers and `state_dict`](07_parameters_buffers_state_dict.ipynb):
# how a model finds, saves and loads its parts.
