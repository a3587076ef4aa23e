# %% [markdown]
# # 04 · Gradients by hand: matmul, softmax with cross-entropy, broadcasting
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (the chain rule, and
# why the gradients of a value used twice add up) and
# [03 · Backward, step by step](03_backward_step_by_step.ipynb) (the stepper).
#
# Autograd applies one local rule per op. Most rules are one line (`dy/dx = e^x`), but three
# come up in every network and are worth deriving once with pencil and paper:
#
# 1. the **matrix product** `C = A @ B`: why `dL/dA = G @ Bᵀ` and `dL/dB = Aᵀ @ G`;
# 2. **softmax followed by cross-entropy**: why the gradient of the logits is `p − y`;
# 3. **broadcasting**: why an input that was copied in the forward pass gets the *sum* of the
#    copies' gradients in the backward pass.
#
# For each: the derivation, then Lucid's answer, then the stepper showing the rule at work.

# %%
import numpy as np

import lucid
import lucid.nn.functional as F
import lucid_viz
from lucid_viz.exercises import check, check_function

lucid.random.seed(0)

# %% [markdown]
# ## 1. The matrix product
#
# Let `A` be (m, k), `B` be (k, n) and `C = A @ B`, so
#
# $$C_{ij} = \sum_k A_{ik} B_{kj}.$$
#
# Somewhere downstream a scalar loss `L` is computed from `C`; backward hands us
# `G = dL/dC`, an (m, n) array with $G_{ij} = \partial L / \partial C_{ij}$. One entry
# $A_{ik}$ appears in every $C_{ij}$ of row `i` (once per column `j`), with coefficient
# $B_{kj}$. The chain rule adds those paths:
#
# $$\frac{\partial L}{\partial A_{ik}} = \sum_j G_{ij}\, B_{kj} = (G B^\top)_{ik}
# \qquad\Longrightarrow\qquad \frac{\partial L}{\partial A} = G\,B^\top .$$
#
# In the same way $B_{kj}$ appears in every $C_{ij}$ of column `j`, with coefficient
# $A_{ik}$:
#
# $$\frac{\partial L}{\partial B_{kj}} = \sum_i A_{ik}\, G_{ij} = (A^\top G)_{kj}
# \qquad\Longrightarrow\qquad \frac{\partial L}{\partial B} = A^\top G .$$
#
# A memory aid: the gradient of `A` must have `A`'s shape (m, k). From `G` (m, n) and `B`
# (k, n) there is only one product with that shape: `G @ B.T`.
#
# We check it on small matrices, with `L = sum(C * W)` for a fixed `W`, so that `G = W`:

# %% tags=["nbval-check-output"]
A = lucid.Tensor([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]], requires_grad=True, name="A")   # (2, 3)
B = lucid.Tensor([[0.5, -1.0], [2.0, 1.0], [1.0, 0.0]], requires_grad=True, name="B")  # (3, 2)
W = lucid.Tensor([[1.0, 0.0], [2.0, -1.0]], name="W")                                  # (2, 2)

with lucid.count_flops():
    C = A @ B
    L = (C * W).sum()
stepper = lucid_viz.step_backward(L)
L.backward()

G = W.numpy()
print("dL/dA from autograd:\n", A.grad)
print("G @ B.T by hand:\n", G @ B.numpy().T)
print("dL/dB from autograd:\n", B.grad)
print("A.T @ G by hand:\n", A.numpy().T @ G)

# %% [markdown]
# The stepper shows the same two products at the `MatMul` step: the gradient `G` arriving,
# the rule, and what each input receives. Press play, or read the frames as text:

# %%
stepper

# %% tags=["nbval-check-output"]
print(stepper.frame_text(3))

# %% [markdown]
# The backward pass of a matrix product is **two** matrix products of the same size as the
# forward one: that is why a training step costs about three forward passes (chapter 06
# counts it).

# %% [markdown]
# ## 2. Softmax and cross-entropy: `p − y`
#
# A classifier outputs logits $z_1, \dots, z_K$; softmax turns them into probabilities and
# cross-entropy scores the probability of the true class $c$:
#
# $$p_i = \frac{e^{z_i}}{\sum_j e^{z_j}}, \qquad L = -\log p_c
# = -z_c + \log \sum_j e^{z_j}.$$
#
# Differentiate the second form. The first term gives $-1$ at $i = c$ and $0$ elsewhere:
# that is $-y_i$ for the **one-hot** target $y$. The second term gives
# $e^{z_i} / \sum_j e^{z_j} = p_i$. So
#
# $$\frac{\partial L}{\partial z_i} = p_i - y_i .$$
#
# Predicted probability minus target: the gradient pushes the true class's logit up and every
# other logit down, each in proportion to the probability it wrongly received. Averaged over a
# batch of N samples (`F.cross_entropy` takes the mean), each row is divided by N.

