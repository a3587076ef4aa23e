# %% [markdown]
# # 07 · Parameters, buffers and `state_dict`
#
# A model is a tree of `nn.Module`s. Each module owns three kinds of things:
#
# * **Parameters** (`nn.Parameter`): tensors the optimizer trains (`requires_grad=True`);
# * **Buffers** (`nn.Buffer`): state that is saved and moved with the model but never trained -
#   BatchNorm's running mean and variance are the classic example;
# * **sub-modules**.
#
# In this chapter we see how a module finds them (registration through `__setattr__`, or the
# explicit `register_parameter` / `add_module`), walk the tree, look at BatchNorm's buffers, save
# and load a `state_dict` (and leave names out of it), read the errors a strict load gives, and
# watch a forward pass through hooks.
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (`requires_grad`,
# `backward`), Python classes (`__init__`, `super()`), and [05](05_devices_cpu_gpu.ipynb) for
# `.to()`.

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

plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)


# %% [markdown]
# ## 1. Registration happens in `__setattr__`
#
# Assigning an attribute to a module is not a plain assignment: `Module.__setattr__` looks at the
# value. A `Parameter` goes into the module's parameter registry, a `Buffer` into its buffer
# registry, a `Module` into its children; anything else (a string, a float) stays a plain
# attribute.

# %%
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 3)                                     # a child module
        self.bn = nn.BatchNorm1d(3)                                    # a child with buffers
        self.fc2 = nn.Linear(3, 2)
        self.scale = nn.Parameter(lucid.ones(2, dtype=lucid.Float32))  # a parameter
        self.register_buffer("steps", nn.Buffer(lucid.zeros(1)))       # a buffer
        self.note = "a plain attribute"                                # not registered

    def forward(self, x):
        self.steps += 1
        return self.fc2(F.relu(self.bn(self.fc1(x)))) * self.scale

net = Net()
print(net)

# %% [markdown]
# `named_parameters()` and `named_buffers()` walk the tree in registration order, naming each
# tensor by its path (`module.attribute`), exactly as PyTorch does:

# %% tags=["nbval-check-output"]
print("parameters:")
for name, p in net.named_parameters():
    print(f"  {name:22s} {str(p.shape):7s} {p.dtype}  requires_grad={p.requires_grad}")
print("buffers:")
for name, b in net.named_buffers():
    print(f"  {name:22s} {str(b.shape):7s} {b.dtype}  requires_grad={b.requires_grad}")
print("children:", [name for name, _ in net.named_children()])
print("parameter count:", sum(p.size for p in net.parameters()))

# %% [markdown]
# Reassigning a name replaces the entry, and assigning `None` keeps an empty, optional slot that
# `state_dict` skips. (We do it on a throwaway copy.)

# %% tags=["nbval-check-output"]
tmp = Net()
tmp.fc1 = nn.Identity()          # the old Linear and its two parameters are gone
tmp.scale = None                 # an empty optional slot
print([name for name, _ in tmp.named_parameters()])


# %% [markdown]
# ### The explicit spellings: `register_parameter` and `add_module`
#
# `self.w = nn.Parameter(...)` is short for `self.register_parameter("w", nn.Parameter(...))`,
# and `self.fc = nn.Linear(...)` for `self.add_module("fc", nn.Linear(...))` (and
# `register_buffer` for buffers). Use the explicit forms when the name is computed
# (`add_module(f"layer{i}", ...)`) or when a slot is **optional**: registering `None` makes the
# attribute exist - so `forward` can test `self.bias is None` - while holding no parameter, no
# child and no `state_dict` entry. PyTorch's `Linear(bias=False)` works exactly like this.

# %% tags=["nbval-check-output"]
class Affine(nn.Module):
    """y = x @ weight.T + bias, then an optional LayerNorm; bias and norm may be left out."""

    def __init__(self, n_in, n_out, bias=True, norm=False):
        super().__init__()
        weight = lucid.random.randn(n_out, n_in, dtype=lucid.Float32) / np.sqrt(n_in)
        self.register_parameter("weight", nn.Parameter(weight))
        self.register_parameter(
            "bias", nn.Parameter(lucid.zeros(n_out, dtype=lucid.Float32)) if bias else None)
        self.add_module("norm", nn.LayerNorm(n_out) if norm else None)

    def forward(self, x):
        y = x @ self.weight.T
        if self.bias is not None:
            y = y + self.bias
        if self.norm is not None:
            y = self.norm(y)
        return y

