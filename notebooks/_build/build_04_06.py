"""Build (and execute) notebooks 04-06 from the cell lists below.

    .venv/bin/python notebooks/_build/build_04_06.py [04 05 06]

Cells tagged nbval-check-output are
checked by nbval; keep their output
deterministic (no timings, addresses or temp paths).
"""

from __future__ import annotations

from nbbuild import code, main, md, setup

# ------------------------------------------------------------------------------------ 04
NB04 = [
    md("""
# 04 · Devices: "cpu" is NumPy, "gpu" is MLX

Every Lucid tensor lives on a **device**. Lucid has two:

| device | array library | its arrays |
| --- | --- | --- |
| `"cpu"` | NumPy | `numpy.ndarray` |
| `"gpu"` | MLX (`mlx.core`) | `mlx.core.array` |

Every operation is written **once** against an array namespace `xp` (NumPy or `mlx.core`); the
dispatcher picks the namespace from the devices of the inputs. In this chapter we:

1. ask which kind of "gpu" this machine has;
2. move tensors between devices, and meet *free* tensors that follow the op;
3. trigger (and read) the mixed-device error;
4. index a gpu tensor (what MLX accepts as an index);
5. see MLX's **laziness** and what `.eval()` and `lucid.evaluate` do;
6. draw a graph whose nodes are coloured by device;
7. move a whole model to the gpu and train it there.
"""),
    code(setup("import numpy as np", "", "import lucid", "import lucid_viz")),
    md("""
## 1. What is the "gpu" here?

`lucid.gpu_status()` answers with one of three words:

* `"gpu"` - MLX has a real GPU (Metal on a Mac, CUDA on an NVIDIA machine);
* `"mlx-cpu"` - MLX is installed but has no GPU: "gpu" tensors run on **MLX's CPU device**
  (Linux with `pip install 'mlx[cpu]'`, like this classroom machine and CI);
* `"missing"` - MLX is not installed; `.to("gpu")` then raises with install instructions.

`lucid.gpu_available()` is the yes/no version: `True` only for a **real** GPU (the first case).
Ask it before you time anything on "gpu" - `mlx-cpu` runs the gpu code path, but not faster.
"""),
    code('''
import mlx.core as mx

print("lucid.gpu_status():   ", lucid.gpu_status())
print("lucid.gpu_available():", lucid.gpu_available())
print("MLX default device:   ", mx.default_device())
''', check=True),
    md("""
On this machine the answer is `mlx-cpu`. The MLX code path, its dtypes and its laziness are the
real ones; only the hardware underneath is a CPU. (Lucid warns once about this - we silenced that
warning in the first cell.)

## 2. Moving tensors: `.to(device)`

A tensor starts on `"cpu"` unless you say otherwise. `.to("gpu")` (or `.gpu()`) returns a copy
whose data is an MLX array; `.to("cpu")` brings it back. The logical dtype is kept.
"""),
    code('''
x = lucid.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
xg = x.to("gpu")
back = xg.to("cpu")

for name, t in [("x", x), ("xg", xg), ("back", back)]:
    kind = f"{type(t.data).__module__}.{type(t.data).__name__}"
    print(f"{name:5s} device={t.device!r:6s} dtype={t.dtype}  data is {kind}")
print("same values after the round trip:", np.array_equal(x.numpy(), back.numpy()))
''', check=True),
    md("""
`.gpu()` and `.cpu()` are the short spellings of `.to("gpu")` and `.to("cpu")`. A tensor that is
already on the device is returned as it is (no copy). A real move is a copy - and, for a tensor
that requires grad, an op in the graph (`ToDevice`) that gradients flow back across (section 7).
"""),
    code('''
xg2 = x.gpu()
print("x.gpu().device:       ", xg2.device)
print("x.gpu().cpu().device: ", xg2.cpu().device)
print("x.cpu() is x:         ", x.cpu() is x)          # already there: the same tensor
print("xg2.gpu() is xg2:     ", xg2.gpu() is xg2)
''', check=True),
    md("""
Or make a tensor on the device directly: creation functions and everything in `lucid.random`
take `dtype=` and `device=`. Seed 001's example, a random permutation of 0..9 as 16-bit ints on
the gpu - the logical dtype `Int16` becomes MLX's `int16` there:
"""),
    code('''
perm = lucid.random.permutation(10, dtype=lucid.Int16, device="gpu")
print(perm.tolist())
print("dtype:", perm.dtype, " device:", perm.device, " data dtype:", perm.data.dtype)
''', check=True),
    md("""
The same operation runs on either device, and gives the same numbers:
"""),
    code('''
print("cpu:", round(lucid.tanh(x).sum().item(), 4))
print("gpu:", round(lucid.tanh(xg).sum().item(), 4))
print("result device:", lucid.tanh(xg).device)
''', check=True),
    md("""
## 3. Free tensors follow the op

A tensor made from a Python scalar or list has no device preference yet: it is **free**. When it
meets a tensor on another device inside an op, it moves to the op's device silently. Python
scalars (`2 * t`) are free too. A tensor made from a NumPy array is *not* free: it means "cpu".
`t.free()` marks any tensor as free.
"""),
    code('''
a = lucid.Tensor([1.0, 2.0, 3.0])             # from a list: free
b = lucid.Tensor(np.array([10.0, 20.0, 30.0])).to("gpu")   # from NumPy, then moved: not free

c = a + b                                     # the op runs on "gpu"; a follows it
print("a.is_free:", a.is_free, " b.is_free:", b.is_free)
print("c =", c.tolist(), "on", c.device)
print("2 * b on", (2 * b).device)
''', check=True),
    md("""
## 4. The mixed-device error

Two tensors that are **not** free and sit on different devices cannot meet: Lucid will not
guess which copy you wanted. The error names the op, the shapes and the devices, and suggests the
fix.
"""),
    code('''
w = lucid.random.randn(2, 3)                  # a cpu tensor (not free)
v = lucid.random.randn(3, 4, device="gpu")    # a gpu tensor (not free)

try:
    w @ v
except RuntimeError as err:
    print("RuntimeError:", err)
''', check=True),
    code('''
# The fix the message suggests: put both operands on one device.
print((w.to("gpu") @ v).shape, "on", (w.to("gpu") @ v).device)
''', check=True),
    md("""
## 5. Indexing a gpu tensor

MLX's indexing differs from NumPy's: it has no boolean-mask indexing (an MLX array indexed by
a bool mask raises "boolean indices are not yet supported"), and it refuses NumPy arrays and
Python bools as indices. The seed's `parse_mlx_indexing` (in `lucid/backends/mlx_backend.py`)
translates a NumPy-style index into one MLX accepts. Its table:
"""),
    code('''
from lucid.backends.mlx_backend import parse_mlx_indexing

examples = [
    True,                              # Python bool       -> 1 / 0
    [True, False, True, True],         # list of bools     -> int32 indices of the True ones
    mx.array([False, True, True]),     # MLX bool mask     -> int32 indices
    [2, 0, 1],                         # list of ints      -> int32 MLX array
    (0, [True, False, True]),          # tuple: each part on its own
    slice(1, 3),                       # anything else     -> unchanged
]
for index in examples:
    print(f"{index!r:38s} -> {parse_mlx_indexing(index)!r}")
''', check=True),
    md("""
A NumPy array is refused: it lives on the CPU, and silently copying it to the device on every
indexing would hide a device mix-up (the same reason as the mixed-device error above).
"""),
    code('''
try:
    parse_mlx_indexing(np.array([1, 0]))
except TypeError as err:
    print("TypeError:", err)
''', check=True),
    md("""
Lucid's own tensor indexing follows the same rules on both devices: lists of bools and boolean
masks select the true positions, int lists pick elements, a NumPy array cannot index a gpu tensor
(use a list, or a lucid Tensor on "gpu"), and an index tensor must sit on the indexed tensor's
device. One difference: tensor indexing refuses a bare Python `True` (NumPy would read
`t[True]` as a new axis, the seed's table as `t[1]`; Lucid makes you say which).
"""),
    code('''
vg = lucid.Tensor(np.arange(5, dtype=np.float32)).gpu()

print("vg[[True, False, True, False, True]] ->", vg[[True, False, True, False, True]].tolist())
print("vg[[4, 0]]                          ->", vg[[4, 0]].tolist())
print("vg[vg > 2]                          ->", vg[vg > 2].tolist(), "on", vg[vg > 2].device)
for bad in (np.array([4, 0]), vg.cpu() > 2):
    try:
        vg[bad]
    except TypeError as err:
        print("TypeError:", err)
''', check=True),
    md("""
## 6. MLX is lazy: `.eval()`

NumPy computes each result as soon as you ask. MLX does not: an MLX operation only *records*
what to compute, and the work happens when a value is needed (printing, `.item()`, `.numpy()`)
or when you call `mx.eval`. Lucid's `Tensor.eval()` does that for a tensor (and cuts MLX's own
graph behind it), so call it before `backward()` and once per training step - the seeds' habit
`loss.eval()`.

The timings below are *not* checked (they vary from run to run); look at their sizes: building
the 20 "gpu" ops costs almost nothing, the work all happens in `.eval()`.
"""),
    code('''
import time

big = lucid.random.randn(256, 256, dtype=lucid.Float32, device="gpu")

t0 = time.perf_counter()
h = big
for _ in range(20):
    h = lucid.tanh(h @ big) * 0.5             # recorded, not computed
t1 = time.perf_counter()
h.eval()                                      # now MLX does the work
t2 = time.perf_counter()
print(f"building 20 matmul+tanh steps: {1e3 * (t1 - t0):7.1f} ms")
print(f"h.eval():                      {1e3 * (t2 - t1):7.1f} ms")
'''),
    md("""
`eval()` returns the tensor itself, so it chains: `loss.eval().backward()`. On the "cpu" device
it does nothing - NumPy has already computed everything.
"""),
    code('''
print(h.eval() is h, x.eval() is x)
''', check=True),
    md("""
`lucid.evaluate(t1, t2, ...)` evaluates several tensors in one MLX call: the data **and** the
gradient of each (cpu tensors and `None` are skipped). Optimizers call it on every parameter at
the end of `step()`, so after each step the parameters are numbers again - not a *recipe* that
reaches back through every earlier step, which MLX would have to keep in memory until something
forced it. Write the update yourself, and that call is yours to make:

Gradient descent by hand on the gpu, fitting `theta` so that `X @ theta` matches `X @ [1, -2, 0.5]`:
"""),
    code('''
X = lucid.random.randn(64, 3, dtype=lucid.Float32, device="gpu")
y = X @ lucid.Tensor([1.0, -2.0, 0.5], dtype=lucid.Float32, device="gpu")
theta = lucid.zeros(3, dtype=lucid.Float32, device="gpu", requires_grad=True)

for step in range(50):
    loss = ((X @ theta - y) ** 2).mean()
    loss.eval()                                 # compute the loss before backward
    loss.backward()
    theta.data = theta.data - 0.1 * theta.grad  # a raw MLX expression: recorded, not computed
    theta.grad = None
    lucid.evaluate(theta)                       # compute it now: the recipe stops here
    if step % 10 == 0:
        print(f"step {step:2d}  loss {loss.item():.4f}")
print("theta =", [round(t, 3) for t in theta.tolist()])
''', check=True),
    md("""
## 7. Devices in the graph

`lucid_viz.draw` colours every node by its device (a legend says which colour is which) and draws
the edge that crosses devices distinctly. Here the first half of the computation runs on the CPU,
then `.to("gpu")` moves the intermediate to MLX and the rest runs there.
"""),
    code('''
p = lucid.random.randn(2, 3, requires_grad=True)          # cpu
q = lucid.random.randn(3, 2, device="gpu")                # gpu

with lucid.count_flops():                                  # the drawing shows FLOPs (see 05)
    h_cpu = lucid.exp(p) * 2                               # runs on cpu
    h_gpu = h_cpu.to("gpu")                                # the device move is an op too
    out = (h_gpu @ q).sum()                                # runs on gpu

for n in lucid_viz.trace(out).nodes:
    print(f"{n.id:4s} {n.op:10s} shape={str(n.shape):7s} device={n.device}")
''', check=True),
    code('''
lucid_viz.draw(out)
'''),
    md("""
Backward crosses the device boundary the other way: the gradient that arrives at `ToDevice`
comes from MLX and is moved back, so `p.grad` is a NumPy array, like `p`. Evaluate before
`backward()`:
"""),
    code('''
out.eval()
out.backward()
kind = type(p.grad).__module__ + "." + type(p.grad).__name__
print("p.grad is a", kind, "of shape", p.grad.shape)
''', check=True),
    md("""
## 8. A whole model on the gpu

Modules move too: `model.to("gpu")` moves every parameter and buffer, recursively, and returns
the model. Lucid moves them **in place** - the `Parameter` objects stay the same, only their data
becomes MLX arrays.

Seed 000's "to chain" is the habit to keep: **move the model, then build the optimizer**. An
optimizer holds the parameter objects it was given; where a move makes new objects (PyTorch's
documentation warns about this), an optimizer built before the move would update stale copies.
Lucid moves in place, so here either order would work - but the habit carries over. Then put the
data on the same device, and `loss.eval()` before `loss.backward()`. `opt.step()` ends with
`lucid.evaluate` on the new parameters, so the loop needs no more `eval` calls.
"""),
    code('''
import lucid.nn as nn
from lucid.optim import SGD

model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))   # made on the cpu
first_weight = model[0].weight
model.to("gpu")                                                      # then moved
for name, param in model.named_parameters():
    print(f"{name:9s} {param.device}")
print("the same Parameter object after the move:", model[0].weight is first_weight)

opt = SGD(model.parameters(), defaults={"lr": 0.1})                  # built after the move
target = y.reshape(64, 1)                                            # X, y from section 6: gpu
for step in range(41):
    opt.zero_grad()
    loss = ((model(X) - target) ** 2).mean()
    loss.eval()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step:2d}  loss {loss.item():.3f}  on {loss.device}")
''', check=True),
    md("""
## 9. Is "gpu" faster here? No.

On a Mac or an NVIDIA machine it would be. But the `mlx[cpu]` wheel on Linux ships a reference
BLAS, so its matrix multiply is much slower than NumPy's (OpenBLAS). Measure it (times not
checked):
"""),
    code('''
A = lucid.random.randn(256, 256, dtype=lucid.Float32)
Ag = A.to("gpu")

def best_of(fn, repeat=10):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)

t_cpu = best_of(lambda: A @ A)
t_gpu = best_of(lambda: (Ag @ Ag).eval())
print(f"256x256 matmul   cpu (NumPy): {1e3 * t_cpu:6.2f} ms")
print(f"          'gpu' (MLX on CPU): {1e3 * t_gpu:6.2f} ms")
'''),
    md("""
So on this machine "gpu" is here to make the MLX code path real and testable, not to be fast.
Compare devices for speed on hardware with a real MLX GPU.

## Exercises

**1.** Without running it, predict the device of each result, or whether it raises:
`lucid.Tensor([1.0]) + lucid.random.randn(1, device="gpu")`, and
`lucid.random.randn(1) + lucid.random.randn(1, device="gpu")`.

**2.** Fix the mixed-device cell above in *two* ways: move `v` to the CPU, or mark `w` free.

### Answers
"""),
    code('''
# 1. A list-made tensor is free: it follows the gpu operand. Two non-free tensors: RuntimeError.
print((lucid.Tensor([1.0]) + lucid.random.randn(1, device="gpu")).device)
try:
    lucid.random.randn(1) + lucid.random.randn(1, device="gpu")
except RuntimeError as err:
    print("RuntimeError:", err)

# 2. Either move v to the cpu, or let w follow the op (free).
print((w @ v.to("cpu")).device, (w.free() @ v).device)
''', check=True),
]

