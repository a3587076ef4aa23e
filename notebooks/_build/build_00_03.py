# ruff: noqa: E501  (notebook text: markdown tables and formulas keep their long lines)
"""Write (and execute) the classroom notebooks 00-03.

    .venv/bin/python notebooks/_build/build_00_03.py          # write + execute + save outputs
    .venv/bin/python notebooks/_build/build_00_03.py --no-run # write sources only

The notebooks only call ``lucid`` / ``lucid_viz``; this script holds their text, nothing else.
Cells whose printed numbers are the lesson carry the nbval-check-output tag.
"""

from __future__ import annotations

from nbbuild import code, main, md

# ---------------------------------------------------------------------------------------------
NB00 = [
    md("""
# 00 · Start here: a tour of Lucid

**Lucid** is a small deep-learning framework written to be *read*. In this first notebook we
take a quick tour of everything; each later notebook zooms in on one part:

| notebook | topic |
|---|---|
| [01_tensors_and_dtypes.ipynb](01_tensors_and_dtypes.ipynb) | tensors, `Numeric` dtypes, the gpu float64 policy |
| [02_autograd_and_the_dag.ipynb](02_autograd_and_the_dag.ipynb) | the graph, the chain rule, gradient accumulation |
| [03_backward_step_by_step.ipynb](03_backward_step_by_step.ipynb) | the backward stepper, gradcheck by hand |
| [04_devices_cpu_gpu.ipynb](04_devices_cpu_gpu.ipynb) | cpu vs the MLX "gpu", laziness, `.eval()` |
| [05_flops.ipynb](05_flops.ipynb) | counting FLOPs, `%%lucid_flops` |
| [06_parameters_buffers_state_dict.ipynb](06_parameters_buffers_state_dict.ipynb) | modules, parameters, buffers, saving |
| [07_training_an_mlp.ipynb](07_training_an_mlp.ipynb) | training an MLP on real digits |
| [08_cnns_and_resnet.ipynb](08_cnns_and_resnet.ipynb) | convolutions and ResNet-18 |
| [09_layer_catalogue.ipynb](09_layer_catalogue.ipynb) | the rest of the catalogue: layers, losses, optimizers, schedulers, data |
| [10_beyond_first_derivatives.ipynb](10_beyond_first_derivatives.ipynb) | Hessians and gradient penalties, `lucid.linalg`, einops, and more layers and optimizers |

Everything runs on the CPU and is seeded, so you see the same numbers as the stored outputs.
"""),
    code("""
import lucid
import lucid_viz

lucid.random.seed(0)
print("lucid", lucid.__version__)
"""),
    md("""
## 1. Tensors

A `lucid.Tensor` wraps a NumPy array (on the "cpu" device). It knows its shape and its dtype,
and supports the usual arithmetic.
"""),
    code("""
x = lucid.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(x)
print("shape:", x.shape, " dtype:", x.dtype, " size:", x.size)
print("x * 2 + 1 =", (x * 2 + 1).tolist())
print("row sums:", x.sum(axis=1).tolist())
""", check=True),
    md("""
## 2. Autograd

Mark a tensor with `requires_grad=True` and Lucid records every operation on it. Calling
`backward()` on the result walks that record backwards and fills in `.grad`.

For $y = x^2 + 3x$ the derivative is $2x + 3$, so at $x = 2$ we expect **7**.
"""),
    code("""
x = lucid.Tensor(2.0, requires_grad=True)
y = x ** 2 + 3 * x
y.backward()
print("y      =", y.item())
print("dy/dx  =", float(x.grad))
""", check=True),
    md("""
## 3. The graph, drawn

The record autograd keeps is a **DAG** (directed acyclic graph): leaves are the inputs, every
other node is an operation. `lucid_viz.draw` renders it. Run inside `lucid.count_flops()`, each
node also shows how many floating-point operations it cost.
"""),
    code("""
with lucid.count_flops():
    x = lucid.Tensor(2.0, requires_grad=True)
    y = x ** 2 + 3 * x
lucid_viz.draw(y)
"""),
    md("""
## 4. FLOPs

Lucid counts work as it goes, in two units. A matrix multiply (or a convolution) costs `m·n·k`
**MACs** — multiply-accumulates, one per multiply-add; every other op costs **FLOPs**, one per
element operation. A MAC is two FLOPs (a multiply and an add), so Lucid keeps the two apart.

A `(4×3) @ (3×2)` product is 4·3·2 = 24 MACs; the `sum` that follows adds its 8 numbers: 8 FLOPs.
"""),
    code("""
with lucid.count_flops():
    A = lucid.randn(4, 3, requires_grad=True)
    B = lucid.randn(3, 2)
    loss = (A @ B).sum()
print("work below loss:", loss.cost)
print("all in FLOPs   :", loss.cost.in_flops, "FLOPs")
""", check=True),
    md("""
In a notebook the `%%lucid_flops` cell magic does the counting for a whole cell and prints a
per-op table (notebook 05 goes deeper).
"""),
    code("""
%load_ext lucid_viz
"""),
    code("""
%%lucid_flops
layer = lucid.nn.Linear(3, 2)
out = layer(lucid.randn(4, 3))
"""),
    md("""
## 5. A tiny training loop

Put it together: a `Linear` layer, a mean-squared-error loss, and SGD. The data come from a known
rule, `y = 1·x0 − 2·x1 + 0.5·x2`, so we can see whether training finds those three weights.
"""),
    code("""
lucid.random.seed(0)
X = lucid.randn(32, 3)
true_w = lucid.Tensor([[1.0], [-2.0], [0.5]])
Y = X @ true_w

model = lucid.nn.Linear(3, 1)
opt = lucid.optim.SGD(model.parameters(), lr=0.1)
for step in range(60):
    opt.zero_grad()
    loss = lucid.nn.functional.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print(f"step {step:2d}  loss {loss.item():.4f}")
print("learned weights:", model.weight.numpy().round(2).tolist())
""", check=True),
    md("""
## Exercise

Change the learning rate to `lr=0.01` and keep 60 steps. Is the loss after training bigger or
smaller than with `lr=0.1`? Why?

*(Answer in the next cell.)*
"""),
    code("""
# Answer: a smaller step size moves the weights less per step, so 60 steps are not enough.
lucid.random.seed(0)
model = lucid.nn.Linear(3, 1)
opt = lucid.optim.SGD(model.parameters(), lr=0.01)
for step in range(60):
    opt.zero_grad()
    loss = lucid.nn.functional.mse_loss(model(X), Y)
    loss.backward()
    opt.step()
print(f"final loss with lr=0.01: {loss.item():.4f}  (bigger: training has not converged yet)")
""", check=True),
    md("""
**Where next?** Open [01_tensors_and_dtypes.ipynb](01_tensors_and_dtypes.ipynb).
"""),
]

