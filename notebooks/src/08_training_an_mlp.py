# %% [markdown]
# # 08 · Training an MLP on real digits
#
# Until now every tensor was a handful of made-up numbers. In this chapter we train a real
# classifier on real data: the **1,797 handwritten digits** (8x8 grey images) that ship with
# scikit-learn, so nothing is downloaded. Everything we met so far comes together:
#
# 1. load the digits and look at a few;
# 2. split them (`lucid.data.random_split`), standardise, and batch them (`TensorDataset`,
#    `DataLoader`);
# 3. build an MLP, a loss (`cross_entropy`), an optimizer (SGD with momentum) and a learning-rate
#    schedule;
# 4. write the **training loop** out in full: `zero_grad` → forward → loss → `backward` → `step`;
# 5. watch the loss curves;
# 6. measure the test accuracy, once, at the very end.
#
# [Chapter 09](09_reading_a_training_run.ipynb) then reads the run more closely: the gradient norm
# of every layer, the mistakes, saving the weights, and what other optimizers and learning rates
# do.
#
# **You need:** [07 · Parameters, buffers and `state_dict`](07_parameters_buffers_state_dict.ipynb)
# (modules, saving), and [02](02_autograd_and_the_dag.ipynb) for `backward()` and `zero_grad`.

# %%
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn.functional as F
import lucid_viz
from lucid.data import DataLoader, TensorDataset, random_split
from lucid.models import MLP
from lucid.optim import SGD
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid_viz.exercises import check, check_function

lucid.random.seed(0)      # parameter inits, DataLoader shuffling, random_split
np.random.seed(0)         # NumPy's global generator, for anything that reaches for it

# %% [markdown]
# ## 1. The data: 8x8 digits
#
# `load_digits()` returns a 1,797 x 64 matrix (each row is one image, its 8x8 pixels in a row) with
# pixel values from 0 (white) to 16 (black), and the labels 0-9. The classes are roughly balanced.

# %% tags=["nbval-check-output"]
from sklearn.datasets import load_digits

digits = load_digits()
X_all = digits.data.astype(np.float32)      # (1797, 64): one flattened 8x8 image per row
y_all = digits.target.astype(np.int64)      # (1797,): the digit, 0-9

print("images:", X_all.shape, X_all.dtype, " labels:", y_all.shape, y_all.dtype)
print("pixel values from", X_all.min(), "to", X_all.max())
print("images per class:", np.bincount(y_all).tolist())

# %%
import matplotlib.pyplot as plt

plt.rcParams.update({"font.size": 12})   # figures readable on a projector
fig, axes = plt.subplots(1, 10, figsize=(9, 1.4))
for digit, ax in enumerate(axes):
    first = np.flatnonzero(y_all == digit)[0]
    ax.imshow(X_all[first].reshape(8, 8), cmap="gray_r")
    ax.set_title(str(digit))
    ax.axis("off")
plt.show()

# %% [markdown]
# ## 2. Split, standardise, batch
#
# We keep three disjoint parts: **train** (70%, the model learns from it), **validation** (10%, we
# watch it during training) and **test** (20%, touched once at the very end).
# `random_split` works on anything with a length; we split the *sample numbers*
# `0 ... 1796`, so that we can compute the standardisation statistics on the training part only
# (the test images must not leak into anything we fit). `lucid.random.seed(0)` in the first cell
# makes the split the same on every run.

# %% tags=["nbval-check-output"]
parts = random_split(range(len(y_all)), [0.7, 0.1, 0.2])
train_idx, val_idx, test_idx = (part.indices for part in parts)
print("train / validation / test:", len(train_idx), len(val_idx), len(test_idx))
print("no sample in two parts:",
      len(set(train_idx) | set(val_idx) | set(test_idx)) == len(y_all))

# %% [markdown]
# **Standardise** each pixel: subtract its mean and divide by its standard deviation, both measured
# on the training images. Every input then has a similar scale, which keeps the first layer's
# gradients balanced. A few corner pixels are always 0 in the training set (std 0); we leave those
# at 0 instead of dividing by zero.

# %% tags=["nbval-check-output"]
mean = X_all[train_idx].mean(axis=0)
std = X_all[train_idx].std(axis=0)
print("pixels that never change in training:", int((std == 0).sum()))
std[std == 0] = 1.0
X_std = (X_all - mean) / std

