# %% [markdown]
# # 15 · Build it yourself: an op, an optimizer, a layer
#
# **You need:** [03 · Backward, step by step](03_backward_step_by_step.ipynb) (the backward walk
# and `gradcheck`), [06 · FLOPs](06_flops.ipynb) and
# [08 · Training an MLP](08_training_an_mlp.ipynb) (a training loop).
#
# Everything Lucid computes comes from three kinds of pieces: **ops** (forward, backward and
# FLOPs of one operation), **optimizers** (how one parameter moves, given its gradient) and
# **layers** (modules that hold parameters and call ops). In this chapter you write one of each
# through the same public API Lucid's own pieces use, and watch yours work with everything
# else: `gradcheck`, `draw`, the backward stepper, `count_flops`, training.
#
# The API is stable: `lucid.Op` (with `forward`, `backward`, `forward_flops`,
# `backward_flops` and `Op.apply`), `lucid.optim.Optimizer` (with `update`) and
# `lucid.nn.Module` (with `Parameter`s and `forward`).

# %%
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.autograd import GradcheckError, gradcheck
from lucid_viz.exercises import check, check_function

lucid.random.seed(0)


# %% [markdown]
# ## 1. An op of your own
#
# An op is a class with four methods. `forward` and `backward` receive `xp` -- the array
# library of the device the op runs on (`numpy` for "cpu", `mlx.core` for "gpu") -- and plain
# arrays, so one body serves both devices. Here is **Swish** (also called SiLU),
# $y = x\,\sigma(x)$ with $\sigma(x) = 1/(1 + e^{-x})$. By the product rule,
#
# $$\frac{dy}{dx} = \sigma(x) + x\,\sigma(x)\,(1 - \sigma(x)).$$
#
# The first paragraph of the docstring is what the stepper shows as the op's rule, so say the
# maths there.

# %%
class Swish(lucid.Op):
    """y = x·σ(x).   dy/dx = σ(x) + x·σ(x)·(1 − σ(x)).

    FLOPs per element: forward 5 (σ: negate, exp, add, divide; then the product), backward 5
    (1 − σ, two products, a sum, and the product with the incoming gradient).
    """

    def forward(self, xp, x):
        self.x = x                       # backward needs x ...
        self.s = 1 / (1 + xp.exp(-x))    # ... and σ(x): keep it rather than compute it again
        return x * self.s

    def backward(self, xp, g):           # g = dL/dy; return one dL/d(input) per input
        s = self.s
        return (g * (s + self.x * s * (1 - s)),)

    def forward_flops(self, out, x):
        return 5 * x.size

    def backward_flops(self, out, x):
        return 5 * x.size


x = lucid.Tensor([-2.0, -0.5, 0.0, 1.0, 3.0], requires_grad=True, name="x")
y = Swish.apply(x)
print("ours   :", y.numpy().round(4))
print("F.silu :", F.silu(x).numpy().round(4))

# %% [markdown]
# Is the backward rule right? `gradcheck` compares it with **finite differences**, in
# float64: it nudges each input by a tiny ε and watches the output move (chapter 03, section 4).

# %% tags=["nbval-check-output"]
x64 = lucid.Tensor([-2.0, -0.5, 0.0, 1.0, 3.0], dtype=lucid.Float64, requires_grad=True)
print("gradcheck passes:", gradcheck(Swish.apply, x64))

# %% [markdown]
# Your op is now an op like any other: it is counted, drawn, and stepped through. The FLOPs are
# the ones you declared.

# %%
with lucid.count_flops():
    w = lucid.Tensor([0.5, -1.0, 2.0, 0.1, 1.5], requires_grad=True, name="w")
    loss = (Swish.apply(w * x) ** 2).sum()
lucid_viz.draw(loss)

# %%
lucid_viz.step_backward(loss)


# %% [markdown]
# ### Exercise 15.1 · Softsign, an op of your own
#
# Write the op **softsign**, $y = \dfrac{x}{1 + |x|}$. Derive its derivative first (treat
# $x > 0$ and $x < 0$ apart; the two cases give one formula), then fill in `forward`,
# `backward` and the two FLOPs rules. `xp.abs` is the absolute value.
#
# * `forward_flops`: abs, add, divide: **3 per element**;
# * `backward_flops`: **2 per element**: your backward reuses what forward saved (keep
#   $1 + |x|$ on `self`), so it needs one multiply and one divide per element.

# %% tags=["solution"]
class Softsign(lucid.Op):
    """y = x / (1 + |x|), elementwise."""

    def forward(self, xp, x):
        # BEGIN SOLUTION
        self.d = 1 + xp.abs(x)
        return x / self.d
        # END SOLUTION

    def backward(self, xp, g):
        # BEGIN SOLUTION
        return (g / (self.d * self.d),)
        # END SOLUTION

    def forward_flops(self, out, x):
        # BEGIN SOLUTION
        return 3 * x.size
        # END SOLUTION

    def backward_flops(self, out, x):
        # BEGIN SOLUTION
        return 2 * x.size
        # END SOLUTION


