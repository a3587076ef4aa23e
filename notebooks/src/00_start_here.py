# %% [markdown]
# # 00 · Start here: a tour of Lucid
#
# **Lucid** is a small deep-learning framework written to be *read*. In this first notebook we
# take a quick tour of everything; each later chapter zooms in on one part.
#
# **You need:** Python (functions, lists, loops) and a first look at NumPy arrays. No deep
# learning yet: this tour shows each part once, and the chapters explain them one at a time.
#
# ## The course
#
# - [01 · Tensors and dtypes](01_tensors_and_dtypes.ipynb): making tensors, transposes, masks,
#   and the dtypes `Numeric`, bit-free types, the gpu float64 policy
# - [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb): the graph, the chain rule,
#   gradient accumulation, hooks, `detach` and `no_grad`
# - [03 · Backward, step by step](03_backward_step_by_step.ipynb): the backward stepper,
#   checking gradients with finite differences and `gradcheck`
# - [04 · Gradients by hand](04_gradients_by_hand.ipynb): the matrix-multiply gradients
#   $G B^\top$ and $A^\top G$, softmax with cross-entropy ($p - y$), and the sum over
#   broadcast axes, each replayed in the stepper
# - [05 · Devices](05_devices_cpu_gpu.ipynb): "cpu" is NumPy, "gpu" is MLX; moving tensors,
#   the mixed-device error, MLX's laziness and `.eval()`
# - [06 · FLOPs](06_flops.ipynb): counting the work of a graph in MACs and FLOPs,
#   `summarize` and `%%lucid_flops`
# - [07 · Parameters, buffers and `state_dict`](07_parameters_buffers_state_dict.ipynb):
#   how a model finds its parts, BatchNorm's buffers, saving and loading, hooks
# - [08 · Training an MLP](08_training_an_mlp.ipynb): a full training loop on real
#   handwritten digits: split, standardise, batch, the loop, loss curves, test accuracy
# - [09 · Reading a training run](09_reading_a_training_run.ipynb): gradient norms per layer,
#   the mistakes, saving the weights, Adam and a learning rate too large
# - [10 · Convolutional networks](10_convolutional_networks.ipynb): convolution as one matrix
#   product, its FLOPs, pooling, a small CNN on the digits, BatchNorm's two modes
# - [11 · ResNet-18 and residual connections](11_resnet.ipynb): ResNet-18 summarised and drawn,
#   and why its shortcuts let the gradient through
# - [12 · More layers](12_convolutions_and_normalisation.ipynb): random numbers, the other
#   convolutions and poolings, normalisation, dropout
# - [13 · Embeddings, activations and losses](13_activations_and_losses.ipynb): embeddings,
#   activations and their slopes, attention, `ModuleDict`, the losses, initialisation
# - [14 · Optimizers, schedules and data](14_optimizers_and_data.ipynb): how each optimizer
#   moves a parameter, learning-rate schedules, datasets and loaders, LeNet-5
# - [15 · Build it yourself](15_build_it_yourself.ipynb): your own op (forward, backward,
#   FLOPs) checked with `gradcheck` and seen in `draw` and the stepper, then your own
#   optimizer and your own layer
# - [16 · Recurrent networks](16_recurrent_networks.ipynb): a recurrent cell as a loop,
#   `nn.RNN`, `nn.LSTM`, `nn.GRU`, and an LSTM and an RNN trained on a task that needs memory
# - [17 · Gradients through time](17_gradients_through_time.ipynb): vanishing and exploding
#   gradients through time, why the LSTM keeps them, gradient clipping
# - [18 · Attention](18_attention.ipynb): attention written out, the causal mask, attention
#   maps, positional encodings, a Transformer layer part by part, and the text a GPT will learn
# - [19 · A tiny GPT](19_a_tiny_gpt.ipynb): a small GPT trained on the shipped Shakespeare
#   text, what its heads look at, and where its FLOPs go
# - [20 · Variational autoencoders](20_variational_autoencoders.ipynb): a generative model for
#   the digits taken apart: the ELBO, the reparameterisation trick, the KL term derived
# - [21 · Latent spaces and GANs](21_latent_spaces_and_gans.ipynb): the VAE trained, its
#   samples and its 2-D latent space as a map, and the DCGAN's generator and discriminator
# - [22 · Beyond the first derivative](22_beyond_first_derivatives.ipynb): Hessians and
#   gradient penalties, `lucid.linalg`, einops, more layers and optimizers
# - [23 · Past one machine: data parallelism](23_data_parallel.ipynb): why averaging gradients
#   over shards equals the full batch, the ring all-reduce, two processes trained as one
#
# Everything runs on the CPU and is seeded, so you see the same numbers as the stored outputs.
#
# ## How the exercises work
#
# Every chapter ends with exercises, from "predict the gradient" to "implement it". Each has a
# cell for your answer and a **check** cell below it: run the check and it says `✓ right`, or
# what is off and a hint (never the answer). In the student edition (`make student`, then
# `make lab LAB_DIR=student`) your answer cells hold `...` or `raise NotImplementedError`; in
# this edition they hold a solution.

