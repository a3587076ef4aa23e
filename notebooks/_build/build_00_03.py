# ruff: noqa: E501  (notebook text: markdown tables and formulas keep their long lines)
"""Write (and execute) the classroom notebooks 00-03.

    .venv/bin/python notebooks/_build/build_00_03.py          # write + execute + save outputs
    .venv/bin/python notebooks/_build/build_00_03.py --no-run # write sources only

The notebooks only call ``lucid`` / ``lucid_viz``; this script holds their text, nothing else.
Cells whose printed numbers are the lesson start with ``# NBVAL_CHECK_OUTPUT``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent.parent  # notebooks/
CHECK = "# NBVAL_CHECK_OUTPUT\n"


def md(text: str):
    return new_markdown_cell(text.strip("\n"))


def code(text: str, check: bool = False):
    return new_code_cell((CHECK if check else "") + text.strip("\n"))


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

Lucid counts work as it goes. The convention: a matrix multiply costs `m·n·k` **MACs**
(multiply-accumulates), an elementwise op one FLOP per output element. Multiply by 2 if you want
the other common unit (2·MACs).

A `(4×3) @ (3×2)` product is 4·3·2 = 24 MACs; the `sum` that follows adds 8.
"""),
    code("""
with lucid.count_flops():
    A = lucid.randn(4, 3, requires_grad=True)
    B = lucid.randn(3, 2)
    loss = (A @ B).sum()
print("total FLOPs below loss:", loss.flops)
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

A tensor is an array plus a little bookkeeping. In this notebook we look at the bookkeeping that
says *what kind of numbers* a tensor holds: Lucid's dtypes.

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
## 2. `Numeric`: one name for both backends

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
    code("""
x = lucid.Tensor([1.5, 2.5], dtype=lucid.Float32)
print(x, x.data.dtype)
print(x.astype(lucid.Int32))
print(x.astype(lucid.Float16).dtype)
""", check=True),
    md("""
## 3. Bit-free types take their width from the data

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
## 4. The gpu float64 policy

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
"""),
    md("""
## 5. Weak Python scalars

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

## 3. Accumulation across calls

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
## 4. `keep_grad`: looking at intermediate gradients

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
## 5. Vectors, and FLOPs on the graph

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
print("forward FLOPs:", loss.flops)
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
rule each op applies. Then we check gradients *by hand* with finite differences.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code("""
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
    x = lucid.Tensor([0.5, -1.0])
    w = lucid.Tensor([0.8, 0.3], requires_grad=True)
    b = lucid.Tensor(0.1, requires_grad=True)
    loss = lucid.tanh(w * x + b).sum()
print("loss =", round(loss.item(), 6))
""", check=True),
    md("""
## 2. The stepper

Press **Play** (or drag the slider). Each step highlights the node being processed, the edges its
gradient flows along, the gradient values arriving, and the op's local derivative rule.
The stepper does not touch `.grad`; it only shows the walk. In its labels `n0` is `w`, `n1` is
the constant input `x` (no gradient needed) and `n3` is `b`.
"""),
    code("""
stepper = lucid_viz.step_backward(loss)
stepper
"""),
    md("""
The same frames as text — handy for a printed handout. One line per node, in the order
`backward()` visits them (reverse topological order):
"""),
    code("""
print(len(stepper), "steps")
for k in range(len(stepper)):
    print(stepper.frame_text(k))
    print()
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
    "00_start_here.ipynb": NB00,
    "01_tensors_and_dtypes.ipynb": NB01,
    "02_autograd_and_the_dag.ipynb": NB02,
    "03_backward_step_by_step.ipynb": NB03,
}


def build(name: str, cells: list) -> nbformat.NotebookNode:
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def execute(nb: nbformat.NotebookNode) -> None:
    import nbclient

    nbclient.NotebookClient(nb, kernel_name="python3", timeout=120,
                            resources={"metadata": {"path": str(HERE)}}).execute()


def main(argv: list[str]) -> None:
    run = "--no-run" not in argv
    only = [a for a in argv if not a.startswith("--")]
    for name, cells in NOTEBOOKS.items():
        if only and not any(o in name for o in only):
            continue
        nb = build(name, cells)
        if run:
            start = time.perf_counter()
            execute(nb)
            print(f"{name}: executed in {time.perf_counter() - start:.1f} s")
        nbformat.write(nb, HERE / name)


if __name__ == "__main__":
    main(sys.argv[1:])