X_train, y_train = X_std[train_idx], y_all[train_idx]
X_val, y_val = lucid.Tensor(X_std[val_idx]), lucid.Tensor(y_all[val_idx])
X_test, y_test = lucid.Tensor(X_std[test_idx]), lucid.Tensor(y_all[test_idx])
print("training pixels now have mean", round(float(X_train.mean()), 3) + 0.0,
      "and std", round(float(X_train[:, std != 1.0].std()), 3))

# %% [markdown]
# A `TensorDataset` pairs the images with their labels (sample `i` is `(X[i], y[i])`), and a
# `DataLoader` hands them out in shuffled mini-batches of 32 - a fresh order every epoch, drawn
# from `lucid.random`, so the seed fixes it. The validation and test sets are small enough to
# evaluate in one go, so they stay plain tensors.

# %% tags=["nbval-check-output"]
train_set = TensorDataset(X_train, y_train)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
print(train_set)
print(train_loader)

xb, yb = next(iter(train_loader))
print("one batch:", xb.shape, xb.dtype, "and", yb.shape, yb.dtype)

# %% [markdown]
# ## 3. Model, loss, optimizer, schedule
#
# The model is `lucid.models.MLP(64, [64, 64], 10)`: Linear 64→64, ReLU, Linear 64→64, ReLU,
# Linear 64→10. Its 10 outputs are **logits**, one score per digit; the prediction is the largest.

# %% tags=["nbval-check-output"]
model = MLP(64, [64, 64], 10)
print(model)
print("parameters:", sum(p.size for p in model.parameters()))

# %% [markdown]
# `F.cross_entropy(logits, labels)` turns the logits into probabilities (softmax) and averages
# `-log p(correct class)` over the batch. An untrained model guesses roughly uniformly, p ≈ 1/10,
# so the first loss should be close to `ln 10 ≈ 2.303`: a quick sanity check worth doing before
# every training run.

# %% tags=["nbval-check-output"]
with lucid.no_grad():
    first_loss = F.cross_entropy(model(xb), yb).item()
print(f"loss before training: {first_loss:.2f}   ln(10) = {np.log(10):.2f}")

# %% [markdown]
# The optimizer is **SGD with momentum** 0.9 (each step follows a running average of the recent
# gradients, which smooths out the noise of small batches), at learning rate 0.05. A **scheduler**
# changes the learning rate from epoch to epoch: `CosineAnnealingLR` lowers it along half a cosine,
# from 0.05 down to 0 at the last epoch - big steps early, fine steps at the end. A schedule is a
# formula of the epoch number, so we can print it before training (on a throwaway optimizer):

# %% tags=["nbval-check-output"]
EPOCHS = 10

demo = SGD(MLP(64, [64, 64], 10).parameters(), lr=0.05, momentum=0.9)
demo_sched = CosineAnnealingLR(demo, T_max=EPOCHS)
rates = []
for _ in range(EPOCHS):
    rates.append(round(demo.param_groups[0]["lr"], 4))
    demo_sched.step()
print("learning rate per epoch:", rates)

# %% [markdown]
# ## 4. The training loop, in full
#
# Every deep-learning training loop is these five lines inside two `for` loops:
#
# 1. `optimizer.zero_grad()` - gradients *accumulate* (notebook 02), so clear last step's;
# 2. `logits = model(xb)` - forward: build the graph;
# 3. `loss = F.cross_entropy(logits, yb)` - one number saying how wrong we are;
# 4. `loss.backward()` - fill `p.grad` for every parameter;
# 5. `optimizer.step()` - move every parameter a little against its gradient.
#
# After each epoch we switch to `model.eval()` and measure the validation loss inside
# `lucid.no_grad()`: no graph is recorded, because we will not call `backward` on it. (`train()` and
# `eval()` change nothing for this MLP, but layers such as Dropout and BatchNorm behave differently
# in the two modes - notebook 10 shows BatchNorm - so make it a habit.)
#
# The printed numbers depend on floating-point details of this machine, so this cell is not checked.

# %%
optimizer = SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = CosineAnnealingLR(optimizer, T_max=EPOCHS)

