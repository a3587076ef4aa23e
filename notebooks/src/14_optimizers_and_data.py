# %% [markdown]
# # 14 · Optimizers, schedules and data: the rest of the catalogue
#
# The last part of the tour of the shelf (chapters 12 and 13 did the layers and losses): how each
# optimizer moves a parameter, param groups and optimizer state, learning-rate schedules, the
# data tools, and a classic model. Each section is short and stands on its own.
#
# | § | what | from |
# |---|---|---|
# | 11 | optimizers, param groups, optimizer state | `lucid.optim` |
# | 12 | learning-rate schedules | `lucid.optim.lr_scheduler` |
# | 13 | datasets and loaders | `lucid.data` |
# | 14 | LeNet-5 | `lucid.models` |
#
# (The sections go on from chapter 13's numbers: chapters 12, 13 and 14 are one tour.)
#
# **You need:** [08 · Training an MLP](08_training_an_mlp.ipynb); the sections can be read in
# any order.

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
# ## 11. Optimizers
#
# ### Five update rules on one problem
#
# Every optimizer in `lucid.optim` is one update rule for one parameter; the base class
# walks the parameters. To see the rules differ, let them all minimise the same function: the
# **Rosenbrock** valley $f(x, y) = (1 - x)^2 + 100\,(y - x^2)^2$, minimum at $(1, 1)$ at the
# bottom of a long, curved, flat-bottomed valley - easy to find, slow to follow.

# %% tags=["nbval-check-output"]
from lucid.optim import SGD, Adagrad, Adam, AdamW, Optimizer, RMSprop


def rosenbrock(p):
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2

START = [-1.5, 2.0]

def minimise(make_optimizer, steps=1000):
    p = lucid.Tensor(START, requires_grad=True)
    opt = make_optimizer([p])
    path, losses = [p.numpy().copy()], []
    for _ in range(steps):
        opt.zero_grad()
        loss = rosenbrock(p)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        path.append(p.numpy().copy())
    return np.array(path), np.array(losses)

optimizers = {
    "SGD": lambda ps: SGD(ps, lr=1e-3),
    "SGD momentum=0.9": lambda ps: SGD(ps, lr=1e-3, momentum=0.9),
    "SGD nesterov": lambda ps: SGD(ps, lr=1e-3, momentum=0.9, nesterov=True),
    "Adam": lambda ps: Adam(ps, lr=0.05),
    "Adam amsgrad": lambda ps: Adam(ps, lr=0.05, amsgrad=True),
    "RMSprop": lambda ps: RMSprop(ps, lr=0.01),
    "Adagrad": lambda ps: Adagrad(ps, lr=1.0),
}
runs = {name: minimise(make) for name, make in optimizers.items()}
print(f"{'optimizer':18s} {'after 1000 steps':>18s} {'f':>9s}")
for name, (path, losses) in runs.items():
    print(f"{name:18s} ({path[-1][0]:6.3f}, {path[-1][1]:6.3f})  {losses[-1]:9.1e}")

# %%
gx, gy = np.meshgrid(np.linspace(-2, 2, 300), np.linspace(-1, 3, 300))
fig, (ax_p, ax_l) = plt.subplots(1, 2, figsize=(9, 4.2))
ax_p.contour(gx, gy, np.log10((1 - gx) ** 2 + 100 * (gy - gx**2) ** 2 + 1e-3), levels=20,
             cmap="Greys", linewidths=0.6)
for name, (path, losses) in runs.items():
    ax_p.plot(path[:, 0], path[:, 1], lw=1.2, label=name)
    ax_l.semilogy(losses, lw=1.2, label=name)
ax_p.plot(*START, "ko")
ax_p.plot(1, 1, "r*", ms=12)
ax_p.set(title="paths from (-1.5, 2) to the minimum (1, 1)", xlabel="x", ylabel="y",
         xlim=(-2, 2), ylim=(-1, 3))
ax_l.set(title="f along the way", xlabel="step", ylabel="f(x, y)")
ax_l.legend(fontsize=11)
fig.tight_layout()
plt.show()


