# %% [markdown]
# # 11 · ResNet-18 and residual connections
#
# Chapter 10 built a small CNN of two convolutions. Real image models stack dozens, and a plain
# stack that deep barely trains: the gradient fades on its way back to the first layers. In this
# chapter we:
#
# 1. summarise and draw **ResNet-18**, layer by layer and stage by stage, with its parameters and
#    MACs;
# 2. open one of its blocks, and measure why its **residual connections** let the gradient
#    through.
#
# **You need:** [10 · Convolutional networks](10_convolutional_networks.ipynb) (convolutions,
# pooling, BatchNorm) and [06 · FLOPs](06_flops.ipynb) (MACs).

# %%
import inspect

import matplotlib.pyplot as plt

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.models import resnet_18, summarize
from lucid_viz.exercises import check, check_function, check_grad

lucid.random.seed(0)      # parameter inits
plt.rcParams.update({"font.size": 12})   # figures readable on a projector

# %% [markdown]
# ## 1. ResNet-18
#
# `lucid.models.resnet_18` is laid out like torchvision's `resnet18`: a 7x7 stride-2 "stem"
# convolution and a max-pool, four stages of two **BasicBlocks** each (64, 128, 256, 512 channels;
# stages 2-4 halve the image), a global average pool and one Linear layer. `summarize` runs it
# once on zeros and reports every layer: its shapes, parameters, MACs (the convolutions and the
# Linear layer) and FLOPs (BatchNorm, ReLU, pooling, the bias and shortcut adds).

# %% tags=["nbval-check-output"]
resnet = resnet_18(num_classes=10)
summary = summarize(resnet, (1, 3, 32, 32))

# %% [markdown]
# **11,181,642 parameters** (with 10 classes; Exercise 11.1 asks how many with ImageNet's 1,000)
# and about 37 million MACs for one 32x32 image. Almost all parameters sit in the last stage
# (the 3x3 convolutions from 512 to 512 channels, 2.4 million weights each), almost all FLOPs
# are spread evenly over the four stages: each stage halves the image (4x fewer positions) and
# doubles the channels (4x more work per position).
#
# The same by stage, from the summary (`summary.modules` holds each module's total):

# %% tags=["nbval-check-output"]
for stage in ("layer1", "layer2", "layer3", "layer4"):
    params = sum(p.size for p in getattr(resnet, stage).parameters())
    print(f"{stage:8s} {params:>10,} params  {str(summary.modules[stage]):>28s}")
print(f"{'total':8s} {summary.total_params:>10,} params  {str(summary.total):>28s}")
print("(a stage's count includes its shortcut adds, as the drawing's boxes below do)")

# %% [markdown]
# ### Drawing it
#
# `lucid_viz.draw(model, x, depth=1)` draws each top-level module as one box (FLOPs and
# parameters summed); the whole network traced op by op has 412 nodes.

# %%
x_img = lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32)
lucid_viz.draw(resnet, x_img, depth=1)

# %% [markdown]
# One level deeper (`depth=2`) each stage opens into its two blocks; identical blocks roll up into
# one box ("BasicBlock × 2"). The first block of stages 2-4 differs from the second: it halves the
# image and changes the number of channels.

# %%
lucid_viz.draw(resnet, x_img, depth=2)

# %% [markdown]
# ## 2. Residual connections
#
# A plain deep network computes `x → f_1 → f_2 → ... → f_L`. Backward multiplies the gradient by
# each layer's Jacobian in turn; if those factors are mostly smaller than 1, the gradient reaching
# the first layers shrinks geometrically with depth (**vanishing gradients**), and stacking more
# layers makes training *worse*, not better.
#
# A **residual block** learns a correction instead: `y = relu(F(x) + x)`. The `+ x` (the
# *shortcut*) means the block's Jacobian is `I + dF/dx`: even when `dF/dx` is small, the gradient
# passes the block through the identity. Here is one block of `layer1` with its layers as boxes:
# the edge from the input straight to the `Add` is the shortcut.