# %%
import numpy as np

import lucid
import lucid_viz
from lucid_viz.exercises import check, check_function

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
# per-op table (notebook 06 goes deeper).

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
# ## Exercises
#
# ### Exercise 0.1 · Predict the gradient
#
# For $y = 3x^2 - x$, what is $dy/dx$ at $x = 2$? Work it out on paper, write the number in the
# next cell, then run the check: it lets Lucid compute the gradient and compares.

# %% tags=["solution"]
dy_dx = 11.0

# %% tags=["check"]
x_check = lucid.Tensor(2.0, requires_grad=True)
(3 * x_check ** 2 - x_check).backward()
check("Exercise 0.1", dy_dx, x_check.grad,
      nudge="Differentiate y term by term first, then put the number in.",
      hint="the derivative of x² is 2x and of x is 1; then put x = 2 in.")

# %% [markdown]
# ### Exercise 0.2 · Predict the cost
#
# `A` has shape `(5, 4)` and `B` has shape `(4, 3)`. How many MACs does `A @ B` cost, and how
# many FLOPs does the `.sum()` of the result cost?

# %% tags=["solution"]
matmul_macs = 60
sum_flops = 15

# %% tags=["check"]
with lucid.count_flops():
    product = lucid.ones(5, 4) @ lucid.ones(4, 3)
    total = product.sum()
check("Exercise 0.2 (MACs)", matmul_macs, product.cost.macs,
      nudge="A MAC is one multiply-add: how many does each number of the product need, and how "
            "many numbers are there?",
      hint="an (m, k) @ (k, n) product costs m·n·k MACs.")
check("Exercise 0.2 (FLOPs)", sum_flops, total.cost.flops,
      nudge="Count the additions a sum makes.",
      hint="a sum costs one FLOP per number it adds up; how many numbers does A @ B hold?")

# %% [markdown]
# ### Exercise 0.3 · A smaller learning rate
#
# Train the model of section 5 again with `lr=0.01` instead of `lr=0.1`, still for 60 steps.
# Will the loss at the end be **bigger** than with `lr=0.1`? Answer `True` or `False`, then
# think about why before you run the check.

# %% tags=["solution"]
loss_is_bigger = True


# %% tags=["check"]
def final_loss(lr):
    """Section 5's training, with another learning rate."""
    lucid.random.seed(0)
    net = lucid.nn.Linear(3, 1)
    sgd = lucid.optim.SGD(net.parameters(), lr=lr)
    for _ in range(60):
        sgd.zero_grad()
        mse = lucid.nn.functional.mse_loss(net(X), Y)
        mse.backward()
        sgd.step()
    return mse.item()


check("Exercise 0.3", loss_is_bigger, final_loss(0.01) > final_loss(0.1),
      nudge="Think about how far the weights travel in 60 steps, not about a single step.",
      hint="each step moves a weight by lr × gradient. With steps ten times smaller, how far "
           "do the weights get in 60 steps?")


# %% [markdown]
# ### Exercise 0.4 · Implement one step of gradient descent
#
# The optimizer in section 5 moves every weight against its gradient: new weight = weight −
# learning rate × gradient. Write that step for NumPy arrays.

# %% tags=["solution"]
def sgd_step(weights, gradient, lr):
    """The weights after one plain gradient-descent step (NumPy arrays in, one array out)."""
    return weights - lr * gradient


# %% tags=["check"]
def lucid_sgd_step(weights, gradient, lr):
    """The same step, taken by lucid.optim.SGD."""
    param = lucid.nn.Parameter(lucid.Tensor(weights))
    param.grad = gradient
    lucid.optim.SGD([param], lr=lr).step()
    return param.numpy()


check_function("Exercise 0.4", sgd_step, lucid_sgd_step,
               [(np.array([1.0, -2.0]), np.array([0.5, 0.5]), 0.1),
                (np.array([[3.0], [0.0]]), np.array([[-1.0], [2.0]]), 0.5)],
               nudge="Section 5 says which way a step goes and how long it is.",
               hint="subtract: the step goes against the gradient, scaled by lr.")

# %% [markdown]
# **Next:** [01 · Tensors and dtypes](01_tensors_and_dtypes.ipynb): what a tensor holds, and the
# dtypes that say what kind of numbers they are.
