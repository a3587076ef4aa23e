# %% [markdown]
# # 03 · Backward, step by step
#
# `backward()` does its whole walk in one call. Here we slow it down: `lucid_viz.step_backward`
# replays the very same walk one node per step, showing which gradient arrives where and the local
# rule each op applies. Then we check gradients *by hand* with finite differences, and finally
# see how Lucid draws graphs too big to read node by node.
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb): the graph, the
# chain rule, `backward()`.

# %%
import re
import tempfile
from pathlib import Path

import numpy as np

import lucid
import lucid_viz
from lucid.autograd.functional import vjp
from lucid_viz.exercises import check_function, check_grad

lucid.random.seed(0)

# %% [markdown]
# ## 1. A small graph
#
# A one-neuron "network": $L = \mathrm{sum}\big(\tanh(w \cdot x + b)\big)$ for two inputs.
# We build it inside `lucid.count_flops()` so the stepper can show the running backward FLOPs.

# %% tags=["nbval-check-output"]
with lucid.count_flops():
    x = lucid.Tensor([0.5, -1.0], name="x")
    w = lucid.Tensor([0.8, 0.3], requires_grad=True, name="w")
    b = lucid.Tensor(0.1, requires_grad=True, name="b")
    loss = lucid.tanh(w * x + b).sum()
print("loss =", round(loss.item(), 6))

# %% [markdown]
# ## 2. The stepper
#
# Press **Play** (or drag the slider). Each step highlights the node being processed, the edges its
# gradient flows along, the gradient values arriving, and the op's local derivative rule.
# The stepper does not touch `.grad`; it only shows the walk. The tensors were given names
# (`name="w"`), so the pictures and the table call them `w`, `x` and `b`; the ops are called by
# their kind and id (`Mul n2`), the same words in the picture and in the table.

# %%
stepper = lucid_viz.step_backward(loss)
stepper

# %% [markdown]
# The same frames as text — handy for a printed handout. One line per node, in the order
# `backward()` visits them: the op that ran last comes first (so every node comes after all the
# nodes that use it — a reverse topological order), and the leaves come at the end:

# %% tags=["nbval-check-output"]
print(len(stepper), "steps")
for k in range(1, len(stepper) + 1):
    print(stepper.frame_text(k))
    print()

# %% [markdown]
# ### Why does `b` receive 1.747 when the rule says $\partial y / \partial b = 1$?
#
# Look at step 3, the `Add`. `b` is a scalar, but `w * x` has shape (2,): in the forward pass `b`
# was **broadcast** — copied into both positions. Each copy receives its own gradient (0.7864 and
# 0.961), and since both copies are the same `b`, its gradient is their **sum**:
# 1.747 = 0.7864 + 0.961. The stepper says so on that step ("sum over axis 0: (2,) → ()"), and
# the traced graph records it on the edge, so any picture can show it:

# %% tags=["nbval-check-output"]
for e in stepper.graph.edges:
    if e.broadcast:
        print(f"{stepper.names[e.src]} -> {stepper.names[e.dst]}: gradient summed over axes "
              f"{e.summed}")

# %% [markdown]
# ### Taking the animation with you
#
# The widget needs a running Python kernel. `stepper.save_html(path)` writes every frame (picture
# and gradient panel) plus a small play/slider script into **one self-contained HTML file**: open
# it in any browser, put it on the course website, mail it to a student. Here we write it into a
# temporary folder and look inside; to keep one, give it a path of your own, e.g.
# `stepper.save_html("backward.html")`.

# %% tags=["nbval-check-output"]
with tempfile.TemporaryDirectory() as tmp:
    page = stepper.save_html(Path(tmp) / "backward.html").read_text()
print("frames in the page       :", page.count("class='lucid-frame'"))
print("pictures (inline SVG)    :", page.count("<svg"))
print("loads any other file     :", bool(re.search(r"<script[^>]*\bsrc=|<link\b|<img\b", page)))

