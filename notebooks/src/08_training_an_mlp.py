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
# 5. watch the loss curves and the **gradient norm of every layer**;
# 6. measure test accuracy, look at the mistakes, and save / reload the trained weights.
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
from lucid.optim import SGD, Adam
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
# Between 4 and 5 we also record the **gradient norm of each layer** with
# `lucid_viz.grad_norms(model)` (a dict `{layer: ||grad||}`), to look at in section 6.
#
# After each epoch we switch to `model.eval()` and measure the validation loss inside
# `lucid.no_grad()`: no graph is recorded, because we will not call `backward` on it. (`train()` and
# `eval()` change nothing for this MLP, but layers such as Dropout and BatchNorm behave differently
# in the two modes - notebook 09 shows BatchNorm - so make it a habit.)
#
# The printed numbers depend on floating-point details of this machine, so this cell is not checked.

# %%
optimizer = SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = CosineAnnealingLR(optimizer, T_max=EPOCHS)

train_losses, val_losses, norm_history = [], [], []
for epoch in trange(EPOCHS, desc="training (epochs)"):
    model.train()                                    # training mode
    for xb, yb in train_loader:
        optimizer.zero_grad()                        # 1. clear the old gradients
        logits = model(xb)                           # 2. forward
        loss = F.cross_entropy(logits, yb)           # 3. the loss
        loss.backward()                              # 4. backward: every p.grad
        norm_history.append(lucid_viz.grad_norms(model))   # (gradient size per layer)
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
print("gradient-norm records:", len(norm_history), " layers:", list(norm_history[0]))
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
# ## 6. Gradient norms per layer
#
# `norm_history` holds one dict per step: the L2 norm of the gradient of each layer's parameters
# (weight and bias together). The layers are named by their module path: `0`, `2` and `4` are
# the three Linear layers of the `Sequential` (`1` and `3` are ReLUs, which have no parameters).
# `lucid_viz.plot_grad_norms` draws one line per layer, the first layer darkest.

# %%
lucid_viz.plot_grad_norms(norm_history, title="MLP on digits: gradient norm per layer")

# %% [markdown]
# What the picture shows:
#
# * **The size of each update.** SGD moves a layer by `lr x gradient`, so this is (up to the
#   momentum and the learning rate) how hard each layer is being pushed, step by step.
# * **Training settling down.** The norms grow during the first epoch or two, while the loss falls
#   steeply and the weights move fast, then shrink by two orders of magnitude as the model fits
#   the training set (a fitted example contributes almost no gradient). The jagged spikes are
#   single batches that contained a hard example.
# * **A healthy network.** The three lines stay close together all the way. In a
#   *deep* network without care, the lines fan out: the norms of the first layers collapse towards
#   0 (**vanishing** gradients - those layers stop learning) or blow up (**exploding** gradients -
#   training diverges). Chapter 10 shows the fan and the cure (residual connections); Exercise 8.3
#   below shows what a too-large learning rate does to these lines.
#
# The first and the last recorded step, as numbers:

# %%
for when, norms in [("first step", norm_history[0]), ("last step", norm_history[-1])]:
    print(f"{when:10s}", {layer: round(value, 3) for layer, value in norms.items()})

# %% [markdown]
# ## 7. Test accuracy
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
# ## 8. Where does it go wrong?
#
# A **confusion matrix** counts, for every true digit (row), what the model answered (column):
# the diagonal holds the correct answers, anything off it is a mistake.

# %%
confusion = np.zeros((10, 10), dtype=np.int64)
np.add.at(confusion, (y_test.numpy(), test_pred), 1)

print("true \\ predicted" + "".join(f"{d:4d}" for d in range(10)))
for digit, row in enumerate(confusion):
    print(f"{digit:16d}" + "".join(f"{n:4d}" if n else "   ." for n in row))

# %% [markdown]
# And the misclassified images themselves. Many are genuinely ambiguous at 8x8 pixels.

# %%
wrong = np.flatnonzero(test_pred != y_test.numpy())
X_test_pixels = X_all[test_idx]                     # the raw pixels, for display
fig, axes = plt.subplots(1, min(len(wrong), 8), figsize=(9, 2.2), squeeze=False)
for ax, i in zip(axes[0], wrong):
    ax.imshow(X_test_pixels[i].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"true {y_test.numpy()[i]}\npred {test_pred[i]}", fontsize=11)
    ax.axis("off")
plt.show()

# %% [markdown]
# ## 9. Save the trained model, load it into a fresh one
#
# As in notebook 07: `lucid.save` writes the `state_dict` (no pickle), and a freshly built
# `MLP` with the same architecture takes the weights back. The reloaded model must give exactly the
# same predictions - not close, identical.

# %% tags=["nbval-check-output"]
import os
import tempfile

folder = tempfile.mkdtemp()
path = os.path.join(folder, "digits_mlp.lucid")
lucid.save(model.state_dict(), path)

fresh = MLP(64, [64, 64], 10)                       # new random weights
fresh.load_state_dict(lucid.load(path))
fresh.eval()
with lucid.no_grad():
    fresh_logits = fresh(X_test).numpy()
    model_logits = model(X_test).numpy()

print("saved:", list(lucid.load(path)))
print("identical logits:", np.array_equal(fresh_logits, model_logits))
print("identical predictions:", np.array_equal(fresh_logits.argmax(axis=1), test_pred))

# %%
import shutil

shutil.rmtree(folder)


