# %% [markdown]
# # 13 · Embeddings, activations and losses
#
# The second part of the tour of the shelf that
# [chapter 12](12_convolutions_and_normalisation.ipynb) began: the layers that look tokens up,
# squash and attend, the container that holds parts by name, the losses, and how a layer's weights
# should start. As before, each section is short and stands on its own, and each cell's output
# checks what it shows.
#
# | § | what | from |
# |---|---|---|
# | 5 | embeddings and `one_hot` | `lucid.nn`, `lucid.nn.functional` |
# | 6 | activations and their derivatives | `lucid.nn` |
# | 7 | multi-head attention | `lucid.nn` |
# | 8 | `ModuleDict` | `lucid.nn` |
# | 9 | losses, and the shape mistake they refuse | `lucid.nn` |
# | 10 | weight initialisation | `lucid.nn.init` |
#
# (The sections go on from chapter 12's numbers: chapters 12, 13 and 14 are one tour.)
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) (the training loop,
# cross-entropy); the sections can be read in any order.

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid_viz.exercises import check, check_function, check_grad

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (chapter 05 is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")

np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 5. Embeddings and `one_hot`
#
# `nn.Embedding(num_embeddings, embedding_dim)` is a learnable table with one row per token id;
# `emb(ids)` looks up rows, so `(N, L)` ids give `(N, L, E)` vectors. A lookup is a matrix product
# in disguise: `F.one_hot(ids, num_classes, dtype=...)` turns each id into a row of zeros with a
# single 1, and that row times the table *is* the looked-up row.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
emb = nn.Embedding(num_embeddings=10, embedding_dim=4)
ids = lucid.tensor([[1, 4, 4], [9, 0, 1]])                 # (N=2 sentences, L=3 tokens)

vectors = emb(ids)
hot = F.one_hot(ids, num_classes=10, dtype=lucid.Float32)  # (2, 3, 10)
print("ids", ids.shape, "-> vectors", vectors.shape, "   one_hot:", hot.shape, hot.dtype)
print("one_hot(ids)[0]:\n", hot.numpy()[0])
print("one_hot(ids) @ weight == emb(ids):", np.array_equal((hot @ emb.weight).numpy(),
                                                           vectors.numpy()))

# %% [markdown]
# The gradient tells the same story: only rows that were looked up receive a gradient, and a row
# used twice gets twice the gradient. (That is why embedding tables are cheap to train: each step
# touches only the rows of the tokens in the batch.)

# %% tags=["nbval-check-output"]
vectors.sum().backward()
print("gradient of each row (column 0):", emb.weight.grad[:, 0])
print("how often each id occurs:       ", np.bincount(ids.numpy().ravel(), minlength=10))


# %% [markdown]
# ## 6. Activations and their derivatives
#
# An activation's *derivative* decides how gradients flow through it. We do not need to derive
# them by hand: for an elementwise $y_i = f(x_i)$, the gradient of $\sum_i y_i$ with respect to
# $x_i$ is exactly $f'(x_i)$, so one `backward()` gives the derivative at every point.

# %%
def value_and_slope(act, xs):
    """f(xs) and f'(xs), the derivative computed by Lucid's autograd."""
    x = lucid.Tensor(xs, requires_grad=True)
    y = act(x)
    y.sum().backward()              # d(sum_i y_i)/dx_i = f'(x_i)
    return y.numpy(), x.grad

xs = np.linspace(-4, 4, 401)
activations = {
    "LeakyReLU(0.1)": nn.LeakyReLU(negative_slope=0.1),
    "ELU": nn.ELU(alpha=1.0),
    "GELU": nn.GELU(),
    "SiLU": nn.SiLU(),
    "Sigmoid": nn.Sigmoid(),
    "Tanh": nn.Tanh(),
}
fig, (ax_f, ax_d) = plt.subplots(1, 2, figsize=(9, 4.5))
for name, act in activations.items():
    f, df = value_and_slope(act, xs)
    ax_f.plot(xs, f, label=name)
    ax_d.plot(xs, df, label=name)
ax_f.set(title="f(x)", xlabel="x", ylim=(-1.5, 4))
ax_d.set(title="f'(x) from lucid autograd", xlabel="x", ylim=(-0.2, 1.2))
for ax in (ax_f, ax_d):
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(0, color="grey", lw=0.5)
ax_d.legend(fontsize=11)
fig.tight_layout()
plt.show()

# %% [markdown]
# What to read off the plot: Sigmoid's slope is at most 1/4 and Tanh's at most 1, and both vanish
# for large $|x|$ (saturation: deep stacks of them train slowly). LeakyReLU never has a zero slope,
# so its units cannot die (notebook 09). ELU, GELU and SiLU are smooth versions of ReLU; GELU and
# SiLU even dip below zero. Each derivative matches its textbook formula:

# %% tags=["nbval-check-output"]
sig = 1 / (1 + np.exp(-xs))
Phi = 0.5 * (1 + np.vectorize(math.erf)(xs / math.sqrt(2)))       # standard normal CDF
phi = np.exp(-xs**2 / 2) / math.sqrt(2 * math.pi)                 # and its density
formulas = {
    "LeakyReLU(0.1)": ("1 if x > 0 else 0.1", np.where(xs > 0, 1.0, 0.1)),
    "ELU": ("1 if x > 0 else e^x", np.where(xs > 0, 1.0, np.exp(xs))),
    "GELU": ("Phi(x) + x phi(x)", Phi + xs * phi),
    "SiLU": ("s + x s (1 - s)", sig + xs * sig * (1 - sig)),
    "Sigmoid": ("s (1 - s)", sig * (1 - sig)),
    "Tanh": ("1 - tanh(x)^2", 1 - np.tanh(xs) ** 2),
}
for name, (text, expected) in formulas.items():
    _, df = value_and_slope(activations[name], xs)
    print(f"{name:15s} f'(x) = {text:20s} autograd matches: {np.allclose(df, expected)}")

# %% [markdown]
# `Softmax` is the vector-valued one: it turns a row of scores into probabilities (positive, sum
# to 1). Adding a constant to every score changes nothing - which is how it is computed stably -
# and dividing the scores by a *temperature* $T$ flattens ($T > 1$) or sharpens ($T < 1$) the
# distribution.

# %% tags=["nbval-check-output"]
scores = lucid.Tensor([[2.0, 1.0, 0.1, -1.0]])
softmax = nn.Softmax(axis=-1)
e = np.exp(scores.numpy())

print("softmax(z)       ", softmax(scores).numpy()[0], " NumPy:", (e / e.sum())[0])
print("row sum          ", softmax(scores).numpy().sum())
print("softmax(z + 100) ", softmax(scores + 100).numpy()[0])
for T in (0.5, 2.0):
    print(f"softmax(z / {T})  ", softmax(scores / T).numpy()[0])

# %% [markdown]
# ## 7. Multi-head attention
#
# `nn.MultiHeadAttention(embed_dim, num_heads)` is the core of a transformer. Every position of
# the query sequence asks "which positions of the key sequence are relevant to me?", turns the
# answer into weights with a softmax, and returns the weighted average of the values. With $h$
# heads this happens $h$ times in parallel, each in a subspace of size $E/h$. Inputs are
# `(N, L, E)` (batch first, Lucid's default); it returns the output and the attention weights
# (averaged over the heads).

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
mha = nn.MultiHeadAttention(embed_dim=8, num_heads=2)
tokens = lucid.random.randn(3, 5, 8, dtype=lucid.Float32)       # N=3 sequences of L=5 tokens

out, weights = mha(tokens, tokens, tokens)                       # self-attention: q = k = v
print("input  ", tokens.shape, "  output ", out.shape, "  weights", weights.shape)
print("head size E/h =", mha.head_dim)
for name, p in mha.named_parameters():
    print(f"  {name:18s} {p.shape}")
print("each row of weights sums to 1:", np.allclose(weights.numpy().sum(axis=-1), 1, atol=1e-6))

# %% [markdown]
# A language model must not look at future tokens. `is_causal=True` blocks every key after the
# query's own position: the weights become lower-triangular, and the first token can only attend
# to itself.

# %%
_, causal = mha(tokens, tokens, tokens, is_causal=True)
w0 = causal.numpy()[0]
print(w0.round(2))

# %% tags=["nbval-check-output"]
print("above the diagonal all zero:", np.all(np.triu(causal.numpy(), k=1) == 0))
print("rows still sum to 1:        ", np.allclose(causal.numpy().sum(axis=-1), 1, atol=1e-6))
print("first token attends to itself only:", np.allclose(w0[0], [1, 0, 0, 0, 0]))
_, per_head = mha(tokens, tokens, tokens, average_attn_weights=False)
print("per-head weights:", per_head.shape, "(N, heads, L, S)")


# %% [markdown]
# ## 8. `ModuleDict`: sub-modules by name
#
# `Sequential` runs modules in order and `ModuleList` holds a list; `ModuleDict` holds modules
# under **names**, for models that choose a part at run time - here one shared body and a head per
# task. A plain Python `dict` would look the same, but `Module.__setattr__` only registers
# `Module`s (notebook 07): the heads inside a plain dict are invisible to `parameters()`, so an
# optimizer would never train them, and `state_dict()` would never save them - and nothing fails.

# %% tags=["nbval-check-output"]
class MultiTask(nn.Module):
    def __init__(self, plain_dict=False):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        heads = {"digit": nn.Linear(32, 10), "parity": nn.Linear(32, 2)}
        self.heads = heads if plain_dict else nn.ModuleDict(heads)

    def forward(self, x, task):
        return self.heads[task](self.body(x))

lucid.random.seed(0)
model = MultiTask()
x = lucid.random.randn(4, 16, dtype=lucid.Float32)
print("digit head:", model(x, "digit").shape, "  parity head:", model(x, "parity").shape)
for name, p in model.named_parameters():
    print(f"  {name:20s} {p.shape}")

hidden = MultiTask(plain_dict=True)
print("with a plain dict the model still runs:", hidden(x, "digit").shape)
print("parameters with ModuleDict:", sum(p.size for p in model.parameters()),
      "  with a plain dict:", sum(p.size for p in hidden.parameters()))

# %% [markdown]
# ## 9. Losses, checked against NumPy
#
# | loss | takes | per-sample loss |
# |---|---|---|
# | `MSELoss` | predictions, targets of the same shape | $d^2$ with $d = x - y$ |
# | `HuberLoss(delta)` | the same | $d^2/2$ while $\lvert d\rvert<\delta$, then linear |
# | `CrossEntropyLoss` | logits `(N, C)`; ids or probabilities | $-\log \mathrm{softmax}(x)_y$ |
# | `NLLLoss` | log-probabilities `(N, C)`, class ids `(N,)` | $-x_y$ |
# | `BCELoss` | probabilities $p$, 0/1 targets of the same shape | $-[y\log p + (1-y)\log(1-p)]$ |
# | `BCEWithLogitsLoss` | logits $x$, 0/1 targets of the same shape | BCE's, $p = \sigma(x)$ |
#
# (Huber's linear part is $\delta(\lvert d\rvert-\delta/2)$, which joins the parabola smoothly.)
# All average over the samples by default (`reduction="mean"`; also `"sum"` and `"none"`). Every
# row of the table, computed by Lucid and by a few lines of NumPy:

# %% tags=["nbval-check-output"]
pred = lucid.Tensor([2.5, 0.0, 2.0, 8.0])
true = lucid.Tensor([3.0, -0.5, 2.0, 4.0])                 # the last one is an outlier
logits = lucid.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0], [1.0, 1.0, 1.0], [-2.0, 4.0, 0.0]])
labels = lucid.tensor([0, 2, 1, 1])
z = lucid.Tensor([1.5, -0.3, 0.8, -2.0])                   # binary logits
b = lucid.Tensor([1.0, 0.0, 0.0, 0.0])                     # binary targets

