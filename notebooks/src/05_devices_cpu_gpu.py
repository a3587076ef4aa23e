# %% [markdown]
# # 05 · Devices: "cpu" is NumPy, "gpu" is MLX
#
# Every Lucid tensor lives on a **device**. Lucid has two:
#
# | device | array library | its arrays |
# | --- | --- | --- |
# | `"cpu"` | NumPy | `numpy.ndarray` |
# | `"gpu"` | MLX (`mlx.core`) | `mlx.core.array` |
#
# Every operation is written **once** against an array namespace `xp` (NumPy or `mlx.core`); the
# dispatcher picks the namespace from the devices of the inputs. In this chapter we:
#
# 1. ask which kind of "gpu" this machine has;
# 2. move tensors between devices, and meet *free* tensors that follow the op;
# 3. trigger (and read) the mixed-device error;
# 4. index a gpu tensor;
# 5. see MLX's **laziness** and what `.eval()` and `lucid.evaluate` do;
# 6. draw a graph whose nodes are coloured by device;
# 7. move a whole model to the gpu and train it there.
#
# **You need:** [03 · Backward, step by step](03_backward_step_by_step.ipynb) (the graph and
# `backward()`); `nn.Linear` and an optimizer appear as in the tour, [00](00_start_here.ipynb).

# %%
import warnings

import numpy as np

