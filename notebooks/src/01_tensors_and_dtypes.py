# %% [markdown]
# # 01 · Tensors and dtypes
#
# A tensor is an array plus a little bookkeeping. In this notebook we make tensors, turn them
# (`.T`, `.mT`) and pick elements out of them with a mask, then look at the bookkeeping that says
# *what kind of numbers* a tensor holds: Lucid's dtypes.
#
# **You need:** the tour, [00 · Start here](00_start_here.ipynb), and NumPy arrays (shapes,
# dtypes, indexing).

# %%
import matplotlib.pyplot as plt
import numpy as np

import lucid
from lucid_viz.exercises import check, check_function, check_grad

plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 1. Making tensors
#
# Python floats become 64-bit floats and Python ints 64-bit ints, just as in NumPy. The `.data`
# attribute is the NumPy array underneath (with PyTorch's in-place methods added, such as
# `.zero_()`).
#
# `lucid.tensor(...)` is the function spelling of the same constructor (as in PyTorch): same
# arguments (`requires_grad=`, `dtype=`, `device=`), same result, a `Tensor`.

# %% tags=["nbval-check-output"]
a = lucid.Tensor([1.0, 2.0, 3.0])
b = lucid.Tensor([1, 2, 3])
print(a.dtype, a.data.dtype)
print(b.dtype, b.data.dtype)
print(isinstance(a.data, np.ndarray), a.shape, a.ndim)

m = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(type(m).__name__, m.shape, m.dtype)
print(lucid.tensor([1, 2, 3], dtype=lucid.Float32))

# %% [markdown]
# ## 2. Transposes: `.T` and `.mT`
#
# `.T` reverses **all** the axes (as in NumPy). `.mT` ("matrix transpose") swaps only the **last
# two**. For one matrix they agree; for a *batch* of matrices, shape `(batch, rows, cols)`, only
# `.mT` transposes each matrix and leaves the batch axis where it is.

# %% tags=["nbval-check-output"]
print("m.T  =", m.T.tolist())
print("m.mT =", m.mT.tolist())

batch = lucid.tensor(np.arange(12.0).reshape(2, 2, 3))  # two 2x3 matrices
print("batch", batch.shape, "-> .T", batch.T.shape, "  .mT", batch.mT.shape)
print("each matrix times its own transpose:", (batch @ batch.mT).shape)
try:
    batch @ batch.T  # .T moved the batch axis to the end: the shapes no longer line up
except ValueError as err:
    print("with .T instead ->", err)

# %% [markdown]
# ## 3. Picking elements with a mask
#
# A comparison gives a `Bool` tensor, a **mask**. Indexing with it keeps the elements where the
# mask is `True`, as a 1-D tensor. Gradients flow through this selection: backward *scatters* each
# picked element's gradient back to its position and leaves zeros everywhere else. (That is
# exactly the gradient ReLU needs.)

# %% tags=["nbval-check-output"]
x = lucid.tensor([-1.5, 2.0, -0.5, 3.0], requires_grad=True)
mask = x > 0
print("mask     =", mask.tolist(), mask.dtype)
positive = x[x > 0]
print("x[x > 0] =", positive.tolist())
(positive ** 2).sum().backward()
print("x.grad   =", x.grad.tolist(), " (2x where picked, 0 elsewhere)")

# %% [markdown]
# ## 4. `Numeric`: one name for both backends
#
# A Lucid dtype is a `lucid.types.Numeric(base_dtype, bits)`: a *kind* (bool, int, float, complex)
# and a *width*. The common ones are presets at the top level: `lucid.Float32`, `lucid.Int64`, ...
#
# Each knows the NumPy dtype that stores it on the CPU (`.cpu`) and the MLX dtype on the "gpu"
# device (`.gpu`, see notebook 05).

# %% tags=["nbval-check-output"]
for t in [lucid.Int8, lucid.Int32, lucid.Int64, lucid.Float16, lucid.Float32, lucid.Float64,
          lucid.Complex64]:
    print(f"{t.name:10s} base={t.base_str:8s} bits={t.bits!s:4s} cpu={t.cpu}")
