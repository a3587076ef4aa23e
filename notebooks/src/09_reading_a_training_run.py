# %% [markdown]
# # 09 · Reading a training run
#
# [Chapter 08](08_training_an_mlp.ipynb) trained an MLP on the digits and measured its test
# accuracy. A number at the end says little about *how* the training went, or what to change when
# it goes badly. In this chapter we:
#
# 1. train the same MLP again (one cell), this time recording the **gradient norm of every
#    layer** at every step;
# 2. read the gradient norms: what a healthy run looks like;
# 3. look at the mistakes: a confusion matrix and the misclassified digits;
# 4. save the trained weights and load them into a fresh model;
# 5. wrap the loop in a function and try variants: Adam, and a learning rate ten times too large.
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb) (the data, the loop) and
# [07 · Parameters, buffers and `state_dict`](07_parameters_buffers_state_dict.ipynb) (saving).

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
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
plt.rcParams.update({"font.size": 12})   # figures readable on a projector

# %% [markdown]
# ## 1. The run of chapter 08, in one cell
#
# The same data, split, standardisation, model, optimizer and schedule as in chapter 08, with one
# line added to the loop: between `backward()` and `step()`, `lucid_viz.grad_norms(model)`
# records the **gradient norm of each layer** (a dict `{layer: ||grad||}`), the size of the push
# every layer is about to get. (The validation set is not needed here.)

# %%
digits = load_digits()
X_all = digits.data.astype(np.float32)
y_all = digits.target.astype(np.int64)
train_idx, val_idx, test_idx = (part.indices for part in
                                random_split(range(len(y_all)), [0.7, 0.1, 0.2]))
mean, std = X_all[train_idx].mean(axis=0), X_all[train_idx].std(axis=0)
std[std == 0] = 1.0
X_std = (X_all - mean) / std
X_test, y_test = lucid.Tensor(X_std[test_idx]), lucid.Tensor(y_all[test_idx])
train_loader = DataLoader(TensorDataset(X_std[train_idx], y_all[train_idx]), batch_size=32,
                          shuffle=True)

EPOCHS = 10
model = MLP(64, [64, 64], 10)
optimizer = SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = CosineAnnealingLR(optimizer, T_max=EPOCHS)
train_losses, norm_history = [], []
for _ in trange(EPOCHS, desc="training (epochs)"):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        norm_history.append(lucid_viz.grad_norms(model))   # new: the gradient size per layer
        optimizer.step()
        train_losses.append(loss.item())
    scheduler.step()

model.eval()
with lucid.no_grad():
    test_pred = model(X_test).numpy().argmax(axis=1)
accuracy = (test_pred == y_test.numpy()).mean()
print(f"test accuracy: {accuracy:.4f}")

# %% tags=["nbval-check-output"]
print("gradient-norm records:", len(norm_history), " layers:", list(norm_history[0]))
print("test accuracy >= 0.95:", accuracy >= 0.95)

# %% [markdown]
# ## 2. Gradient norms per layer
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
#   training diverges). Chapter 11 shows the fan and the cure (residual connections); Exercise 9.2
#   below shows what a too-large learning rate does to these lines.
#
# The first and the last recorded step, as numbers:

# %%
for when, norms in [("first step", norm_history[0]), ("last step", norm_history[-1])]:
    print(f"{when:10s}", {layer: round(value, 3) for layer, value in norms.items()})

# %% [markdown]
# ## 3. Where does it go wrong?
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
# ## 4. Save the trained model, load it into a fresh one
#
# As in notebook 07: `lucid.save` writes the `state_dict` (no pickle), and a freshly built
# `MLP` with the same architecture takes the weights back. The reloaded model must give exactly the
# same predictions - not close, identical.

# %% tags=["nbval-check-output"]
import os
import shutil
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
shutil.rmtree(folder)


# %% [markdown]
# A real project would save the standardisation statistics (`mean`, `std`) next to the weights:
# the model only makes sense on inputs prepared the same way. (Registering them as buffers of a
# small module, chapter 07, would put them in the `state_dict` itself.)
#
# ## 5. Variants of the training run
#
# To try variants quickly, we wrap *the same loop* in a function (nothing new inside it: the five
# steps, the scheduler, the recorded norms). The exercises below use it.

