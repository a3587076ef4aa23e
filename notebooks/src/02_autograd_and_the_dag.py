# %% [markdown]
# # 02 · Autograd and the DAG
#
# Every operation on a tensor that `requires_grad` leaves a record: which op made the result, and
# from which inputs. Those records form a **directed acyclic graph** (DAG). `backward()` walks it
# in reverse and applies the chain rule.
#
# **You need:** [01 · Tensors and dtypes](01_tensors_and_dtypes.ipynb), and the chain rule of
# calculus: $(f \circ g)'(x) = f'(g(x))\,g'(x)$.

# %%
import math

import lucid
import lucid_viz
from lucid_viz.exercises import check, check_function

lucid.random.seed(0)

# %% [markdown]
# ## 1. A chain: the chain rule
#
# $y = \exp(3x)$. The chain rule says $\frac{dy}{dx} = \exp(3x) \cdot 3$.
# Each tensor remembers its op (`_op`) and its parents (`_prev`).

# %% tags=["nbval-check-output"]
x = lucid.Tensor(0.5, requires_grad=True)
u = 3 * x
y = lucid.exp(u)
print("y's op:", type(y._op).__name__, " parents:", [type(p._op).__name__ if p._op else "leaf"
                                                    for p in y._prev])
print("x is a leaf:", x.is_leaf, " u is a leaf:", u.is_leaf)

# %%
lucid_viz.draw(y)

# %% [markdown]
# Draw first, then differentiate: after `backward()` the graph is released (to free memory).

# %% tags=["nbval-check-output"]
y.backward()
print("autograd dy/dx:", round(float(x.grad), 6))
print("by hand 3e^1.5:", round(3 * math.exp(1.5), 6))

# %% [markdown]
# ## 2. A diamond: two paths from one input
#
# Now $a = 2x$ and $y = a + \exp(a)$. The node `a` is used **twice**, so gradient reaches it
# along two paths, and the two contributions **add**:
#
# $$\frac{dy}{da} = 1 + e^{a}, \qquad \frac{dy}{dx} = 2\,(1 + e^{2x}).$$
#
# At $x = 0.5$: $2(1 + e) = 2 + 2e \approx 7.437$.

# %%
x = lucid.Tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
lucid_viz.draw(y)

# %% tags=["nbval-check-output"]
y.backward()
print("autograd dy/dx:", round(float(x.grad), 6))
print("2 + 2e        :", round(2 + 2 * math.e, 6))

# %% [markdown]
# Lucid visits every node **exactly once**, after all its consumers (a topological order), so `a`
# sends one summed gradient on to `x` — not one per path.
#
# ## 3. A neuron with every value and gradient on the picture
#
# One neuron, $o = \tanh(x_1 w_1 + x_2 w_2 + b)$, with names on its tensors. After
# `backward(keep_grad=True)` every node keeps its gradient (not only the leaves), and
# `draw(..., show=("data", "grad"))` writes each value and each gradient on its node: read the
# chain rule off the picture. (The tanh's input is $n = 0.8814$, and $1 - \tanh^2 n = 0.5$: every
# node feeding it receives 0.5, and each weight receives 0.5 times its input.)

# %%
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
lucid_viz.draw(o, show=("data", "grad"))

# %% tags=["nbval-check-output"]
for t in (x1, w1, x2, w2, b, n):
    print(f"do/d{t.name} = {float(t.grad):.4g}")

# %% [markdown]
# ## 4. Accumulation across calls
#
# Gradients of *leaves* accumulate across `backward()` calls too (`+=`). That is why training loops
# call `zero_grad()`. To run backward twice through the same graph you must ask to keep it,
# with `retain_graph=True`; otherwise the second call explains the problem.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 5. `keep_grad`: looking at intermediate gradients
#
# To save memory, Lucid frees the gradients of intermediate nodes once they have been passed on;
# only leaves keep `.grad`. Pass `keep_grad=True` (to `backward`, or to one tensor) to keep them.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 6. Hooks: watching a gradient in flight
#
# `keep_grad` keeps a gradient *after* backward. A **hook** sees it *during* backward:
# `t.register_hook(fn)` calls `fn(grad)` once `t`'s gradient is complete (all paths summed), before
# it is passed on. `register_hook` returns a **remover**: call its `.remove()` when you are done.
#
# (From here on we write `lucid.tensor(...)`: the function spelling of the same constructor,
# chapter 01, section 1, with the same arguments and the same result, a `Tensor`, as
# `lucid.Tensor(...)`. PyTorch code writes `torch.tensor(...)`, so you will meet both.)

# %% tags=["nbval-check-output"]
x = lucid.tensor(0.5, requires_grad=True)
a = 2 * x
y = a + lucid.exp(a)
seen = []
remover = a.register_hook(lambda g: seen.append(round(g.item(), 6)))
y.backward()
remover.remove()
print("the hook saw dy/da =", seen, "  (1 + e =", round(1 + math.e, 6), ")")
print("a.grad afterwards  =", a.grad, " (freed as usual; the hook saw it in time)")

# %% [markdown]
# If the hook *returns* a tensor, that replaces the gradient passed on to the parents: this is how
# gradient clipping or scaling of one part of a network can be written. Below the hook halves what
# flows through `a`, so `x.grad` halves too; after `remove()` the same graph gives the full value.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 7. `detach()`: cutting the graph
#
# `t.detach()` gives the same values (it shares the array, copying nothing) but **no history**:
# for autograd it is a constant. So gradient stops there. Example: $y = x \cdot
# \operatorname{detach}(x)$ has the value $x^2$, but its gradient is $x$, not $2x$, because only
# one of the two factors is still in the graph. ("Stop-gradient" like this is used for targets
# that must not be trained, e.g. in reinforcement learning.)

