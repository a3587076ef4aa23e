# %% [markdown]
# # 10 · Convolutional networks
#
# An MLP treats an image as a flat list of pixels: it has no idea that neighbouring pixels belong
# together. A **convolution** slides one small filter over the whole image, so the same few weights
# look at every neighbourhood. In this chapter we:
#
# 1. compute a convolution by hand as **im2col + one matrix product** and check it against
#    `lucid.nn.functional.conv2d`;
# 2. count a convolution's FLOPs by formula and with `lucid.count_flops`;
# 3. pool;
# 4. train a small LeNet-style CNN on the 8x8 digits of notebook 08;
# 5. see BatchNorm behave differently in training and evaluation mode.
#
# [Chapter 11](11_resnet.ipynb) then builds a deep network of these pieces, ResNet-18.
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) (the digits, the training loop)
# and [06 · FLOPs](06_flops.ipynb) (MACs).

# %%
import inspect

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.models import summarize
from lucid_viz.exercises import check, check_function, check_grad

lucid.random.seed(0)      # parameter inits, DataLoader shuffling, random_split
np.random.seed(0)         # NumPy's global generator, for anything that reaches for it

# %% [markdown]
# ## 1. A convolution is a matrix product (im2col)
#
# A 2-D convolution takes an input `x` of shape `(N, C_in, H, W)` and a weight of shape
# `(C_out, C_in, K, K)`. Output channel `o` at position `(i, j)` is the dot product of filter `o`
# with the `C_in x K x K` window of `x` whose corner is at `(i, j)`.
#
# The trick every framework uses: **write every window as one column of a matrix** (*im2col*,
# "image to columns"). Then all the dot products at once are one matrix multiplication (GEMM) -
# the operation BLAS libraries and GPUs are fastest at.
#
# NumPy's `sliding_window_view` gives the windows without copying anything. We use small whole
# numbers, so that every product and sum is exact and our result must match Lucid's to the last
# bit.

# %% tags=["nbval-check-output"]
rng = np.random.default_rng(0)
x = rng.integers(-3, 4, size=(1, 2, 5, 5)).astype(np.float64)   # N=1, C_in=2, 5x5
w = rng.integers(-2, 3, size=(3, 2, 3, 3)).astype(np.float64)   # C_out=3, C_in=2, 3x3

windows = sliding_window_view(x, (3, 3), axis=(2, 3))
print("windows:", windows.shape, "= (N, C_in, H_out, W_out, K, K)")

# %% [markdown]
# Each output position `(i, j)` owns one `2 x 3 x 3` window: 18 numbers. Put the window entries
# `(c, ki, kj)` on the rows and the output positions `(i, j)` on the columns, and flatten the
# weight to one row per output channel:

# %% tags=["nbval-check-output"]
N, C_in, H_out, W_out, K, _ = windows.shape
C_out = w.shape[0]

cols = windows.transpose(0, 1, 4, 5, 2, 3).reshape(N, C_in * K * K, H_out * W_out)
W_mat = w.reshape(C_out, C_in * K * K)
print("cols: ", cols.shape, "= (N, C_in*K*K, H_out*W_out)")
print("W_mat:", W_mat.shape, "= (C_out, C_in*K*K)")

out = (W_mat @ cols).reshape(N, C_out, H_out, W_out)   # one GEMM does the whole layer
print("out:  ", out.shape)

# %% [markdown]
# The same convolution in Lucid, and the largest difference between the two results:

# %% tags=["nbval-check-output"]
y = F.conv2d(lucid.Tensor(x), lucid.Tensor(w))
print("F.conv2d:", y.shape, y.dtype)
print("max |ours - lucid|:", np.abs(out - y.numpy()).max())
print("lucid's own im2col (F.unfold) equals our cols:",
      np.array_equal(F.unfold(lucid.Tensor(x), 3).numpy(), cols))

