# %% [markdown]
# # 00 · Start here: a tour of Lucid
#
# **Lucid** is a small deep-learning framework written to be *read*. In this first notebook we
# take a quick tour of everything; each later notebook zooms in on one part:
#
# | notebook | topic |
# |---|---|
# | [01_tensors_and_dtypes.ipynb](01_tensors_and_dtypes.ipynb) | tensors, `Numeric` dtypes, the gpu float64 policy |
# | [02_autograd_and_the_dag.ipynb](02_autograd_and_the_dag.ipynb) | the graph, the chain rule, gradient accumulation |
# | [03_backward_step_by_step.ipynb](03_backward_step_by_step.ipynb) | the backward stepper, gradcheck by hand |
# | [04_devices_cpu_gpu.ipynb](04_devices_cpu_gpu.ipynb) | cpu vs the MLX "gpu", laziness, `.eval()` |
# | [05_flops.ipynb](05_flops.ipynb) | counting FLOPs, `%%lucid_flops` |
# | [06_parameters_buffers_state_dict.ipynb](06_parameters_buffers_state_dict.ipynb) | modules, parameters, buffers, saving |
# | [07_training_an_mlp.ipynb](07_training_an_mlp.ipynb) | training an MLP on real digits |
# | [08_cnns_and_resnet.ipynb](08_cnns_and_resnet.ipynb) | convolutions and ResNet-18 |
# | [09_layer_catalogue.ipynb](09_layer_catalogue.ipynb) | the rest of the catalogue: layers, losses, optimizers, schedulers, data |
# | [10_beyond_first_derivatives.ipynb](10_beyond_first_derivatives.ipynb) | Hessians and gradient penalties, `lucid.linalg`, einops, and more layers and optimizers |
#
# Everything runs on the CPU and is seeded, so you see the same numbers as the stored outputs.

# %%
import lucid
import lucid_viz

lucid.random.seed(0)
print("lucid", lucid.__version__)

# %% [markdown]
# ## 1. Tensors
#
# A `lucid.Tensor` wraps a NumPy array (on the "cpu" device). It knows its shape and its dtype,
# and supports the usual arithmetic.

# %% tags=["nbval-check-output"]
x = lucid.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(x)
print("shape:", x.shape, " dtype:", x.dtype, " size:", x.size)
print("x * 2 + 1 =", (x * 2 + 1).tolist())
print("row sums:", x.sum(axis=1).tolist())

# %% [markdown]
# ## 2. Autograd
#
# Mark a tensor with `requires_grad=True` and Lucid records every operation on it. Calling
# `backward()` on the result walks that record backwards and fills in `.grad`.
#
# For $y = x^2 + 3x$ the derivative is $2x + 3$, so at $x = 2$ we expect **7**.

# %% tags=["nbval-check-output"]
x = lucid.Tensor(2.0, requires_grad=True)
y = x ** 2 + 3 * x
y.backward()
print("y      =", y.item())
print("dy/dx  =", float(x.grad))

# %% [markdown]
# ## 3. The graph, drawn
#
# The record autograd keeps is a **DAG** (directed acyclic graph): leaves are the inputs, every
# other node is an operation. `lucid_viz.draw` renders it. Run inside `lucid.count_flops()`, each
# node also shows how many floating-point operations it cost.

# %%
with lucid.count_flops():
    x = lucid.Tensor(2.0, requires_grad=True)
    y = x ** 2 + 3 * x
lucid_viz.draw(y)

# %% [markdown]
# ## 4. FLOPs
#
# Lucid counts work as it goes, in two units. A matrix multiply (or a convolution) costs `m·n·k`
# **MACs** — multiply-accumulates, one per multiply-add; every other op costs **FLOPs**, one per
# element operation. A MAC is two FLOPs (a multiply and an add), so Lucid keeps the two apart.
#
# A `(4×3) @ (3×2)` product is 4·3·2 = 24 MACs; the `sum` that follows adds its 8 numbers: 8 FLOPs.

# %% tags=["nbval-check-output"]
with lucid.count_flops():
    A = lucid.randn(4, 3, requires_grad=True)
    B = lucid.randn(3, 2)
    loss = (A @ B).sum()
print("work below loss:", loss.cost)
print("all in FLOPs   :", loss.cost.in_flops, "FLOPs")

# %% [markdown]
# In a notebook the `%%lucid_flops` cell magic does the counting for a whole cell and prints a
# per-op table (notebook 05 goes deeper).

# %%
# %load_ext lucid_viz

# %%
# %%lucid_flops
layer = lucid.nn.Linear(3, 2)
out = layer(lucid.randn(4, 3))

# %% [markdown]
# ## 5. A tiny training loop
#
# Put it together: a `Linear` layer, a mean-squared-error loss, and SGD. The data come from a known
# rule, `y = 1·x0 − 2·x1 + 0.5·x2`, so we can see whether training finds those three weights.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## Exercise
#
# Change the learning rate to `lr=0.01` and keep 60 steps. Is the loss after training bigger or
# smaller than with `lr=0.1`? Why?
#
# *(Answer in the next cell.)*

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# **Where next?** Open [01_tensors_and_dtypes.ipynb](01_tensors_and_dtypes.ipynb).