train_losses, val_losses = [], []
for epoch in trange(EPOCHS, desc="training (epochs)"):
    model.train()                                    # training mode
    for xb, yb in train_loader:
        optimizer.zero_grad()                        # 1. clear the old gradients
        logits = model(xb)                           # 2. forward
        loss = F.cross_entropy(logits, yb)           # 3. the loss
        loss.backward()                              # 4. backward: every p.grad
        optimizer.step()                             # 5. update
        train_losses.append(loss.item())
    lr = optimizer.param_groups[0]["lr"]
    scheduler.step()                                 # the next epoch's learning rate

    model.eval()                                     # evaluation mode
    with lucid.no_grad():                            # no graph, no backward
        val_logits = model(X_val)
        val_loss = F.cross_entropy(val_logits, y_val).item()
        val_acc = (val_logits.numpy().argmax(axis=1) == y_val.numpy()).mean()
    val_losses.append(val_loss)
    epoch_loss = np.mean(train_losses[-len(train_loader):])
    print(f"epoch {epoch:2d}  lr {lr:.4f}  train loss {epoch_loss:.4f}  "
          f"val loss {val_loss:.4f}  val accuracy {val_acc:.3f}")

# %% [markdown]
# How much work was that? The counts are exact, whatever the floats did:

# %% tags=["nbval-check-output"]
print("batches per epoch:", len(train_loader), " optimizer steps:", len(train_losses))
print("the validation logits have a graph:", val_logits.requires_grad)

# %% [markdown]
# ## 5. Loss curves
#
# `lucid_viz.plot_loss` draws the training loss of every step (noisy: each point is one batch of
# 32) and, given `val=`, the validation loss of every epoch on the same axis.
#
# Read the picture: both losses fall fast in the first two epochs. Later the training loss keeps
# falling towards 0 while the validation loss flattens out above it: the model starts to memorise
# its training images (**overfitting**). The validation curve is the honest one; the cosine schedule
# and the small number of epochs keep the gap small here.

# %%
lucid_viz.plot_loss(train_losses, val=val_losses, log=True,
                    title="MLP on digits: cross-entropy per step (train) and per epoch (val)")

# %% [markdown]
# ## 6. Test accuracy
#
# The test set was not used for anything so far. One pass, in evaluation mode and without a graph:

# %%
model.eval()
with lucid.no_grad():
    test_pred = model(X_test).numpy().argmax(axis=1)
correct = int((test_pred == y_test.numpy()).sum())
accuracy = correct / len(test_pred)
print(f"test accuracy: {accuracy:.4f}  ({correct} of {len(test_pred)} digits)")

# %% [markdown]
# The exact figure above can move by a digit or two on another machine (the BLAS library's
# floating-point rounding differs between CPUs, and training amplifies it), so the checked
# statement is a band: a 64-64 MLP on these digits should get at least 95% right.

# %% tags=["nbval-check-output"]
print("test accuracy >= 0.95:", accuracy >= 0.95)

# %% [markdown]
# ## Exercises
#
# ### Exercise 8.1 · The loss before training
#
# Section 3 expected an untrained 10-class model to start near `ln 10`. What cross-entropy do you
# expect from a model that gives the **same** score to each of **4** classes, whatever the input?
# Give the number (to 4 digits).

# %% tags=["solution"]
uniform_loss = 1.3863

# %% tags=["check"]
logits_4 = lucid.zeros(5, 4)                 # equal scores: every class gets p = 1/4
labels_4 = lucid.Tensor(np.array([0, 3, 1, 2, 3]))
check("Exercise 8.1", uniform_loss, F.cross_entropy(logits_4, labels_4), rtol=1e-4,
      nudge="Equal scores: what probabilities does the softmax give?",
      hint="equal scores make every probability 1/4, and the loss is -log p(correct class).")


# %% [markdown]
# ### Exercise 8.2 · Standardise with the training statistics
#
# Write `standardise(train, other)` for NumPy arrays of images, one per row: it returns `other`
# standardised the way section 2 does it - each column (pixel) minus its mean, divided by its
# standard deviation, both measured on `train` only, and a column whose standard deviation in
# `train` is 0 divided by 1 instead. The check compares it with section 2's recipe on a few
# small arrays.

# %% tags=["solution"]
def standardise(train, other):
    """other, standardised with the mean and std of each column of train."""
    mean, std = train.mean(axis=0), train.std(axis=0)
    std = np.where(std == 0, 1.0, std)
    return (other - mean) / std