# ---------------------------------------------------------------------------------------------
NB01 = [
    md("""
# 01 · Tensors and dtypes

A tensor is an array plus a little bookkeeping. In this notebook we make tensors, turn them
(`.T`, `.mT`) and pick elements out of them with a mask, then look at the bookkeeping that says
*what kind of numbers* a tensor holds: Lucid's dtypes.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code("""
import numpy as np
import lucid

lucid.random.seed(0)
"""),
    md("""
## 1. Making tensors

Python floats become 64-bit floats and Python ints 64-bit ints, just as in NumPy. The `.data`
attribute is the NumPy array underneath.
"""),
    code("""
a = lucid.Tensor([1.0, 2.0, 3.0])
b = lucid.Tensor([1, 2, 3])
print(a.dtype, a.data.dtype)
print(b.dtype, b.data.dtype)
print(type(a.data).__name__, a.shape, a.ndim)
""", check=True),
    md("""
`lucid.tensor(...)` is the function spelling of the same constructor (as in PyTorch): same
arguments (`requires_grad=`, `dtype=`, `device=`), same result, a `Tensor`.
"""),
    code("""
m = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(type(m).__name__, m.shape, m.dtype)
print(lucid.tensor([1, 2, 3], dtype=lucid.Float32))
""", check=True),
    md("""
## 2. Transposes: `.T` and `.mT`

`.T` reverses **all** the axes (as in NumPy). `.mT` ("matrix transpose") swaps only the **last
two**. For one matrix they agree; for a *batch* of matrices, shape `(batch, rows, cols)`, only
`.mT` transposes each matrix and leaves the batch axis where it is.
"""),
    code("""
print("m.T  =", m.T.tolist())
print("m.mT =", m.mT.tolist())

batch = lucid.tensor(np.arange(12.0).reshape(2, 2, 3))  # two 2x3 matrices
print("batch", batch.shape, "-> .T", batch.T.shape, "  .mT", batch.mT.shape)
print("each matrix times its own transpose:", (batch @ batch.mT).shape)
try:
    batch @ batch.T  # .T moved the batch axis to the end: the shapes no longer line up
except ValueError as err:
    print("with .T instead ->", err)
""", check=True),
    md("""
## 3. Picking elements with a mask

A comparison gives a `Bool` tensor, a **mask**. Indexing with it keeps the elements where the
mask is `True`, as a 1-D tensor. Gradients flow through this selection: backward *scatters* each
picked element's gradient back to its position and leaves zeros everywhere else. (That is
exactly the gradient ReLU needs.)
"""),
    code("""
x = lucid.tensor([-1.5, 2.0, -0.5, 3.0], requires_grad=True)
mask = x > 0
print("mask     =", mask.tolist(), mask.dtype)
positive = x[x > 0]
print("x[x > 0] =", positive.tolist())
(positive ** 2).sum().backward()
print("x.grad   =", x.grad.tolist(), " (2x where picked, 0 elsewhere)")
""", check=True),
    md("""
## 4. `Numeric`: one name for both backends

A Lucid dtype is a `lucid.types.Numeric(base_dtype, bits)`: a *kind* (bool, int, float, complex)
and a *width*. The common ones are presets at the top level: `lucid.Float32`, `lucid.Int64`, ...

Each knows the NumPy dtype that stores it on the CPU (`.cpu`) and the MLX dtype on the "gpu"
device (`.gpu`, see notebook 04).
"""),
    code("""
for t in [lucid.Int8, lucid.Int32, lucid.Int64, lucid.Float16, lucid.Float32, lucid.Float64,
          lucid.Complex64]:
    print(f"{t.name:10s} base={t.base_str:8s} bits={t.bits!s:4s} cpu={t.cpu}")
print(lucid.types.Numeric(float, 32) == lucid.Float32)
""", check=True),
    md("""
`.cpu` and `.gpu` are plain attributes. `parse(device)` picks one of them by device name; it is
what Lucid calls when it creates a tensor on a device.
"""),
    code("""
print("lucid.Int16.cpu             ->", repr(lucid.Int16.cpu), "-", lucid.Int16.cpu.itemsize, "bytes each")
print("lucid.Float32.parse('cpu')  ->", repr(lucid.Float32.parse("cpu")))
""", check=True),
    code("""
# The MLX side needs MLX installed (not checked: the cell prints a hint where it is missing)
if lucid.gpu_status() == "missing":
    print("MLX is not installed here, so there are no .gpu dtypes: pip install 'mlx[cpu]'")
else:
    print("lucid.Int16.gpu             ->", lucid.Int16.gpu)
    print("lucid.Float32.parse('gpu')  ->", lucid.Float32.parse("gpu"))
"""),
    code("""
x = lucid.Tensor([1.5, 2.5], dtype=lucid.Float32)
print(x, x.data.dtype)
print(x.astype(lucid.Int32))
print(x.astype(lucid.Float16).dtype)
""", check=True),
    md("""
## 5. Bit-free types take their width from the data

`lucid.Float`, `lucid.Int` and `lucid.Complex` have **no width** (`bits=None`). They mean "a
float, as wide as the data already is". So float64 data stays 64-bit, float32 data stays 32-bit,
and integer data turned into `Float` becomes a float of the same width.
"""),
    code("""
print("Float is bit-free:", lucid.Float.is_bit_free, " bits =", lucid.Float.bits)
print(lucid.Tensor(np.array([1.0, 2.0]), dtype=lucid.Float).dtype)                    # float64 data
print(lucid.Tensor(np.array([1.0, 2.0], dtype=np.float32), dtype=lucid.Float).dtype)  # float32 data
print(lucid.Tensor(np.array([1, 2], dtype=np.int32), dtype=lucid.Float).dtype)        # int32 data
print(lucid.Float.resolve_bits(np.dtype("float16")))
""", check=True),
    md("""
`lucid.Int` and `lucid.Complex` work the same way. On their own they have no storage dtype yet
(`.cpu` is `None`); they get one when they meet data. A fixed-width type such as `lucid.Int16`
ignores the data's width and converts.
"""),
    code("""
print("Int.cpu =", lucid.Int.cpu, "  Complex.cpu =", lucid.Complex.cpu)
i64 = np.array([1, 2, 3])  # NumPy's default int: int64
print("int64 data,   dtype=lucid.Int     ->", lucid.tensor(i64, dtype=lucid.Int).dtype, "  (width from the data)")
print("int64 data,   dtype=lucid.Int16   ->", lucid.tensor(i64, dtype=lucid.Int16).dtype, "  (width fixed)")
print("float data,   dtype=lucid.Int     ->", lucid.tensor([1.7, -2.7], dtype=lucid.Int).tolist(), " (cut toward 0)")
print("float32 data, dtype=lucid.Complex ->", lucid.tensor(np.ones(2, np.float32), dtype=lucid.Complex).dtype)
print("float64 data, dtype=lucid.Complex ->", lucid.tensor([1.0, 2.0], dtype=lucid.Complex).dtype)
""", check=True),
    md("""
## 6. From a backend dtype back to a `Numeric`

The other direction: `lucid.types.to_numeric_type` turns a NumPy or MLX dtype (or a Python
type) into its `Numeric`; `Tensor.dtype` is built with it. Anything that is not a number or a
bool (strings, dates, Python objects) is refused with a `TypeError` that says what *is* allowed.
"""),
    code("""
from lucid.types import to_numeric_type

for d in [np.dtype("float32"), np.dtype("complex128"), np.dtype("uint8"), np.dtype("bool"), int]:
    print(f"{d!s:15s} -> {to_numeric_type(d)}")
try:
    to_numeric_type(np.dtype("U5"))  # NumPy's 5-character strings
except TypeError as err:
    print("TypeError:", err)
""", check=True),
    md("""
That is also why `lucid.tensor(["a", "b"])` fails: NumPy would store the strings, but Lucid has no
dtype for them.

## 7. The gpu float64 policy

GPUs driven by MLX (Apple Metal, NVIDIA CUDA) have no float64 arithmetic. Lucid's rule: a
`Float64` tensor on the "gpu" device is *stored* as float32 there, but still *reports*
`Float64`. When MLX runs on its CPU device (Linux without a GPU), all 64 bits are kept.

The whole policy is one small function, so we can ask it both questions directly, whatever
machine this notebook runs on:
"""),
    code("""
print("MLX default device is a GPU  -> Float64 stored in",
      lucid.types.gpu_float64_storage_bits(True), "bits")
print("MLX runs on its CPU device    -> Float64 stored in",
      lucid.types.gpu_float64_storage_bits(False), "bits")
""", check=True),
    code("""
# What this machine has (not checked: it differs between a laptop and a server)
print(lucid.gpu_status())
if lucid.gpu_status() != "missing":
    # The dtype applies the policy itself: Float64's MLX dtype here
    print("lucid.Float64.parse('gpu') ->", lucid.Float64.parse("gpu"))
"""),
    md("""
## 8. Weak Python scalars

Mixing a tensor with a plain Python number should not change the tensor's dtype: `2.5` is a
*weak* scalar, it adapts to the tensor. Only when the tensor cannot hold the result (an int
tensor times 2.5) does the dtype widen, to a float.
"""),
    code("""
f32 = lucid.Tensor([1.0, 2.0], dtype=lucid.Float32)
i64 = lucid.Tensor([1, 2])
print("Float32 * 2.5 ->", (f32 * 2.5).dtype)
print("Float32 + 1   ->", (f32 + 1).dtype)
print("Int64 * 2     ->", (i64 * 2).dtype)
print("Int64 * 2.5   ->", (i64 * 2.5).dtype)
""", check=True),
    md("""
Two *tensors* are different: the result is the wider of the two dtypes.
"""),
    code("""
f16 = lucid.Tensor([1.0, 2.0], dtype=lucid.Float16)
print("Float16 + Float32 ->", (f16 + f32).dtype)
""", check=True),
    md("""
## Exercise

1. What dtype does `lucid.Tensor(np.arange(3, dtype=np.int16), dtype=lucid.Float)` get?
2. Is a `Float32` tensor times the Python float `0.1` still `Float32`?

Guess first, then run the answer cell.
"""),
    code("""
# Answer
q1 = lucid.Tensor(np.arange(3, dtype=np.int16), dtype=lucid.Float)
q2 = lucid.Tensor([1.0], dtype=lucid.Float32) * 0.1
print("1.", q1.dtype, "- a bit-free Float takes the data's 16-bit width")
print("2.", q2.dtype, "- the Python scalar is weak and adapts to the tensor")
""", check=True),
    md("""
**Next:** [02_autograd_and_the_dag.ipynb](02_autograd_and_the_dag.ipynb).
"""),
]

# ---------------------------------------------------------------------------------------------
NB02 = [
    md("""
# 02 · Autograd and the DAG

Every operation on a tensor that `requires_grad` leaves a record: which op made the result, and
from which inputs. Those records form a **directed acyclic graph** (DAG). `backward()` walks it
in reverse and applies the chain rule.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code("""
import math
import lucid
import lucid_viz

lucid.random.seed(0)
"""),
    md("""
## 1. A chain: the chain rule

$y = \\exp(3x)$. The chain rule says $\\frac{dy}{dx} = \\exp(3x) \\cdot 3$.
Each tensor remembers its op (`_op`) and its parents (`_prev`).
"""),
    code("""
x = lucid.Tensor(0.5, requires_grad=True)
u = 3 * x
y = lucid.exp(u)
print("y's op:", type(y._op).__name__, " parents:", [type(p._op).__name__ if p._op else "leaf"
                                                    for p in y._prev])
print("x is a leaf:", x.is_leaf, " u is a leaf:", u.is_leaf)
""", check=True),
    code("""
lucid_viz.draw(y)
"""),
    md("""
Draw first, then differentiate: after `backward()` the graph is released (to free memory).
"""),
    code("""
y.backward()
print("autograd dy/dx:", round(float(x.grad), 6))
print("by hand 3e^1.5:", round(3 * math.exp(1.5), 6))
""", check=True),
    md("""
## 2. A diamond: two paths from one input

Now $a = 2x$ and $y = a + \\exp(a)$. The node `a` is used **twice**, so gradient reaches it
along two paths, and the two contributions **add**:

$$\\frac{dy}{da} = 1 + e^{a}, \\qquad \\frac{dy}{dx} = 2\\,(1 + e^{2x}).$$

At $x = 0.5$: $2(1 + e) = 2 + 2e \\approx 7.437$.
"""),
    code("""
x = lucid.Tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
lucid_viz.draw(y)
"""),
    code("""
y.backward()
print("autograd dy/dx:", round(float(x.grad), 6))
print("2 + 2e        :", round(2 + 2 * math.e, 6))
""", check=True),
    md("""
Lucid visits every node **exactly once**, after all its consumers (a topological order), so `a`
sends one summed gradient on to `x` — not one per path.

## 3. A neuron with every value and gradient on the picture

One neuron, $o = \tanh(x_1 w_1 + x_2 w_2 + b)$, with names on its tensors. After
`backward(keep_grad=True)` every node keeps its gradient (not only the leaves), and
`draw(..., show=("data", "grad"))` writes each value and each gradient on its node: read the
chain rule off the picture. (The tanh's input is $n = 0.8814$, and $1 - \tanh^2 n = 0.5$: every
node feeding it receives 0.5, and each weight receives 0.5 times its input.)
"""),
    code("""
x1 = lucid.Tensor(2.0, requires_grad=True, name="x1")
x2 = lucid.Tensor(0.0, requires_grad=True, name="x2")
w1 = lucid.Tensor(-3.0, requires_grad=True, name="w1")
w2 = lucid.Tensor(1.0, requires_grad=True, name="w2")
b = lucid.Tensor(6.8813735870195432, requires_grad=True, name="b")
n = x1 * w1 + x2 * w2 + b
n.name = "n"
o = lucid.tanh(n)
o.name = "o"
o.backward(keep_grad=True)
lucid_viz.draw(o, rankdir="LR", show=("data", "grad"))
"""),
    code("""
for t in (x1, w1, x2, w2, b, n):
    print(f"do/d{t.name} = {float(t.grad):.4g}")
""", check=True),
    md("""
## 4. Accumulation across calls

Gradients of *leaves* accumulate across `backward()` calls too (`+=`). That is why training loops
call `zero_grad()`. To run backward twice through the same graph you must ask to keep it,
with `retain_graph=True`; otherwise the second call explains the problem.
"""),
    code("""
x = lucid.Tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
y.backward(retain_graph=True)
print("after 1 call :", round(float(x.grad), 6))
y.backward()
print("after 2 calls:", round(float(x.grad), 6), "(twice 7.436564)")
try:
    y.backward()
except RuntimeError as err:
    print("3rd call ->", err)
""", check=True),
    md("""
## 5. `keep_grad`: looking at intermediate gradients

To save memory, Lucid frees the gradients of intermediate nodes once they have been passed on;
only leaves keep `.grad`. Pass `keep_grad=True` (to `backward`, or to one tensor) to keep them.
"""),
    code("""
x = lucid.Tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
y.backward()
print("default      : a.grad =", a.grad)

x = lucid.Tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
y.backward(keep_grad=True)
print("keep_grad=True: a.grad =", round(float(a.grad), 6), " (= 1 + e)")
print("               x.grad =", round(float(x.grad), 6))
""", check=True),
    md("""
## 6. Hooks: watching a gradient in flight

`keep_grad` keeps a gradient *after* backward. A **hook** sees it *during* backward:
`t.register_hook(fn)` calls `fn(grad)` once `t`'s gradient is complete (all paths summed), before
it is passed on. `register_hook` returns a **remover**: call its `.remove()` when you are done.
"""),
    code("""
x = lucid.tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
seen = []
remover = a.register_hook(lambda g: seen.append(round(g.item(), 6)))
y.backward()
remover.remove()
print("the hook saw dy/da =", seen, "  (1 + e =", round(1 + math.e, 6), ")")
print("a.grad afterwards  =", a.grad, " (freed as usual; the hook saw it in time)")
""", check=True),
    md("""
If the hook *returns* a tensor, that replaces the gradient passed on to the parents: this is how
gradient clipping or scaling of one part of a network can be written. Below the hook halves what
flows through `a`, so `x.grad` halves too; after `remove()` the same graph gives the full value.
"""),
    code("""
x = lucid.tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
remover = a.register_hook(lambda g: g * 0.5)
y.backward(retain_graph=True)
print("with the halving hook:", round(float(x.grad), 6))
remover.remove()
x.zero_grad()
y.backward()
print("hook removed         :", round(float(x.grad), 6), " (= 2 + 2e)")
""", check=True),
    md("""
## 7. `detach()`: cutting the graph

`t.detach()` gives the same values (it shares the array, copying nothing) but **no history**:
for autograd it is a constant. So gradient stops there. Example: $y = x \\cdot
\\operatorname{detach}(x)$ has the value $x^2$, but its gradient is $x$, not $2x$, because only
one of the two factors is still in the graph. ("Stop-gradient" like this is used for targets
that must not be trained, e.g. in reinforcement learning.)
"""),
    code("""
x = lucid.tensor(3.0, requires_grad=True)
xd = x.detach()
print("x.detach(): requires_grad =", xd.requires_grad, " is_leaf =", xd.is_leaf,
      " shares the data:", xd.data is x.data)
y = x * xd
y.backward()
print("y =", y.item(), "  dy/dx =", float(x.grad), "  (x * x would give 2x = 6.0)")
""", check=True),
    md("""
## 8. Not recording at all: `no_grad` and `grad_enabled()`

Evaluating a model needs no graph, and recording one costs time and memory. `lucid.no_grad()`
switches recording off: as a `with` block (notebook 03 uses that) or as a **decorator** on a
function (`@lucid.no_grad`, or `@lucid.no_grad()`: both spellings work, as in PyTorch).
`lucid.grad_enabled()` reads the switch;
it is restored when the block or the function ends.
"""),
    code("""
w = lucid.tensor([2.0, -1.0], requires_grad=True)

@lucid.no_grad
def predict(inputs):
    print("  inside predict: grad_enabled() =", lucid.grad_enabled())
    return (w * inputs).sum()

print("before: grad_enabled() =", lucid.grad_enabled())
p = predict(lucid.tensor([0.5, 0.25]))
print("after : grad_enabled() =", lucid.grad_enabled())
print("predict(...) =", p.item(), " requires_grad:", p.requires_grad, " op:", p._op)
q = (w * lucid.tensor([0.5, 0.25])).sum()
print("same sum, recorded =", q.item(), " requires_grad:", q.requires_grad, " op:", q.op_name)
""", check=True),
    md("""
## 9. Vectors, and FLOPs on the graph

The same works for whole arrays. Drawn inside `lucid.count_flops()`, each node shows its FLOPs.
`backward()` with no argument seeds ones, exactly like calling `backward` on `y.sum()`.
"""),
    code("""
with lucid.count_flops():
    w = lucid.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = lucid.Tensor([0.5, -1.0, 2.0])
    loss = (w * v + w ** 2).sum()
lucid_viz.draw(loss)
"""),
    code("""
loss.backward()
print("dloss/dw =", w.grad.round(6).tolist(), "  expected v + 2w =", [2.5, 3.0, 8.0])
print("forward work:", loss.cost)
""", check=True),
    md("""
## Exercise

Let $b = x^2$ and $z = b \\cdot b + b$. Predict $dz/dx$ at $x = 1.5$ using the chain rule
(hint: $dz/db = 2b + 1$), then check with Lucid. How many paths reach `b`?
"""),
    code("""
# Answer: b is used three times (twice in b*b, once in +b): dz/db = 2b + 1, db/dx = 2x.
x = lucid.Tensor(1.5, requires_grad=True)
b = x ** 2
z = b * b + b
z.backward()
by_hand = (2 * 1.5**2 + 1) * (2 * 1.5)
print("autograd:", round(float(x.grad), 6), " by hand:", round(by_hand, 6))
""", check=True),
    md("""
**Next:** [03_backward_step_by_step.ipynb](03_backward_step_by_step.ipynb) replays `backward()`
one node at a time.
"""),
]