# %% tags=["nbval-check-output"]
x = lucid.tensor(3.0, requires_grad=True)
xd = x.detach()
print("x.detach(): requires_grad =", xd.requires_grad, " is_leaf =", xd.is_leaf,
      " shares the data:", xd.numpy() is x.numpy())
y = x * xd
y.backward()
print("y =", y.item(), "  dy/dx =", float(x.grad), "  (x * x would give 2x = 6.0)")

# %% [markdown]
# ## 8. Not recording at all: `no_grad` and `grad_enabled()`
#
# Evaluating a model needs no graph, and recording one costs time and memory. `lucid.no_grad()`
# switches recording off: as a `with` block (notebook 03 uses that) or as a **decorator** on a
# function (`@lucid.no_grad`, or `@lucid.no_grad()`: both spellings work, as in PyTorch).
# `lucid.grad_enabled()` reads the switch;
# it is restored when the block or the function ends.

# %% tags=["nbval-check-output"]
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

# %% [markdown]
# ## 9. Vectors, and FLOPs on the graph
#
# The same works for whole arrays. Drawn inside `lucid.count_flops()`, each node shows its FLOPs.
# `backward()` with no argument seeds ones, exactly like calling `backward` on `y.sum()`.

# %%
with lucid.count_flops():
    w = lucid.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = lucid.Tensor([0.5, -1.0, 2.0])
    loss = (w * v + w ** 2).sum()
lucid_viz.draw(loss)

# %% tags=["nbval-check-output"]
loss.backward()
print("dloss/dw =", w.grad.round(6).tolist(), "  expected v + 2w =", [2.5, 3.0, 8.0])
print("forward work:", loss.cost)

# %% [markdown]
# ## Exercises
#
# ### Exercise 2.1 · Three paths
#
# Let $b = x^2$ and $z = b \cdot b + b$. Predict $dz/dx$ at $x = 1.5$ with the chain rule. (How
# many paths lead from `z` back to `b`?)

# %% tags=["solution"]
dz_dx = 16.5

# %% tags=["check"]
x_check = lucid.Tensor(1.5, requires_grad=True)
b_check = x_check ** 2
(b_check * b_check + b_check).backward()
check("Exercise 2.1", dz_dx, x_check.grad,
      nudge="Draw the graph: how many paths lead from x to z?",
      hint="b is used three times, so dz/db = 2b + 1 (all paths added); then db/dx = 2x.")

# %% [markdown]
# ### Exercise 2.2 · Two calls to `backward`
#
# `x = lucid.Tensor(2.0, requires_grad=True)`, `y = x ** 3`, then `y.backward(retain_graph=True)`
# and `y.backward()` once more, with no `zero_grad` in between. What is `x.grad` now?

# %% tags=["solution"]
grad_after_two_calls = 24.0

# %% tags=["check"]
x_check = lucid.Tensor(2.0, requires_grad=True)
y_check = x_check ** 3
y_check.backward(retain_graph=True)
y_check.backward()
check("Exercise 2.2", grad_after_two_calls, x_check.grad,
      nudge="What happens to .grad when backward runs a second time (section 4)?",
      hint="one call gives dy/dx = 3x²; a leaf's gradient accumulates (section 4).")

# %% [markdown]
# ### Exercise 2.3 · A detached factor
#
# `y = x * x.detach() + x` at $x = 3$. What is $dy/dx$ according to autograd?

# %% tags=["solution"]
dy_dx_detached = 4.0

# %% tags=["check"]
x_check = lucid.Tensor(3.0, requires_grad=True)
(x_check * x_check.detach() + x_check).backward()
check("Exercise 2.3", dy_dx_detached, x_check.grad,
      nudge="Section 7: what does autograd see behind x.detach()?",
      hint="for autograd x.detach() is a constant (section 7): differentiate x·c + x.")


# %% [markdown]
# ### Exercise 2.4 · Backward through a neuron, by hand
#
# Write `neuron_grads(x1, w1, x2, w2, b)` that returns the three numbers
# $(\partial o/\partial w_1,\ \partial o/\partial w_2,\ \partial o/\partial b)$ for the neuron
# of section 3, $o = \tanh(x_1 w_1 + x_2 w_2 + b)$, using plain Python (`math.tanh`), no
# Lucid. The check compares it with what Lucid's `backward()` computes, on a few inputs.

# %% tags=["solution"]
def neuron_grads(x1, w1, x2, w2, b):
    """(do/dw1, do/dw2, do/db) for o = tanh(x1*w1 + x2*w2 + b)."""
    n = x1 * w1 + x2 * w2 + b
    do_dn = 1 - math.tanh(n) ** 2
    return do_dn * x1, do_dn * x2, do_dn


# %% tags=["check"]
def neuron_grads_by_autograd(x1, w1, x2, w2, b):
    weights = [lucid.Tensor(v, requires_grad=True) for v in (w1, w2, b)]
    lucid.tanh(x1 * weights[0] + x2 * weights[1] + weights[2]).backward()
    return [float(t.grad) for t in weights]


check_function("Exercise 2.4", neuron_grads, neuron_grads_by_autograd,
               [(2.0, -3.0, 0.0, 1.0, 6.8813735870195432), (0.5, 0.2, -1.0, 0.4, 0.1),
                (1.5, -0.7, 2.0, 0.3, -0.2)],
               nudge="Section 3 does this neuron by hand; follow its steps backward from o.",
               hint="first the local derivative of tanh at n, 1 - tanh(n)²; each weight then "
                    "gets that times what it was multiplied by (the chain rule).")

# %% [markdown]
# **Next:** [03 · Backward, step by step](03_backward_step_by_step.ipynb) replays `backward()`
# one node at a time, and checks gradients with finite differences.