# %% tags=["check"]
points = [-3.0, -0.25, 0.5, 2.0]
check_function("Exercise 15.1 (forward)",
               lambda v: Softsign.apply(lucid.Tensor(v, dtype=lucid.Float64)).numpy(),
               lambda v: np.asarray(v) / (1 + np.abs(v)), [points],
               nudge="Write the formula of the statement with xp operations.",
               hint="Divide x by 1 + |x|, elementwise.")
try:  # gradcheck raises GradcheckError when the rule disagrees with finite differences
    backward_right = gradcheck(Softsign.apply,
                               lucid.Tensor(points, dtype=lucid.Float64, requires_grad=True))
except (GradcheckError, NotImplementedError):
    backward_right = False
check("Exercise 15.1 (backward)", backward_right, True,
      nudge="Derive dy/dx for x > 0 and for x < 0 on paper first.",
      hint="For x > 0, y = x / (1 + x): use the quotient rule. Multiply by g at the end.")


def softsign_flops():
    """The (forward, backward) FLOPs your rules declare for one call on the four points."""
    with lucid.count_flops():
        op = Softsign.apply(lucid.Tensor(points, requires_grad=True))._op
    return op.flops, op.flops_bwd


check_function("Exercise 15.1 (FLOPs)", softsign_flops,
               lambda: (3 * len(points), 2 * len(points)), [()],
               entries="(forward FLOPs, backward FLOPs) of one call on 4 numbers",
               nudge="Each rule returns a number of operations for the whole input x.",
               hint="forward: 3 * x.size (abs, add, divide); backward: 2 * x.size (one multiply "
                    "and one divide per element).")


# %% [markdown]
# ## 2. An optimizer of your own
#
# An optimizer is a **per-parameter update rule**. `lucid.optim.Optimizer` walks the
# parameters, checks everything before changing anything, and stores the state between steps;
# you write `update(xp, param, grad, state, group)`, which returns the parameter's new value.
# `state` is a dict kept for this parameter between steps, `group` holds the hyperparameters.
#
# Plain gradient descent is one line:

# %%
class PlainSGD(lucid.optim.Optimizer):
    """θ ← θ − lr · g."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, {"lr": lr})

    def update(self, xp, param, grad, state, group):
        return param - group["lr"] * grad


def fit(make_optimizer, steps=30):
    """Fit a line y = 2x - 1 with the given optimizer; the loss after every step."""
    lucid.random.seed(0)
    model = nn.Linear(1, 1)
    xs = lucid.Tensor(np.linspace(-1, 1, 16).reshape(-1, 1), dtype=lucid.Float32)
    ys = 2 * xs - 1
    opt = make_optimizer(model.parameters())
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(xs), ys)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, model


losses, line = fit(lambda p: PlainSGD(p, lr=0.1))
print(f"loss: {losses[0]:.3f} -> {losses[-1]:.4f};  w = {line.weight.item():.3f}, "
      f"b = {line.bias.item():.3f}")


# %% [markdown]
# ### Exercise 15.2 · Momentum, an optimizer of your own
#
# Gradient descent with **momentum** keeps a running direction $v$ (the "velocity"):
#
# $$v \leftarrow \mu\, v + g, \qquad \theta \leftarrow \theta - \text{lr}\cdot v,$$
#
# with $v = g$ at the first step. Store $v$ in `state["velocity"]` (it is not there at the
# first step). Your optimizer must match `lucid.optim.SGD(params, lr, momentum=μ)`.

# %% tags=["solution"]
class Momentum(lucid.optim.Optimizer):
    """v ← μ·v + g;  θ ← θ − lr·v."""

    def __init__(self, params, lr=0.1, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    def update(self, xp, param, grad, state, group):
        # BEGIN SOLUTION
        v = state.get("velocity")
        v = grad if v is None else group["momentum"] * v + grad
        state["velocity"] = v
        return param - group["lr"] * v
        # END SOLUTION


# %% tags=["check"]
check_function("Exercise 15.2 (momentum)",
               lambda: fit(lambda p: Momentum(p, lr=0.05, momentum=0.9))[0],
               lambda: fit(lambda p: lucid.optim.SGD(p, lr=0.05, momentum=0.9))[0], [()],
               rtol=1e-4, entries="the losses after steps 1..30 of fit",
               mistakes={"these are the losses of plain gradient descent: the velocity is not "
                         "used": fit(lambda p: PlainSGD(p, lr=0.05))[0]},
               nudge="Momentum keeps a velocity between steps; where does an optimizer keep "
                     "state?",
               hint="At the first step there is no velocity yet: v = g. Keep v in "
                    "state['velocity'].")


# %% [markdown]
# ## 3. A layer of your own
#
# A layer is an `nn.Module`: parameters assigned as attributes are registered by name (they
# appear in `parameters()`, `state_dict()` and `summarize`), and `forward` says what the layer
# computes from ops. Here is a **gated linear unit**, $y = (W_1 x + b_1) \odot \sigma(W_2 x +
# b_2)$: one linear map proposes, the other decides how much of it passes.

# %%
class GatedLinear(nn.Module):
    """y = (x W₁ᵀ + b₁) ⊙ σ(x W₂ᵀ + b₂)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.value = nn.Linear(in_features, out_features)
        self.gate = nn.Linear(in_features, out_features)

    def forward(self, x):
        return self.value(x) * lucid.sigmoid(self.gate(x))