# %% [markdown]
# With random floats the two agree to rounding: the products are summed in a different order, so
# the last bits can differ (the exact difference is printed, not checked):

# %%
xf = rng.standard_normal((2, 3, 8, 8))
wf = rng.standard_normal((4, 3, 3, 3))
cols_f = sliding_window_view(xf, (3, 3), axis=(2, 3)).transpose(0, 1, 4, 5, 2, 3)
cols_f = cols_f.reshape(2, 3 * 3 * 3, 6 * 6)
out_f = (wf.reshape(4, -1) @ cols_f).reshape(2, 4, 6, 6)
diff = np.abs(out_f - F.conv2d(lucid.Tensor(xf), lucid.Tensor(wf)).numpy()).max()
print(f"max |ours - lucid| on random float64 data: {diff:.1e}")

# %% tags=["nbval-check-output"]
print("agree to 1e-12:", diff < 1e-12)

# %% [markdown]
# Lucid's convolution builds the same matrix with one strided slice per kernel offset and calls
# one GEMM; backward is two more GEMMs (for the weight and for the columns) and *col2im*, which
# adds each column back onto the windows it came from. The docstring of its module,
# `lucid.ops.conv`, walks through the same example (`inspect.getdoc` prints a docstring,
# `inspect.getsource` the code of any class or function):

# %%
conv_doc = inspect.getdoc(lucid.ops.conv)
print(conv_doc.split("One layout decision")[0])    # its first part: im2col and col2im


# %% [markdown]
#
# ### How big is the columns matrix?
#
# The price of im2col is memory: every input pixel is copied into up to `K x K` columns. For a
# few layers we meet in this notebook:

# %% tags=["nbval-check-output"]
def cols_shape(n, c_in, h, w, k, stride=1, padding=0):
    h_out = (h + 2 * padding - k) // stride + 1
    w_out = (w + 2 * padding - k) // stride + 1
    return (n, c_in * k * k, h_out * w_out)

layers = [
    ("digits CNN conv1, batch 32", (32, 1, 8, 8, 3, 1, 1)),
    ("digits CNN conv2, batch 32", (32, 8, 4, 4, 3, 1, 1)),
    ("ResNet-18 layer1 conv, 32x32 image", (1, 64, 8, 8, 3, 1, 1)),
    ("ResNet-18 stem conv 7x7 / 2", (1, 3, 32, 32, 7, 2, 3)),
]
for name, (n, c, h, w_, k, s, p) in layers:
    shape = cols_shape(n, c, h, w_, k, s, p)
    blowup = np.prod(shape) / (n * c * h * w_)
    print(f"{name:36s} input {str((n, c, h, w_)):16s} cols {str(shape):17s} x{blowup:.1f}")

# %% [markdown]
# A 3x3 convolution with padding 1 copies its input about 9 times; the stride-2 7x7 stem about
# 12 times. That is why large frameworks also have convolution algorithms that avoid im2col
# (Winograd, FFT, implicit GEMM); for a teaching framework one GEMM is the clearest, and fast.
#
# ## 2. FLOPs of a convolution
#
# Each output element is a dot product of length `C_in·K·K`: that many multiply-adds. There are
# `C_out·H_out·W_out` output elements (per image), so
#
#     MACs  = C_in·K·K · C_out·H_out·W_out
#     FLOPs = 2 · C_in·K·K · C_out·H_out·W_out      (a multiply and an add counted separately)
#
# Lucid counts **MACs** for matrix products and convolutions (notebook 06). A 3x3 convolution
# from 3 to 16 channels on a 32x32 image with padding 1:

# %% tags=["nbval-check-output"]
x32 = lucid.random.randn(1, 3, 32, 32, dtype=lucid.Float32)
w16 = lucid.random.randn(16, 3, 3, 3, dtype=lucid.Float32)
b16 = lucid.random.randn(16, dtype=lucid.Float32)