for layer in (Affine(4, 3), Affine(4, 3, bias=False, norm=True)):
    print("bias:", "None" if layer.bias is None else layer.bias.shape,
          "| norm:", layer.norm, "| state_dict:", list(layer.state_dict()))

# %% [markdown]
# ### Walking the tree
#
# Four walks, in registration order, with the keys PyTorch gives:
#
# * `children()` - the direct sub-modules only;
# * `modules()` / `named_modules()` - the module itself first (its name is `""`), then every
#   descendant depth first, named by its dotted path; `None` slots and repeats are skipped;
# * `buffers()` - every buffer below the module (`named_buffers()` without the names).
#
# `parameters()`, `state_dict()`, `to()` and `train()` / `eval()` are all built on these walks.

# %% tags=["nbval-check-output"]
stack = nn.Sequential(Affine(4, 3, norm=True), nn.ReLU(), Affine(3, 2, bias=False))

print("children():", [type(m).__name__ for m in stack.children()])
print("modules(): ", [type(m).__name__ for m in stack.modules()])
print("named_modules():")
for name, module in stack.named_modules():
    print(f"  {name!r:10s} {type(module).__name__}")
print("named_parameters():", [name for name, _ in stack.named_parameters()])
print("net.buffers():", [f"{b.dtype}{b.shape}" for b in net.buffers()])

# %% [markdown]
# ## 2. BatchNorm's running statistics are buffers
#
# `BatchNorm1d` normalises with the batch's mean and variance while **training**, and keeps an
# exponential moving average of them (`running_mean`, `running_var`, momentum 0.1) for
# **evaluation**. These averages are not trained by gradients, so they are buffers: saved in the
# `state_dict`, moved by `.to()`, ignored by optimizers.

# %% tags=["nbval-check-output"]
x = lucid.random.randn(8, 4, dtype=lucid.Float32)
np.set_printoptions(precision=4, suppress=True)

def show(when):
    bn = net.bn
    print(f"{when:14s}", bn.running_mean.numpy(), " batches:", bn.num_batches_tracked.item())

show("before:")
net.train()
net(x)
show("after 1 train:")
net.eval()
net(x)
show("after 1 eval:")
print(f"{'steps buffer:':14s}", net.steps.numpy())

# %% [markdown]
# In evaluation mode the running statistics are read, not updated. `train()` / `eval()` set the
# mode of the whole tree. (`steps` counted both calls: our own `forward` increments it.)
#
# How fast does the buffer learn the data? Each training call moves it 10% of the way to the
# batch's mean: $r_t = 0.9\, r_{t-1} + 0.1\, m_t$ from $r_0 = 0$. Forty batches of 16 numbers
# drawn around 3:

# %%
lucid.random.seed(1)
bn_demo = nn.BatchNorm1d(1)                              # a new module is in training mode
batch_means, running = [], []
for _ in range(40):
    xb = 3.0 + lucid.random.randn(16, 1, dtype=lucid.Float32)
    bn_demo(xb)
    batch_means.append(xb.numpy().mean())
    running.append(bn_demo.running_mean.numpy()[0])

steps = np.arange(1, 41)
fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(steps, batch_means, "o", markersize=5, alpha=0.6, label="mean of each batch $m_t$")
ax.plot(steps, running, linewidth=2.5, label="running_mean (the buffer) $r_t$")
ax.plot(steps, 3 * (1 - 0.9 ** steps), "k--", label=r"$3\,(1 - 0.9^t)$")
ax.set(xlabel="training step t", ylabel="mean", ylim=(0, 4),
       title="BatchNorm's running mean, momentum 0.1")
ax.legend(loc="lower right")
plt.show()