d, x, zz, bb = pred.numpy() - true.numpy(), logits.numpy(), z.numpy(), b.numpy()
log_softmax = x - np.log(np.exp(x).sum(axis=1, keepdims=True))
nll = -log_softmax[np.arange(4), labels.numpy()].mean()
p = 1 / (1 + np.exp(-zz))
bce = -(bb * np.log(p) + (1 - bb) * np.log(1 - p)).mean()

rows = [
    ("MSELoss", nn.MSELoss()(pred, true), (d**2).mean()),
    ("HuberLoss(delta=1.0)", nn.HuberLoss(delta=1.0)(pred, true),
     np.where(np.abs(d) < 1, d**2 / 2, np.abs(d) - 0.5).mean()),
    ("CrossEntropyLoss", nn.CrossEntropyLoss()(logits, labels), nll),
    ("NLLLoss(log_softmax)", nn.NLLLoss()(F.log_softmax(logits, axis=1), labels), nll),
    ("CrossEntropyLoss(one_hot)",
     nn.CrossEntropyLoss()(logits, F.one_hot(labels, num_classes=3, dtype=lucid.Float64)), nll),
    ("BCELoss(sigmoid)", nn.BCELoss()(F.sigmoid(z), b), bce),
    ("BCEWithLogitsLoss", nn.BCEWithLogitsLoss()(z, b), bce),
]
print(f"{'loss':26s} {'lucid':>9s} {'NumPy':>9s}")
for name, loss, ref in rows:
    print(f"{name:26s} {loss.item():9.5f} {ref:9.5f}  {np.isclose(loss.item(), ref)}")

