# %% [markdown]
# # 10 · Layers and losses: the rest of the catalogue
#
# Chapters 08 and 09 trained real models with a handful of pieces: `Linear`, `Conv2d`,
# `cross_entropy`, SGD. Lucid has more, with PyTorch's names and shapes. This chapter is a guided
# tour of the layers and losses on the shelf (chapter 11 does the optimizers, schedules and data
# tools). Each section is short and stands on its own: one idea, and a cell whose output checks
# it - a shape against its formula, a value against NumPy, or a plot.
#
# | § | what | from |
# |---|---|---|
# | 1 | random numbers: `rand`, `randn`, `uniform`, `bernoulli` ... | `lucid.random` |
# | 2 | 1-D convolution, pooling, transposed convolution, adaptive pooling | `lucid.nn` |
# | 3 | normalisation: BatchNorm vs LayerNorm vs GroupNorm | `lucid.nn` |
# | 4 | dropout | `lucid.nn` |
# | 5 | embeddings and `one_hot` | `lucid.nn`, `lucid.nn.functional` |
# | 6 | activations and their derivatives | `lucid.nn` |
# | 7 | multi-head attention | `lucid.nn` |
# | 8 | `ModuleDict` | `lucid.nn` |
# | 9 | losses, and the shape mistake they refuse | `lucid.nn` |
# | 10 | weight initialisation | `lucid.nn.init` |
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) and
# [09 · CNNs and ResNet-18](09_cnns_and_resnet.ipynb); the sections can be read in any order.

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid_viz.exercises import check, check_function

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (chapter 05 is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")

np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 1. Random numbers: one generator, any dtype, any device
#
# Everything random in Lucid - weight inits, dropout masks, data shuffling - draws from **one**
# NumPy generator inside `lucid.random`, so `lucid.random.seed(n)` makes a whole program
# repeatable. Every sampler takes `dtype=` and `device=`:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
samples = {
    "rand(2, 3)": lucid.random.rand(2, 3),
    "randn(2, 3, dtype=Float32)": lucid.random.randn(2, 3, dtype=lucid.Float32),
    "uniform(-1, 1, size=(2, 3))": lucid.random.uniform(-1, 1, size=(2, 3)),
    "randint(0, 10, size=(2, 3), dtype=Int32)": lucid.random.randint(
        0, 10, size=(2, 3), dtype=lucid.Int32, device="cpu"),
    "bernoulli(0.3, size=(2, 3))": lucid.random.bernoulli(0.3, size=(2, 3)),
    "permutation(6)": lucid.random.permutation(6),
}
for name, t in samples.items():
    print(f"{name:42s} shape={str(t.shape):7s} {t.dtype.name:8s} {t.device}  "
          f"{t.numpy().ravel()[:3]}")

# %% [markdown]
# Each sampler draws from a known distribution, so with many samples its mean and variance must
# come close to the textbook values ($U[a, b)$ has variance $(b-a)^2/12$, a coin with
# $P(1) = p$ has mean $p$, the integers $0..5$ have mean $2.5$):

# %% tags=["nbval-check-output"]
lucid.random.seed(1)
n = 200_000
rows = [
    ("rand", lucid.random.rand(n), 0.5, 1 / 12),
    ("randn", lucid.random.randn(n), 0.0, 1.0),
    ("uniform(-2, 2)", lucid.random.uniform(-2, 2, size=n), 0.0, 16 / 12),
    ("bernoulli(0.3)", lucid.random.bernoulli(0.3, size=n), 0.3, 0.3 * 0.7),
    ("randint(0, 6)", lucid.random.randint(0, 6, size=n), 2.5, 35 / 12),
]
print(f"{'sampler':15s} {'mean':>7s} {'theory':>7s} {'var':>7s} {'theory':>7s}")
for name, t, mean, var in rows:
    a = t.numpy()
    print(f"{name:15s} {a.mean():7.3f} {mean:7.3f} {a.var():7.3f} {var:7.3f}")

perm = lucid.random.permutation(10).numpy()
print("permutation(10):", perm, " sorted back:", np.array_equal(np.sort(perm), np.arange(10)))

# %% [markdown]
# The generator is NumPy's, and MLX never draws a number: the values are drawn first and only
# *then* placed on the device. So the same seed gives the same numbers on `"cpu"` and on
# `"gpu"` - useful when you compare the two devices (notebook 05).

# %% tags=["nbval-check-output"]
lucid.random.seed(7)
on_cpu = lucid.random.randn(4, dtype=lucid.Float32, device="cpu")
lucid.random.seed(7)
on_gpu = lucid.random.randn(4, dtype=lucid.Float32, device="gpu")

print(on_cpu.device, on_cpu.numpy())
print(on_gpu.device, on_gpu.numpy())
print("identical:", np.array_equal(on_cpu.numpy(), on_gpu.numpy()))

# %% [markdown]
# ## 2. Convolutions and pooling: shape arithmetic
#
# ### `Conv1d`: convolution along a sequence
#
# `Conv2d` (notebook 09) slides a kernel over an image `(N, C, H, W)`; `Conv1d` slides it along a
# sequence `(N, C, L)` - audio, a time series, text embeddings. The output length follows the same
# formula as each side of an image:
#
# $$L_{out} = \left\lfloor \frac{L + 2p - d\,(k-1) - 1}{s} \right\rfloor + 1$$
#
# (kernel $k$, stride $s$, padding $p$, dilation $d$). The weight is
# `(out_channels, in_channels, k)`.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
seq = lucid.random.randn(2, 3, 50, dtype=lucid.Float32)     # N=2 sequences, 3 channels, L=50

def l_out(L, k, s=1, p=0, d=1):
    return (L + 2 * p - d * (k - 1) - 1) // s + 1

print(f"{'layer':62s} {'output':12s} formula")
for k, s, p, d in [(3, 1, 0, 1), (3, 1, 1, 1), (5, 2, 2, 1), (3, 1, 0, 4), (7, 3, 0, 1)]:
    conv = nn.Conv1d(3, 8, kernel_size=k, stride=s, padding=p, dilation=d)
    out = conv(seq)
    print(f"{str(conv):62s} {str(out.shape):12s} L_out = {l_out(50, k, s, p, d)}")
print("weight:", conv.weight.shape, " bias:", conv.bias.shape)

# %% [markdown]
# ### `MaxPool1d` and `AvgPool1d`
#
# Pooling has no weights: it summarises each window by its maximum or its mean. The stride
# defaults to the window size, so `MaxPool1d(2)` halves the length. On a sequence small enough to
# check by eye, against NumPy:

# %% tags=["nbval-check-output"]
x = lucid.Tensor([[[1.0, 3.0, 2.0, 5.0, 4.0, 0.0, 6.0, 2.0]]])      # (N=1, C=1, L=8)
a = x.numpy()[0, 0]

print(f"{'input':23s}", a)
print(f"{'MaxPool1d(2)':23s}", nn.MaxPool1d(2)(x).numpy()[0, 0],
      "  NumPy:", a.reshape(4, 2).max(axis=1))
print(f"{'AvgPool1d(2)':23s}", nn.AvgPool1d(2)(x).numpy()[0, 0],
      "  NumPy:", a.reshape(4, 2).mean(axis=1))
print(f"{'MaxPool1d(3, stride=1)':23s}", nn.MaxPool1d(3, stride=1)(x).numpy()[0, 0],
      "  NumPy:", np.array([a[i:i + 3].max() for i in range(6)]))

# %% [markdown]
# ### `ConvTranspose2d`: upsampling
#
# A strided convolution makes an image smaller; a **transposed convolution** makes it larger, which
# is what decoders, U-Nets and GAN generators need. Its output size is
#
# $$H_{out} = (H - 1)\,s - 2p + d\,(k-1) + \text{output\_padding} + 1$$
#
# The popular recipe `kernel_size=4, stride=2, padding=1` gives exactly $2H$:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)

def h_out(H, k, s=1, p=0, op=0, d=1):
    return (H - 1) * s - 2 * p + d * (k - 1) + op + 1

up = nn.ConvTranspose2d(16, 8, kernel_size=4, stride=2, padding=1)
print(up, " weight:", up.weight.shape, "(in, out, kh, kw)")
for H in (4, 7, 14):
    z = lucid.random.randn(1, 16, H, H, dtype=lucid.Float32)
    _, _, Ho, Wo = up(z).shape
    print(f"  {f'{H}x{H}':>5s} -> {f'{Ho}x{Wo}':5s}  formula: {h_out(H, k=4, s=2, p=1)}")

# %% [markdown]
# Why "transposed"? A convolution is a linear map $y = Cx$; the transposed convolution applies
# $C^T$. And $C^T$ is exactly what backward needs: the gradient of a convolution with respect to
# its *input* is the transposed convolution of the upstream gradient, with the same weight. Lucid's
# autograd and `F.conv_transpose2d` agree. (`output_padding=1` picks 8 rather than 7 rows: with
# stride 2, inputs of height 7 and 8 both give 4 output rows, so the transposed op needs the hint.)

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
x = lucid.random.randn(1, 2, 8, 8, requires_grad=True)
w = lucid.random.randn(3, 2, 3, 3)                   # Conv2d weight: (out=3, in=2, 3, 3)
y = F.conv2d(x, w, stride=2, padding=1)              # (1, 3, 4, 4)
g = lucid.random.randn(*y.shape)                     # some upstream gradient
(y * g).sum().backward()                             # x.grad = C^T g

ct = F.conv_transpose2d(g, w, stride=2, padding=1, output_padding=1)
print("conv:", x.shape, "->", y.shape, "   transposed conv:", g.shape, "->", ct.shape)
print("x.grad equals conv_transpose2d(g, w):", np.allclose(x.grad, ct.numpy()))

# %% [markdown]
# ### `AvgPool2d` and `AdaptiveAvgPool2d`
#
# `AvgPool2d(k)` averages each `k x k` tile. `AdaptiveAvgPool2d(out)` is told the **output** size
# instead and picks the windows itself, so any input size gives the same output shape. That is how
# a classifier head can accept images of any size; `AdaptiveAvgPool2d(1)` - global average pooling,
# the head of ResNet - is just the mean over H and W.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
tile = lucid.Tensor(np.arange(16.0).reshape(1, 1, 4, 4))
print(tile.numpy()[0, 0])
print("AvgPool2d(2):\n", nn.AvgPool2d(2)(tile).numpy()[0, 0])
print("NumPy tiles: \n", tile.numpy()[0, 0].reshape(2, 2, 2, 2).mean(axis=(1, 3)))

pool, gap = nn.AdaptiveAvgPool2d((2, 3)), nn.AdaptiveAvgPool2d(1)
for H, W in [(7, 7), (10, 13), (32, 32)]:
    img = lucid.random.randn(2, 5, H, W, dtype=lucid.Float32)
    same = np.allclose(gap(img).numpy()[:, :, 0, 0], img.numpy().mean(axis=(2, 3)), atol=1e-6)
    print(f"{H:2d}x{W:<2d}: AdaptiveAvgPool2d((2, 3)) -> {pool(img).shape}, "
          f"AdaptiveAvgPool2d(1) -> {gap(img).shape}, equals the mean over H, W: {same}")

# %% [markdown]
# ## 3. Normalisation: which axes?
#
# All three normalisation layers compute the same thing,
#
# $$y = \frac{x - \text{mean}}{\sqrt{\text{var} + \varepsilon}} \cdot \gamma + \beta,$$
#
# and differ only in **which elements share one mean and variance**. For an input
# `(N, C, H, W)`:
#
# | layer | statistics over | one statistic per | depends on the batch? |
# |---|---|---|---|
# | `BatchNorm2d(C)` | N, H, W | channel | yes (and keeps running averages, notebook 07) |
# | `LayerNorm((C, H, W))` | C, H, W | sample | no |
# | `GroupNorm(G, C)` | C/G channels, H, W | sample and group of channels | no |
#
# The picture below colours the `N x C` grid by which statistic each `(sample, channel)` slice
# uses (every slice also spans its whole `H x W` image):

# %%
N, C, G = 4, 6, 2
sample, channel = np.meshgrid(np.arange(N), np.arange(C), indexing="ij")
groups = {
    "BatchNorm2d(6)\nper channel": channel,
    "LayerNorm((6, H, W))\nper sample": sample,
    "GroupNorm(2, 6)\nper sample and group": sample * G + channel // (C // G),
}
fig, axes = plt.subplots(1, 3, figsize=(9, 3.8))
for ax, (title, ids) in zip(axes, groups.items()):
    ax.imshow(ids, cmap="tab20", vmin=0, vmax=19)
    for (n, c), k in np.ndenumerate(ids):
        ax.text(c, n, str(k), ha="center", va="center", fontsize=11)
    ax.set(title=title, xlabel="channel c", ylabel="sample n", xticks=range(C), yticks=range(N))
fig.tight_layout()
plt.show()

# %% [markdown]
# Now the layers themselves, each checked against that formula written in NumPy (at
# initialisation $\gamma = 1$, $\beta = 0$; variances are the biased ones, dividing by the count).
# Notice the number of statistics: 6 for BatchNorm, 4 for LayerNorm, 4 x 2 = 8 for GroupNorm.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
x = lucid.random.randn(4, 6, 3, 3, dtype=lucid.Float32) * 3 + 1
a = x.numpy()

def normalise(v, axes, eps=1e-5):
    return (v - v.mean(axis=axes, keepdims=True)) / np.sqrt(v.var(axis=axes, keepdims=True) + eps)

grouped = a.reshape(4, 2, 3, 3, 3)                   # (N, G, C/G, H, W)
checks = [
    ("BatchNorm2d(6)", nn.BatchNorm2d(6), normalise(a, (0, 2, 3)), "N, H, W", 6),
    ("LayerNorm((6, 3, 3))", nn.LayerNorm((6, 3, 3)), normalise(a, (1, 2, 3)), "C, H, W", 4),
    ("GroupNorm(2, 6)", nn.GroupNorm(2, 6),
     normalise(grouped, (2, 3, 4)).reshape(a.shape), "C/G, H, W", 8),
]
for name, layer, ref, axes, count in checks:
    out = layer(x).numpy()
    print(f"{name:21s} normalises over ({axes}): {count} statistics,  "
          f"matches NumPy: {np.allclose(out, ref, atol=1e-5)}")

# %% [markdown]
# Two special cases of GroupNorm: one group is LayerNorm over `(C, H, W)`, and one group per
# channel is *instance norm* (each image's channel on its own, popular in style transfer):

# %% tags=["nbval-check-output"]
one_group = nn.GroupNorm(1, 6)(x).numpy()
print("GroupNorm(1, 6) == LayerNorm((6, 3, 3)):",
      np.allclose(one_group, nn.LayerNorm((6, 3, 3))(x).numpy(), atol=1e-6))
print("GroupNorm(6, 6) == per-(sample, channel) norm:",
      np.allclose(nn.GroupNorm(6, 6)(x).numpy(), normalise(a, (2, 3)), atol=1e-5))

# %% [markdown]
# In a transformer, `LayerNorm(E)` normalises each token's `E` features, `(N, L, E)` ->
# statistics over the last axis only; it works the same at batch size 1, which BatchNorm does not.

# %% [markdown]
# ## 4. Dropout: train vs eval
#
# In training, `Dropout(p)` zeroes each element with probability `p` and multiplies the survivors
# by $1/(1-p)$, so the **expected** value of every element is unchanged. After `.eval()` it is the
# identity. The mask is drawn from `lucid.random`, so a seed reproduces it:

# %% tags=["nbval-check-output"]
drop = nn.Dropout(p=0.25)
ones = lucid.ones(2, 8)

lucid.random.seed(3)
first = drop(ones).numpy()
print("training mode:", drop.training)
print(first)
print("survivors are scaled by 1 / (1 - p) =", 1 / (1 - 0.25))

lucid.random.seed(3)
print("same seed, same mask:", np.array_equal(drop(ones).numpy(), first))
print("next call, a new mask:", not np.array_equal(drop(ones).numpy(), first))

# %% [markdown]
# On many elements the fraction dropped is close to `p` and the mean stays close to 1. In
# evaluation mode nothing is dropped and nothing is scaled:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
many = drop(lucid.ones(100_000)).numpy()
print(f"fraction zeroed: {(many == 0).mean():.4f}   mean: {many.mean():.4f}")

drop.eval()
print("eval mode:", drop(ones).numpy()[0])

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
# so its units cannot die (notebook 08). ELU, GELU and SiLU are smooth versions of ReLU; GELU and
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
# ### Exercise 10.1 · Padding that keeps the length
#
# A `Conv1d(1, 1, kernel_size=3, padding=p)` should give an output as long as its input. Which
# padding `p`? And for `kernel_size=5, dilation=2`?

# %% tags=["solution"]
padding_k3 = 1
padding_k5_dilated = 4


# %% tags=["check"]
def keeping_padding(kernel_size, dilation=1):
    """The smallest padding whose output is as long as the input (20 steps)."""
    seq = lucid.zeros(1, 1, 20, dtype=lucid.Float32)
    return next(p for p in range(20) if nn.Conv1d(1, 1, kernel_size, padding=p,
                                                  dilation=dilation)(seq).shape[-1] == 20)


nudge = "Section 2 gives the output length of a convolution; which padding keeps it at L?"
hint = "section 2's formula: L_out = L + 2·padding - dilation·(kernel_size - 1) for stride 1."
check("Exercise 10.1 (kernel 3)", padding_k3, keeping_padding(3), nudge=nudge, hint=hint)
check("Exercise 10.1 (kernel 5, dilation 2)", padding_k5_dilated, keeping_padding(5, 2),
      nudge=nudge, hint=hint)

# %% [markdown]
# ### Exercise 10.2 · Alone or in a batch
#
# Of `nn.LayerNorm((6, 3, 3))`, `nn.GroupNorm(2, 6)` and `nn.BatchNorm2d(6)` (in training mode),
# which give a sample the **same** output whether it comes alone (a batch of 1) or in a batch of
# 64? Answer with a set of class names, e.g. `{"LayerNorm"}`.

# %% tags=["solution"]
batch_independent = {"LayerNorm", "GroupNorm"}

# %% tags=["check"]
lucid.random.seed(0)
batch = lucid.random.randn(64, 6, 3, 3, dtype=lucid.Float32)
same = set()
for layer in (nn.LayerNorm((6, 3, 3)), nn.GroupNorm(2, 6), nn.BatchNorm2d(6)):
    alone, in_batch = layer(batch[:1]).numpy(), layer(batch).numpy()[:1]
    if np.allclose(alone, in_batch, atol=1e-5):
        same.add(type(layer).__name__)
check("Exercise 10.2", batch_independent, same,
      nudge="Section 3's table says which statistics each normalisation uses.",
      hint="which of them compute their mean and variance from one sample only, and which "
           "over the whole batch (section 3's table)?")


# %% [markdown]
# ### Exercise 10.3 · Implement layer normalisation
#
# Write `layer_norm(x, eps=1e-5)` for a NumPy array: normalise each row (the last axis) to mean 0
# and variance 1, i.e. subtract the row's mean and divide by $\sqrt{\text{variance} +
# \varepsilon}$ (the variance averaged over the row, not divided by n - 1). The check compares it
# with `F.layer_norm`.

# %% tags=["solution"]
def layer_norm(x, eps=1e-5):
    """(x - mean) / sqrt(var + eps) over the last axis."""
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


# %% tags=["check"]
def lucid_layer_norm(x, eps=1e-5):
    return F.layer_norm(lucid.Tensor(x), x.shape[-1], eps=eps)


check_function("Exercise 10.3", layer_norm, lucid_layer_norm,
               [(np.array([[1.0, 2.0, 3.0, 4.0]]),),
                (np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 3.0]]),),
                (np.arange(24.0).reshape(2, 3, 4), 1e-3)],
               nudge="Layer normalisation normalises each row on its own (section 3).",
               hint="mean and variance along axis=-1 with keepdims=True, so that they broadcast "
                    "against x.")


# %% [markdown]
# ### Exercise 10.4 · An embedding layer of your own
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


check_function("Exercise 10.4", lambda: embedding_report(MyEmbedding),
               lambda: embedding_report(nn.Embedding), [()],
               nudge="A layer registers its table as an nn.Parameter in __init__; forward "
                     "only looks rows up.",
               hint="self.weight = nn.Parameter(lucid.random.randn(num_embeddings, "
                    "embedding_dim)); forward returns self.weight[ids] (indexing a Tensor by a "
                    "Tensor of ids picks rows, and backward adds the gradients of repeated ids).")

# %% [markdown]
# Every layer and loss of Lucid has now appeared in a chapter. To see how one of them works,
# open its file - `lucid/nn/layers/`, `lucid/nn/functional/` - each docstring states the formula
# you saw checked here.
#
# **Next:** [11 · Optimizers, schedules and data](11_optimizers_and_data.ipynb): the rest of the
# shelf.