print(lucid.types.Numeric(float, 32) == lucid.Float32)

# %% [markdown]
# `.cpu` and `.gpu` are plain attributes. `parse(device)` picks one of them by device name; it is
# what Lucid calls when it creates a tensor on a device.

# %% tags=["nbval-check-output"]
print("lucid.Int16.cpu             ->", repr(lucid.Int16.cpu), "-",
      lucid.Int16.cpu.itemsize, "bytes each")
print("lucid.Float32.parse('cpu')  ->", repr(lucid.Float32.parse("cpu")))

# %%
# The MLX side needs MLX installed (not checked: the cell prints a hint where it is missing)
if lucid.gpu_status() == "missing":
    print("MLX is not installed here, so there are no .gpu dtypes: pip install 'mlx[cpu]'")
else:
    print("lucid.Int16.gpu             ->", lucid.Int16.gpu)
    print("lucid.Float32.parse('gpu')  ->", lucid.Float32.parse("gpu"))

# %% tags=["nbval-check-output"]
x = lucid.Tensor([1.5, 2.5], dtype=lucid.Float32)
print(x, x.data.dtype)
print(x.astype(lucid.Int32))
print(x.astype(lucid.Float16).dtype)

# %% [markdown]
# **What the width buys.** A float stores a fixed number of significant binary digits (11 for
# Float16, 24 for Float32, 53 for Float64), so the gap between a number and the next one the
# dtype can store grows with the number: about $2^{-10}$ of it in Float16, $2^{-23}$ in Float32,
# $2^{-52}$ in Float64. And Float16 ends at 65,504. Here is that gap for each float preset,
# measured with NumPy's `np.spacing` on its `.cpu` dtype:

# %%
values = np.logspace(-4, 6, 400)
fig, ax = plt.subplots(figsize=(8, 4.5))
for t, style in [(lucid.Float16, "-"), (lucid.Float32, "--"), (lucid.Float64, ":")]:
    v = values[values <= np.finfo(t.cpu).max].astype(t.cpu)     # Float16 stops at 65,504
    ax.plot(v, np.spacing(v), style, linewidth=2.5, label=f"{t.name} ({t.bits} bits)")
ax.set(xscale="log", yscale="log", xlabel="value x",
       ylabel="gap to the next storable number", title="How fine is each float dtype?")
ax.grid(alpha=0.3)
ax.legend()
plt.show()

# %% [markdown]
# Each line is a staircase: the gap is constant between two powers of two and doubles at each.
# At 1,000 the Float16 gap is already 0.5, so 1000.3 is stored as the nearest step:

# %% tags=["nbval-check-output"]
print(lucid.Tensor([1000.3], dtype=lucid.Float16).tolist(),
      lucid.Tensor([1000.3], dtype=lucid.Float32).tolist())

# %% [markdown]
# ## 5. Bit-free types take their width from the data
#
# `lucid.Float`, `lucid.Int` and `lucid.Complex` have **no width** (`bits=None`). They mean "a
# float, as wide as the data already is". So float64 data stays 64-bit, float32 data stays 32-bit,
# and integer data turned into `Float` becomes a float of the same width.

# %% tags=["nbval-check-output"]
print("Float is bit-free:", lucid.Float.is_bit_free, " bits =", lucid.Float.bits)
print(lucid.Tensor(np.array([1.0, 2.0]), dtype=lucid.Float).dtype)                    # float64 data
print(lucid.Tensor(np.array([1.0, 2.0], dtype=np.float32), dtype=lucid.Float).dtype)  # float32 data
print(lucid.Tensor(np.array([1, 2], dtype=np.int32), dtype=lucid.Float).dtype)        # int32 data
print(lucid.Float.resolve_bits(np.dtype("float16")))

# %% [markdown]
# `lucid.Int` and `lucid.Complex` work the same way. On their own they have no storage dtype yet
# (`.cpu` is `None`); they get one when they meet data. A fixed-width type such as `lucid.Int16`
# ignores the data's width and converts.