# %% tags=["nbval-check-output"]
z = lucid.Tensor([[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], requires_grad=True, name="z")
target = lucid.Tensor([0, 2])            # the true classes of the two samples
loss = F.cross_entropy(z, target)
loss.backward()

p = F.softmax(z.detach(), axis=1).numpy()
y = np.eye(3)[target.numpy()]            # one-hot rows
print("autograd dL/dz:\n", z.grad.round(4))
print("(p - y) / N by hand:\n", ((p - y) / 2).round(4))

# %% [markdown]
# `F.cross_entropy` is one op with this rule built in. Written out of smaller ops --
# `log_softmax`, then picking the true class with a one-hot product -- the same `p − y`
# appears at the `LogSoftmax` step: the gradient arriving there is $-y/N$, and the log-softmax
# rule $g - p \cdot \sum g$ turns it into $(p - y)/N$.

# %% tags=["nbval-check-output"]
z2 = lucid.Tensor(z.numpy(), requires_grad=True, name="z")
with lucid.count_flops():
    composite = -(F.log_softmax(z2, axis=1) * lucid.Tensor(y)).sum() / 2
steps = lucid_viz.step_backward(composite)
for k in range(1, len(steps) + 1):
    if "LogSoftmax" in steps.frame_text(k).splitlines()[0]:
        print(steps.frame_text(k))

# %% [markdown]
# ## 3. Broadcasting in backward: the copies' gradients add up
#
# `x + b` with `x` of shape (3, 1) and `b` of shape (4,) gives a (3, 4) result: in the forward
# pass `x` is copied across 4 columns and `b` across 3 rows. Each copy is a separate use of
# the same number, and chapter 02's rule for a value used several times applies: **the
# gradients of the uses add up**. So backward sums the incoming (3, 4) gradient over the axes
# that were broadcast -- over axis 1 for `x` (giving (3, 1)), over axis 0 for `b` (giving
# (4,)).

# %% tags=["nbval-check-output"]
x = lucid.Tensor([[1.0], [2.0], [3.0]], requires_grad=True, name="x")     # (3, 1)
b = lucid.Tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True, name="b")      # (4,)
with lucid.count_flops():
    out = ((x + b) ** 2).sum()
broadcast_steps = lucid_viz.step_backward(out)
out.backward()

g = 2 * (x.numpy() + b.numpy())          # dL/d(x + b), shape (3, 4)
print("x.grad:", x.grad.ravel(), "  by hand, g summed over axis 1:", g.sum(axis=1))
print("b.grad:", b.grad, "  by hand, g summed over axis 0:", g.sum(axis=0))

# %% [markdown]
# The stepper says it at the `Add` step: which axis each input's gradient is summed over, and
# why.

# %% tags=["nbval-check-output"]
print(broadcast_steps.frame_text(3))

# %%
broadcast_steps

# %% [markdown]
# A rule that forgot this sum would hand `b` a (3, 4) gradient for a (4,) parameter. Lucid
# never silently repairs such a shape: a backward rule returning a gradient of the wrong shape
# is an error, so a mistake in a rule cannot hide.

# %% [markdown]
# ## Exercises
#
# ### Exercise 4.1 · The shape of a gradient
#
# `A` has shape (5, 3) and `B` has shape (3, 7); `L` is computed from `C = A @ B`. What is the
# shape of `dL/dB`, and the shape of the `G` it is computed from? Answer with two tuples.

# %% tags=["solution"]
shape_of_dB = (3, 7)
shape_of_G = (5, 7)

# %% tags=["check"]
A5 = lucid.random.randn(5, 3, requires_grad=True)
B5 = lucid.random.randn(3, 7, requires_grad=True)
C5 = A5 @ B5
C5.keep_grad = True
(C5 * C5).sum().backward()
check("Exercise 4.1 (dL/dB)", shape_of_dB, tuple(B5.grad.shape),
      nudge="What shape does a gradient have?",
      hint="a gradient always has the shape of what it is the gradient of.")