# %%
def fit(model, optimizer, epochs=EPOCHS):
    """The loop of section 1, returning the per-step losses and norms and the test accuracy."""
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
# ### Exercise 9.1 · Adam instead of SGD
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
check("Exercise 9.1", adam_reaches_95, adam_acc >= 0.95,
      nudge="What does Adam do to each parameter's step that SGD does not?",
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
# ### Exercise 9.2 · Ten times the learning rate
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
check("Exercise 9.2", hot_above_half, hot_acc > 0.5,
      nudge="Section 2 reads the gradient norms: what does a step far too large do?",
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
# ### Exercise 9.3 · Accuracy per digit
#
# Write `per_class_accuracy(confusion)`: for a confusion matrix laid out as in section 3 (row =
# true class, column = the model's answer), return a NumPy array with, for every class, the
# fraction of its images that the model got right. The check compares it with a count over
# made-up predictions, on a few matrices.

# %% tags=["solution"]
def per_class_accuracy(confusion):
    """For each true class: the fraction of its images that the model got right."""
    return np.diag(confusion) / confusion.sum(axis=1)


# %% tags=["check"]
def counted(true, pred, classes):
    """The fraction of each class's images predicted right, counted one by one."""
    true, pred = np.asarray(true), np.asarray(pred)
    return np.array([np.mean(pred[true == c] == c) for c in range(classes)])


def confusion_of(true, pred, classes):
    m = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(m, (np.asarray(true), np.asarray(pred)), 1)
    return m


def by_columns(true, pred, classes):  # precision: right answers over the times a class was said
    m = confusion_of(true, pred, classes)
    return np.diag(m) / m.sum(axis=0)


label_sets = [([0, 0, 1, 1, 1, 2], [0, 1, 1, 1, 2, 2], 3),
              ([0, 1, 2, 3, 3, 3, 2, 1], [0, 1, 3, 3, 2, 3, 2, 0], 4),
              ([1, 0, 1, 1, 0], [1, 0, 0, 1, 1], 2)]
check_function("Exercise 9.3", lambda true, pred, classes: per_class_accuracy(
                   confusion_of(true, pred, classes)), counted, label_sets,
               nudge="Section 3: each row holds all the images of one true digit.",
               hint="the right answers of class c sit on the diagonal, confusion[c, c]; divide "
                    "them by the row's total, confusion.sum(axis=1).",
               mistakes={"that divides by the column sums: that is the fraction of the model's "
                         "answers 'c' that were right (precision), not of the c's it got right":
                         by_columns})

# %% [markdown]
# ### Exercise 9.4 · What a checkpoint holds
#
# Section 4 saved `model.state_dict()`. For `MLP(64, [32, 16, 8], 10)` (four Linear layers), how
# many entries (named tensors) does the `state_dict` hold, and how many numbers in all?

# %% tags=["solution"]
state_entries = 8
state_numbers = 64 * 32 + 32 + 32 * 16 + 16 + 16 * 8 + 8 + 8 * 10 + 10

# %% tags=["check"]
state_check = MLP(64, [32, 16, 8], 10).state_dict()
nudge = "Section 4 prints the names a state_dict holds."
check("Exercise 9.4 (entries)", state_entries, len(state_check), nudge=nudge,
      hint="each Linear layer has a weight and a bias; the ReLUs have nothing to save.",
      mistakes={"that is one per layer; each layer saves a weight and a bias": 4})
check("Exercise 9.4 (numbers)", state_numbers, sum(v.size for v in state_check.values()),
      nudge=nudge, hint="a Linear(a, b) holds a·b weights and b biases; add the four layers.",
      mistakes={"that leaves out the biases": 64 * 32 + 32 * 16 + 16 * 8 + 8 * 10})

# %% [markdown]
# **Next:** [10 · Convolutional networks](10_convolutional_networks.ipynb) replaces the MLP by
# convolutions; [chapter 11](11_resnet.ipynb) builds ResNet-18 from them.