# %% tags=["nbval-check-output"]
print("Int.cpu =", lucid.Int.cpu, "  Complex.cpu =", lucid.Complex.cpu)
i64 = np.array([1, 2, 3])  # NumPy's default int: int64
cases = [
    ("int64 data,   dtype=lucid.Int     ->", i64, lucid.Int, "(width from the data)"),
    ("int64 data,   dtype=lucid.Int16   ->", i64, lucid.Int16, "(width fixed)"),
    ("float32 data, dtype=lucid.Complex ->", np.ones(2, np.float32), lucid.Complex, ""),
    ("float64 data, dtype=lucid.Complex ->", [1.0, 2.0], lucid.Complex, ""),
]
for text, data, dtype, note in cases:
    print(text, lucid.tensor(data, dtype=dtype).dtype, " ", note)
print("float data,   dtype=lucid.Int     ->", lucid.tensor([1.7, -2.7], dtype=lucid.Int).tolist(),
      " (cut toward 0)")

# %% [markdown]
# ## 6. From a backend dtype back to a `Numeric`
#
# The other direction: `lucid.types.to_numeric_type` turns a NumPy or MLX dtype (or a Python
# type) into its `Numeric`; `Tensor.dtype` is built with it. Anything that is not a number or a
# bool (strings, dates, Python objects) is refused with a `TypeError` that says what *is* allowed.

# %% tags=["nbval-check-output"]
from lucid.types import to_numeric_type

for d in [np.dtype("float32"), np.dtype("complex128"), np.dtype("uint8"), np.dtype("bool"), int]:
    print(f"{d!s:15s} -> {to_numeric_type(d)}")
try:
    to_numeric_type(np.dtype("U5"))  # NumPy's 5-character strings
except TypeError as err:
    print("TypeError:", err)

# %% [markdown]
# That is also why `lucid.tensor(["a", "b"])` fails: NumPy would store the strings, but Lucid has no
# dtype for them.
#
# ## 7. The gpu float64 policy
#
# GPUs driven by MLX (Apple Metal, NVIDIA CUDA) have no float64 arithmetic. Lucid's rule: a
# `Float64` tensor on the "gpu" device is *stored* as float32 there, but still *reports*
# `Float64`. When MLX runs on its CPU device (Linux without a GPU), all 64 bits are kept.
#
# The whole policy is one small function, so we can ask it both questions directly, whatever
# machine this notebook runs on:

# %% tags=["nbval-check-output"]
print("MLX default device is a GPU  -> Float64 stored in",
      lucid.types.gpu_float64_storage_bits(True), "bits")
print("MLX runs on its CPU device    -> Float64 stored in",
      lucid.types.gpu_float64_storage_bits(False), "bits")

# %%
# What this machine has (not checked: it differs between a laptop and a server)
print(lucid.gpu_status())
if lucid.gpu_status() != "missing":
    # The dtype applies the policy itself: Float64's MLX dtype here
    print("lucid.Float64.parse('gpu') ->", lucid.Float64.parse("gpu"))

# %% [markdown]
# ## 8. Weak Python scalars
#
# Mixing a tensor with a plain Python number should not change the tensor's dtype: `2.5` is a
# *weak* scalar, it adapts to the tensor. Only when the tensor cannot hold the result (an int
# tensor times 2.5) does the dtype widen, to a float.
#
# Two *tensors* are different: the result is the wider of the two dtypes.

# %% tags=["nbval-check-output"]
f32 = lucid.Tensor([1.0, 2.0], dtype=lucid.Float32)
i64 = lucid.Tensor([1, 2])
print("Float32 * 2.5 ->", (f32 * 2.5).dtype)
print("Float32 + 1   ->", (f32 + 1).dtype)
print("Int64 * 2     ->", (i64 * 2).dtype)
print("Int64 * 2.5   ->", (i64 * 2.5).dtype)

f16 = lucid.Tensor([1.0, 2.0], dtype=lucid.Float16)
print("Float16 + Float32 ->", (f16 + f32).dtype)