# %% [markdown]
# What the picture shows. Plain **SGD** crawls: its learning rate must be small for the steep
# walls of the valley, and is then tiny for its flat floor. **Momentum** adds up the small,
# consistent pushes along the floor into speed; **Nesterov** (the gradient taken one momentum step
# ahead) zigzags hard at first, then gets furthest of all. **Adam** divides each coordinate's step
# by a running RMS of its gradients, so steep and flat directions move at a similar pace;
# **AMSGrad** divides by the largest RMS seen so far, which makes it more cautious here.
# **RMSprop** is that normalisation without Adam's momentum: its steps stay about `lr` long, so it
# rattles across the valley floor (the spikes in its loss). **Adagrad** divides by the *sum* of
# all squared gradients so far: its first step is a full `lr = 1` in each coordinate (the jump to
# the top of the plot), and from then on its steps only shrink, so it stalls half-way. (Each
# learning rate is a sensible value for its rule, not a tuned one: the race illustrates the rules,
# it does not rank them.)
#
# ### Weight decay: `SGD`, `Adam` and `AdamW`
#
# `weight_decay=` pulls every weight towards 0. To see the pull alone, use a loss whose gradient is
# 0, from the weights `[1, 10]`. SGD subtracts `lr * wd * w`: each step multiplies the weights by
# $(1 - \text{lr}\cdot\text{wd})$. Adam adds `wd * w` to the gradient *before* its normalisation,
# which then divides it away: every weight moves by about `lr` per step, big or small. **AdamW**
# decouples the decay from the normalisation (Loshchilov & Hutter) and shrinks by the same factor
# as SGD - the behaviour you wanted when you asked for weight decay.

# %% tags=["nbval-check-output"]
def decay_only(make_optimizer, steps=10):
    w = lucid.Tensor([1.0, 10.0], requires_grad=True)
    opt = make_optimizer([w])
    for _ in range(steps):
        opt.zero_grad()
        (0 * w).sum().backward()          # a loss that does not depend on w: gradient 0
        opt.step()
    return w.numpy()

lr, wd, steps = 0.1, 0.1, 10
print("SGD(weight_decay=0.1)  ", decay_only(lambda ps: SGD(ps, lr=lr, weight_decay=wd)))
print("AdamW(weight_decay=0.1)", decay_only(lambda ps: AdamW(ps, lr=lr, weight_decay=wd)))
print("  (1 - lr*wd)^10 * w0  ", (1 - lr * wd) ** steps * np.array([1.0, 10.0]))
print("Adam(weight_decay=0.1) ", decay_only(lambda ps: Adam(ps, lr=lr, weight_decay=wd)))
print("  w0 - 10 * lr         ", np.array([1.0, 10.0]) - steps * lr)


# %% [markdown]
# ### The base class: `Optimizer(params, defaults)`
#
# A new optimizer is a subclass of `Optimizer` that passes its hyperparameters as `defaults` and
# writes `update`: given one parameter's array, its gradient, its state dict and its group's
# hyperparameters, return the new value (`xp` is NumPy, or `mlx.core` on "gpu"). Here is
# **signSGD**, which keeps only the sign of the gradient:

# %% tags=["nbval-check-output"]
class SignSGD(Optimizer):
    """theta <- theta - lr * sign(g): every coordinate moves by exactly lr."""

    def __init__(self, params, lr=0.01):
        super().__init__(params, defaults={"lr": lr})

    def update(self, xp, param, grad, state, group):
        return param - group["lr"] * xp.sign(grad)

p = lucid.Tensor(START, requires_grad=True)
opt = SignSGD([p], lr=0.01)
rosenbrock(p).backward()
print("gradient at the start:", p.grad)
opt.step()
print("after one step:       ", p.numpy())
path, losses = minimise(lambda ps: SignSGD(ps, lr=0.01))
print(f"after 1000 steps: ({path[-1][0]:.3f}, {path[-1][1]:.3f}), f = {losses[-1]:.4f}")