# %% [markdown]
# ## 3. Now the real backward
#
# The stepper promised what will arrive at `w` and `b`. Let's run `backward()` and compare:
# $\partial L/\partial w_i = (1 - \tanh^2(z_i))\,x_i$ and
# $\partial L/\partial b = \sum_i (1 - \tanh^2(z_i))$.

# %% tags=["nbval-check-output"]
loss.backward()
z = w.numpy() * x.numpy() + b.numpy()
print("autograd  dL/dw =", w.grad.round(6).tolist(), "  dL/db =", round(float(b.grad), 6))
print("by hand   dL/dw =", ((1 - np.tanh(z) ** 2) * x.numpy()).round(6).tolist(),
      "  dL/db =", round(float((1 - np.tanh(z) ** 2).sum()), 6))


# %% [markdown]
# ## 4. Gradcheck by hand: finite differences
#
# How do we know the backward *rules* are right? Nudge one input a little and watch the output:
#
# $$\frac{\partial L}{\partial w_i} \approx
#   \frac{L(w + \varepsilon e_i) - L(w - \varepsilon e_i)}{2\varepsilon}.$$
#
# This *central difference* is accurate to $O(\varepsilon^2)$. We use float64 and no graph
# (`lucid.no_grad()`), because we only need the values.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 5. `lucid.autograd.gradcheck`
#
# The package does the same thing for any function and every input that requires grad (in float64),
# comparing against a random weighting of the outputs so every Jacobian entry counts. It returns
# `True` or raises `GradcheckError` showing where they disagree.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
A = lucid.randn(3, 4, requires_grad=True, dtype=lucid.Float64)
B = lucid.randn(4, 2, requires_grad=True, dtype=lucid.Float64)
print("matmul + tanh:", lucid.autograd.gradcheck(lambda a, b: lucid.tanh(a @ b), A, B))
print("exp * sum    :", lucid.autograd.gradcheck(lambda a: lucid.exp(a) * a.sum(), A))

# %% [markdown]
# ## 6. Big graphs: the node-count guard
#
# Our graph had 7 nodes. Real ones are bigger. Unroll a recurrence for 20 time steps,
# $h \leftarrow \tanh(w\,h + 0.1\,t)$ — what a recurrent network does, and what its backward
# walks back through ("backpropagation through time") — and there are already 80-odd nodes.

# %% tags=["nbval-check-output"]
with lucid.count_flops():
    w_rec = lucid.tensor(0.5, requires_grad=True)
    h = lucid.tensor(0.0)
    for t in range(20):
        h = lucid.tanh(w_rec * h + 0.1 * t)
    loss_rec = h * h
print(len(lucid_viz.trace(loss_rec).nodes), "nodes in the graph")

# %% [markdown]
# Drawn in full that is an unreadable wall. `draw(..., max_nodes=k)` is the guard (on by default
# at 150; `max_nodes=None` turns it off): when the picture would have more than `k` nodes it
# collapses instead. This graph has no modules to fold, so it keeps the nodes nearest the output
# (where backward starts) and folds everything earlier into one box; the title says what happened.

# %%
lucid_viz.draw(loss_rec, max_nodes=12)

# %% [markdown]
# A model gives the guard more to work with: it collapses **module levels** one at a time (as
# `depth=` would) until the picture fits, and rolls identical blocks up into one box. Eight
# identical `Linear → Tanh` blocks and an output layer make 36 nodes; with `max_nodes=12` they
# are drawn as three: the input, "Sequential × 8" and the last `Linear`.

# %%
lucid.random.seed(0)
nn = lucid.nn
net = nn.Sequential(*[nn.Sequential(nn.Linear(4, 4), nn.Tanh()) for _ in range(8)], nn.Linear(4, 1))
lucid_viz.draw(net, lucid.randn(2, 4), max_nodes=12)

# %% [markdown]
# ## Exercises
#
# ### Exercise 3.1 · Predict a broadcast gradient
#
# A scalar `b` is broadcast against `x = [1.0, 2.0, 3.0, 4.0]` in `L = (x * b).sum()`. What is
# $dL/db$ at $b = 0.5$?