# ------------------------------------------------------------------------------------ 05
NB05 = [
    md("""
# 05 · FLOPs: how much work does a graph cost?

A **FLOP** counts one floating-point operation. Lucid counts the work of every node of the
graph in two honest units:

* **matmul, linear layers and convolution** count **MACs** (multiply-accumulates, one per
  multiply-add): `(m, k) @ (k, n)` costs `m·n·k` MACs;
* **every other op** counts **FLOPs**: elementwise ops one per output element, reductions one
  per input element; shape ops (reshape, transpose, indexing) count 0.

A MAC is **2 FLOPs** (one multiply, one add), so Lucid never adds the two units silently: it
prints `96 MACs + 36 FLOPs`, and `in_flops` converts everything to FLOPs. In this chapter:
`lucid.count_flops()`, per-node counts in a drawn graph, `summarize`, the `%lucid_flops` /
`%%lucid_flops` magics and their report, and why FLOPs are not wall time.
"""),
    code(setup("import lucid", "import lucid.nn as nn", "import lucid_viz")),
    md("""
## 1. `with lucid.count_flops():`

Counting is off by default (and then costs nothing). Inside the `with` block every op records its
work; `tensor.cost` then sums it over the graph below the tensor, each node once, MACs and FLOPs
apart. (`tensor.flops` is the original Lucid's single number: the two added as they are.)
"""),
    code('''
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
''', check=True),
    md("""
Outside `count_flops()` nothing is recorded, and the cost is 0:
"""),
    code('''
print((lucid.tanh(A @ W + b)).cost)
''', check=True),
    md("""
## 2. FLOPs per node

`lucid_viz.trace` turns the graph into plain data: one `Node` per tensor with its op, shape,
device and cost: forward, and the cost of its backward rule. Leaves (inputs, constants) have
no op, so no cost. Only `W` requires grad, so the matmul's backward computes one product
(`A.T @ g`, 96 MACs) and skips the gradient of `A`; each op counts only the gradients it
computes.
"""),
    code('''
graph = lucid_viz.trace(s)
print(f"{'node':10s} {'shape':8s} {'forward':>10s} {'backward':>10s}")
for n in graph.nodes:
    fwd, bwd = n.cost(), n.cost(backward=True)
    print(f"{n.title:10s} {str(n.shape):8s} {str(fwd or '-'):>10s} {str(bwd or '-'):>10s}")
''', check=True),
    md("""
The drawing puts the same numbers on the nodes, with the total in the title and the units
explained once, in the legend:
"""),
    code('''
lucid_viz.draw(s)
'''),
    md("""
## 3. MACs vs FLOPs

Everything in one unit: `flops_unit="FLOPs"` counts each multiply-add as 2 FLOPs and leaves
the other ops as they are (an add is one FLOP in either unit). Always say which unit you quote
- a factor of 2 is easy to lose.
"""),
    code('''
print(f"{s.cost}  =  {s.cost.in_flops} FLOPs  (2 * {s.cost.macs} + {s.cost.flops})")
''', check=True),
    code('''
lucid_viz.draw(s, flops_unit="FLOPs")
'''),
    md("""
Only the matmul has multiply-*adds*, so only its count doubles. Tools differ here (some double
everything, some count MACs only), which is one more reason to state the convention.

## 4. A whole model: `summarize`

`lucid.models.summarize(model, input_shape)` runs the model once on zeros and reports, per
layer, shapes, parameters, MACs and FLOPs. A `Linear(in, out)` on a batch of `N` costs
`N·in·out` MACs for the matmul plus `N·out` FLOPs for the bias add.
"""),
    code('''
from lucid.models import summarize

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
summary = summarize(model, (1, 64))
''', check=True),
    code('''
lucid_viz.plot_flops_per_layer(summary)
'''),
    md("""
## 5. The `%lucid_flops` magics

`%load_ext lucid_viz` registers a magic that counts everything a cell does: one summary line
(MACs and FLOPs, and everything in FLOPs), then a per-op and a per-module table. `--backward`
adds the work of each op's backward rule (only the gradients it computes).
"""),
    code('''
%load_ext lucid_viz
'''),
    code('''
%%lucid_flops
x = lucid.zeros(1, 64, dtype=lucid.Float32)
y = model(x)
''', check=True),
    md("""
For one expression there is the **line** magic, `%lucid_flops EXPR`: it counts just that
expression. The same model on a batch of 8 costs exactly 8 times the batch of 1 above - forward
FLOPs grow linearly with the batch size:
"""),
    code('''
%lucid_flops model(lucid.zeros(8, 64, dtype=lucid.Float32))
''', check=True),
    md("""
With `--backward`, for a scalar loss, the magic adds what each op's backward rule costs. A
matmul's backward needs one product per operand that requires grad: the weight's gradient, and
the input's - except for the first layer, whose input `x` needs no gradient. That is why a
training step costs roughly 2-3 times the forward pass. (`-o` makes the magic *return* its
report; the next cell uses it.)
"""),
    code('''
%%lucid_flops -o --backward
x = lucid.zeros(8, 64, dtype=lucid.Float32)
loss = (model(x) ** 2).mean()
loss
''', check=True),
    md("""
### The report is data: `-o`

With `-o` the tables above are the cell's *result*: a `FlopsReport` object, which IPython shows
as `Out[...]` and keeps in `_`. (The line magic can be assigned directly:
`report = %lucid_flops -o model(x)`.) Its fields are plain numbers and rows, so you can compute
with them instead of reading them off a table - here, what that training step costs measured in
forward passes:
"""),
    code('''
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
''', check=True),
    md("""
## 6. FLOPs are not time

FLOPs measure *work*, not *time*. A big matmul does a lot of work very efficiently (BLAS); a long
chain of tiny ops does almost no work but pays Python and dispatch overhead per op. The timings
below are not checked; compare the **FLOPs per second**.
"""),
    code('''
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
'''),
    md("""
The matmul does hundreds of times more work and still finishes sooner. For small models the cost
is dominated by the *number of ops*, not by FLOPs; for big ones, FLOPs (and memory traffic)
dominate.

## Exercise

A `Linear(100, 50)` layer runs on a batch of 16 inputs. How many MACs and FLOPs does its forward
pass cost? And everything in FLOPs? Work it out, then check it with `count_flops`.

### Answer

The matmul `(16, 100) @ (100, 50)` costs `16·50·100 = 80,000` MACs, the bias add `16·50 = 800`
FLOPs: **80,000 MACs + 800 FLOPs**, or **160,800 FLOPs** in all (a MAC is 2 FLOPs).
"""),
    code('''
layer = nn.Linear(100, 50)
with lucid.count_flops():
    out = layer(lucid.zeros(16, 100, dtype=lucid.Float32))
print(out.cost, "=", out.cost.in_flops, "FLOPs")
''', check=True),
]

