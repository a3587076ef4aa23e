"""Build (and execute) notebooks 07-08 from the cell lists below.

    .venv/bin/python notebooks/_build/build_07_08.py [07 08]

Cells tagged nbval-check-output are checked by nbval; keep their output
deterministic (no timings, addresses or temp paths). Training results are floats that depend on
the BLAS kernels of the machine, so checked cells print *bands* (``accuracy >= 0.95: True``) and
the exact numbers sit in unchecked cells next to them.
"""

from __future__ import annotations

from nbbuild import code, main, md


def setup(*imports: str) -> str:
    """The first code cell: imports and the seeds (Lucid's generator and NumPy's)."""
    return "\n".join(imports) + """

lucid.random.seed(0)      # parameter inits, DataLoader shuffling, random_split
np.random.seed(0)         # NumPy's global generator, for anything that reaches for it
"""


# ------------------------------------------------------------------------------------ 07
NB07 = [
    md("""
# 07 · Training an MLP on real digits

Until now every tensor was a handful of made-up numbers. In this chapter we train a real
classifier on real data: the **1,797 handwritten digits** (8x8 grey images) that ship with
scikit-learn, so nothing is downloaded. Everything we met so far comes together:

1. load the digits and look at a few;
2. split them (`lucid.data.random_split`), standardise, and batch them (`TensorDataset`,
   `DataLoader`);
3. build an MLP, a loss (`cross_entropy`), an optimizer (SGD with momentum) and a learning-rate
   schedule;
4. write the **training loop** out in full: `zero_grad` → forward → loss → `backward` → `step`;
5. watch the loss curves and the **gradient norm of every layer**;
6. measure test accuracy, look at the mistakes, and save / reload the trained weights.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code(setup("import numpy as np", "", "import lucid", "import lucid.nn.functional as F",
               "import lucid_viz", "from lucid.data import DataLoader, TensorDataset, "
               "random_split", "from lucid.models import MLP",
               "from lucid.optim import SGD, Adam",
               "from lucid.optim.lr_scheduler import CosineAnnealingLR",
               "from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere")),
    md("""
## 1. The data: 8x8 digits

`load_digits()` returns a 1,797 x 64 matrix (each row is one image, its 8x8 pixels in a row) with
pixel values from 0 (white) to 16 (black), and the labels 0-9. The classes are roughly balanced.
"""),
    code('''
from sklearn.datasets import load_digits

digits = load_digits()
X_all = digits.data.astype(np.float32)      # (1797, 64): one flattened 8x8 image per row
y_all = digits.target.astype(np.int64)      # (1797,): the digit, 0-9

print("images:", X_all.shape, X_all.dtype, " labels:", y_all.shape, y_all.dtype)
print("pixel values from", X_all.min(), "to", X_all.max())
print("images per class:", np.bincount(y_all).tolist())
''', check=True),
    code('''
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 10, figsize=(10, 1.4))
for digit, ax in enumerate(axes):
    first = np.flatnonzero(y_all == digit)[0]
    ax.imshow(X_all[first].reshape(8, 8), cmap="gray_r")
    ax.set_title(str(digit))
    ax.axis("off")
plt.show()
'''),
    md("""
## 2. Split, standardise, batch

We keep three disjoint parts: **train** (70%, the model learns from it), **validation** (10%, we
watch it during training) and **test** (20%, touched once at the very end).
`random_split` works on anything with a length; we split the *sample numbers*
`0 ... 1796`, so that we can compute the standardisation statistics on the training part only
(the test images must not leak into anything we fit). `lucid.random.seed(0)` in the first cell
makes the split the same on every run.
"""),
    code('''
parts = random_split(range(len(y_all)), [0.7, 0.1, 0.2])
train_idx, val_idx, test_idx = (part.indices for part in parts)
print("train / validation / test:", len(train_idx), len(val_idx), len(test_idx))
print("no sample in two parts:",
      len(set(train_idx) | set(val_idx) | set(test_idx)) == len(y_all))
''', check=True),
    md("""
**Standardise** each pixel: subtract its mean and divide by its standard deviation, both measured
on the training images. Every input then has a similar scale, which keeps the first layer's
gradients balanced. A few corner pixels are always 0 in the training set (std 0); we leave those
at 0 instead of dividing by zero.
"""),
    code('''
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
''', check=True),
    md("""
A `TensorDataset` pairs the images with their labels (sample `i` is `(X[i], y[i])`), and a
`DataLoader` hands them out in shuffled mini-batches of 32 - a fresh order every epoch, drawn
from `lucid.random`, so the seed fixes it. The validation and test sets are small enough to
evaluate in one go, so they stay plain tensors.
"""),
    code('''
train_set = TensorDataset(X_train, y_train)
train_loader = DataLoader(train_set, batch_size=32, shuffle=True)
print(train_set)
print(train_loader)

xb, yb = next(iter(train_loader))
print("one batch:", xb.shape, xb.dtype, "and", yb.shape, yb.dtype)
''', check=True),
    md("""
## 3. Model, loss, optimizer, schedule

The model is `lucid.models.MLP(64, [64, 64], 10)`: Linear 64→64, ReLU, Linear 64→64, ReLU,
Linear 64→10. Its 10 outputs are **logits**, one score per digit; the prediction is the largest.
"""),
    code('''
model = MLP(64, [64, 64], 10)
print(model)
print("parameters:", sum(p.size for p in model.parameters()))
''', check=True),
    md("""
`F.cross_entropy(logits, labels)` turns the logits into probabilities (softmax) and averages
`-log p(correct class)` over the batch. An untrained model guesses roughly uniformly, p ≈ 1/10,
so the first loss should be close to `ln 10 ≈ 2.303`: a quick sanity check worth doing before
every training run.
"""),
    code('''
with lucid.no_grad():
    first_loss = F.cross_entropy(model(xb), yb).item()
print(f"loss before training: {first_loss:.2f}   ln(10) = {np.log(10):.2f}")
''', check=True),
    md("""
The optimizer is **SGD with momentum** 0.9 (each step follows a running average of the recent
gradients, which smooths out the noise of small batches), at learning rate 0.05. A **scheduler**
changes the learning rate from epoch to epoch: `CosineAnnealingLR` lowers it along half a cosine,
from 0.05 down to 0 at the last epoch - big steps early, fine steps at the end. A schedule is a
formula of the epoch number, so we can print it before training (on a throwaway optimizer):
"""),
    code('''
EPOCHS = 10

demo = SGD(MLP(64, [64, 64], 10).parameters(), lr=0.05, momentum=0.9)
demo_sched = CosineAnnealingLR(demo, T_max=EPOCHS)
rates = []
for epoch in range(EPOCHS):
    rates.append(round(demo.param_groups[0]["lr"], 4))
    demo_sched.step()
print("learning rate per epoch:", rates)
''', check=True),
    md("""
## 4. The training loop, in full

Every deep-learning training loop is these five lines inside two `for` loops:

1. `optimizer.zero_grad()` - gradients *accumulate* (notebook 02), so clear last step's;
2. `logits = model(xb)` - forward: build the graph;
3. `loss = F.cross_entropy(logits, yb)` - one number saying how wrong we are;
4. `loss.backward()` - fill `p.grad` for every parameter;
5. `optimizer.step()` - move every parameter a little against its gradient.

Between 4 and 5 we also record the **gradient norm of each layer** with
`lucid_viz.grad_norms(model)` (a dict `{layer: ||grad||}`), to look at in section 6.

After each epoch we switch to `model.eval()` and measure the validation loss inside
`lucid.no_grad()`: no graph is recorded, because we will not call `backward` on it. (`train()` and
`eval()` change nothing for this MLP, but layers such as Dropout and BatchNorm behave differently
in the two modes - notebook 08 shows BatchNorm - so make it a habit.)

The printed numbers depend on floating-point details of this machine, so this cell is not checked.
"""),
    code('''
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
'''),
    md("""
How much work was that? The counts are exact, whatever the floats did:
"""),
    code('''
print("batches per epoch:", len(train_loader), " optimizer steps:", len(train_losses))
print("gradient-norm records:", len(norm_history), " layers:", list(norm_history[0]))
print("the validation logits have a graph:", val_logits.requires_grad)
''', check=True),
    md("""
## 5. Loss curves

`lucid_viz.plot_loss` draws the training loss of every step (noisy: each point is one batch of
32) and, given `val=`, the validation loss of every epoch on the same axis.

Read the picture: both losses fall fast in the first two epochs. Later the training loss keeps
falling towards 0 while the validation loss flattens out above it: the model starts to memorise
its training images (**overfitting**). The validation curve is the honest one; the cosine schedule
and the small number of epochs keep the gap small here.
"""),
    code('''
lucid_viz.plot_loss(train_losses, val=val_losses, log=True,
                    title="MLP on digits: cross-entropy per step (train) and per epoch (val)")
'''),
    md("""
## 6. Gradient norms per layer

`norm_history` holds one dict per step: the L2 norm of the gradient of each layer's parameters
(weight and bias together). The layers are named by their module path: `0`, `2` and `4` are
the three Linear layers of the `Sequential` (`1` and `3` are ReLUs, which have no parameters).
`lucid_viz.plot_grad_norms` draws one line per layer, the first layer darkest.
"""),
    code('''
lucid_viz.plot_grad_norms(norm_history, title="MLP on digits: gradient norm per layer")
'''),
    md("""
What the picture shows:

* **The size of each update.** SGD moves a layer by `lr x gradient`, so this is (up to the
  momentum and the learning rate) how hard each layer is being pushed, step by step.
* **Training settling down.** The norms grow during the first epoch or two, while the loss falls
  steeply and the weights move fast, then shrink by two orders of magnitude as the model fits
  the training set (a fitted example contributes almost no gradient). The jagged spikes are
  single batches that contained a hard example.
* **A healthy network.** The three lines stay close together all the way. In a
  *deep* network without care, the lines fan out: the norms of the first layers collapse towards
  0 (**vanishing** gradients - those layers stop learning) or blow up (**exploding** gradients -
  training diverges). Notebook 08 shows the fan and the cure (residual connections); exercise 2
  below shows what a too-large learning rate does to these lines.

The first and the last recorded step, as numbers:
"""),
    code('''
for when, norms in [("first step", norm_history[0]), ("last step", norm_history[-1])]:
    print(f"{when:10s}", {layer: round(value, 3) for layer, value in norms.items()})
'''),
    md("""
## 7. Test accuracy

The test set was not used for anything so far. One pass, in evaluation mode and without a graph:
"""),
    code('''
model.eval()
with lucid.no_grad():
    test_pred = model(X_test).numpy().argmax(axis=1)
correct = int((test_pred == y_test.numpy()).sum())
accuracy = correct / len(test_pred)
print(f"test accuracy: {accuracy:.4f}  ({correct} of {len(test_pred)} digits)")
'''),
    md("""
The exact figure above can move by a digit or two on another machine (the BLAS library's
floating-point rounding differs between CPUs, and training amplifies it), so the checked
statement is a band: a 64-64 MLP on these digits should get at least 95% right.
"""),
    code('''
print("test accuracy >= 0.95:", accuracy >= 0.95)
''', check=True),
    md("""
## 8. Where does it go wrong?

A **confusion matrix** counts, for every true digit (row), what the model answered (column):
the diagonal holds the correct answers, anything off it is a mistake.
"""),
    code('''
confusion = np.zeros((10, 10), dtype=np.int64)
np.add.at(confusion, (y_test.numpy(), test_pred), 1)

print("true \\\\ predicted" + "".join(f"{d:4d}" for d in range(10)))
for digit, row in enumerate(confusion):
    print(f"{digit:16d}" + "".join(f"{n:4d}" if n else "   ." for n in row))
'''),
    md("""
And the misclassified images themselves. Many are genuinely ambiguous at 8x8 pixels.
"""),
    code('''
wrong = np.flatnonzero(test_pred != y_test.numpy())
X_test_pixels = X_all[test_idx]                     # the raw pixels, for display
fig, axes = plt.subplots(1, min(len(wrong), 8), figsize=(10, 1.8), squeeze=False)
for ax, i in zip(axes[0], wrong):
    ax.imshow(X_test_pixels[i].reshape(8, 8), cmap="gray_r")
    ax.set_title(f"true {y_test.numpy()[i]}\\npred {test_pred[i]}", fontsize=9)
    ax.axis("off")
plt.show()
'''),
    md("""
## 9. Save the trained model, load it into a fresh one

As in notebook 06: `lucid.save` writes the `state_dict` (no pickle), and a freshly built
`MLP` with the same architecture takes the weights back. The reloaded model must give exactly the
same predictions - not close, identical.
"""),
    code('''
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
''', check=True),
    code('''
import shutil

shutil.rmtree(folder)
'''),
    md("""
A real project would save the standardisation statistics (`mean`, `std`) next to the weights:
the model only makes sense on inputs prepared the same way. (Registering them as buffers of a
small module, notebook 06, would put them in the `state_dict` itself.)

## Exercises

**1.** Swap SGD for **Adam** (`Adam(model.parameters(), lr=3e-3)`), keeping everything else.
Does the test accuracy stay above 95%? Which optimizer lowers the loss faster in the first
epoch?

**2.** Multiply the SGD learning rate by 10 (`lr=0.5`, momentum 0.9). What happens to the
gradient norms, to the loss, and to the test accuracy? Plot the norms.

### Answers

To try variants quickly, we wrap *the same loop* in a function (nothing new inside it: the five
steps, the scheduler, the recorded norms).
"""),
    code('''
def fit(model, optimizer, epochs=EPOCHS):
    """The loop of section 4, returning the per-step losses and norms and the test accuracy."""
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    losses, norms = [], []
    for epoch in range(epochs):
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
'''),
    code('''
# 1. Adam: per-parameter step sizes from running averages of the gradient and its square.
lucid.random.seed(0)                                 # a fresh, repeatable start
adam_model = MLP(64, [64, 64], 10)
adam_losses, adam_norms, adam_acc = fit(adam_model, Adam(adam_model.parameters(), lr=3e-3))
steps = len(train_loader)
print(f"Adam test accuracy: {adam_acc:.4f}")
print(f"mean loss in epoch 0: SGD {np.mean(train_losses[:steps]):.3f}, "
      f"Adam {np.mean(adam_losses[:steps]):.3f}")
'''),
    code('''
print("Adam test accuracy >= 0.95:", adam_acc >= 0.95)
''', check=True),
    md("""
Adam reaches the same accuracy band, and its first-epoch loss (printed above) is in the same
range as SGD's. On a problem this small neither optimizer is clearly better; Adam's advantage is
that one learning rate (around 1e-3 to 3e-3) works on many problems without tuning, because it
scales every parameter's step by the size of that parameter's recent gradients.
"""),
    code('''
# 2. Ten times the learning rate.
lucid.random.seed(0)
hot_model = MLP(64, [64, 64], 10)
hot_losses, hot_norms, hot_acc = fit(hot_model, SGD(hot_model.parameters(), lr=0.5,
                                                    momentum=0.9))

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
'''),
    code('''
print("lr=0.5 test accuracy < 0.5:", hot_acc < 0.5)
''', check=True),
    code('''
# ylim keeps the axis readable: a zero norm has no place on a log scale, it drops out
lucid_viz.plot_grad_norms(hot_norms, title="lr = 0.5: gradient norm per layer",
                          ylim=(1e-6, 1e3))
'''),
    md("""
With `lr=0.5` the steps overshoot: the gradient norms **explode** (far above anything the
lr=0.05 run saw), and the huge updates push the pre-activations of the hidden units to negative
values for every input. A ReLU whose input is always negative outputs 0 and passes back a
gradient of 0 - it is **dead**. Within the first two epochs every hidden unit is dead: from the
step printed above on, layers `0` and `2` get no gradient (their lines drop out of the plot) and
never move again. Only the
last layer's *bias* still learns, and the best it can do without any information from the image
is to predict the class frequencies: the loss sits at about `ln 10`, and the model answers the
same digit for every image - chance-level accuracy. The gradient-norm plot shows the collapse
long before anyone would look at the accuracy, which is why it is worth recording.

(The exact step of the collapse can differ on another machine; the collapse itself does not.)

**Next:** [08_cnns_and_resnet.ipynb](08_cnns_and_resnet.ipynb) replaces the MLP by convolutions
and builds ResNet-18. Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
]

# ------------------------------------------------------------------------------------ 08
NB08 = [
    md("""
# 08 · CNNs and ResNet-18

An MLP treats an image as a flat list of pixels: it has no idea that neighbouring pixels belong
together. A **convolution** slides one small filter over the whole image, so the same few weights
look at every neighbourhood. In this chapter we:

1. compute a convolution by hand as **im2col + one matrix product** and check it against
   `lucid.nn.functional.conv2d`;
2. count a convolution's FLOPs by formula and with `lucid.count_flops`;
3. pool;
4. train a small LeNet-style CNN on the 8x8 digits of notebook 07;
5. see BatchNorm behave differently in training and evaluation mode;
6. summarise and draw **ResNet-18**, and see why its residual connections matter.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb).
"""),
    code(setup("import numpy as np", "from numpy.lib.stride_tricks import sliding_window_view",
               "", "import lucid", "import lucid.nn as nn", "import lucid.nn.functional as F",
               "import lucid_viz", "from lucid.models import resnet_18, summarize",
               "from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere")),
    md("""
## 1. A convolution is a matrix product (im2col)

A 2-D convolution takes an input `x` of shape `(N, C_in, H, W)` and a weight of shape
`(C_out, C_in, K, K)`. Output channel `o` at position `(i, j)` is the dot product of filter `o`
with the `C_in x K x K` window of `x` whose corner is at `(i, j)`.

The trick every framework uses: **write every window as one column of a matrix** (*im2col*,
"image to columns"). Then all the dot products at once are one matrix multiplication (GEMM) -
the operation BLAS libraries and GPUs are fastest at.

NumPy's `sliding_window_view` gives the windows without copying anything. We use small whole
numbers, so that every product and sum is exact and our result must match Lucid's to the last
bit.
"""),
    code('''
rng = np.random.default_rng(0)
x = rng.integers(-3, 4, size=(1, 2, 5, 5)).astype(np.float64)   # N=1, C_in=2, 5x5
w = rng.integers(-2, 3, size=(3, 2, 3, 3)).astype(np.float64)   # C_out=3, C_in=2, 3x3

windows = sliding_window_view(x, (3, 3), axis=(2, 3))
print("windows:", windows.shape, "= (N, C_in, H_out, W_out, K, K)")
''', check=True),
    md("""
Each output position `(i, j)` owns one `2 x 3 x 3` window: 18 numbers. Put the window entries
`(c, ki, kj)` on the rows and the output positions `(i, j)` on the columns, and flatten the
weight to one row per output channel:
"""),
    code('''
N, C_in, H_out, W_out, K, _ = windows.shape
C_out = w.shape[0]

cols = windows.transpose(0, 1, 4, 5, 2, 3).reshape(N, C_in * K * K, H_out * W_out)
W_mat = w.reshape(C_out, C_in * K * K)
print("cols: ", cols.shape, "= (N, C_in*K*K, H_out*W_out)")
print("W_mat:", W_mat.shape, "= (C_out, C_in*K*K)")

out = (W_mat @ cols).reshape(N, C_out, H_out, W_out)   # one GEMM does the whole layer
print("out:  ", out.shape)
''', check=True),
    md("""
The same convolution in Lucid, and the largest difference between the two results:
"""),
    code('''
y = F.conv2d(lucid.Tensor(x), lucid.Tensor(w))
print("F.conv2d:", y.shape, y.dtype)
print("max |ours - lucid|:", np.abs(out - y.numpy()).max())
print("lucid's own im2col (F.unfold) equals our cols:",
      np.array_equal(F.unfold(lucid.Tensor(x), 3).numpy(), cols))
''', check=True),
    md("""
With random floats the two agree to rounding: the products are summed in a different order, so
the last bits can differ (the exact difference is printed, not checked):
"""),
    code('''
xf = rng.standard_normal((2, 3, 8, 8))
wf = rng.standard_normal((4, 3, 3, 3))
cols_f = sliding_window_view(xf, (3, 3), axis=(2, 3)).transpose(0, 1, 4, 5, 2, 3)
cols_f = cols_f.reshape(2, 3 * 3 * 3, 6 * 6)
out_f = (wf.reshape(4, -1) @ cols_f).reshape(2, 4, 6, 6)
diff = np.abs(out_f - F.conv2d(lucid.Tensor(xf), lucid.Tensor(wf)).numpy()).max()
print(f"max |ours - lucid| on random float64 data: {diff:.1e}")
'''),
    code('''
print("agree to 1e-12:", diff < 1e-12)
''', check=True),
    md("""
Lucid's convolution (`lucid/ops/conv.py`, whose docstring walks through the same example) builds
the same matrix with one strided slice per kernel offset and calls one GEMM; backward is two
more GEMMs (for the weight and for the columns) and *col2im*, which adds each column back onto
the windows it came from.

### How big is the columns matrix?

The price of im2col is memory: every input pixel is copied into up to `K x K` columns. For a
few layers we meet in this notebook:
"""),
    code('''
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
''', check=True),
    md("""
A 3x3 convolution with padding 1 copies its input about 9 times; the stride-2 7x7 stem about
12 times. That is why large frameworks also have convolution algorithms that avoid im2col
(Winograd, FFT, implicit GEMM); for a teaching framework one GEMM is the clearest, and fast.

## 2. FLOPs of a convolution

Each output element is a dot product of length `C_in·K·K`: that many multiply-adds. There are
`C_out·H_out·W_out` output elements (per image), so

    MACs  = C_in·K·K · C_out·H_out·W_out
    FLOPs = 2 · C_in·K·K · C_out·H_out·W_out      (a multiply and an add counted separately)

Lucid counts **MACs** for matrix products and convolutions (notebook 05). A 3x3 convolution
from 3 to 16 channels on a 32x32 image with padding 1:
"""),
    code('''
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
''', check=True),
    md("""
## 3. Pooling

Pooling shrinks the image without any weights: **max pooling** keeps the largest value of each
window, **average pooling** their mean. With a 2x2 window and stride 2, each side halves:
"""),
    code('''
img = lucid.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
print("input:\\n", img.numpy()[0, 0])
print("max_pool2d(2):\\n", F.max_pool2d(img, 2).numpy()[0, 0])
print("avg_pool2d(2):\\n", F.avg_pool2d(img, 2).numpy()[0, 0])
''', check=True),
    md("""
Max pooling's backward sends each window's gradient to the one input that won; average
pooling spreads it evenly. Counted in FLOPs: one per window element, no multiply-adds.

## 4. A small CNN on the digits

LeNet-5 (`lucid.models.LeNet5`) is built for 32x32 images; our digits are 8x8, so we use the same
pattern at a smaller size: convolution → ReLU → pool, twice, then a Linear layer.
The digits now stay images: `(N, 1, 8, 8)`, one channel, pixel values scaled to [0, 1].
"""),
    code('''
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
''', check=True),
    code('''
cnn = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),    # 8x8 -> 4x4
    nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(), nn.MaxPool2d(2),   # 4x4 -> 2x2
    nn.Flatten(),                                                             # 16*2*2 = 64
    nn.Linear(16 * 2 * 2, 10),
)
cnn_summary = summarize(cnn, (1, 1, 8, 8))
''', check=True),
    md("""
1,898 parameters - almost five times fewer than the MLP of notebook 07 (8,970), because a 3x3
filter is shared by every position of the image. The training loop is the one of notebook 07,
with Adam:
"""),
    code('''
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
'''),
    code('''
print("loss fell to under a fifth of epoch 0's:", epoch_losses[-1] < epoch_losses[0] / 5)
print("test accuracy >= 0.9:", cnn_acc >= 0.9)
''', check=True),
    code('''
lucid_viz.plot_loss(losses, title="Small CNN on digits: training loss per step")
'''),
    md("""
## 5. BatchNorm: training mode vs evaluation mode

ResNet-18 puts a **BatchNorm** after every convolution. In **training** mode it normalises each
channel with the mean and variance of the *current batch* (so its output has mean 0, std 1 per
channel) and updates its running averages (buffers, notebook 06, momentum 0.1). In **evaluation**
mode it uses the running averages instead, so one image's output never depends on what else is in
the batch. Here a batch with mean about 5 and std about 2:
"""),
    code('''
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
''', check=True),
    md("""
After one batch the running mean has only moved 10% of the way from 0 towards 5, so in eval mode
the output is far from normalised. After many training batches the running averages settle on the
data's statistics and the two modes agree closely. Forgetting `model.eval()` before testing is a
classic bug: the test results then depend on the batch size.

## 6. ResNet-18

`lucid.models.resnet_18` is laid out like torchvision's `resnet18`: a 7x7 stride-2 "stem"
convolution and a max-pool, four stages of two **BasicBlocks** each (64, 128, 256, 512 channels;
stages 2-4 halve the image), a global average pool and one Linear layer. `summarize` runs it
once on zeros and reports every layer: its shapes, parameters, MACs (the convolutions and the
Linear layer) and FLOPs (BatchNorm, ReLU, pooling, the bias and shortcut adds).
"""),
    code('''
resnet = resnet_18(num_classes=10)
summary = summarize(resnet, (1, 3, 32, 32))
''', check=True),
    md("""
**11,181,642 parameters** (with 10 classes; 11,689,512 with ImageNet's 1,000) and about 37
million MACs for one 32x32 image. Almost all parameters sit in the last stage (the 3x3
convolutions from 512 to 512 channels, 2.4 million weights each), almost all FLOPs are spread
evenly over the four stages: each stage halves the image (4x fewer positions) and doubles the
channels (4x more work per position).

The same by stage, from the summary (`summary.modules` holds each module's total):
"""),
    code('''
for stage in ("layer1", "layer2", "layer3", "layer4"):
    params = sum(p.size for p in getattr(resnet, stage).parameters())
    print(f"{stage:8s} {params:>10,} params  {str(summary.modules[stage]):>28s}")
print(f"{'total':8s} {summary.total_params:>10,} params  {str(summary.total):>28s}")
print("(a stage's count includes its shortcut adds, as the drawing's boxes below do)")
''', check=True),
    md("""
### Drawing it

`lucid_viz.draw(model, x, depth=1)` draws each top-level module as one box (FLOPs and
parameters summed); the whole network traced op by op has 412 nodes.
"""),
    code('''
x_img = lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32)
lucid_viz.draw(resnet, x_img, depth=1)
'''),
    md("""
One level deeper (`depth=2`) each stage opens into its two blocks; identical blocks roll up into
one box ("BasicBlock × 2"). The first block of stages 2-4 differs from the second: it halves the
image and changes the number of channels.
"""),
    code('''
lucid_viz.draw(resnet, x_img, depth=2)
'''),
    md("""
## 7. Residual connections

A plain deep network computes `x → f_1 → f_2 → ... → f_L`. Backward multiplies the gradient by
each layer's Jacobian in turn; if those factors are mostly smaller than 1, the gradient reaching
the first layers shrinks geometrically with depth (**vanishing gradients**), and stacking more
layers makes training *worse*, not better.

A **residual block** learns a correction instead: `y = relu(F(x) + x)`. The `+ x` (the
*shortcut*) means the block's Jacobian is `I + dF/dx`: even when `dF/dx` is small, the gradient
passes the block through the identity. Here is one block of `layer1` with its layers as boxes:
the edge from the input straight to the `Add` is the shortcut.
"""),
    code('''
block = resnet.layer1[0]
x_block = lucid.zeros(1, 64, 8, 8, dtype=lucid.Float32)
lucid_viz.draw(block, x_block, depth=1)
'''),
    md("""
The same block **op by op** (no `depth`). Each BatchNorm in evaluation mode unfolds into its
formula: `(x - running_mean) / sqrt(running_var + eps) * weight + bias`. The block calls its one
`relu` module twice (after `bn1`, and after the `Add`), so it appears twice, as `relu (call 1)`
and `relu (call 2)`: the picture reads top to bottom, in the order the block computes.
"""),
    code('''
lucid_viz.draw(block, x_block)
'''),
    md("""
Where the shape changes (first block of `layer2`: stride 2, 64 → 128 channels) `x` cannot be
added as it is, so the shortcut is a 1x1 stride-2 convolution + BatchNorm (`downsample`):
"""),
    code('''
lucid_viz.draw(resnet.layer2[0], x_block, depth=1)
'''),
    md("""
### Seeing the difference: gradients in a deep stack

Take 20 layers of `tanh(Linear(32, 32))`, once stacked plainly (`x = f(x)`) and once with
shortcuts (`x = x + f(x)`), same weights, same input. One backward pass, and the gradient norm of
every layer (`lucid_viz.grad_norms`):
"""),
    code('''
class DeepStack(nn.Module):
    def __init__(self, residual, depth=20, width=32):
        super().__init__()
        self.residual = residual
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])

    def forward(self, x):
        for layer in self.layers:
            h = F.tanh(layer(x))
            x = x + h if self.residual else h
        return x

x_in = lucid.random.randn(16, 32, dtype=lucid.Float32)
depth_norms = {}
for residual in (False, True):
    lucid.random.seed(0)                                 # the same weights for both
    net = DeepStack(residual)
    (net(x_in) ** 2).mean().backward()
    depth_norms["residual" if residual else "plain"] = list(lucid_viz.grad_norms(net).values())

for name, norms in depth_norms.items():
    print(f"{name:8s} first layer {norms[0]:.1e}   last layer {norms[-1]:.1e}")
'''),
    code('''
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 3.5))
for name, norms in depth_norms.items():
    ax.semilogy(range(len(norms)), norms, marker="o", label=name)
ax.set_xlabel("layer (0 = nearest the input)")
ax.set_ylabel("gradient L2 norm")
ax.set_title("20 tanh layers: gradient norm per layer after one backward")
ax.grid(alpha=0.3)
ax.legend()
plt.show()
'''),
    code('''
plain, res = depth_norms["plain"], depth_norms["residual"]
print("plain:    first layer gets < 1/1000 of the last layer's gradient:",
      plain[0] < plain[-1] / 1000)
print("residual: first layer gets at least half the last layer's gradient:",
      res[0] >= res[-1] / 2)
''', check=True),
    md("""
In the plain stack the gradient shrinks by a constant factor per layer (a straight line on the
log scale): the first layer gets tens of thousands of times less than the last, and barely
learns. With shortcuts every layer gets a gradient of the same size. That is
what let He et al. (2016) train networks of 18, 50, 152 layers - and why residual connections are
in almost every deep architecture since, Transformers included.

## Exercises

**1.** A `Conv2d(64, 128, kernel_size=3, stride=2, padding=1, bias=False)` is applied to a
`(1, 64, 16, 16)` input. What is the output shape, how many parameters does the layer have, and
how many MACs does it cost? Work it out, then check with `count_flops`.

**2.** Without running anything: how many parameters does `resnet_18(num_classes=1000)` have?
(Only the final Linear layer depends on the number of classes.)

### Answers

**1.** Output side `(16 + 2·1 - 3) // 2 + 1 = 8`, so `(1, 128, 8, 8)`. Parameters
`128·64·3·3 = 73,728`. MACs `C_in·K·K · C_out·H_out·W_out = 64·9 · 128·64 = 4,718,592`. (This is
`layer2.0.conv1` of ResNet-18 on a 64x64 image.)
"""),
    code('''
conv = nn.Conv2d(64, 128, kernel_size=3, stride=2, padding=1, bias=False)
with lucid.count_flops():
    out = conv(lucid.zeros(1, 64, 16, 16, dtype=lucid.Float32))
print("output:", out.shape)
print(f"parameters: {sum(p.size for p in conv.parameters()):,}")
print(f"work: {out.cost}")
''', check=True),
    md("""
**2.** The Linear layer has `512·classes + classes` parameters. Going from 10 to 1,000 classes
adds `990·513 = 507,870`: `11,181,642 + 507,870 = 11,689,512`.
"""),
    code('''
big = resnet_18(num_classes=1000)
print(f"{sum(p.size for p in big.parameters()):,}")
''', check=True),
    md("""
This is the last chapter. To go further, read the engine: `lucid/ops/conv.py` (im2col and
col2im), `lucid/models/imgclf/resnet.py` (the blocks drawn above) and `lucid/optim/` (the update
rules), or train ResNet-18 on a real image dataset.

Back to the tour: [00_start_here.ipynb](00_start_here.ipynb) · previous chapter:
[07_training_an_mlp.ipynb](07_training_an_mlp.ipynb).
"""),
]

NOTEBOOKS = {
    "07": ("07_training_an_mlp.ipynb", NB07),
    "08": ("08_cnns_and_resnet.ipynb", NB08),
}


if __name__ == "__main__":
    main(NOTEBOOKS)