# %% tags=["solution"]
dL_db = 10.0

# %% tags=["check"]
check_grad("Exercise 3.1", dL_db, lambda b: (lucid.Tensor([1.0, 2.0, 3.0, 4.0]) * b).sum(), 0.5,
           nudge="Broadcasting copies b; what does backward do with the gradients of the copies?",
           hint="b was copied into four positions; each copy gets its own gradient, and the "
                "copies of one b add up (section 2, the Add step).")


# %% [markdown]
# ### Exercise 3.2 · Implement a central difference
#
# Write `central_difference(f, z, eps=1e-6)`: the derivative of the function `f` at the number
# `z`, estimated as in section 4. The check compares it with the derivative `backward()`
# computes, for a few functions. (Then try it on a student's claim: is $1 - \tanh(z)$ the
# derivative of $\tanh$ at $z = 0.7$?)

# %% tags=["solution"]
def central_difference(f, z, eps=1e-6):
    """(f(z + eps) - f(z - eps)) / (2 eps): the slope of f at z."""
    return (f(z + eps) - f(z - eps)) / (2 * eps)


# %% tags=["check"]
def derivative_by_autograd(f, z):
    t = lucid.Tensor(z, requires_grad=True)
    f(t).backward()
    return t.grad


def cubic(v):
    return v ** 3 - 2 * v


check_function("Exercise 3.2", central_difference, derivative_by_autograd,
               [(cubic, 1.5), (lucid.tanh, 0.7), (lucid.exp, -1.0)],
               nudge="Section 4: a derivative is a slope, which two points measure.",
               hint="evaluate f a little to the right and a little to the left of z; divide "
                    "the difference by the distance between the two points, 2·eps.")


# %% [markdown]
# ### Exercise 3.3 · Implement tanh's backward rule
#
# In the stepper, each op turns the gradient `g` arriving at its output into the gradient for its
# input. Write that rule for $y = \tanh(z)$, for NumPy arrays `z` and `g` of one shape. The check
# compares it with what Lucid's `backward()` passes on.

# %% tags=["solution"]
def tanh_backward(z, g):
    """The gradient for z, given the gradient g arriving at y = tanh(z)."""
    return g * (1 - np.tanh(z) ** 2)


# %% tags=["check"]
def tanh_backward_by_autograd(z, g):
    return vjp(lucid.tanh, lucid.Tensor(z), lucid.Tensor(g))[1]


check_function("Exercise 3.3", tanh_backward, tanh_backward_by_autograd,
               [(np.array([0.7]), np.array([1.0])),
                (np.array([-2.0, 0.0, 0.3]), np.array([0.5, -1.0, 2.0]))],
               nudge="Backward multiplies the incoming gradient by a local derivative; which one?",
               hint="the chain rule: g times the derivative of tanh at z. Section 3 uses it; "
                    "your central_difference can confirm it.")

# %% [markdown]
# ### Exercise 3.4 · Two gradients through a product
#
# $L = (a b + a)^2$ at $a = 2$, $b = -3$. Step backward by hand, node by node as the stepper
# does: what are $\partial L/\partial a$ and $\partial L/\partial b$? Give the pair
# `(dL/da, dL/db)`.

# %% tags=["solution"]
grads_ab = (16.0, -16.0)

# %% tags=["check"]
check_grad("Exercise 3.4", grads_ab, lambda a, b: (a * b + a) ** 2, 2.0, -3.0,
           nudge="Start at L and go back one node at a time: the square first, then the add, "
                 "then the product.",
           hint="u = ab + a, dL/du = 2u; du/da = b + 1 (a reaches u along two paths, which "
                "add), du/db = a.")

# %% [markdown]
# **Next:** [04 · Gradients by hand](04_gradients_by_hand.ipynb): the three gradients every
# network uses, derived with pencil and paper and replayed in the stepper.