layer = GatedLinear(3, 2)
print([name for name, _ in layer.named_parameters()])
summary = lucid.models.summarize(layer, (4, 3))  # prints the table


# %% [markdown]
# ### Exercise 15.3 · RMSNorm, a layer of your own
#
# **RMSNorm** rescales each row of its input by the row's root mean square, then multiplies by
# a learned gain:
#
# $$y = \frac{x}{\sqrt{\operatorname{mean}(x^2) + \varepsilon}} \odot \text{weight},$$
#
# with the mean over the last axis, `weight` a `Parameter` of shape `(dim,)` starting at ones,
# and $\varepsilon = 10^{-6}$. Write the layer from Lucid ops (`x * x`, `.mean(axis=-1,
# keepdims=True)`, `lucid.sqrt`): its backward then comes for free.

# %% tags=["solution"]
class RMSNorm(nn.Module):
    """y = x / sqrt(mean(x²) + eps) · weight, over the last axis."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        # BEGIN SOLUTION
        self.eps = eps
        self.weight = nn.Parameter(lucid.ones(dim))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        rms = lucid.sqrt((x * x).mean(axis=-1, keepdims=True) + self.eps)
        return x / rms * self.weight
        # END SOLUTION


# %% tags=["check"]
rows = np.array([[1.0, -2.0, 3.0, 0.5], [0.1, 0.2, -0.1, 0.0]])
check_function("Exercise 15.3 (parameters)",
               lambda: [n for n, _ in RMSNorm(4).named_parameters()], lambda: ["weight"], [()],
               nudge="A layer's trainable numbers must be registered (chapter 07).",
               hint="Assign an nn.Parameter of ones to self.weight.")
check_function("Exercise 15.3 (forward)",
               lambda v: RMSNorm(4)(lucid.Tensor(v, dtype=lucid.Float64)).numpy(),
               lambda v: v / np.sqrt((v ** 2).mean(axis=-1, keepdims=True) + 1e-6), [rows],
               mistakes={"the square root is missing: x is divided by the mean square":
                         lambda v: v / ((v ** 2).mean(axis=-1, keepdims=True) + 1e-6),
                         "the mean is over the whole input, not over each row":
                         lambda v: v / np.sqrt((v ** 2).mean() + 1e-6)},
               nudge="Normalise each row on its own, as the formula in the statement does.",
               hint="The mean is over the last axis, one value per row: keepdims=True.")

# %% [markdown]
# ### Exercise 15.4 · What your op costs in a graph
#
# With section 1's `Swish` (5 FLOPs per element forward), how many forward FLOPs does
# `(Swish.apply(x) * w).sum()` count in all, for `x` and `w` of shape `(4, 5)`?

# %% tags=["solution"]
swish_graph_flops = 140

# %% tags=["check"]
with lucid.count_flops():
    x_check = lucid.Tensor(np.ones((4, 5)), requires_grad=True)
    out_check = (Swish.apply(x_check) * lucid.Tensor(np.ones((4, 5)))).sum()
check("Exercise 15.4", swish_graph_flops, out_check.cost.flops,
      nudge="Count each op of the graph: what does each cost per element?",
      hint="Swish declares 5 per element, the product and the sum one per element each; "
           "there are 20 elements.")


# %% [markdown]
# A last look: this chapter's op, layer and optimizer together. A small network made of the
# gated linear layer and the Swish op, trained by the plain gradient descent of section 2 on a
# target no straight line can fit. (With your solutions in place, try your `RMSNorm` between the
# layers and your `Momentum` as the optimizer.)

# %%
class SwishLayer(nn.Module):
    """The Swish op as a layer: no parameters, so forward is all there is."""

    def forward(self, x):
        return Swish.apply(x)


lucid.random.seed(1)
net = nn.Sequential(GatedLinear(2, 16), SwishLayer(), nn.Linear(16, 1))
xs = lucid.random.randn(64, 2)
ys = (xs[:, :1] * xs[:, 1:]).tanh()
opt = PlainSGD(net.parameters(), lr=0.5)
losses = []
for _ in trange(300, desc="training (steps)"):
    opt.zero_grad()
    loss = F.mse_loss(net(xs), ys)
    loss.backward()
    opt.step()
    losses.append(loss.item())
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")

# %% [markdown]
# **Next:** [16 · Recurrent networks](16_recurrent_networks.ipynb): RNNs, LSTMs and GRUs, and a
# task that needs memory.