# %% tags=["check"]
def recipe(train, other):  # section 2's cell, for any arrays
    mean, std = train.mean(axis=0), train.std(axis=0)
    std[std == 0] = 1.0
    return (other - mean) / std


def own_statistics(train, other):  # the leak: statistics of the data being standardised
    return recipe(other, other)


cases = [(np.array([[0.0, 2.0], [2.0, 4.0], [4.0, 9.0]]), np.array([[1.0, 1.0], [3.0, 5.0]])),
         (np.array([[5.0, 0.0, 1.0], [7.0, 0.0, 3.0]]), np.array([[6.0, 2.0, 2.0]])),
         (np.arange(12.0).reshape(4, 3) ** 2, np.arange(6.0).reshape(2, 3))]
check_function("Exercise 8.2", standardise, recipe, cases,
               nudge="Section 2 standardises every image with statistics of the training part "
                     "only.",
               hint="mean and std along axis=0 of train (one per pixel); set the zero stds to "
                    "1 (np.where); then (other - mean) / std.",
               mistakes={"those are other's own statistics: the mean and std must come from "
                         "train": own_statistics})

# %% [markdown]
# ### Exercise 8.3 · How many steps?
#
# The training part of section 2 has 1,257 images. With `DataLoader(train_set, batch_size=50,
# shuffle=True)` and 12 epochs, how many optimizer steps does the loop of section 4 take? And
# with `drop_last=True` (the last, smaller batch of every epoch left out)?

# %% tags=["solution"]
steps_12_epochs = 12 * 26
steps_drop_last = 12 * 25

# %% tags=["check"]
images_check = TensorDataset(np.zeros((1257, 1)), np.zeros(1257))
nudge = "Section 4 counts the batches per epoch and the optimizer steps of its own run."
check("Exercise 8.3", steps_12_epochs, 12 * len(DataLoader(images_check, batch_size=50)),
      nudge=nudge, hint="one step per batch; an epoch has 1257 / 50 batches, rounded up: the "
                        "last batch holds what is left.",
      mistakes={"that is the number of batches in one epoch; the loop runs 12": 26,
                "that rounds the batches down: the last, smaller batch is a step too": 300})
check("Exercise 8.3 (drop_last)", steps_drop_last,
      12 * len(DataLoader(images_check, batch_size=50, drop_last=True)),
      nudge=nudge, hint="drop_last leaves out the last, smaller batch: 1257 // 50 batches per "
                        "epoch.")


# %% [markdown]
# ### Exercise 8.4 · Implement cross-entropy
#
# Write `cross_entropy(logits, labels)` for NumPy arrays: `logits` of shape `(N, C)`, `labels`
# of shape `(N,)` holding class numbers. Turn each row into probabilities with a softmax, take
# `-log` of the probability of the right class, and average over the rows (section 3). The
# check compares with `F.cross_entropy`, including a row with a very large score.

# %% tags=["solution"]
def cross_entropy(logits, labels):
    """Mean over the rows of -log softmax(logits)[row, label]."""
    shifted = logits - logits.max(axis=1, keepdims=True)   # exp() of big scores overflows
    log_p = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -log_p[np.arange(len(labels)), labels].mean()


# %% tags=["check"]
def lucid_cross_entropy(logits, labels):
    return F.cross_entropy(lucid.Tensor(logits), lucid.Tensor(labels))


check_function("Exercise 8.4", cross_entropy, lucid_cross_entropy,
               [(np.array([[2.0, 1.0, 0.1]]), np.array([0])),
                (np.array([[0.5, -1.0], [3.0, 3.0], [0.0, 4.0]]), np.array([1, 0, 1])),
                (np.array([[1000.0, 0.0, -5.0], [1.0, 2.0, 3.0]]), np.array([0, 2]))],
               nudge="The softmax turns scores into probabilities; write it with NumPy first, "
                     "then test a very large score.",
               hint="softmax(x)_c = exp(x_c) / sum_j exp(x_j). For large scores, subtract each "
                    "row's largest score first: the softmax does not change, and exp() no "
                    "longer overflows.")

# %% [markdown]
# **Next:** [09 · Reading a training run](09_reading_a_training_run.ipynb): the gradient norm of
# every layer, the mistakes, saving the weights, and what Adam and a too-large learning rate do.