# %% [markdown]
# Three lessons in that table. `CrossEntropyLoss` is `NLLLoss` after `log_softmax`, and a one-hot
# target gives the same value as the class id. `HuberLoss` is far smaller than MSE here because the
# outlier (8 vs 4) counts linearly, not squared - it pulls the model less. And `BCEWithLogitsLoss`
# equals `BCELoss(sigmoid(z))` - but only while the sigmoid can be represented. For a confident,
# wrong logit the sigmoid rounds to exactly 1.0, `log(1 - 1)` is $-\infty$, and `BCELoss` (like
# PyTorch's) clamps the log at -100; the logits version computes the same loss stably and gets it
# right. Prefer the logits losses.

# %% tags=["nbval-check-output"]
z_big = lucid.Tensor([10.0, 50.0, 200.0])                  # confident...
wrong = lucid.Tensor([0.0, 0.0, 0.0])                      # ...and wrong
print("BCELoss(sigmoid(z))   :", nn.BCELoss(reduction="none")(F.sigmoid(z_big), wrong).numpy())
print("BCEWithLogitsLoss(z)  :", nn.BCEWithLogitsLoss(reduction="none")(z_big, wrong).numpy())
print("exact: log(1 + e^z)   :", np.log1p(np.exp(z_big.numpy())))