# %%
block = resnet.layer1[0]
x_block = lucid.zeros(1, 64, 8, 8, dtype=lucid.Float32)
lucid_viz.draw(block, x_block, depth=1)

# %% [markdown]
# The block calls its one `relu` module twice (after `bn1`, and after the `Add`), so the picture
# above shows it twice, as `relu (call 1)` and `relu (call 2)`: it reads top to bottom, in the
# order the block computes.
#
# The whole block op by op is too large to read on a projector, so open one box instead: `bn1`
# **op by op** (no `depth`). A BatchNorm in evaluation mode unfolds into its formula:
# `(x - running_mean) / sqrt(running_var + eps) * weight + bias`.

# %%
lucid_viz.draw(block.bn1, x_block)

# %% [markdown]
# Where the shape changes (first block of `layer2`: stride 2, 64 → 128 channels) `x` cannot be
# added as it is, so the shortcut is a 1x1 stride-2 convolution + BatchNorm (`downsample`):

# %%
lucid_viz.draw(resnet.layer2[0], x_block, depth=1)


# %% [markdown]
# ### Seeing the difference: gradients in a deep stack
#
# Take 20 layers of `tanh(Linear(32, 32))`, once stacked plainly (`x = f(x)`) and once with
# shortcuts (`x = x + f(x)`), same weights, same input. One backward pass, and the gradient norm of
# every layer (`lucid_viz.grad_norms`):

# %%
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

# %%
fig, ax = plt.subplots(figsize=(7, 3.5))
for name, norms in depth_norms.items():
    ax.semilogy(range(len(norms)), norms, marker="o", label=name)
ax.set_xlabel("layer (0 = nearest the input)")
ax.set_ylabel("gradient L2 norm")
ax.set_title("20 tanh layers: gradient norm per layer after one backward")
ax.grid(alpha=0.3)
ax.legend()
plt.show()

# %% tags=["nbval-check-output"]
plain, res = depth_norms["plain"], depth_norms["residual"]
print("plain:    first layer gets < 1/1000 of the last layer's gradient:",
      plain[0] < plain[-1] / 1000)
print("residual: first layer gets at least half the last layer's gradient:",
      res[0] >= res[-1] / 2)

# %% [markdown]
# In the plain stack the gradient shrinks by a constant factor per layer (a straight line on the
# log scale): the first layer gets tens of thousands of times less than the last, and barely
# learns. With shortcuts every layer gets a gradient of the same size. That is
# what let He et al. (2016) train networks of 18, 50, 152 layers - and why residual connections are
# in almost every deep architecture since, Transformers included.

# %% [markdown]
# ## Exercises
#
# ### Exercise 11.1 · ResNet-18 for 1,000 classes
#
# Section 1 counted 11,181,642 parameters for `resnet_18(num_classes=10)`. Without running
# anything: how many does `resnet_18(num_classes=1000)` have? Only the last layer, a
# `Linear(512, classes)` with bias, depends on the number of classes.

# %% tags=["solution"]
resnet_1000_params = 11_689_512

# %% tags=["check"]
check("Exercise 11.1", resnet_1000_params,
      sum(p.size for p in resnet_18(num_classes=1000).parameters()),
      nudge="Only one layer changes with the number of classes.",
      hint="the Linear layer has 512·classes weights and one bias per class; how many more "
           "does it get going from 10 to 1,000 classes?")


# %% [markdown]
# ### Exercise 11.2 · A residual stack, written by you
#
# Write `residual_stack(x, layers)`: it takes a Tensor `x` of shape `(N, width)` and a list of
# `nn.Linear(width, width)` layers, and returns what section 2's `DeepStack(residual=True)`
# computes: for each layer in turn, `x` becomes `x + tanh(layer(x))`. The check builds the same
# layers for yours and for `DeepStack`, and compares the outputs and the gradient of the first
# layer's weight.

# %% tags=["solution"]
def residual_stack(x, layers):
    """x -> x + tanh(layer(x)) for each layer in turn."""
    for layer in layers:
        x = x + F.tanh(layer(x))
    return x