# %% [markdown]
# The buffer follows $3(1 - 0.9^t)$: it needs about 20 batches ($0.9^{20} \approx 0.12$) to
# forget its start at 0, and then it averages away the batch-to-batch noise. A model with
# BatchNorm evaluated after only a few training steps uses statistics that are still mostly the
# start value.
#
# ## 3. `state_dict`: every parameter and buffer, by name
#
# `state_dict()` is an ordered dict from the dotted name to a **copy** of the array: parameters and
# buffers together, own entries first, then each child's. Each copy is a NumPy array (one that
# also answers PyTorch's `value.size()`, for code written for PyTorch).

# %% tags=["nbval-check-output"]
sd = net.state_dict()
for key, value in sd.items():
    print(f"{key:22s} {str(value.shape):7s} {value.dtype}")

# %% [markdown]
# The copies are a snapshot: editing one changes nothing in the model. `state_dict(keep_vars=True)`
# returns the model's **own** tensors instead - the same keys, but `Parameter` and `Buffer`
# objects, live, with their `requires_grad` and device. (`load_state_dict` uses it to find where
# each value goes.)

# %% tags=["nbval-check-output"]
live = net.state_dict(keep_vars=True)
snapshot = net.state_dict()

for key in ("fc2.bias", "bn.running_mean"):
    print(f"{key:16s} {type(live[key]).__name__:9s} requires_grad={live[key].requires_grad}")
print("live['fc2.bias'] is net.fc2.bias:", live["fc2.bias"] is net.fc2.bias)

snapshot["fc2.bias"][:] = 100.0                      # edit the copy ...
print("net.fc2.bias:", net.fc2.bias.numpy())         # ... the model is unchanged


# %% [markdown]
# ### Leaving a name out: `_state_dict_pass_attr`
#
# Some buffers are pure functions of the constructor's arguments - a lookup table, a mask - so
# saving them only makes files bigger. List their names in the class attribute
# `_state_dict_pass_attr`: they stay buffers (moved by `.to()`, listed by `named_buffers()`), but
# `state_dict()` leaves them out, and a strict `load_state_dict` does not ask for them.
# (PyTorch spells this `register_buffer(name, t, persistent=False)`.)
#
# The example: the sine/cosine position table of a Transformer, recomputed in `__init__`.

# %% tags=["nbval-check-output"]
class PositionalEncoding(nn.Module):
    """x + P, then a Linear layer; P[pos, 2i] = sin(pos / 10000^(2i/d)), P[pos, 2i+1] = cos(...)."""

    _state_dict_pass_attr = ("table",)           # rebuilt from (length, dim): not saved

    def __init__(self, length, dim):
        super().__init__()
        pos = np.arange(length)[:, None]
        freq = 1.0 / 10000 ** (np.arange(0, dim, 2) / dim)
        table = np.zeros((length, dim), np.float32)
        table[:, 0::2] = np.sin(pos * freq)
        table[:, 1::2] = np.cos(pos * freq)
        self.register_buffer("table", lucid.Tensor(table))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):                         # x: (length, dim)
        return self.proj(x + self.table)

pe = PositionalEncoding(6, 4)
print("named_buffers():", [name for name, _ in pe.named_buffers()])
print("state_dict():   ", list(pe.state_dict()))
print("strict load into a fresh one:", PositionalEncoding(6, 4).load_state_dict(pe.state_dict()))

# %% [markdown]
# ## 4. Strict loading tells you *everything* that is wrong
#
# `load_state_dict(sd)` is strict by default: it collects every missing key, unexpected key,
# wrong shape and wrong dtype, and raises **once** with the whole list - so you fix everything in
# one go, instead of one error per run.
#
# `strict=False` loads what matches and *returns* the lists instead of raising (useful when you
# reuse part of a model, e.g. a backbone without its head). Both, below:

# %% tags=["nbval-check-output"]
broken = dict(sd)
del broken["fc1.bias"]                              # missing
broken["head.weight"] = sd["fc2.weight"]            # unexpected
broken["fc2.weight"] = np.zeros((5, 3), np.float32) # wrong shape

try:
    net.load_state_dict(broken)
except RuntimeError as err:
    print("RuntimeError:", err)