import lucid
import lucid_viz
from lucid_viz.exercises import check, check_function

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (this chapter is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")

lucid.random.seed(0)

# %% [markdown]
# ## 1. What is the "gpu" here?
#
# `lucid.gpu_status()` answers with one of three words:
#
# * `"gpu"` - MLX has a real GPU (Metal on a Mac, CUDA on an NVIDIA machine);
# * `"mlx-cpu"` - MLX is installed but has no GPU: "gpu" tensors run on **MLX's CPU device**
#   (Linux with `pip install 'mlx[cpu]'`, like this classroom machine and CI);
# * `"missing"` - MLX is not installed; `.to("gpu")` then raises with install instructions.
#
# `lucid.gpu_available()` is the yes/no version: `True` only for a **real** GPU (the first case).
# Ask it before you time anything on "gpu" - `mlx-cpu` runs the gpu code path, but not faster.

# %% tags=["nbval-check-output"]
import mlx.core as mx

print("lucid.gpu_status():   ", lucid.gpu_status())
print("lucid.gpu_available():", lucid.gpu_available())
print("MLX default device:   ", mx.default_device())

# %% [markdown]
# On this machine the answer is `mlx-cpu`. The MLX code path, its dtypes and its laziness are the
# real ones; only the hardware underneath is a CPU. (Lucid warns once about this - we silenced that
# warning in the first cell.)
#
# ## 2. Moving tensors: `.to(device)`
#
# A tensor starts on `"cpu"` unless you say otherwise. `.to("gpu")` (or `.gpu()`) returns a copy
# whose data is an MLX array; `.to("cpu")` brings it back. The logical dtype is kept.

# %% tags=["nbval-check-output"]
x = lucid.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
xg = x.to("gpu")
back = xg.to("cpu")

for name, t in [("x", x), ("xg", xg), ("back", back)]:
    array = type(t.data).__bases__[-1]  # the library's array class (Lucid adds PyTorch's methods)
    kind = f"{array.__module__}.{array.__name__}"
    print(f"{name:5s} device={t.device!r:6s} dtype={t.dtype}  data is {kind}")
print("same values after the round trip:", np.array_equal(x.numpy(), back.numpy()))

# %% [markdown]
# `.gpu()` and `.cpu()` are the short spellings of `.to("gpu")` and `.to("cpu")`. A tensor that is
# already on the device is returned as it is (no copy). A real move is a copy - and, for a tensor
# that requires grad, an op in the graph (`ToDevice`) that gradients flow back across (section 7).

# %% tags=["nbval-check-output"]
xg2 = x.gpu()
print("x.gpu().device:       ", xg2.device)
print("x.gpu().cpu().device: ", xg2.cpu().device)
print("x.cpu() is x:         ", x.cpu() is x)          # already there: the same tensor
print("xg2.gpu() is xg2:     ", xg2.gpu() is xg2)

# %% [markdown]
# `lucid.random` take `dtype=` and `device=`. For example, a random permutation of 0..9 as 16-bit
# ints on the gpu - the logical dtype `Int16` becomes MLX's `int16` there. And the same operation
# runs on either device, and gives the same numbers:

# %% tags=["nbval-check-output"]
perm = lucid.random.permutation(10, dtype=lucid.Int16, device="gpu")
print(perm.tolist())
print("dtype:", perm.dtype, " device:", perm.device, " data dtype:", perm.data.dtype)

print("cpu:", round(lucid.tanh(x).sum().item(), 4))
print("gpu:", round(lucid.tanh(xg).sum().item(), 4))
print("result device:", lucid.tanh(xg).device)

# %% [markdown]
# ## 3. Free tensors follow the op
#
# A tensor made from a Python scalar or list has no device preference yet: it is **free**. When it
# meets a tensor on another device inside an op, it moves to the op's device silently. Python
# scalars (`2 * t`) are free too. A tensor made from a NumPy array is *not* free: it means "cpu".
# `t.free()` marks any tensor as free.

# %% tags=["nbval-check-output"]
a = lucid.Tensor([1.0, 2.0, 3.0])             # from a list: free
b = lucid.Tensor(np.array([10.0, 20.0, 30.0])).to("gpu")   # from NumPy, then moved: not free

c = a + b                                     # the op runs on "gpu"; a follows it
print("a.is_free:", a.is_free, " b.is_free:", b.is_free)
print("c =", c.tolist(), "on", c.device)
print("2 * b on", (2 * b).device)

# %% [markdown]
# ## 4. The mixed-device error
#
# Two tensors that are **not** free and sit on different devices cannot meet: Lucid will not
# guess which copy you wanted. The error names the op, the shapes and the devices, and suggests the
# fix.

# %% tags=["nbval-check-output"]
w = lucid.random.randn(2, 3)                  # a cpu tensor (not free)
v = lucid.random.randn(3, 4, device="gpu")    # a gpu tensor (not free)

try:
    w @ v
except RuntimeError as err:
    print("RuntimeError:", err)

# The fix the message suggests: put both operands on one device.
print((w.to("gpu") @ v).shape, "on", (w.to("gpu") @ v).device)
# Or mark one operand free, so that it follows the other (section 3):
print((w.free() @ v).shape, "on", (w.free() @ v).device)

# %% [markdown]
# ## 5. Indexing a gpu tensor
#
# Indexing follows the same rules on both devices: lists of bools and boolean masks select the
# true positions, int lists pick elements, a NumPy array cannot index a gpu tensor (it lives on
# the CPU: use a list, or a Lucid Tensor on "gpu"), and an index tensor must sit on the indexed
# tensor's device. Lucid refuses a bare Python `True` as an index (NumPy would read `t[True]` as
# a new axis; say which you mean).

# %% tags=["nbval-check-output"]
vg = lucid.Tensor(np.arange(5, dtype=np.float32)).gpu()

print("vg[[True, False, True, False, True]] ->", vg[[True, False, True, False, True]].tolist())
print("vg[[4, 0]]                          ->", vg[[4, 0]].tolist())
print("vg[vg > 2]                          ->", vg[vg > 2].tolist(), "on", vg[vg > 2].device)
for bad in (np.array([4, 0]), vg.cpu() > 2):
    try:
        vg[bad]
    except TypeError as err:
        print("TypeError:", err)

# %% [markdown]
# **Under the hood (optional).** MLX itself indexes differently from NumPy: it has no boolean
# masks and refuses NumPy arrays and Python bools as indices. Lucid's `parse_mlx_indexing` (in
# `lucid/backends/mlx_backend.py`) translates a NumPy-style index into one MLX accepts:

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 6. MLX is lazy: `.eval()`
#
# NumPy computes each result as soon as you ask. MLX does not: an MLX operation only *records*
# what to compute, and the work happens when a value is needed (printing, `.item()`, `.numpy()`)
# or when you call `mx.eval`. Lucid's `Tensor.eval()` does that for a tensor (and cuts MLX's own
# graph behind it), so call it before `backward()` and once per training step: make
# `loss.eval()` a habit.
#
# The timings below are *not* checked (they vary from run to run); look at their sizes: building
# the 20 "gpu" ops costs almost nothing, the work all happens in `.eval()`.

# %%
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

# %% [markdown]
# `eval()` returns the tensor itself, so it chains: `loss.eval().backward()`. On the "cpu" device
# it does nothing - NumPy has already computed everything.

# %% tags=["nbval-check-output"]
print(h.eval() is h, x.eval() is x)

# %% [markdown]
# `lucid.evaluate(t1, t2, ...)` evaluates several tensors in one MLX call: the data **and** the
# gradient of each (cpu tensors and `None` are skipped). Optimizers call it on every parameter at
# the end of `step()`, so after each step the parameters are numbers again - not a *recipe* that
# reaches back through every earlier step, which MLX would have to keep in memory until something
# forced it. Write the update yourself, and that call is yours to make:
#
# Gradient descent by hand on the gpu, fitting `theta` so that `X @ theta` matches
# `X @ [1, -2, 0.5]`:

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 7. Devices in the graph
#
# `lucid_viz.draw` colours every node by its device (a legend says which colour is which) and draws
# the edge that crosses devices distinctly. Here the first half of the computation runs on the CPU,
# then `.to("gpu")` moves the intermediate to MLX and the rest runs there.

# %% tags=["nbval-check-output"]
p = lucid.random.randn(2, 3, requires_grad=True)          # cpu
q = lucid.random.randn(3, 2, device="gpu")                # gpu

with lucid.count_flops():                                  # the drawing shows FLOPs (see 06)
    h_cpu = lucid.exp(p) * 2                               # runs on cpu
    h_gpu = h_cpu.to("gpu")                                # the device move is an op too
    out = (h_gpu @ q).sum()                                # runs on gpu

for n in lucid_viz.trace(out).nodes:
    print(f"{n.id:4s} {n.op:10s} shape={str(n.shape):7s} device={n.device}")

# %%
lucid_viz.draw(out)

# %% [markdown]
# Backward crosses the device boundary the other way: the gradient that arrives at `ToDevice`
# comes from MLX and is moved back, so `p.grad` is a NumPy array, like `p`. Evaluate before
# `backward()`:

# %% tags=["nbval-check-output"]
out.eval()
out.backward()
print("p.grad is a NumPy array:", isinstance(p.grad, np.ndarray), "of shape", p.grad.shape)

# %% [markdown]
# ## 8. A whole model on the gpu
#
# Modules move too: `model.to("gpu")` moves every parameter and buffer, recursively, and returns
# the model. Lucid moves them **in place** - the `Parameter` objects stay the same, only their data
# becomes MLX arrays.
#
# A habit to keep: **move the model, then build the optimizer**. An
# optimizer holds the parameter objects it was given; where a move makes new objects (PyTorch's
# documentation warns about this), an optimizer built before the move would update stale copies.
# Lucid moves in place, so here either order would work - but the habit carries over. Then put the
# data on the same device, and `loss.eval()` before `loss.backward()`. `opt.step()` ends with
# `lucid.evaluate` on the new parameters, so the loop needs no more `eval` calls.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 9. Is "gpu" faster here? No.
#
# On a Mac or an NVIDIA machine it would be. But the `mlx[cpu]` wheel on Linux ships a reference
# BLAS, so its matrix multiply is much slower than NumPy's (OpenBLAS). Measure it (times not
# checked):

# %%
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

# %% [markdown]
# So on this machine "gpu" is here to make the MLX code path real and testable, not to be fast.
# Compare devices for speed on hardware with a real MLX GPU.
#
# ## Exercises
#
# ### Exercise 5.1 · Where does it run?
#
# Without running it: on which device is the result of
# `lucid.Tensor([1.0]) + lucid.random.randn(1, device="gpu")`? Answer `"cpu"` or `"gpu"`.

# %% tags=["solution"]
device_1 = "gpu"

# %% tags=["check"]
check("Exercise 5.1", device_1, (lucid.Tensor([1.0]) + lucid.random.randn(1, device="gpu")).device,
      nudge="Which tensors are free, and what does a free tensor do next to a placed one?",
      hint="a tensor made from a Python list is free (section 3).")

# %% [markdown]
# ### Exercise 5.2 · Does it raise?
#
# And `lucid.random.randn(1) + lucid.random.randn(1, device="gpu")`: does it raise an error?
# Answer `True` or `False`.

# %% tags=["solution"]
raises = True

# %% tags=["check"]
try:
    lucid.random.randn(1) + lucid.random.randn(1, device="gpu")
    it_raised = False
except RuntimeError:
    it_raised = True
check("Exercise 5.2", raises, it_raised,
      nudge="Where does lucid.random put the tensors it makes?",
      hint="is a tensor made by lucid.random free, or does it mean a device (section 4)?")


# %% [markdown]
# ### Exercise 5.3 · Fix the mixed-device error
#
# Write `matmul_on_cpu(a, b)`: the product `a @ b` as a tensor on the **cpu**, whichever devices
# `a` and `b` are on. (Section 4's `w @ v` raised; this function must not.)

# %% tags=["solution"]
def matmul_on_cpu(a, b):
    """a @ b, computed and returned on the cpu."""
    return a.to("cpu") @ b.to("cpu")


# %% tags=["check"]
def product_by_numpy(a, b):
    return a.numpy() @ b.numpy()


a_cpu = lucid.Tensor(np.arange(6.0).reshape(2, 3))
b_gpu = lucid.Tensor(np.ones((3, 2))).to("gpu")
check_function("Exercise 5.3", matmul_on_cpu, product_by_numpy,
               [(a_cpu, b_gpu), (a_cpu.to("gpu"), b_gpu), (a_cpu, b_gpu.to("cpu"))],
               nudge="Both operands of an operation must be on one device.",
               hint="move each operand with .to(...) before the product; moving a tensor that "
                    "is already there costs nothing.")
check("Exercise 5.3 (device)", matmul_on_cpu(a_cpu.to("gpu"), b_gpu).device, "cpu",
      nudge="Both operands of an operation must be on one device.",
      hint="the result must live on the cpu.")

# %% [markdown]
# ### Exercise 5.4 · A round trip
#
# On which device is `lucid.Tensor([1.0]).to("gpu").sum().to("cpu") * lucid.Tensor([2.0])`?
# Answer `"cpu"` or `"gpu"`.

# %% tags=["solution"]
device_4 = "cpu"

# %% tags=["check"]
check("Exercise 5.4", device_4,
      (lucid.Tensor([1.0]).to("gpu").sum().to("cpu") * lucid.Tensor([2.0])).device,
      nudge="Follow the tensor step by step: where is it after each call?",
      hint=".to moves a tensor; a free tensor (from a list) joins the device of the other "
           "operand (section 3).")

# %% [markdown]
# **Next:** [06 · FLOPs](06_flops.ipynb): how much work a graph costs, counted op by op.