# %% [markdown]
# A real project would save the standardisation statistics (`mean`, `std`) next to the weights:
# the model only makes sense on inputs prepared the same way. (Registering them as buffers of a
# small module, chapter 07, would put them in the `state_dict` itself.)
#
# ## 10. Variants of the training run
#
# To try variants quickly, we wrap *the same loop* in a function (nothing new inside it: the five
# steps, the scheduler, the recorded norms). The exercises below use it.

# %%
def fit(model, optimizer, epochs=EPOCHS):
    """The loop of section 4, returning the per-step losses and norms and the test accuracy."""
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    losses, norms = [], []
    for _ in range(epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            norms.append(lucid_viz.grad_norms(model))
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    model.eval()
    with lucid.no_grad():
        pred = model(X_test).numpy().argmax(axis=1)
    return losses, norms, (pred == y_test.numpy()).mean()


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
# ### Exercise 8.2 · Adam instead of SGD
#
# Adam (`Adam(model.parameters(), lr=3e-3)`) gives every parameter its own step size, from
# running averages of its gradient and of the gradient's square. Trained with Adam instead of SGD
# (everything else the same), will the MLP still reach **95%** test accuracy? Answer `True` or
# `False`. The check trains it (a few seconds).

# %% tags=["solution"]
adam_reaches_95 = True

# %% tags=["check"]
lucid.random.seed(0)                                 # a fresh, repeatable start
adam_model = MLP(64, [64, 64], 10)
adam_losses, adam_norms, adam_acc = fit(adam_model, Adam(adam_model.parameters(), lr=3e-3))
check("Exercise 8.2", adam_reaches_95, adam_acc >= 0.95,
      nudge="Which learning rates do the runs of section 6 use?",
      hint="Adam's usual learning rate (1e-3 to 3e-3) works on most problems without tuning, "
           "and this one is small.")

# %% tags=["answer"]
steps = len(train_loader)
print(f"Adam test accuracy: {adam_acc:.4f}")
print(f"mean loss in epoch 0: SGD {np.mean(train_losses[:steps]):.3f}, "
      f"Adam {np.mean(adam_losses[:steps]):.3f}")

# %% tags=["nbval-check-output", "answer"]
print("Adam test accuracy >= 0.95:", adam_acc >= 0.95)

# %% [markdown] tags=["answer"]
# Adam reaches the same accuracy band, and its first-epoch loss (printed above) is in the same
# range as SGD's. On a problem this small neither optimizer is clearly better; Adam's advantage is
# that one learning rate (around 1e-3 to 3e-3) works on many problems without tuning, because it
# scales every parameter's step by the size of that parameter's recent gradients.

# %% [markdown]
# ### Exercise 8.3 · Ten times the learning rate
#
# Back to SGD with momentum 0.9, but with `lr=0.5` instead of 0.05. Will the test accuracy
# after training be **above 50%**? Answer `True` or `False`, and think about what the gradient
# norms will do. The check trains it.

# %% tags=["solution"]
hot_above_half = False

# %% tags=["check"]
lucid.random.seed(0)
hot_model = MLP(64, [64, 64], 10)
hot_losses, hot_norms, hot_acc = fit(hot_model, SGD(hot_model.parameters(), lr=0.5,
                                                    momentum=0.9))
check("Exercise 8.3", hot_above_half, hot_acc > 0.5,
      nudge="Compare the loss curves of section 6: what does a too large step do?",
      hint="steps ten times larger overshoot. What happens to a ReLU whose input a huge update "
           "has pushed below 0 for every image?")


# %% tags=["answer"]
def largest(norms):
    return max(max(step.values()) for step in norms)

first_layer = np.array([step["0"] for step in hot_norms])
alive = np.flatnonzero(first_layer > 1e-12)          # steps where layer 0 still gets a gradient
with lucid.no_grad():
    hot_pred = hot_model(X_test).numpy().argmax(axis=1)
print(f"largest gradient norm: {largest(hot_norms):.1f}  (lr=0.05: {largest(norm_history):.1f})")
print(f"layer 0 gets no gradient (< 1e-12) after step {alive[-1]} (of {len(hot_norms)})")
print(f"final loss {hot_losses[-1]:.3f} (ln 10 = 2.303), test accuracy {hot_acc:.3f}")
print("digits it predicts on the test set:", np.unique(hot_pred).tolist())

# %% tags=["nbval-check-output", "answer"]
print("lr=0.5 test accuracy < 0.5:", hot_acc < 0.5)

# %% tags=["answer"]
# ylim keeps the axis readable: a zero norm has no place on a log scale, it drops out
lucid_viz.plot_grad_norms(hot_norms, title="lr = 0.5: gradient norm per layer",
                          ylim=(1e-6, 1e3))


# %% [markdown] tags=["answer"]
# With `lr=0.5` the steps overshoot: the gradient norms **explode** (far above anything the
# lr=0.05 run saw), and the huge updates push the pre-activations of the hidden units to negative
# values for every input. A ReLU whose input is always negative outputs 0 and passes back a
# gradient of 0 - it is **dead**. Within the first two epochs every hidden unit is dead: from the
# step printed above on, layers `0` and `2` get no gradient (their lines drop out of the plot) and
# never move again. Only the
# last layer's *bias* still learns, and the best it can do without any information from the image
# is to predict the class frequencies: the loss sits at about `ln 10`, and the model answers the
# same digit for every image - chance-level accuracy. The gradient-norm plot shows the collapse
# long before anyone would look at the accuracy, which is why it is worth recording.
#
# (The exact step of the collapse can differ on another machine; the collapse itself does not.)

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
# **Next:** [09 · Convolutional networks](09_convolutional_networks.ipynb) replaces the MLP by
# convolutions; [chapter 10](10_resnet.ipynb) builds ResNet-18 from them.