# %% tags=["check"]
def stack_report(forward, depth, seed):
    """The output of a stack of tanh(Linear) layers and the gradient of its first weight."""
    lucid.random.seed(seed)
    stack = nn.ModuleList([nn.Linear(8, 8) for _ in range(depth)])
    x = lucid.random.randn(4, 8)
    out = forward(x, list(stack))
    (out ** 2).mean().backward()
    return {"output": out.numpy(), "gradient of the first weight": stack[0].weight.grad}


def deep_stack_forward(x, layers):
    net = DeepStack(residual=True, depth=len(layers), width=8)
    net.layers = nn.ModuleList(layers)
    return net(x)


def plain_stack_forward(x, layers):
    for layer in layers:
        x = F.tanh(layer(x))
    return x


check_function("Exercise 11.2", lambda depth, seed: stack_report(residual_stack, depth, seed),
               lambda depth, seed: stack_report(deep_stack_forward, depth, seed),
               [(1, 0), (3, 1), (6, 2)],
               nudge="Section 2's DeepStack.forward does this with residual=True.",
               hint="loop over the layers; in each step add tanh(layer(x)) to x (x = x + ...), "
                    "rather than replacing x by it.",
               mistakes={"that is the plain stack: each step must add to x, not replace it":
                         lambda depth, seed: stack_report(
                             lambda x, layers: plain_stack_forward(x, layers), depth, seed)})

# %% [markdown]
# ### Exercise 11.3 · One number through three blocks
#
# Strip a block down to one number: a "layer" that multiplies by $a = 0.5$. Three of them in a
# plain stack compute $x \mapsto a\,(a\,(a x))$; with shortcuts each block computes
# $x \mapsto x + a x$. What is the derivative of the output with respect to $x$ in each case?

# %% tags=["solution"]
plain_slope = 0.5 ** 3
residual_slope = 1.5 ** 3


# %% tags=["check"]
def three_blocks(t, residual):
    for _ in range(3):
        t = t + 0.5 * t if residual else 0.5 * t
    return t


nudge = "Section 2: a block's Jacobian is I + dF/dx with the shortcut, dF/dx without."
check_grad("Exercise 11.3 (plain)", plain_slope, lambda t: three_blocks(t, False), 2.0,
           nudge=nudge, hint="the chain rule multiplies the three slopes: 0.5 each.")
check_grad("Exercise 11.3 (residual)", residual_slope, lambda t: three_blocks(t, True), 2.0,
           nudge=nudge, hint="each block's slope is 1 + 0.5; the chain rule multiplies the three.",
           mistakes={"that adds the slopes; the chain rule multiplies them": 2.5})

# %% [markdown]
# ### Exercise 11.4 · Where the shortcut is a convolution
#
# Which blocks of `resnet_18` need a `downsample` shortcut (a 1x1 convolution and a BatchNorm,
# section 2) instead of the plain `+ x`? Answer with a set of the blocks' names as
# `named_modules()` spells them, such as `{"layer1.0"}`.

# %% tags=["solution"]
blocks_with_downsample = {"layer2.0", "layer3.0", "layer4.0"}

# %% tags=["check"]
check("Exercise 11.4", blocks_with_downsample,
      {name.rsplit(".", 1)[0] for name, _ in resnet_18(num_classes=10).named_modules()
       if name.endswith(".downsample")},
      nudge="Section 1 says which blocks change the image size or the number of channels.",
      hint="the shortcut must change x's shape exactly when the block does: stride 2 and twice "
           "the channels, in the first block of stages 2, 3 and 4.")

# %% [markdown]
# To go further, read the engine: `inspect.getsource` prints the code of any of its classes and
# functions, as here the `BasicBlock` drawn above (try `lucid.optim.SGD` for an update rule), or
# train ResNet-18 on a real image dataset.

# %%
print(inspect.getsource(type(resnet.layer1[0])))

# %% [markdown]
# **Next:** [12 · More layers](12_convolutions_and_normalisation.ipynb): the rest of Lucid's
# layers, in two chapters (12 and 13), then its optimizers and data tools (chapter 14).