with lucid.count_flops():
    y = F.conv2d(x32, w16, padding=1)
    y_bias = F.conv2d(x32, w16, b16, padding=1)

C_in, K, C_out, H_out, W_out = 3, 3, 16, *y.shape[2:]
macs = C_in * K * K * C_out * H_out * W_out
print("output:", y.shape)
print(f"lucid:                         {y.cost}")
print(f"C_in*K*K*C_out*H_out*W_out:    {macs:,} MACs")
print(f"FLOPs = 2 * that:              {y.cost.in_flops:,} FLOPs")
print("lucid's count matches the formula:", y.cost.macs == macs)
print(f"with a bias: {y_bias.cost} "
      "(the bias is a separate add: one FLOP per output element)")

# %% [markdown]
# ## 3. Pooling
#
# Pooling shrinks the image without any weights: **max pooling** keeps the largest value of each
# window, **average pooling** their mean. With a 2x2 window and stride 2, each side halves:

# %% tags=["nbval-check-output"]
img = lucid.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
print("input:\n", img.numpy()[0, 0])
print("max_pool2d(2):\n", F.max_pool2d(img, 2).numpy()[0, 0])
print("avg_pool2d(2):\n", F.avg_pool2d(img, 2).numpy()[0, 0])

# %% [markdown]
# Max pooling's backward sends each window's gradient to the one input that won; average
# pooling spreads it evenly. Counted in FLOPs: one per window element, no multiply-adds.
#
# ## 4. A small CNN on the digits
#
# LeNet-5 (`lucid.models.LeNet5`) is built for 32x32 images; our digits are 8x8, so we use the same
# pattern at a smaller size: convolution → ReLU → pool, twice, then a Linear layer.
# The digits now stay images: `(N, 1, 8, 8)`, one channel, pixel values scaled to [0, 1].

# %% tags=["nbval-check-output"]
from sklearn.datasets import load_digits

from lucid.data import DataLoader, TensorDataset, random_split
from lucid.optim import Adam

digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]   # (1797, 1, 8, 8)
labels = digits.target.astype(np.int64)

dataset = TensorDataset(images, labels)
train_set, test_set = random_split(dataset, [0.8, 0.2])
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
X_test, y_test = dataset.gather(test_set.indices)            # the whole test set, one batch
print(dataset)
print("train:", len(train_set), " test:", X_test.shape)

# %% tags=["nbval-check-output"]
cnn = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8x8 -> 4x4
    nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 4x4 -> 2x2
    nn.Flatten(),                                                             # 16*2*2 = 64
    nn.Linear(16 * 2 * 2, 10),
)
cnn_summary = summarize(cnn, (1, 1, 8, 8))

# %% [markdown]
# 1,898 parameters - almost five times fewer than the MLP of notebook 08 (8,970), because a 3x3
# filter is shared by every position of the image. The training loop is the one of notebook 08,
# with Adam:

# %%
optimizer = Adam(cnn.parameters(), lr=1e-2)
losses, epoch_losses = [], []
for epoch in trange(8, desc="training (epochs)"):
    cnn.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(cnn(xb), yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    epoch_losses.append(np.mean(losses[-len(train_loader):]))
    print(f"epoch {epoch}  mean train loss {epoch_losses[-1]:.4f}")

cnn.eval()
with lucid.no_grad():
    cnn_acc = (cnn(X_test).numpy().argmax(axis=1) == y_test.numpy()).mean()
print(f"test accuracy: {cnn_acc:.4f}")

# %% tags=["nbval-check-output"]
print("loss fell to under a fifth of epoch 0's:", epoch_losses[-1] < epoch_losses[0] / 5)
print("test accuracy >= 0.9:", cnn_acc >= 0.9)

# %%
lucid_viz.plot_loss(losses, title="Small CNN on digits: training loss per step")

# %% [markdown]
# ## 5. BatchNorm: training mode vs evaluation mode
#
# ResNet-18 puts a **BatchNorm** after every convolution. In **training** mode it normalises each
# channel with the mean and variance of the *current batch* (so its output has mean 0, std 1 per
# channel) and updates its running averages (buffers, notebook 07, momentum 0.1). In **evaluation**
# mode it uses the running averages instead, so one image's output never depends on what else is in
# the batch. Here a batch with mean about 5 and std about 2:

# %% tags=["nbval-check-output"]
bn = nn.BatchNorm2d(3)
batch = lucid.random.randn(8, 3, 4, 4, dtype=lucid.Float32) * 2 + 5

def channel_stats(t):
    a = t.numpy().astype(np.float64)
    mean, std = a.mean(axis=(0, 2, 3)), a.std(axis=(0, 2, 3))
    return (mean.round(2) + 0.0).tolist(), std.round(2).tolist()     # + 0.0: no "-0.0"

print("input          mean, std per channel:", *channel_stats(batch))
bn.train()
print("train mode     mean, std per channel:", *channel_stats(bn(batch)))
print("running_mean after one batch:", bn.running_mean.numpy().astype(np.float64).round(2).tolist())
bn.eval()
print("eval mode      mean, std per channel:", *channel_stats(bn(batch)))

# %% [markdown]
# After one batch the running mean has only moved 10% of the way from 0 towards 5, so in eval mode
# the output is far from normalised. After many training batches the running averages settle on the
# data's statistics and the two modes agree closely. Forgetting `model.eval()` before testing is a
# classic bug: the test results then depend on the batch size.

# %% [markdown]
# ## Exercises
#
# ### Exercise 10.1 · Shape, parameters and cost of a convolution
#
# A `Conv2d(48, 96, kernel_size=3, stride=2, padding=1, bias=False)` is applied to a
# `(1, 48, 18, 18)` input. Work out the output shape, the number of parameters of the layer, and
# the MACs of this call.

# %% tags=["solution"]
conv_shape = (1, 96, 9, 9)
conv_params = 41_472
conv_macs = 3_359_232

# %% tags=["check"]
conv_check = nn.Conv2d(48, 96, kernel_size=3, stride=2, padding=1, bias=False)
with lucid.count_flops():
    out_check = conv_check(lucid.zeros(1, 48, 18, 18, dtype=lucid.Float32))
check("Exercise 10.1 (shape)", conv_shape, out_check.shape,
      nudge="Section 2 computes an output shape for a convolution; do the same for each axis.",
      hint="padding adds to both sides, a stride of 2 keeps every second position, and the "
           "channels are the layer's output channels.")
check("Exercise 10.1 (parameters)", conv_params, sum(p.size for p in conv_check.parameters()),
      nudge="What does one output channel's filter cover?",
      hint="one 3x3 filter over all input channels per output channel, and no bias.")
check("Exercise 10.1 (MACs)", conv_macs, out_check.cost.macs,
      nudge="Section 2 counts a convolution's MACs per output number.",
      hint="section 2: C_in·K·K multiply-adds for each output number.")

# %% [markdown]
# ### Exercise 10.2 · Gradients through pooling
#
# `x_pool` below is one 4x4 image. Predict the gradient of `F.max_pool2d(x_pool, 2).sum()` and
# of `F.avg_pool2d(x_pool, 2).sum()` with respect to `x_pool`: two 4x4 arrays (lists of lists or
# NumPy arrays), written without running a backward pass.
#
# ```
# x_pool = [[1, 5, 2, 0],
#           [3, 4, 8, 1],
#           [0, 2, 6, 7],
#           [9, 1, 3, 5]]
# ```

# %% tags=["solution"]
grad_max_pool = [[0, 1, 0, 0],
                 [0, 0, 1, 0],
                 [0, 0, 0, 1],
                 [1, 0, 0, 0]]
grad_avg_pool = np.full((4, 4), 0.25)

# %% tags=["check"]
x_pool_check = [[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0],
                [0.0, 2.0, 6.0, 7.0], [9.0, 1.0, 3.0, 5.0]]
entries = "the gradient at each pixel of x_pool, row by row"
check_grad("Exercise 10.2 (max pooling)", grad_max_pool,
           lambda t: F.max_pool2d(t.reshape(1, 1, 4, 4), 2).sum(), x_pool_check,
           nudge="Section 3 says where max pooling's backward sends each window's gradient.",
           hint="each 2x2 window passes its gradient of 1 to its largest pixel only; every "
                "other pixel gets 0.",
           mistakes={"that is average pooling's gradient; max pooling picks one pixel":
                     np.full((4, 4), 0.25)})
check_grad("Exercise 10.2 (average pooling)", grad_avg_pool,
           lambda t: F.avg_pool2d(t.reshape(1, 1, 4, 4), 2).sum(), x_pool_check,
           nudge="Section 3: average pooling spreads each window's gradient.",
           hint="a window's output is the mean of its 4 pixels, so each pixel's share of the "
                "gradient is 1/4.")


# %% [markdown]
# ### Exercise 10.3 · The output size formula
#
# Write `conv_output_size(size, kernel, stride=1, padding=0)`: the length of one side of a
# convolution's output, for an input side of `size`. The check runs real convolutions and
# compares.

# %% tags=["solution"]
def conv_output_size(size, kernel, stride=1, padding=0):
    """How many positions a kernel takes along one side of the (padded) input."""
    return (size + 2 * padding - kernel) // stride + 1


# %% tags=["check"]
def measured_output_size(size, kernel, stride=1, padding=0):
    x = lucid.zeros(1, 1, size, size, dtype=lucid.Float32)
    w = lucid.zeros(1, 1, kernel, kernel, dtype=lucid.Float32)
    return F.conv2d(x, w, stride=stride, padding=padding).shape[-1]


check_function("Exercise 10.3", conv_output_size, measured_output_size,
               [(8, 3, 1, 1), (32, 7, 2, 3), (5, 3), (10, 4, 3, 0), (16, 1, 2, 0)],
               nudge="Slide a kernel along one side of the padded input and count its positions.",
               hint="count where the kernel's first row can start: from 0 to size + 2·padding "
                    "- kernel, every stride-th position.")


# %% [markdown]
# ### Exercise 10.4 · A cost formula for convolutions
#
# Write `conv_macs(c_in, c_out, kernel, h_out, w_out)`: the MACs of a `Conv2d(c_in, c_out,
# kernel)` without bias that produces an output of `h_out` x `w_out` positions (one image). The
# check measures real convolutions with `count_flops`.

# %% tags=["solution"]
def conv_macs(c_in, c_out, kernel, h_out, w_out):
    """MACs of a bias-free 2-D convolution, one image."""
    return c_out * h_out * w_out * c_in * kernel * kernel


# %% tags=["check"]
def measured_conv_macs(c_in, c_out, kernel, h_out, w_out):
    layer = nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2, bias=False)  # keeps h and w
    with lucid.count_flops():
        out = layer(lucid.zeros(1, c_in, h_out, w_out, dtype=lucid.Float32))
    return out.cost.macs


check_function("Exercise 10.4", conv_macs, measured_conv_macs,
               [(3, 8, 3, 5, 5), (16, 4, 1, 7, 6), (2, 6, 5, 4, 4)],
               nudge="Section 2 counts a convolution's MACs per output number.",
               hint="each output number costs c_in·kernel·kernel MACs, and there are "
                    "c_out·h_out·w_out output numbers.")

# %% [markdown]
# To go further, read the engine: `inspect.getsource` prints the code of any of its classes and
# functions (try `lucid.ops.conv.Windows` for im2col and col2im, or `lucid.nn.Conv2d`).
#
# **Next:** [11 · ResNet-18 and residual connections](11_resnet.ipynb): a deep network of
# convolutions, and the shortcut that lets it train.