q = np.array(START)                       # the same rule in NumPy, gradient by hand
for _ in range(1000):
    gx = -2 * (1 - q[0]) - 400 * q[0] * (q[1] - q[0] ** 2)
    gy = 200 * (q[1] - q[0] ** 2)
    q = q - 0.01 * np.sign([gx, gy])
print("same end point as the rule written in NumPy:", np.allclose(path[-1], q))

# %% [markdown]
# The base class did the walking, the state and the checks; our rule is one line, and it
# matches the same rule written in NumPy. It follows this valley badly, though: each step moves
# every coordinate by exactly `lr`, i.e. along a diagonal, while the valley near $x = -1.44$ runs
# steeply ($y = x^2$ falls by about 2.9 for each 1 that $x$ gains), so the steps zigzag across it
# and barely advance. Adam is, roughly, a *smoothed* signSGD - $m/\sqrt{v} \approx
# \mathrm{sign}(g)$ while the gradient is steady - whose averaging cancels the zigzag out.
#
# The built-in optimizers take the same dict too (the spelling of the original Lucid):
# `SGD(model.parameters(), defaults={"lr": 1e-2})` is `SGD(model.parameters(), lr=1e-2)`.
#
# ### Param groups
#
# Parameters live in **param groups**, each a dict with its own hyperparameters; what a group
# leaves out comes from the defaults. The classic use: a small learning rate for a pretrained body
# and a larger one for a new head. A scheduler (section 12) changes `group["lr"]` in place.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
opt = SGD(model.parameters(), defaults={"lr": 1e-2})
print("one group:", len(opt.param_groups), "group, lr =", opt.param_groups[0]["lr"])

opt = SGD([{"params": model[0].parameters(), "lr": 1e-3},      # body
           {"params": model[2].parameters()}],                 # head: the default lr
          lr=1e-2, momentum=0.9)
for i, group in enumerate(opt.param_groups):
    shapes = [p.shape for p in group["params"]]
    print(f"group {i}: lr={group['lr']}, momentum={group['momentum']}, params {shapes}")

# %% [markdown]
# ### Optimizer state: `state_dict()` and `load_state_dict()`
#
# Momentum buffers and Adam's moment estimates are **state**: stopping training and restarting
# with a fresh optimizer loses them, and the run continues differently. `opt.state_dict()` holds
# the state (NumPy arrays, saveable with `lucid.save`) and the param groups, each parameter
# replaced by its position. Below: 20 steps of training in one go, against 10 steps, a "restart"
# and 10 more - once restoring the optimizer state, once not.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
X = lucid.random.randn(64, 3)
Y = X @ lucid.Tensor([[1.0], [-2.0], [0.5]]) + 0.1 * lucid.random.randn(64, 1)

def fresh():
    lucid.random.seed(1)                  # the same initial weights every time
    net = nn.Linear(3, 1, dtype=lucid.Float64)
    return net, Adam(net.parameters(), lr=0.1, amsgrad=True)

def train(net, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        nn.MSELoss()(net(X), Y).backward()
        opt.step()

net_a, opt_a = fresh()
train(net_a, opt_a, 20)                   # 20 steps without a break

net_b, opt_b = fresh()
train(net_b, opt_b, 10)
saved_model, saved_opt = net_b.state_dict(), opt_b.state_dict()
state = saved_opt["state"][0]
print("state of parameter 0:", {k: getattr(v, "shape", v) for k, v in state.items()})
print("param_groups[0]:", {k: v for k, v in saved_opt["param_groups"][0].items()})

for restore_optimizer in (True, False):
    net_c, opt_c = fresh()
    net_c.load_state_dict(saved_model)
    if restore_optimizer:
        opt_c.load_state_dict(saved_opt)
    train(net_c, opt_c, 10)
    same = np.array_equal(net_c.weight.numpy(), net_a.weight.numpy())
    print(f"restart, optimizer state restored={restore_optimizer!s:5s}: "
          f"same weights as the unbroken run: {same}")

# %% [markdown]
# ## 12. Learning-rate schedules
#
# A scheduler wraps an optimizer and rewrites each group's `lr` when you call `sched.step()` once
# per epoch (after that epoch's `opt.step()` calls). Five of them are closed-form functions of the
# epoch; `ReduceLROnPlateau` instead watches a metric (`sched.step(val_loss)`) and cuts the rate
# when it stops improving for `patience` epochs.

# %% tags=["nbval-check-output"]
from lucid.optim.lr_scheduler import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    MultiStepLR,
    ReduceLROnPlateau,
    StepLR,
)