partial = {k: v for k, v in sd.items() if not k.startswith("fc2.")}
partial["head.weight"] = sd["fc2.weight"]
result = net.load_state_dict(partial, strict=False)
print("missing:   ", result.missing_keys)
print("unexpected:", result.unexpected_keys)

# %% [markdown]
# ## 5. Saving and loading safely
#
# `lucid.save` writes a state dict (or a tensor) in a safetensors-style layout: a JSON header plus
# raw bytes. There is **no pickle** anywhere, so loading a file can never run code. We save to a
# temporary folder, load into a fresh model and compare every entry.

# %% tags=["nbval-check-output"]
import os
import tempfile

folder = tempfile.mkdtemp()
path = os.path.join(folder, "net.lucid")
lucid.save(net.state_dict(), path)

fresh = Net()
fresh.load_state_dict(lucid.load(path))
pairs = zip(net.state_dict().values(), fresh.state_dict().values())
same = all(np.array_equal(a, b) for a, b in pairs)
print("every entry identical after the round trip:", same)
print("fresh model's running_mean:", fresh.bn.running_mean.numpy())

# %% [markdown]
# A damaged file gives a clear `ValueError`, never garbage weights:

# %% tags=["nbval-check-output"]
import shutil

with open(path, "r+b") as f:
    f.truncate(20)                       # cut the file short

try:
    lucid.load(path)
except ValueError as err:
    print("ValueError:", str(err).replace(path, "<file>"))

shutil.rmtree(folder)

# %% [markdown]
# ## 6. Hooks: watching (and changing) a forward pass
#
# Calling a module runs more than `forward`: first its **forward pre-hooks**,
# `hook(module, args)`, then `forward`, then its **forward hooks**, `hook(module, args, output)`.
# Each `register_forward_..._hook` returns a handle whose `.remove()` takes the hook off again.
# Hooks let you look inside a model without editing its code: here a pre-hook and a hook on every
# child of `net` log what flows through (`net` is in eval mode, so BatchNorm uses its running
# statistics and the numbers are repeatable).

# %% tags=["nbval-check-output"]
log = []

def watch(name):
    def before(module, args):                       # runs before forward
        log.append(f"{name:4s} gets    {args[0].shape}")

    def after(module, args, out):                   # runs after forward
        log.append(f"{name:4s} returns {out.shape}  mean {out.numpy().mean():+.3f}")

    return before, after

handles = []
for name, child in net.named_children():
    before, after = watch(name)
    handles.append(child.register_forward_pre_hook(before))
    handles.append(child.register_forward_hook(after))

out = net(x)
print("\n".join(log))

for handle in handles:
    handle.remove()
log.clear()
net(x)
print("after remove():", len(log), "log lines")

# %% [markdown]
# A hook that **returns** something replaces a value: a pre-hook's result becomes the arguments of
# `forward`, a forward hook's result becomes the output. That is enough for an *ablation*: switch
# off one hidden unit of `fc1` and see how much the output moves - then remove the hook and the
# model is back as it was.

# %% tags=["nbval-check-output"]
mask = lucid.Tensor(np.array([1.0, 0.0, 1.0], np.float32))   # switch off unit 1 of fc1

def ablate(module, args, out):
    return out * mask                              # the replacement output

base = net(x).numpy()
handle = net.fc1.register_forward_hook(ablate)
ablated = net(x).numpy()
handle.remove()
restored = net(x).numpy()

print("sample 0:              ", base[0])
print("sample 0, unit 1 off:  ", ablated[0])
print("mean |change| over the batch:", round(float(np.abs(ablated - base).mean()), 4))
print("after remove(), as before:", np.array_equal(restored, base))

# %% [markdown]
# ## Exercises
#
# ### Exercise 7.1 · A plain tensor attribute
#
# A module stores a tensor as `self.mask = lucid.ones(3)`: a plain `Tensor`, neither a
# `Parameter` nor a `Buffer`. Is `"mask"` in the module's `state_dict()`? Answer `True` or
# `False`. (And how would you make it saved but not trained?)

# %% tags=["solution"]
mask_is_saved = False


# %% tags=["check"]
class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = lucid.ones(3)