# %% [markdown]
# ### The shape mistake a loss refuses
#
# The most common silent bug in regression code: a model outputs `(N, 1)`, the targets are `(N,)`.
# In NumPy (or PyTorch, which only warns) `pred - target` **broadcasts** to `(N, N)` and the loss
# compares every prediction with every target - a number that is wrong, yet trains into something.
# Lucid's losses refuse different shapes, name both, and say how to fix it:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
regressor = nn.Linear(3, 1)
inputs, targets = lucid.random.randn(4, 3), lucid.random.randn(4)
pred = regressor(inputs)
print("pred", pred.shape, " targets", targets.shape,
      " pred - targets broadcasts to", (pred - targets).shape)

try:
    nn.MSELoss()(pred, targets)
except ValueError as err:
    print("ValueError:", err)

print("fixed:", nn.MSELoss()(pred.squeeze(-1), targets).shape, "(a scalar)")

# %% [markdown]
# ## 10. Weight initialisation: the scale matters
#
# A layer $y = Wx$ with `fan_in` inputs adds up `fan_in` products, so
# $\mathrm{Var}(y) = \text{fan\_in} \cdot \mathrm{Var}(W) \cdot \mathrm{Var}(x)$. To keep
# signals the same size from layer to layer, $\mathrm{Var}(W)$ must be about $1/\text{fan\_in}$.
# `lucid.nn.init` fills a parameter in place (drawing from `lucid.random`) with:
#
# | initialiser | distribution | std |
# |---|---|---|
# | `xavier_uniform_(w)` | $U(-b, b)$ | $\sqrt{2 / (\text{fan\_in} + \text{fan\_out})}$ |
# | `kaiming_uniform_(w, nonlinearity="relu")` | $U(-b, b)$ | $\sqrt{2 / \text{fan\_in}}$ |
# | `uniform_(w, a, b)` | $U(a, b)$ | $(b - a)/\sqrt{12}$ |
# | `normal_(w, mean, std)` | $N(\text{mean}, \text{std}^2)$ | std |
# | `constant_(w, v)` | all $v$ | 0 |
#
# (Kaiming's factor 2 is for ReLU, which zeroes half of its inputs and so halves the variance.)
#
# `Linear` itself uses `kaiming_uniform_(w, a=sqrt(5))` (PyTorch's default), whose std is
# $1/\sqrt{3\,\text{fan\_in}}$. The measured std of a `(256, 512)` weight, against the formula:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
layer = nn.Linear(512, 256)
w = layer.weight
fan_in, fan_out = 512, 256

