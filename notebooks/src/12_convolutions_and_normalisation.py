# %% [markdown]
# # 12 · More layers: convolutions, pooling, normalisation, dropout
#
# Chapters 08 to 11 trained real models with a handful of pieces: `Linear`, `Conv2d`,
# `cross_entropy`, SGD. Lucid has more, with PyTorch's names and shapes. This chapter and the next
# two are a guided tour of the shelf: here the random numbers behind every layer, the other
# convolutions and poolings, normalisation and dropout;
# [chapter 13](13_activations_and_losses.ipynb) does embeddings, activations, attention, losses and
# initialisation, chapter 14 the optimizers, schedules and data tools. Each section is short and
# stands on its own: one idea, and a cell whose output checks it - a shape against its formula, a
# value against NumPy, or a plot.
#
# | § | what | from |
# |---|---|---|
# | 1 | random numbers: `rand`, `randn`, `uniform`, `bernoulli` ... | `lucid.random` |
# | 2 | 1-D convolution, pooling, transposed convolution, adaptive pooling | `lucid.nn` |
# | 3 | normalisation: BatchNorm vs LayerNorm vs GroupNorm | `lucid.nn` |
# | 4 | dropout | `lucid.nn` |
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) and
# [10 · Convolutional networks](10_convolutional_networks.ipynb); the sections can be read in any
# order.

# %%
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
# `Conv2d` (notebook 10) slides a kernel over an image `(N, C, H, W)`; `Conv1d` slides it along a
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
#
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
# ## Exercises
#
# ### Exercise 12.1 · Padding that keeps the length
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
check("Exercise 12.1 (kernel 3)", padding_k3, keeping_padding(3), nudge=nudge, hint=hint)
check("Exercise 12.1 (kernel 5, dilation 2)", padding_k5_dilated, keeping_padding(5, 2),
      nudge=nudge, hint=hint)

# %% [markdown]
# ### Exercise 12.2 · Alone or in a batch
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
check("Exercise 12.2", batch_independent, same,
      nudge="Section 3's table says which statistics each normalisation uses.",
      hint="which of them compute their mean and variance from one sample only, and which "
           "over the whole batch (section 3's table)?")


# %% [markdown]
# ### Exercise 12.3 · Implement layer normalisation
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


check_function("Exercise 12.3", layer_norm, lucid_layer_norm,
               [(np.array([[1.0, 2.0, 3.0, 4.0]]),),
                (np.array([[0.5, -1.0, 2.0], [3.0, 3.0, 3.0]]),),
                (np.arange(24.0).reshape(2, 3, 4), 1e-3)],
               nudge="Layer normalisation normalises each row on its own (section 3).",
               hint="mean and variance along axis=-1 with keepdims=True, so that they broadcast "
                    "against x.")

# %% [markdown]
# ### Exercise 12.4 · What dropout does to a tensor
#
# `x = lucid.Tensor([2.0, 4.0, 6.0, 8.0])` goes through `drop = nn.Dropout(p=0.5)`. In training
# mode each element of `drop(x)` comes out either as 0 or as one other value. Write those other
# values, one per element, as the list `survivors`; then write what `drop(x)` returns after
# `drop.eval()`, as the list `at_eval`.

# %% tags=["solution"]
survivors = [4.0, 8.0, 12.0, 16.0]
at_eval = [2.0, 4.0, 6.0, 8.0]

# %% tags=["check"]
x_check = lucid.Tensor([2.0, 4.0, 6.0, 8.0])
drop_check = nn.Dropout(p=0.5)
lucid.random.seed(0)
kept = np.stack([drop_check(x_check).numpy() for _ in range(40)]).max(axis=0)
drop_check.eval()
check("Exercise 12.4 (training)", survivors, kept,
      entries="the value each element of x has when it survives",
      nudge="Section 4: what happens to the elements dropout does not zero?",
      hint="a survivor is multiplied by 1 / (1 - p), so that the expected value of every "
           "element stays what it was.",
      mistakes={"those are the inputs unchanged: in training mode the survivors are scaled":
                [2.0, 4.0, 6.0, 8.0]})
check("Exercise 12.4 (eval)", at_eval, drop_check(x_check).numpy(),
      entries="the four elements of drop(x) after drop.eval()",
      nudge="Section 4 runs a Dropout after .eval() too.",
      hint="after .eval() dropout zeroes nothing and scales nothing.",
      mistakes={"those are training mode's survivors: after .eval() nothing is scaled":
                [4.0, 8.0, 12.0, 16.0]})

# %% [markdown]
# **Next:** [13 · Embeddings, activations and losses](13_activations_and_losses.ipynb): the layers
# that look up, squash and attend, the losses, and how to start the weights.