# ---------------------------------------------------------------------------------------------
NB03 = [
    md("""
# 03 · Backward, step by step

`backward()` does its whole walk in one call. Here we slow it down: `lucid_viz.step_backward`
replays the very same walk one node per step, showing which gradient arrives where and the local
rule each op applies. Then we check gradients *by hand* with finite differences, and finally
see how Lucid draws graphs too big to read node by node.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code("""
import re
import tempfile
from pathlib import Path

import numpy as np
import lucid
import lucid_viz

lucid.random.seed(0)
"""),
    md("""
## 1. A small graph

A one-neuron "network": $L = \\mathrm{sum}\\big(\\tanh(w \\cdot x + b)\\big)$ for two inputs.
We build it inside `lucid.count_flops()` so the stepper can show the running backward FLOPs.
"""),
    code("""
with lucid.count_flops():
    x = lucid.Tensor([0.5, -1.0], name="x")
    w = lucid.Tensor([0.8, 0.3], requires_grad=True, name="w")
    b = lucid.Tensor(0.1, requires_grad=True, name="b")
    loss = lucid.tanh(w * x + b).sum()
print("loss =", round(loss.item(), 6))
""", check=True),
    md("""
## 2. The stepper

Press **Play** (or drag the slider). Each step highlights the node being processed, the edges its
gradient flows along, the gradient values arriving, and the op's local derivative rule.
The stepper does not touch `.grad`; it only shows the walk. The tensors were given names
(`name="w"`), so the pictures and the table call them `w`, `x` and `b`; the ops are called by
their kind and id (`Mul n2`), the same words in the picture and in the table.
"""),
    code("""
stepper = lucid_viz.step_backward(loss)
stepper
"""),
    md("""
The same frames as text — handy for a printed handout. One line per node, in the order
`backward()` visits them: the op that ran last comes first (so every node comes after all the
nodes that use it — a reverse topological order), and the leaves come at the end:
"""),
    code("""
print(len(stepper), "steps")
for k in range(len(stepper)):
    print(stepper.frame_text(k))
    print()
""", check=True),
    md("""
### Why does `b` receive 1.747 when the rule says $\\partial y / \\partial b = 1$?

Look at step 3, the `Add`. `b` is a scalar, but `w * x` has shape (2,): in the forward pass `b`
was **broadcast** — copied into both positions. Each copy receives its own gradient (0.7864 and
0.961), and since both copies are the same `b`, its gradient is their **sum**:
1.747 = 0.7864 + 0.961. The stepper says so on that step ("sum over axis 0: (2,) → ()"), and
the traced graph records it on the edge, so any picture can show it:
"""),
    code("""
for e in stepper.graph.edges:
    if e.broadcast:
        print(f"{stepper.names[e.src]} -> {stepper.names[e.dst]}: gradient summed over axes "
              f"{e.summed}")
""", check=True),
    md("""
### Taking the animation with you

The widget needs a running Python kernel. `stepper.save_html(path)` writes every frame (picture
and gradient panel) plus a small play/slider script into **one self-contained HTML file**: open
it in any browser, put it on the course website, mail it to a student. Here we write it into a
temporary folder and look inside; to keep one, give it a path of your own, e.g.
`stepper.save_html("backward.html")`.
"""),
    code("""
with tempfile.TemporaryDirectory() as tmp:
    page = stepper.save_html(Path(tmp) / "backward.html").read_text()
print("frames in the page       :", page.count("class='lucid-frame'"))
print("pictures (inline SVG)    :", page.count("<svg"))
print("loads any other file     :", bool(re.search(r"<script[^>]*\\bsrc=|<link\\b|<img\\b", page)))
""", check=True),
    md("""
## 3. Now the real backward

The stepper promised what will arrive at `w` and `b`. Let's run `backward()` and compare:
$\\partial L/\\partial w_i = (1 - \\tanh^2(z_i))\\,x_i$ and $\\partial L/\\partial b = \\sum_i (1 - \\tanh^2(z_i))$.
"""),
    code("""
loss.backward()
z = w.numpy() * x.numpy() + b.numpy()
print("autograd  dL/dw =", w.grad.round(6).tolist(), "  dL/db =", round(float(b.grad), 6))
print("by hand   dL/dw =", ((1 - np.tanh(z) ** 2) * x.numpy()).round(6).tolist(),
      "  dL/db =", round(float((1 - np.tanh(z) ** 2).sum()), 6))
""", check=True),
    md("""
## 4. Gradcheck by hand: finite differences

How do we know the backward *rules* are right? Nudge one input a little and watch the output:

$$\\frac{\\partial L}{\\partial w_i} \\approx \\frac{L(w + \\varepsilon e_i) - L(w - \\varepsilon e_i)}{2\\varepsilon}.$$

This *central difference* is accurate to $O(\\varepsilon^2)$. We use float64 and no graph
(`lucid.no_grad()`), because we only need the values.
"""),
    code("""
def L(w_values, b_value):
    with lucid.no_grad():
        return lucid.tanh(lucid.Tensor(w_values) * x + b_value).sum().item()

eps = 1e-6
w0, b0 = w.numpy().copy(), float(b.item())
numeric = []
for i in range(len(w0)):
    plus, minus = w0.copy(), w0.copy()
    plus[i] += eps
    minus[i] -= eps
    numeric.append((L(plus, b0) - L(minus, b0)) / (2 * eps))
numeric_b = (L(w0, b0 + eps) - L(w0, b0 - eps)) / (2 * eps)

print("finite differences dL/dw =", np.round(numeric, 6).tolist(), " dL/db =", round(numeric_b, 6))
print("autograd           dL/dw =", w.grad.round(6).tolist(), " dL/db =", round(float(b.grad), 6))
print("max |difference| < 1e-8:", bool(np.max(np.abs(np.array(numeric) - w.grad)) < 1e-8))
""", check=True),
    md("""
## 5. `lucid.autograd.gradcheck`

The package does the same thing for any function and every input that requires grad (in float64),
comparing against a random weighting of the outputs so every Jacobian entry counts. It returns
`True` or raises `GradcheckError` showing where they disagree.
"""),
    code("""
lucid.random.seed(0)
A = lucid.randn(3, 4, requires_grad=True, dtype=lucid.Float64)
B = lucid.randn(4, 2, requires_grad=True, dtype=lucid.Float64)
print("matmul + tanh:", lucid.autograd.gradcheck(lambda a, b: lucid.tanh(a @ b), A, B))
print("exp * sum    :", lucid.autograd.gradcheck(lambda a: lucid.exp(a) * a.sum(), A))
""", check=True),
    md("""
## 6. Big graphs: the node-count guard

Our graph had 7 nodes. Real ones are bigger. Unroll a recurrence for 20 time steps,
$h \\leftarrow \\tanh(w\\,h + 0.1\\,t)$ — what a recurrent network does, and what its backward
walks back through ("backpropagation through time") — and there are already 80-odd nodes.
"""),
    code("""
with lucid.count_flops():
    w_rec = lucid.tensor(0.5, requires_grad=True)
    h = lucid.tensor(0.0)
    for t in range(20):
        h = lucid.tanh(w_rec * h + 0.1 * t)
    loss_rec = h * h
print(len(lucid_viz.trace(loss_rec).nodes), "nodes in the graph")
""", check=True),
    md("""
Drawn in full that is an unreadable wall. `draw(..., max_nodes=k)` is the guard (on by default
at 150; `max_nodes=None` turns it off): when the picture would have more than `k` nodes it
collapses instead. This graph has no modules to fold, so it keeps the nodes nearest the output
(where backward starts) and folds everything earlier into one box; the title says what happened.
"""),
    code("""
lucid_viz.draw(loss_rec, max_nodes=12)
"""),
    md("""
A model gives the guard more to work with: it collapses **module levels** one at a time (as
`depth=` would) until the picture fits, and rolls identical blocks up into one box. Eight
identical `Linear → Tanh` blocks and an output layer make 36 nodes; with `max_nodes=12` they
are drawn as three: the input, "Sequential × 8" and the last `Linear`.
"""),
    code("""
lucid.random.seed(0)
nn = lucid.nn
net = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(8)], nn.Linear(4, 1))
lucid_viz.draw(net, lucid.randn(2, 4), max_nodes=12)
"""),
    md("""
## Exercise

A student writes the derivative of $\\tanh$ as $1 - \\tanh(z)$ (forgetting the square).
Use finite differences to show the student's formula is wrong at $z = 0.7$.
"""),
    code("""
# Answer
z0, eps = 0.7, 1e-6
with lucid.no_grad():
    numeric = (lucid.tanh(lucid.Tensor(z0 + eps)).item()
               - lucid.tanh(lucid.Tensor(z0 - eps)).item()) / (2 * eps)
print("finite difference :", round(numeric, 6))
print("1 - tanh(z)^2     :", round(1 - np.tanh(z0) ** 2, 6), "  <- agrees")
print("1 - tanh(z)       :", round(1 - np.tanh(z0), 6), "  <- the student's, wrong")
""", check=True),
    md("""
**Next:** [04_devices_cpu_gpu.ipynb](04_devices_cpu_gpu.ipynb).
"""),
]

NOTEBOOKS = {
    "00": ("00_start_here.ipynb", NB00),
    "01": ("01_tensors_and_dtypes.ipynb", NB01),
    "02": ("02_autograd_and_the_dag.ipynb", NB02),
    "03": ("03_backward_step_by_step.ipynb", NB03),
}


if __name__ == "__main__":
    main(NOTEBOOKS)