def measured():
    return float(w.numpy().std())

rows = [("Linear's own init", measured(), 1 / math.sqrt(3 * fan_in))]
nn.init.xavier_uniform_(w)
rows.append(("xavier_uniform_", measured(), math.sqrt(2 / (fan_in + fan_out))))
nn.init.kaiming_uniform_(w, nonlinearity="relu")
rows.append(("kaiming_uniform_ (relu)", measured(), math.sqrt(2 / fan_in)))
nn.init.uniform_(w, -0.1, 0.1)
rows.append(("uniform_(-0.1, 0.1)", measured(), 0.2 / math.sqrt(12)))
nn.init.normal_(w, mean=0.0, std=0.02)
rows.append(("normal_(0, 0.02)", measured(), 0.02))
nn.init.constant_(layer.bias, 0.1)

print(f"{'init':24s} {'std':>8s} {'formula':>8s}")
for name, got, want in rows:
    print(f"{name:24s} {got:8.5f} {want:8.5f}")
print("constant_(bias, 0.1):", np.unique(layer.bias.numpy()))


# %% [markdown]
# Why it matters: push a batch through 20 `Linear + ReLU` layers and measure the size of the
# activations after each. With Kaiming's scale they stay of order 1 (they wander a little - each
# layer is a random matrix - but neither shrink nor grow layer after layer); with Xavier's (made
# for tanh, which does not halve the variance) they shrink by about $1/\sqrt 2$ per layer; with
# the small `normal_(std=0.02)` they vanish - and so would the gradients.

# %%
def activation_stds(init, depth=20, width=256):
    lucid.random.seed(0)
    h = lucid.random.randn(512, width, dtype=lucid.Float32)
    stds = []
    with lucid.no_grad():
        for _ in range(depth):
            layer = nn.Linear(width, width)
            init(layer.weight)
            nn.init.constant_(layer.bias, 0.0)
            h = F.relu(layer(h))
            stds.append(float(h.numpy().std()))
    return stds

schemes = {
    "kaiming_uniform_ (relu)": lambda w: nn.init.kaiming_uniform_(w, nonlinearity="relu"),
    "xavier_uniform_": nn.init.xavier_uniform_,
    "normal_(std=0.02)": lambda w: nn.init.normal_(w, std=0.02),
}
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, init in schemes.items():
    stds = activation_stds(init)
    ax.semilogy(range(1, 21), stds, marker="o", ms=3, label=name)
    print(f"{name:24s} std after layer 1: {stds[0]:.3g}   after layer 20: {stds[-1]:.3g}")
ax.set(xlabel="layer", ylabel="std of the activations", title="20 Linear + ReLU layers")
ax.legend()
plt.show()