EPOCHS, LR = 40, 0.1

def val_loss(epoch):                      # a made-up validation loss that plateaus at 0.3
    return max(0.3, 1 - 0.05 * epoch)

def lr_curve(make_scheduler):
    opt = SGD([nn.Parameter(lucid.zeros(1))], lr=LR)
    sched = make_scheduler(opt)
    lrs = []
    for epoch in range(EPOCHS):
        lrs.append(opt.param_groups[0]["lr"])
        # ... one epoch of training: opt.zero_grad(), backward(), opt.step() ...
        if isinstance(sched, ReduceLROnPlateau):
            sched.step(val_loss(epoch))
        else:
            sched.step()
    return np.array(lrs)

warmup = 5
schedules = {
    "StepLR(step_size=10, gamma=0.5)": (lambda o: StepLR(o, step_size=10, gamma=0.5),
                                        lambda e: LR * 0.5 ** (e // 10)),
    "MultiStepLR([15, 30], gamma=0.1)": (lambda o: MultiStepLR(o, milestones=[15, 30], gamma=0.1),
                                         lambda e: LR * 0.1 ** ((e >= 15) + (e >= 30))),
    "ExponentialLR(gamma=0.9)": (lambda o: ExponentialLR(o, gamma=0.9),
                                 lambda e: LR * 0.9**e),
    "CosineAnnealingLR(T_max=40)": (lambda o: CosineAnnealingLR(o, T_max=EPOCHS, eta_min=0.001),
                                    lambda e: 0.001 + (LR - 0.001) * (1 + math.cos(
                                        math.pi * e / EPOCHS)) / 2),
    "LambdaLR (5-epoch warm-up)": (lambda o: LambdaLR(o, lambda e: min(1.0, (e + 1) / warmup)),
                                   lambda e: LR * min(1.0, (e + 1) / warmup)),
}
curves = {name: lr_curve(make) for name, (make, _) in schedules.items()}
curves["ReduceLROnPlateau(patience=3)"] = lr_curve(
    lambda o: ReduceLROnPlateau(o, mode="min", factor=0.5, patience=3))

print(f"{'schedule':33s} " + " ".join(f"ep{e:<5d}" for e in (0, 10, 20, 30, 39)) + " formula")
for name, lrs in curves.items():
    ok = "(follows the metric)" if name not in schedules else np.allclose(
        lrs, [schedules[name][1](e) for e in range(EPOCHS)])
    print(f"{name:33s} " + " ".join(f"{lrs[e]:<7.4f}" for e in (0, 10, 20, 30, 39)), ok)

# %%
fig, axes = plt.subplots(2, 3, figsize=(9, 6.5), sharex=True)
for ax, (name, lrs) in zip(axes.ravel(), curves.items()):
    ax.step(range(EPOCHS), lrs, where="post")
    ax.set(title=name.replace("(", "\n(", 1), ylim=(0, 0.11))   # the arguments on line 2
    ax.title.set_fontsize(12)
ax2 = axes[1, 2].twinx()
ax2.plot(range(EPOCHS), [val_loss(e) for e in range(EPOCHS)], color="tab:red", lw=1)
ax2.set_ylabel("val loss", color="tab:red")
for ax in axes[1]:
    ax.set_xlabel("epoch")
for ax in axes[:, 0]:
    ax.set_ylabel("lr")
fig.tight_layout()
plt.show()

# %% [markdown]
# `ReduceLROnPlateau` (bottom right, the red line is the metric it watches): the loss stops
# improving at epoch 14; once more than `patience=3` epochs have passed without improvement
# (epochs 15-18) it halves the rate, and the count starts again: another halving every 4 epochs
# while the plateau lasts.

# %% [markdown]
# ## 13. Data: `Dataset`, `TensorDataset`, `DataLoader`, `random_split`
#
# A **dataset** is anything with `len(ds)` and `ds[i]` (one sample). Write your own by subclassing
# `lucid.data.Dataset` - here a made-up regression set, $y = \sin x$ plus noise:

# %% tags=["nbval-check-output"]
from lucid.data import DataLoader, Dataset, TensorDataset, random_split


class NoisySine(Dataset):
    """n samples (x, y) with x in [-3, 3) and y = sin(x) + noise; each of shape (1,)."""

    def __init__(self, n, noise=0.1):
        self.x = lucid.random.uniform(-3, 3, size=(n, 1), dtype=lucid.Float32)
        self.y = lucid.Tensor(np.sin(self.x.numpy()) + noise * lucid.random.randn(n, 1).numpy(),
                              dtype=lucid.Float32)

    def __len__(self):
        return self.x.shape[0]

    def __getitem__(self, i):
        return self.x[i], self.y[i]

lucid.random.seed(0)
ds = NoisySine(10)
x3, y3 = ds[3]
print("len:", len(ds), "  one sample:", x3.shape, y3.shape, x3.dtype)

# %% [markdown]
# A `DataLoader` cuts a dataset into batches, stacking the samples along a new first axis.
# `shuffle=True` draws a new order for every pass (epoch); `drop_last=True` skips a last batch
# that would be smaller than the others (useful with BatchNorm, which dislikes tiny batches).

# %% tags=["nbval-check-output"]
for drop_last in (False, True):
    loader = DataLoader(ds, batch_size=4, shuffle=True, drop_last=drop_last)
    shapes = [(tuple(xb.shape), tuple(yb.shape)) for xb, yb in loader]
    print(f"drop_last={drop_last!s:5s}: {len(loader)} batches  {shapes}")

# %% [markdown]
# `TensorDataset(*tensors)` is the ready-made dataset for data already in tensors: sample `i` is
# `(t[i] for t in tensors)`, and a batch is gathered in one indexing step. With the sample *ids*
# as the data we can watch the shuffling: each epoch has a new order, and re-seeding
# `lucid.random` replays the same orders.

# %% tags=["nbval-check-output"]
ids = TensorDataset(np.arange(10))

def two_epochs(seed):
    lucid.random.seed(seed)
    loader = DataLoader(ids, batch_size=5, shuffle=True)
    return [[batch.tolist() for (batch,) in loader] for _epoch in range(2)]

first = two_epochs(seed=42)
print("epoch 1:", first[0])
print("epoch 2:", first[1])
print("seed 42 again gives the same epochs:", two_epochs(seed=42) == first)
print("seed 43 gives other ones:           ", two_epochs(seed=43) != first)

# %% [markdown]
# `random_split(ds, lengths)` splits a dataset into non-overlapping random subsets, given counts
# or fractions - the train/validation split of notebook 08. It draws from `lucid.random` too:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
train_set, val_set = random_split(ids, [0.8, 0.2])
train_ids = sorted(int(train_set[i][0].item()) for i in range(len(train_set)))
val_ids = sorted(int(val_set[i][0].item()) for i in range(len(val_set)))
print("train:", train_ids, "  val:", val_ids)
print("disjoint:", not set(train_ids) & set(val_ids), "  together all 10:",
      sorted(train_ids + val_ids) == list(range(10)))
print("batches of the training subset:", [b.tolist() for (b,) in DataLoader(train_set, 4)])

# %% [markdown]
# ## 14. A model from the shelf: LeNet-5
#
# `lucid.models` has three ready-made networks: `MLP` (notebook 08), `resnet_18` (notebook 11) and
# `lenet_5`, LeCun's 1998 digit recogniser. It takes 1 x 32 x 32 images (pad 28 x 28 ones by 2):
# two 5 x 5 convolutions with tanh and average pooling, then three linear layers.

# %% tags=["nbval-check-output"]
from lucid.models import lenet_5

lucid.random.seed(0)
lenet = lenet_5(num_classes=10)
images = lucid.random.randn(8, 1, 32, 32, dtype=lucid.Float32)        # a batch of 8

h = images
print(f"{'input':53s} {h.shape}")
for layer in [*lenet.features, *lenet.classifier]:
    h = layer(h)
    print(f"{str(layer):53s} {h.shape}")

logits = lenet(images)
print("logits:", logits.shape, "  softmax rows sum to 1:",
      np.allclose(F.softmax(logits, axis=1).numpy().sum(axis=1), 1, atol=1e-6))

# %% tags=["nbval-check-output"]
by_hand = {
    "conv 1 (6 x 1 x 5 x 5 + 6)": 6 * 1 * 25 + 6,
    "conv 2 (16 x 6 x 5 x 5 + 16)": 16 * 6 * 25 + 16,
    "fc 1 (400 -> 120)": 400 * 120 + 120,
    "fc 2 (120 -> 84)": 120 * 84 + 84,
    "fc 3 (84 -> 10)": 84 * 10 + 10,
}
for name, count in by_hand.items():
    print(f"{name:30s} {count:7,d}")
print(f"{'total by hand':30s} {sum(by_hand.values()):7,d}")
print(f"{'sum(p.size for p in parameters)':30s} {sum(p.size for p in lenet.parameters()):7,d}")


# %% [markdown]
# Almost 80% of LeNet's 61,706 parameters sit in the first linear layer: convolutions share their
# few weights across the whole image, fully connected layers do not.

# %% [markdown]
# ## Exercises
#
# ### Exercise 14.1 · A warm-up schedule
#
# Write `lr_lambda(epoch)` for a `LambdaLR` (section 12): the factor that multiplies the base
# learning rate at each epoch. It warms up linearly over 5 epochs, `0.2, 0.4, 0.6, 0.8, 1.0` for
# epochs 0 to 4, then decays as one over the square root of the epoch count: from epoch 4 on,
# the factor is $\sqrt{5 / (\text{epoch} + 1)}$. The check runs a `LambdaLR` with your function.

# %% tags=["solution"]
def lr_lambda(epoch):
    """Linear warm-up over epochs 0-4, then sqrt(5 / (epoch + 1))."""
    return (epoch + 1) / 5 if epoch < 5 else math.sqrt(5 / (epoch + 1))


# %% tags=["check"]
def rates_with(factor, base_lr=0.5, epochs=12):
    optimizer = lucid.optim.SGD([nn.Parameter(lucid.zeros(1))], lr=base_lr)
    scheduler = LambdaLR(optimizer, factor)
    rates = []
    for _ in range(epochs):
        rates.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return rates


def factors(fn):
    """The factors a LambdaLR with fn gives, epoch by epoch: the warm-up, and the decay
    times sqrt(epoch + 1), which must stay sqrt(5)."""
    rates = np.array(rates_with(fn)) / 0.5
    return {"warm-up (epochs 0-4)": rates[:5],
            "decay (epochs 4-11) times sqrt(epoch + 1)": rates[4:] * np.sqrt(np.arange(5, 13))}


check_function("Exercise 14.1", lambda: factors(lr_lambda),
               lambda: {"warm-up (epochs 0-4)": [0.2, 0.4, 0.6, 0.8, 1.0],
                        "decay (epochs 4-11) times sqrt(epoch + 1)": [math.sqrt(5)] * 8},
               [()],
               nudge="Write the two phases of the schedule separately.",
               hint="two cases: `if epoch < 5:` the warm-up, else the decay. Epoch 0 is the "
                    "first epoch, so the warm-up reaches 1.0 at epoch 4.")

# %% [markdown]
# ### Exercise 14.2 · How many batches?
#
# A `DataLoader` over 1,000 samples with `batch_size=64`: how many batches does one pass give,
# and how many with `drop_last=True`?

# %% tags=["solution"]
batches = 16
batches_drop_last = 15

# %% tags=["check"]
thousand = TensorDataset(np.arange(1000))
check("Exercise 14.2", batches, len(DataLoader(thousand, batch_size=64)),
      nudge="How many full batches of 64 fit into 1,000 samples, and where do the samples "
            "left over go?",
      hint="divide 1,000 by 64 and round the right way: a last batch smaller than batch_size "
           "is still a batch (section 4).")
check("Exercise 14.2 (drop_last)", batches_drop_last,
      len(DataLoader(thousand, batch_size=64, drop_last=True)),
      nudge="What does drop_last do with a last batch that is too small?",
      hint="drop_last skips the last batch when it is smaller than batch_size.")

# %% [markdown]
# ### Exercise 14.3 · Predict a step schedule
#
# `StepLR(optimizer, step_size=3, gamma=0.5)` on an optimizer with learning rate 0.8: list the
# learning rates of epochs 0 to 7 (the rate in use during each epoch, `scheduler.step()` called
# at the end of every epoch).

# %% tags=["solution"]
step_rates = [0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2, 0.2]

# %% tags=["check"]
stepped = SGD([nn.Parameter(lucid.zeros(1))], lr=0.8)
schedule = StepLR(stepped, step_size=3, gamma=0.5)
actual = []
for _ in range(8):
    actual.append(stepped.param_groups[0]["lr"])
    stepped.step()
    schedule.step()
check("Exercise 14.3", step_rates, actual,
      nudge="Read StepLR's rule in section 3 and follow it epoch by epoch.",
      hint="every 3 epochs the rate is multiplied by gamma; epochs 0, 1 and 2 use the start value.")


# %% [markdown]
# ### Exercise 14.4 · RMSprop, written by you
#
# Write `MyRMSprop(params, lr=0.01, alpha=0.99, eps=1e-8)`, a subclass of `Optimizer` (as
# `SignSGD` above). For each parameter it keeps the running mean of the squared gradient in its
# `state`, starting from zeros: $v \leftarrow \alpha v + (1 - \alpha)\, g^2$, and steps
# $\theta \leftarrow \theta - \text{lr} \cdot g / (\sqrt{v} + \epsilon)$. The check runs
# yours and Lucid's `RMSprop` for 50 steps from the same start on the Rosenbrock function above
# and compares the two paths.

# %% tags=["solution"]
class MyRMSprop(Optimizer):
    """Every coordinate's step divided by the root of its running mean squared gradient."""

    def __init__(self, params, lr=0.01, alpha=0.99, eps=1e-8):
        super().__init__(params, defaults={"lr": lr, "alpha": alpha, "eps": eps})

    def update(self, xp, param, grad, state, group):
        v = state.get("square_avg", xp.zeros_like(param))
        v = state["square_avg"] = group["alpha"] * v + (1 - group["alpha"]) * grad * grad
        return param - group["lr"] * grad / (xp.sqrt(v) + group["eps"])


# %% tags=["check"]
def rmsprop_path(make_optimizer):
    """The (x, y) points of 50 steps from START."""
    return minimise(make_optimizer, steps=50)[0]


check_function("Exercise 14.4", lambda: rmsprop_path(lambda ps: MyRMSprop(ps, lr=0.01)),
               lambda: rmsprop_path(lambda ps: RMSprop(ps, lr=0.01)), [()],
               entries="the (x, y) points at steps 0..50",
               mistakes={"v starts from zero at every step: is the new v kept in state?":
                         rmsprop_path(lambda ps: SignSGD(ps, lr=0.1))},  # 0.01 / sqrt(0.01)
               nudge="SignSGD above shows the shape of an optimizer; RMSprop adds one running "
                     "average per parameter, kept in `state`.",
               hint="state.get('square_avg', xp.zeros_like(param)) is v before the step; store "
                    "the new v in state, then return param - lr * grad / (xp.sqrt(v) + eps).")

# %% [markdown]
# That completes the catalogue: every layer, loss, optimizer, schedule and data tool of Lucid has
# now appeared in at least one chapter. To see how one of them works, open its file -
# `lucid/optim/`, `lucid/data/` - each docstring states the formula you saw checked here.
#
# **Next:** [15 · Build it yourself](15_build_it_yourself.ipynb): your own op, optimizer and
# layer, through the same API Lucid's own pieces use.