# %% [markdown]
# ## Exercises
#
# ### Exercise 1.1 · A bit-free dtype meets 16-bit data
#
# What dtype does `lucid.Tensor(np.arange(3, dtype=np.int16), dtype=lucid.Float)` get? Answer
# with a Lucid dtype, such as `lucid.Float64`.

# %% tags=["solution"]
dtype_1 = lucid.Float16

# %% tags=["check"]
check("Exercise 1.1", dtype_1, lucid.Tensor(np.arange(3, dtype=np.int16), dtype=lucid.Float).dtype,
      nudge="Section 5: what does a bit-free type do when the data already has a width?",
      hint="a bit-free type takes its width from the data (section 5).")

# %% [markdown]
# ### Exercise 1.2 · A tensor times a Python float
#
# `lucid.Tensor([1.0], dtype=lucid.Float32) * 0.1`: which dtype has the result?

# %% tags=["solution"]
dtype_2 = lucid.Float32

# %% tags=["check"]
check("Exercise 1.2", dtype_2, (lucid.Tensor([1.0], dtype=lucid.Float32) * 0.1).dtype,
      nudge="Section 8 is about exactly this pair of operands.",
      hint="is 0.1 a tensor, or a weak Python scalar (section 8)?")

# %% [markdown]
# ### Exercise 1.3 · Two transposes of a batch
#
# `batch` holds 4 matrices of shape `(2, 3)`: its shape is `(4, 2, 3)`. Predict the shapes of
# `batch.T` and `batch.mT`, as tuples.

# %% tags=["solution"]
shape_T = (3, 2, 4)
shape_mT = (4, 3, 2)

# %% tags=["check"]
batch4 = lucid.zeros(4, 2, 3)
check("Exercise 1.3 (.T)", shape_T, batch4.T.shape, nudge="Section 2 compares the two transposes "
                                                          "on a batch.",
                                                    hint=".T reverses the order of all axes.")
check("Exercise 1.3 (.mT)", shape_mT, batch4.mT.shape,
      nudge="Section 2 compares the two transposes on a batch.",
      hint=".mT swaps the last two axes only; the batch axis stays first.")

# %% [markdown]
# ### Exercise 1.4 · Predict the gradient through a mask
#
# With `x = [-1.5, 2.0, -0.5, 3.0]` and `L = (x[x > 0] ** 3).sum()`, what is `dL/dx`? Give all
# four entries as a list.

# %% tags=["solution"]
grad_x = [0.0, 12.0, 0.0, 27.0]

# %% tags=["check"]
check_grad("Exercise 1.4", grad_x, lambda t: (t[t > 0] ** 3).sum(), [-1.5, 2.0, -0.5, 3.0],
           nudge="Which entries does the mask keep, and what happens to the others in backward "
                 "(section 3)?",
           hint="an entry the mask drops gets gradient 0; a picked one gets d(x³)/dx = 3x².")


# %% [markdown]
# ### Exercise 1.5 · The mean of the positive entries
#
# Write `mean_of_positive(x)`: for a Tensor `x`, the mean of its entries that are greater than 0,
# as a Python float. Pick them with a mask, as in section 3. The check compares with NumPy on a
# few tensors.

# %% tags=["solution"]
def mean_of_positive(x):
    """The mean of the entries of x greater than 0, as a float."""
    return x[x > 0].mean().item()


# %% tags=["check"]
def numpy_mean_of_positive(x):
    values = x.numpy()
    return float(values[values > 0].mean())


check_function("Exercise 1.5", mean_of_positive, numpy_mean_of_positive,
               [lucid.Tensor([1.0, -2.0, 3.0]), lucid.Tensor([[0.5, -1.0], [2.5, 4.0]]),
                lucid.Tensor([-1.0, 7.0, 0.0, 2.0])],
               nudge="Section 3 picks elements with a mask; what is the mask here?",
               hint="x > 0 is the mask, x[x > 0] the positive entries; then .mean() and "
                    ".item() for a Python float.")

# %% [markdown]
# **Next:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb): the graph every
# operation records, and how `backward()` walks it.