# %% [markdown]
# ## Exercises
#
# ### Exercise 13.1 · An embedding layer of your own
#
# Write the layer `MyEmbedding(num_embeddings, embedding_dim)`: an `nn.Module` with one
# Parameter, `weight`, a table of shape `(num_embeddings, embedding_dim)` drawn from
# `lucid.random.randn`, whose `forward(ids)` returns the rows of the table that the ids name
# (`(N, L)` ids give `(N, L, E)` vectors), as `nn.Embedding` does in section 5. The check builds
# yours and `nn.Embedding`, looks up the same ids, and compares the parameters, the output
# against the table's rows, and the gradient the table receives.

# %% tags=["solution"]
class MyEmbedding(nn.Module):
    """A learnable table with one row per id; forward looks rows up."""

    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.weight = nn.Parameter(lucid.random.randn(num_embeddings, embedding_dim))

    def forward(self, ids):
        return self.weight[ids]


# %% tags=["check"]
def embedding_report(make_layer):
    """What a table layer registers, what it returns and what gradient its table gets."""
    lucid.random.seed(0)
    layer = make_layer(10, 4)
    ids_check = lucid.tensor([[1, 3, 3], [0, 9, 3]])
    out = layer(ids_check)
    (out * lucid.Tensor(np.arange(1.0, 5.0))).sum().backward()
    return {"parameters": [(n, tuple(p.shape)) for n, p in layer.named_parameters()],
            "output - the rows of weight": out.numpy() - layer.weight.numpy()[ids_check.numpy()],
            "gradient of weight": layer.weight.grad}


check_function("Exercise 13.1", lambda: embedding_report(MyEmbedding),
               lambda: embedding_report(nn.Embedding), [()],
               nudge="A layer registers its table as an nn.Parameter in __init__; forward "
                     "only looks rows up.",
               hint="self.weight = nn.Parameter(lucid.random.randn(num_embeddings, "
                    "embedding_dim)); forward returns self.weight[ids] (indexing a Tensor by a "
                    "Tensor of ids picks rows, and backward adds the gradients of repeated ids).")

# %% [markdown]
# ### Exercise 13.2 · Slopes at a point
#
# Without running anything, give the derivative of three activations at one point each:
# `nn.GELU()` at $x = 0$, `nn.ELU(alpha=1.0)` at $x = -1$ and `nn.Sigmoid()` at $x = \ln 3$
# (a number, or a NumPy expression such as `np.exp(2)`). The check asks Lucid's autograd, as
# section 6 does.

# %% tags=["solution"]
gelu_slope_at_0 = 0.5
elu_slope_at_minus_1 = np.exp(-1)
sigmoid_slope_at_ln3 = 0.75 * 0.25

# %% tags=["check"]
nudge = "Section 6 lists each activation's derivative next to its plot."
check_grad("Exercise 13.2 (GELU at 0)", gelu_slope_at_0, nn.GELU(), [0.0], nudge=nudge,
           hint="GELU'(x) = Phi(x) + x phi(x); at 0 the second term vanishes, and Phi, the "
                "normal CDF, is at its middle.")
check_grad("Exercise 13.2 (ELU at -1)", elu_slope_at_minus_1, nn.ELU(alpha=1.0), [-1.0],
           nudge=nudge, hint="for x < 0, ELU(x) = e^x - 1, so its slope there is e^x.",
           mistakes={"that is ELU's value at -1, not its slope": np.exp(-1) - 1})
check_grad("Exercise 13.2 (Sigmoid at ln 3)", sigmoid_slope_at_ln3, nn.Sigmoid(), [math.log(3)],
           nudge=nudge, hint="sigma'(x) = sigma(x)(1 - sigma(x)), and sigma(ln 3) = 1 / (1 + 1/3).",
           mistakes={"that is the sigmoid's value at ln 3, not its slope": 0.75})


# %% [markdown]
# ### Exercise 13.3 · A binary cross-entropy that cannot overflow
#
# Write `bce_with_logits(z, y)` for NumPy arrays of logits `z` and 0/1 targets `y` of the same
# shape: the mean over the elements of $-[y \log \sigma(z) + (1-y) \log(1-\sigma(z))]$, as
# `nn.BCEWithLogitsLoss` computes it (section 9). It must stay right for logits as large as
# $\pm 200$, where $\sigma(z)$ rounds to exactly 0 or 1. The check compares it with
# `nn.BCEWithLogitsLoss` on small and on large logits.