# ------------------------------------------------------------------------------------ 06
NB06 = [
    md("""
# 06 · Parameters, buffers and `state_dict`

A model is a tree of `nn.Module`s. Each module owns three kinds of things:

* **Parameters** (`nn.Parameter`): tensors the optimizer trains (`requires_grad=True`);
* **Buffers** (`nn.Buffer`): state that is saved and moved with the model but never trained -
  BatchNorm's running mean and variance are the classic example;
* **sub-modules**.

In this chapter we see how a module finds them (registration through `__setattr__`, or the
explicit `register_parameter` / `add_module`), walk the tree, look at BatchNorm's buffers, save
and load a `state_dict` (and leave names out of it), read the errors a strict load gives, and
watch a forward pass through hooks.
"""),
    code(setup("import numpy as np", "", "import lucid", "import lucid.nn as nn",
               "import lucid.nn.functional as F")),
    md("""
## 1. Registration happens in `__setattr__`

Assigning an attribute to a module is not a plain assignment: `Module.__setattr__` looks at the
value. A `Parameter` goes into the module's parameter registry, a `Buffer` into its buffer
registry, a `Module` into its children; anything else (a string, a float) stays a plain
attribute.
"""),
    code('''
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)                                     # a child module
        self.bn = nn.BatchNorm1d(3)                                    # a child with buffers
        self.fc2 = nn.Linear(3, 2)
        self.scale = nn.Parameter(lucid.ones(2, dtype=lucid.Float32))  # a parameter
        self.register_buffer("steps", nn.Buffer(lucid.zeros(1)))       # a buffer
        self.note = "a plain attribute"                                # not registered

    def forward(self, x):
        self.steps += 1
        return self.fc2(F.relu(self.bn(self.fc1(x)))) * self.scale

net = Net()
print(net)
'''),
    md("""
`named_parameters()` and `named_buffers()` walk the tree in registration order, naming each
tensor by its path (`module.attribute`), exactly as PyTorch does:
"""),
    code('''
print("parameters:")
for name, p in net.named_parameters():
    print(f"  {name:22s} {str(p.shape):7s} {p.dtype}  requires_grad={p.requires_grad}")
print("buffers:")
for name, b in net.named_buffers():
    print(f"  {name:22s} {str(b.shape):7s} {b.dtype}  requires_grad={b.requires_grad}")
print("children:", [name for name, _ in net.named_children()])
print("parameter count:", sum(p.size for p in net.parameters()))
''', check=True),
    md("""
Reassigning a name replaces the entry, and assigning `None` keeps an empty, optional slot that
`state_dict` skips. (We do it on a throwaway copy.)
"""),
    code('''
tmp = Net()
tmp.fc1 = nn.Identity()          # the old Linear and its two parameters are gone
tmp.scale = None                 # an empty optional slot
print([name for name, _ in tmp.named_parameters()])
''', check=True),
    md("""
### The explicit spellings: `register_parameter` and `add_module`

`self.w = nn.Parameter(...)` is short for `self.register_parameter("w", nn.Parameter(...))`,
and `self.fc = nn.Linear(...)` for `self.add_module("fc", nn.Linear(...))` (and
`register_buffer` for buffers). Use the explicit forms when the name is computed
(`add_module(f"layer{i}", ...)`) or when a slot is **optional**: registering `None` makes the
attribute exist - so `forward` can test `self.bias is None` - while holding no parameter, no
child and no `state_dict` entry. PyTorch's `Linear(bias=False)` works exactly like this.
"""),
    code('''
class Affine(nn.Module):
    """y = x @ weight.T + bias, then an optional LayerNorm; bias and norm may be left out."""

    def __init__(self, n_in, n_out, bias=True, norm=False):
        super().__init__()
        weight = lucid.random.randn(n_out, n_in, dtype=lucid.Float32) / np.sqrt(n_in)
        self.register_parameter("weight", nn.Parameter(weight))
        self.register_parameter(
            "bias", nn.Parameter(lucid.zeros(n_out, dtype=lucid.Float32)) if bias else None)
        self.add_module("norm", nn.LayerNorm(n_out) if norm else None)

    def forward(self, x):
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        if self.norm is not None:
            y = self.norm(y)
        return y

for layer in (Affine(4, 3), Affine(4, 3, bias=False, norm=True)):
    print("bias:", "None" if layer.bias is None else layer.bias.shape,
          "| norm:", layer.norm, "| state_dict:", list(layer.state_dict()))
''', check=True),
    md("""
### Walking the tree

Four walks, in registration order, with the keys PyTorch gives:

* `children()` - the direct sub-modules only;
* `modules()` / `named_modules()` - the module itself first (its name is `""`), then every
  descendant depth first, named by its dotted path; `None` slots and repeats are skipped;
* `buffers()` - every buffer below the module (`named_buffers()` without the names).

`parameters()`, `state_dict()`, `to()` and `train()` / `eval()` are all built on these walks.
"""),
    code('''
stack = nn.Sequential(Affine(4, 3, norm=True), nn.ReLU(), Affine(3, 2, bias=False))

print("children():", [type(m).__name__ for m in stack.children()])
print("modules(): ", [type(m).__name__ for m in stack.modules()])
print("named_modules():")
for name, module in stack.named_modules():
    print(f"  {name!r:10s} {type(module).__name__}")
print("named_parameters():", [name for name, _ in stack.named_parameters()])
print("net.buffers():", [f"{b.dtype}{b.shape}" for b in net.buffers()])
''', check=True),
    md("""
## 2. BatchNorm's running statistics are buffers

`BatchNorm1d` normalises with the batch's mean and variance while **training**, and keeps an
exponential moving average of them (`running_mean`, `running_var`, momentum 0.1) for
**evaluation**. These averages are not trained by gradients, so they are buffers: saved in the
`state_dict`, moved by `.to()`, ignored by optimizers.
"""),
    code('''
x = lucid.random.randn(8, 4, dtype=lucid.Float32)
np.set_printoptions(precision=4, suppress=True)

def show(when):
    bn = net.bn
    print(f"{when:14s}", bn.running_mean.numpy(), " batches:", bn.num_batches_tracked.item())

show("before:")
net.train()
net(x)
show("after 1 train:")
net.eval()
net(x)
show("after 1 eval:")
print(f"{'steps buffer:':14s}", net.steps.numpy())
''', check=True),
    md("""
In evaluation mode the running statistics are read, not updated. `train()` / `eval()` set the
mode of the whole tree. (`steps` counted both calls: our own `forward` increments it.)

## 3. `state_dict`: every parameter and buffer, by name

`state_dict()` is an ordered dict from the dotted name to a **copy** of the array: parameters and
buffers together, own entries first, then each child's.
"""),
    code('''
sd = net.state_dict()
for key, value in sd.items():
    print(f"{key:22s} {type(value).__name__:8s} {str(value.shape):7s} {value.dtype}")
''', check=True),
    md("""
The copies are a snapshot: editing one changes nothing in the model. `state_dict(keep_vars=True)`
returns the model's **own** tensors instead - the same keys, but `Parameter` and `Buffer`
objects, live, with their `requires_grad` and device. (`load_state_dict` uses it to find where
each value goes.)
"""),
    code('''
live = net.state_dict(keep_vars=True)
snapshot = net.state_dict()

for key in ("fc2.bias", "bn.running_mean"):
    print(f"{key:16s} {type(live[key]).__name__:9s} requires_grad={live[key].requires_grad}")
print("live['fc2.bias'] is net.fc2.bias:", live["fc2.bias"] is net.fc2.bias)

snapshot["fc2.bias"][:] = 100.0                      # edit the copy ...
print("net.fc2.bias:", net.fc2.bias.numpy())         # ... the model is unchanged
''', check=True),
    md("""
### Leaving a name out: `_state_dict_pass_attr`

Some buffers are pure functions of the constructor's arguments - a lookup table, a mask - so
saving them only makes files bigger. List their names in the class attribute
`_state_dict_pass_attr`: they stay buffers (moved by `.to()`, listed by `named_buffers()`), but
`state_dict()` leaves them out, and a strict `load_state_dict` does not ask for them.
(PyTorch spells this `register_buffer(name, t, persistent=False)`.)

The example: the sine/cosine position table of a Transformer, recomputed in `__init__`.
"""),
    code('''
class PositionalEncoding(nn.Module):
    """x + P, then a Linear layer; P[pos, 2i] = sin(pos / 10000^(2i/d)), P[pos, 2i+1] = cos(...)."""

    _state_dict_pass_attr = ("table",)           # rebuilt from (length, dim): not saved

    def __init__(self, length, dim):
        super().__init__()
        pos = np.arange(length)[:, None]
        freq = 1.0 / 10000 ** (np.arange(0, dim, 2) / dim)
        table = np.zeros((length, dim), np.float32)
        table[:, 0::2] = np.sin(pos * freq)
        table[:, 1::2] = np.cos(pos * freq)
        self.register_buffer("table", lucid.Tensor(table))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):                         # x: (length, dim)
        return self.proj(x + self.table)

pe = PositionalEncoding(6, 4)
print("named_buffers():", [name for name, _ in pe.named_buffers()])
print("state_dict():   ", list(pe.state_dict()))
print("strict load into a fresh one:", PositionalEncoding(6, 4).load_state_dict(pe.state_dict()))
''', check=True),
    md("""
## 4. Strict loading tells you *everything* that is wrong

`load_state_dict(sd)` is strict by default: it collects every missing key, unexpected key,
wrong shape and wrong dtype, and raises **once** with the whole list - so you fix everything in
one go, instead of one error per run.
"""),
    code('''
broken = dict(sd)
del broken["fc1.bias"]                              # missing
broken["head.weight"] = sd["fc2.weight"]            # unexpected
broken["fc2.weight"] = np.zeros((5, 3), np.float32) # wrong shape

try:
    net.load_state_dict(broken)
except RuntimeError as err:
    print("RuntimeError:", err)
''', check=True),
    md("""
`strict=False` loads what matches and *returns* the lists instead of raising (useful when you
reuse part of a model, e.g. a backbone without its head):
"""),
    code('''
partial = {k: v for k, v in sd.items() if not k.startswith("fc2.")}
partial["head.weight"] = sd["fc2.weight"]
result = net.load_state_dict(partial, strict=False)
print("missing:   ", result.missing_keys)
print("unexpected:", result.unexpected_keys)
''', check=True),
    md("""
## 5. Saving and loading safely

`lucid.save` writes a state dict (or a tensor) in a safetensors-style layout: a JSON header plus
raw bytes. There is **no pickle** anywhere, so loading a file can never run code. We save to a
temporary folder, load into a fresh model and compare every entry.
"""),
    code('''
import os
import tempfile

folder = tempfile.mkdtemp()
path = os.path.join(folder, "net.lucid")
lucid.save(net.state_dict(), path)

fresh = Net()
fresh.load_state_dict(lucid.load(path))
pairs = zip(net.state_dict().values(), fresh.state_dict().values())
same = all(np.array_equal(a, b) for a, b in pairs)
print("every entry identical after the round trip:", same)
print("fresh model's running_mean:", fresh.bn.running_mean.numpy())
''', check=True),
    md("""
A damaged file gives a clear `ValueError`, never garbage weights:
"""),
    code('''
with open(path, "r+b") as f:
    f.truncate(20)                       # cut the file short

try:
    lucid.load(path)
except ValueError as err:
    print("ValueError:", str(err).replace(path, "<file>"))
''', check=True),
    code('''
import shutil

shutil.rmtree(folder)
'''),
    md("""
## 6. Hooks: watching (and changing) a forward pass

Calling a module runs more than `forward`: first its **forward pre-hooks**,
`hook(module, args)`, then `forward`, then its **forward hooks**, `hook(module, args, output)`.
Each `register_forward_..._hook` returns a handle whose `.remove()` takes the hook off again.
Hooks let you look inside a model without editing its code: here a pre-hook and a hook on every
child of `net` log what flows through (`net` is in eval mode, so BatchNorm uses its running
statistics and the numbers are repeatable).
"""),
    code('''
log = []

def watch(name):
    def before(module, args):                       # runs before forward
        log.append(f"{name:4s} gets    {args[0].shape}")

    def after(module, args, out):                   # runs after forward
        log.append(f"{name:4s} returns {out.shape}  mean {out.numpy().mean():+.3f}")

    return before, after

handles = []
for name, child in net.named_children():
    before, after = watch(name)
    handles.append(child.register_forward_pre_hook(before))
    handles.append(child.register_forward_hook(after))

out = net(x)
print("\\n".join(log))

for handle in handles:
    handle.remove()
log.clear()
net(x)
print("after remove():", len(log), "log lines")
''', check=True),
    md("""
A hook that **returns** something replaces a value: a pre-hook's result becomes the arguments of
`forward`, a forward hook's result becomes the output. That is enough for an *ablation*: switch
off one hidden unit of `fc1` and see how much the output moves - then remove the hook and the
model is back as it was.
"""),
    code('''
mask = lucid.Tensor(np.array([1.0, 0.0, 1.0], np.float32))   # switch off unit 1 of fc1

def ablate(module, args, out):
    return out * mask                              # the replacement output

base = net(x).numpy()
handle = net.fc1.register_forward_hook(ablate)
ablated = net(x).numpy()
handle.remove()
restored = net(x).numpy()

print("sample 0:              ", base[0])
print("sample 0, unit 1 off:  ", ablated[0])
print("mean |change| over the batch:", round(float(np.abs(ablated - base).mean()), 4))
print("after remove(), as before:", np.array_equal(restored, base))
''', check=True),
    md("""
## Exercises

**1.** A module stores a tensor as `self.mask = lucid.ones(3)` (a plain `Tensor`, neither a
`Parameter` nor a `Buffer`). Is it in `state_dict()`? How would you make it saved but not
trained?

**2.** Which keys does `nn.BatchNorm1d(3).state_dict()` have, and which of them would an
optimizer update?

### Answers
"""),
    code('''
class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = lucid.ones(3)                               # plain tensor: not registered
        self.register_buffer("saved_mask", lucid.ones(3))      # a buffer: saved, not trained

print("1.", list(Masked().state_dict()))

bn = nn.BatchNorm1d(3)
print("2.", list(bn.state_dict()))
print("   trained by an optimizer:", [name for name, _ in bn.named_parameters()])
''', check=True),
]

NOTEBOOKS = {
    "04": ("04_devices_cpu_gpu.ipynb", NB04),
    "05": ("05_flops.ipynb", NB05),
    "06": ("06_parameters_buffers_state_dict.ipynb", NB06),
}


if __name__ == "__main__":
    main(NOTEBOOKS)