check("Exercise 7.1", mask_is_saved, "mask" in Masked().state_dict(),
      nudge="Section 1: what does a Module register when an attribute is assigned?",
      hint="__setattr__ registers Parameters, Buffers and Modules (section 1); what about "
           "anything else? To save it without training it, make it a buffer.")

# %% [markdown]
# ### Exercise 7.2 · BatchNorm's state
#
# How many entries does `nn.BatchNorm1d(3).state_dict()` have, and how many of them would an
# optimizer update?

# %% tags=["solution"]
n_entries = 5
n_trained = 2

# %% tags=["check"]
bn_check = nn.BatchNorm1d(3)
check("Exercise 7.2 (entries)", n_entries, len(bn_check.state_dict()),
      nudge="A state_dict holds more than the parameters; section 2 prints one.",
      hint="count the parameters and the buffers: section 2 prints BatchNorm's buffers, and "
           "its counter of batches is one too.")
check("Exercise 7.2 (trained)", n_trained, len(list(bn_check.parameters())),
      nudge="Which entries does an optimizer's step touch?",
      hint="an optimizer updates parameters only: the scale and the shift.")


# %% [markdown]
# ### Exercise 7.3 · Write a module
#
# Write `Scale(n)`: a module with a trainable parameter `weight` (`n` ones, `Float32`) and a buffer
# `calls` (one number, starting at 0) that counts how often `forward` ran. `forward(x)` adds 1 to
# `calls` and returns `x * weight`. The check builds one, calls it twice and looks at its
# parameters, buffers, `state_dict` keys, output and counter.

# %% tags=["solution"]
class Scale(nn.Module):
    """y = x * weight, counting the calls in a buffer."""

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(lucid.ones(n, dtype=lucid.Float32))
        self.register_buffer("calls", nn.Buffer(lucid.zeros(1)))

    def forward(self, x):
        self.calls += 1
        return x * self.weight


# %% tags=["check"]
def anatomy(n):
    module = Scale(n)
    x = lucid.full((2, n), 3.0, dtype=lucid.Float32)
    module(x)
    out = module(x)
    return {"parameters": [name for name, _ in module.named_parameters()],
            "buffers": [name for name, _ in module.named_buffers()],
            "state_dict keys": sorted(module.state_dict()),
            "output": out, "calls": float(module.calls.item()),
            "weight is trained": module.weight.requires_grad}


def specification(n):
    return {"parameters": ["weight"], "buffers": ["calls"],
            "state_dict keys": ["calls", "weight"], "output": np.full((2, n), 3.0),
            "calls": 2.0, "weight is trained": True}


check_function("Exercise 7.3", anatomy, specification, [3, 1],
               nudge="Section 1: what does a Module register when an attribute is assigned?",
               hint="a Parameter assigned as an attribute registers itself (section 1); a "
                    "number that is saved but never trained is a buffer.")

# %% [markdown]
# ### Exercise 7.4 · The names of the parameters
#
# Which names does `named_parameters()` list for this module? Give them as a list of strings.
#
# ```python
# class Block(nn.Module):
#     def __init__(self):
#         super().__init__()
#         self.lin = nn.Linear(3, 3)
#         self.scale = nn.Parameter(lucid.ones(3))
#         self.norm = nn.LayerNorm(3)
#         self.register_buffer("steps", lucid.zeros(1))
# ```

# %% tags=["solution"]
block_names = ["lin.weight", "lin.bias", "scale", "norm.weight", "norm.bias"]


# %% tags=["check"]
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.scale = nn.Parameter(lucid.ones(3))
        self.norm = nn.LayerNorm(3)
        self.register_buffer("steps", lucid.zeros(1))


check("Exercise 7.4", block_names, {name for name, _ in Block().named_parameters()},
      nudge="Section 1: a sub-module's parameters are listed under the sub-module's name.",
      hint="a child's parameters get its attribute name and a dot in front (lin.weight); a "
           "buffer is not a parameter.")

# %% [markdown]
# **Next:** [08 · Training an MLP](08_training_an_mlp.ipynb): everything so far, put together to
# train a classifier on real handwritten digits.