# %% tags=["solution"]
def bce_with_logits(z, y):
    """mean of -[y log s(z) + (1 - y) log(1 - s(z))], without computing s(z) itself."""
    # -log s(z) = log(1 + e^-z) and -log(1 - s(z)) = z + log(1 + e^-z); written with |z| so
    # that exp never sees a large positive number
    softplus_minus_z = np.maximum(-z, 0) + np.log1p(np.exp(-np.abs(z)))
    return float(np.mean(softplus_minus_z + (1 - y) * z))


# %% tags=["check"]
def lucid_bce_with_logits(z, y):
    return nn.BCEWithLogitsLoss()(lucid.Tensor(z), lucid.Tensor(y)).item()


def naive_bce(z, y):
    with np.errstate(all="ignore"):
        p = 1 / (1 + np.exp(-z))
        return float(np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p))))


check_function("Exercise 13.3", bce_with_logits, lucid_bce_with_logits,
               [(np.array([1.2, -0.7, 0.4, -2.5]), np.array([1.0, 0.0, 1.0, 0.0])),
                (np.array([[0.0, 3.0], [-1.0, 2.5]]), np.array([[1.0, 1.0], [0.0, 1.0]])),
                (np.array([10.0, 50.0, 200.0, -200.0]), np.array([0.0, 0.0, 0.0, 1.0]))],
               nudge="Section 9 shows where BCE of a sigmoid goes wrong; write the loss from "
                     "the logit z directly.",
               hint="-log s(z) = log(1 + e^(-z)) and -log(1 - s(z)) = z + log(1 + e^(-z)); "
                    "compute log(1 + e^(-z)) as max(-z, 0) + log1p(e^(-|z|)) so that exp "
                    "never overflows, then take the mean.",
               mistakes={"that is the sigmoid then log formula: it breaks where the sigmoid "
                         "rounds to 0 or 1": naive_bce})

# %% [markdown]
# ### Exercise 13.4 · The shapes of cross-attention
#
# `mha = nn.MultiHeadAttention(embed_dim=16, num_heads=2)` attends from a query of shape
# `(2, 3, 16)` (2 sequences of 3 tokens) to keys and values of shape `(2, 7, 16)`. Give the
# size of each head's subspace, the shape of the attention weights it returns, and the shape of
# the weights per head (`average_attn_weights=False`), as tuples.

# %% tags=["solution"]
head_size = 8
weights_shape = (2, 3, 7)
per_head_shape = (2, 2, 3, 7)

# %% tags=["check"]
lucid.random.seed(0)
mha_check = nn.MultiHeadAttention(embed_dim=16, num_heads=2)
q_check = lucid.random.randn(2, 3, 16, dtype=lucid.Float32)
kv_check = lucid.random.randn(2, 7, 16, dtype=lucid.Float32)
_, w_check = mha_check(q_check, kv_check, kv_check)
_, heads_check = mha_check(q_check, kv_check, kv_check, average_attn_weights=False)
nudge = "Section 7: one row of weights per query token, one column per key token."
check("Exercise 13.4 (head size)", head_size, mha_check.head_dim, nudge=nudge,
      hint="the 16 features are split evenly between the heads.",
      mistakes={"that is the number of heads; the size is what each head gets": 2})
check("Exercise 13.4 (weights)", weights_shape, w_check.shape, nudge=nudge,
      hint="averaged over the heads, the weights are (N, L, S): L query tokens, S key tokens.")
check("Exercise 13.4 (per head)", per_head_shape, heads_check.shape, nudge=nudge,
      hint="per head they are (N, heads, L, S), as section 7 prints.")

# %% [markdown]
# Every layer and loss of Lucid has now appeared in chapter 12 or 13. To see how one of them
# works, print its code: `print(inspect.getsource(nn.GELU))` (after `import inspect`) shows the
# class, and its docstring states the formula you saw checked here.
#
# **Next:** [14 · Optimizers, schedules and data](14_optimizers_and_data.ipynb): the rest of the
# shelf.