check("Exercise 4.1 (G)", shape_of_G, tuple(C5.grad.shape),
      nudge="What shape does a gradient have?",
      hint="G = dL/dC has the shape of C.")

# %% [markdown]
# ### Exercise 4.2 · Predict `p − y`
#
# One sample with logits $z = (1, 2, 0)$ and true class 1. Compute $\partial L / \partial z$
# for the cross-entropy with NumPy, from the formula of section 2 (a single sample: no division
# by N).

# %% tags=["solution"]
logits = np.array([1.0, 2.0, 0.0])
probs = np.exp(logits) / np.exp(logits).sum()
dL_dz = probs - np.array([0.0, 1.0, 0.0])

# %% tags=["check"]
z_check = lucid.Tensor([[1.0, 2.0, 0.0]], requires_grad=True)
F.cross_entropy(z_check, lucid.Tensor([1])).backward()
check("Exercise 4.2", dL_dz, z_check.grad[0],
      nudge="Section 2 derives this gradient: probabilities minus one-hot.",
      hint="softmax first (exponentials over their sum), then subtract 1 at the true class.")


# %% [markdown]
# ### Exercise 4.3 · The matmul backward rule
#
# Write `matmul_backward(A, B, G)` with NumPy: given `A` (m, k), `B` (k, n) and `G = dL/dC`
# (m, n) for `C = A @ B`, return the pair `(dL/dA, dL/dB)`. The check compares it with what
# Lucid's autograd computes, on matrices of several shapes.

# %% tags=["solution"]
def matmul_backward(A, B, G):
    """(dL/dA, dL/dB) for C = A @ B, from G = dL/dC."""
    return G @ B.T, A.T @ G


# %% tags=["check"]
def autograd_matmul_backward(A, B, G):
    a = lucid.Tensor(A, requires_grad=True)
    b = lucid.Tensor(B, requires_grad=True)
    ((a @ b) * lucid.Tensor(G)).sum().backward()   # L = sum(C * G), so dL/dC = G
    return a.grad, b.grad


rng = np.random.default_rng(11)
cases = [(rng.standard_normal((m, k)), rng.standard_normal((k, n)), rng.standard_normal((m, n)))
         for m, k, n in [(2, 3, 4), (1, 5, 1), (4, 4, 2)]]
check_function("Exercise 4.3", matmul_backward, autograd_matmul_backward, cases,
               nudge="Match the shapes: each gradient must have its input's shape.",
               hint="each gradient has its input's shape: (m, k) from G (m, n) and B (k, n), "
                    "and (k, n) from A (m, k) and G.")


# %% [markdown]
# ### Exercise 4.4 · Summing a broadcast gradient down
#
# Write `sum_to(g, shape)`: the gradient `g` of a broadcast result, summed down to the input's
# `shape`, as backward does for `x + b` in section 3. Sum over the leading axes that the input
# does not have, then (keeping them) over the axes where the input has size 1 and `g` has more.
# (`np.sum(..., axis=..., keepdims=True)` helps.)

# %% tags=["solution"]
def sum_to(g, shape):
    """g summed over the axes that broadcasting added or stretched, down to ``shape``."""
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True) if stretched else g


# %% tags=["check"]
def broadcast_gradient(g, shape):
    x = lucid.Tensor(np.zeros(shape), requires_grad=True)
    (x + lucid.Tensor(np.zeros(g.shape))).backward(lucid.Tensor(g))  # x broadcast; dL/d(sum) = g
    return x.grad


rng = np.random.default_rng(13)
check_function("Exercise 4.4", sum_to, broadcast_gradient,
               [(rng.standard_normal((3, 4)), (3, 1)), (rng.standard_normal((3, 4)), (4,)),
                (rng.standard_normal((2, 3, 4)), (1, 4)), (rng.standard_normal((2, 3)), ()),
                (rng.standard_normal((2, 3)), (2, 3))],
               nudge="Broadcasting copied values; their gradients add up (section 3).",
               hint="first drop the extra leading axes by summing over them; then sum over every "
                    "axis where the input's size is 1, with keepdims=True.")

# %% [markdown]
# **Next:** [05 · Devices](05_devices_cpu_gpu.ipynb): the same graph on NumPy ("cpu") and on
# MLX ("gpu").
