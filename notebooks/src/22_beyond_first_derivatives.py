# %% [markdown]
# # 22 · Beyond the first derivative: Hessians, linear algebra, einops and more layers
#
# The engine of chapters 02-03 computes first derivatives. This chapter shows what the same
# engine does one level up, and the rest of Lucid's toolbox, each checked against NumPy:
#
# | § | what | from |
# |---|---|---|
# | 1 | derivatives of derivatives: `create_graph`, Hessians, a gradient penalty | `autograd` |
# | 2 | linear algebra: solve, determinants, factorisations | `lucid.linalg` |
# | 3 | tensors by pattern: `rearrange`, `reduce`, `repeat`, `einsum` | `lucid.einops` |
# | 4 | more of the Tensor API: statistics, bitwise ops, in-place methods, counting | `lucid` |
# | 5 | more layers: activations, 3-D convolution, resampling, padding, normalisation | `lucid.nn` |
# | 6 | more optimizers, schedules and dataset tools | `lucid.optim`, `lucid.data` |
#
# **You need:** [03 · Backward, step by step](03_backward_step_by_step.ipynb) (gradients and
# `gradcheck`), [12 · More layers](12_convolutions_and_normalisation.ipynb),
# [13 · Embeddings, activations and losses](13_activations_and_losses.ipynb) and
# [14 · Optimizers, schedules and data](14_optimizers_and_data.ipynb); some matrix calculus
# helps in sections 1 and 2.

# %%
import math
import warnings

import matplotlib.pyplot as plt
import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import functional, grad, gradgradcheck
from lucid_viz.exercises import check, check_function

# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (chapter 05 is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")

np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 1. Derivatives of derivatives
#
# `backward()` computes each gradient with the op's backward *rule*. With `create_graph=True` the
# rule itself runs on Lucid ops, so the gradient is a tensor **with a graph** - and can be
# differentiated again. For $f(x) = x^3$: $f' = 3x^2$, $f'' = 6x$, $f''' = 6$.

# %% tags=["nbval-check-output"]
x = lucid.Tensor([0.5, -1.0, 2.0], requires_grad=True)
(d1,) = grad((x ** 3).sum(), x, create_graph=True)   # 3x^2, itself a graph
(d2,) = grad(d1.sum(), x, create_graph=True)         # 6x
(d3,) = grad(d2.sum(), x)                            # 6
print("f'  :", d1.numpy(), " by hand:", 3 * x.numpy() ** 2)
print("f'' :", d2.numpy(), " by hand:", 6 * x.numpy())
print("f''':", d3.numpy())

# %% [markdown]
# The same three calls on a whole grid of points draw the derivatives of an activation. For
# $\tanh$: $\tanh' = 1 - \tanh^2$ (the backward rule of chapter 03), and differentiating that
# again, $\tanh'' = -2 \tanh \cdot (1 - \tanh^2)$ and
# $\tanh''' = (6 \tanh^2 - 2)(1 - \tanh^2)$. Lines: what autograd gives; dots: the formulas.

# %%
grid = lucid.Tensor(np.linspace(-3, 3, 121), requires_grad=True)
curves = {"tanh": lucid.tanh(grid)}
for name in ("tanh'", "tanh''", "tanh'''"):
    (curves[name],) = grad(list(curves.values())[-1].sum(), grid, create_graph=True)
t, xs = np.tanh(grid.numpy()), grid.numpy()
by_hand = {"tanh": t, "tanh'": 1 - t**2, "tanh''": -2 * t * (1 - t**2),
           "tanh'''": (6 * t**2 - 2) * (1 - t**2)}
fig, ax = plt.subplots(figsize=(8, 4.5))
for name, curve in curves.items():
    line, = ax.plot(xs, curve.numpy(), linewidth=2.5, label=name)
    ax.plot(xs[::8], by_hand[name][::8], "o", color=line.get_color(), markersize=5)
ax.set(xlabel="x", title="tanh and three derivatives, each by grad(create_graph=True)")
ax.grid(alpha=0.3)
ax.legend(loc="lower right")
plt.show()
print("largest difference from the formulas:",
      f"{max(np.abs(c.numpy() - by_hand[n]).max() for n, c in curves.items()):.1e}")

# %% [markdown]
# **The Hessian** $H_{ij} = \partial^2 f / \partial x_i \partial x_j$ of a quadratic form
# $f(x) = x^\top A x$ is $A + A^\top$, whatever $x$. `functional.hessian` builds it one row per
# backward pass; `functional.hvp` gives $Hv$ without building $H$ (two backward passes).

# %% tags=["nbval-check-output"]
A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, -1.0], [0.0, 1.0, 4.0]])


def f(v):
    return v @ lucid.Tensor(A) @ v


H = functional.hessian(f, lucid.Tensor([0.1, 0.2, 0.3]))
print(H.numpy())
print("H == A + A^T:", np.allclose(H.numpy(), A + A.T))
_, Hv = functional.hvp(f, lucid.Tensor([0.1, 0.2, 0.3]), lucid.Tensor([1.0, 0.0, 0.0]))
print("Hv == first column of H:", np.allclose(Hv.numpy(), (A + A.T)[:, 0]))
J = functional.jacobian(lambda v: lucid.tanh(v), lucid.Tensor([0.0, 1.0]))
print("Jacobian of tanh (diagonal 1 - tanh^2):", J.numpy().round(4).tolist())

# %% [markdown]
# **A gradient penalty** (as WGAN-GP uses): the loss contains a *gradient* of the network,
# $\lVert \partial D(x)/\partial x \rVert^2$, so training it needs the derivative of a derivative
# with respect to the weights. `gradgradcheck` checks such second derivatives against finite
# differences of the first.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
D = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
x = lucid.random.randn(4, 3, dtype=lucid.Float32, requires_grad=True)
(dx,) = grad(D(x).sum(), x, create_graph=True)
penalty = (dx * dx).sum()
penalty.backward()
print("every weight got a gradient from the penalty:",
      all(p.grad is not None for p in list(D.parameters())[:3]))
x64 = lucid.Tensor([0.3, -0.7], requires_grad=True)
print("gradgradcheck(tanh(x) * x^2):", gradgradcheck(lambda t: lucid.tanh(t) * t ** 2, x64))

# %% [markdown]
# ## 2. Linear algebra: `lucid.linalg`
#
# Every routine is differentiable (its standard matrix-calculus rule) and runs on both devices.
# Solving is better than inverting: `solve(A, b)` never forms $A^{-1}$.

# %% tags=["nbval-check-output"]
rng = np.random.default_rng(0)
M = rng.standard_normal((4, 4))
S = M @ M.T + 4 * np.eye(4)                    # symmetric positive definite
b = rng.standard_normal(4)
A_t, S_t = lucid.Tensor(M), lucid.Tensor(S)
print("solve      :", np.allclose(lucid.linalg.solve(A_t, lucid.Tensor(b)).numpy(),
                                 np.linalg.solve(M, b)))
print("inv        :", np.allclose(lucid.linalg.inv(A_t).numpy(), np.linalg.inv(M)))
print("det        :", np.isclose(lucid.linalg.det(A_t).item(), np.linalg.det(M)))
sign, logabs = lucid.linalg.slogdet(A_t)
print("slogdet    :", np.isclose(sign.item() * math.exp(logabs.item()), np.linalg.det(M)))
L = lucid.linalg.cholesky(S_t)
print("cholesky   : L L^T == S", np.allclose((L @ L.T).numpy(), S))
Q, R = lucid.linalg.qr(A_t)
print("qr         : Q R == A", np.allclose((Q @ R).numpy(), M))
U, s, Vh = lucid.linalg.svd(A_t, full_matrices=False)
print("svd        : U diag(s) Vh == A", np.allclose((U * s @ Vh).numpy(), M))
w, V = lucid.linalg.eigh(S_t)
print("eigh       : eigenvalues", np.allclose(w.numpy(), np.linalg.eigvalsh(S)))
print("pinv       :", np.allclose(lucid.linalg.pinv(A_t).numpy(), np.linalg.pinv(M)))
print("norm (fro) :", np.isclose(lucid.linalg.norm(A_t).item(), np.linalg.norm(M)))
print("A^3        :", np.allclose(lucid.linalg.matrix_power(A_t, 3).numpy(),
                                 np.linalg.matrix_power(M, 3)))

# %% [markdown]
# The gradient of $\log \lvert\det A\rvert$ is $A^{-\top}$ - a classic of matrix calculus:

# %% tags=["nbval-check-output"]
A_g = lucid.Tensor(M, requires_grad=True)
lucid.linalg.slogdet(A_g)[1].backward()
print("d log|det A| / dA == inv(A)^T:", np.allclose(A_g.grad, np.linalg.inv(M).T))

# %% [markdown]
# ## 3. Tensors by pattern: `lucid.einops`
#
# `rearrange`, `reduce` and `repeat` name the axes instead of counting them (the `einops` package,
# with Lucid as its backend, so every step is a differentiable Lucid op). `lucid.einsum` reads any
# subscripts NumPy does - a repeated letter is a diagonal: `"ii->"` is the trace.

# %% tags=["nbval-check-output"]
from lucid import einops

images = lucid.Tensor(np.arange(2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 3, 4, 4))
patches = einops.rearrange(images, "b c (h p1) (w p2) -> b (h w) (c p1 p2)", p1=2, p2=2)
print("4 patches of 2x2x3 per image:", patches.shape)
pooled = einops.reduce(images, "b c (h 2) (w 2) -> b c h w", "max")
print("2x2 max-pool == F.max_pool2d:", np.allclose(pooled.numpy(),
                                                   F.max_pool2d(images, 2).numpy()))
print("repeat:", einops.repeat(lucid.Tensor([1.0, 2.0]), "n -> n r", r=3).numpy().tolist())
T = lucid.Tensor(M)
print("einsum('ii->') == trace:", np.isclose(lucid.einsum("ii->", T).item(), np.trace(M)))

# %% [markdown]
# ## 4. More of the Tensor API
#
# Statistics with `ddof`, products (with an exact gradient at zeros), norms, `clamp`, bitwise
# operators on integers, in-place methods (which bump the version counter that backward checks),
# and counting: `unique`, `nonzero`, `histogram`.

# %% tags=["nbval-check-output"]
v = lucid.Tensor([1.0, 2.0, 4.0, 7.0])
print("std(ddof=1):", np.isclose(v.std(ddof=1).item(), np.std([1, 2, 4, 7], ddof=1)))
print("var(ddof=1):", np.isclose(v.var(ddof=1).item(), np.var([1, 2, 4, 7], ddof=1)))
print("prod       :", lucid.prod(v).item(), "  norm:", round(v.norm().item(), 4))
print("clamp      :", lucid.clamp(v, 2.0, 5.0).numpy().tolist(), "  cube:",
      lucid.cube(lucid.Tensor([2.0])).item())
i = lucid.Tensor([6, 5, 12])
print("bitwise    :", (i & 3).tolist(), (i | 1).tolist(), (i ^ 4).tolist(), (~i).tolist())
z = lucid.zeros(3)
z.add_(1.0).mul_(4.0)
print("in place   :", z.numpy().tolist(), " version", z._version)
values, counts = lucid.unique(lucid.Tensor([3, 1, 3, 2, 1, 3]), return_counts=True)
print("unique     :", values.tolist(), counts.tolist())
print("nonzero    :", lucid.nonzero(lucid.Tensor([0, 5, 0, 7])).tolist())
hist, edges = lucid.histogram(lucid.Tensor([0.1, 0.4, 0.45, 0.9]), bins=2, range=(0.0, 1.0))
print("histogram  :", hist.tolist(), edges.tolist())
gx, gy = lucid.meshgrid(lucid.Tensor([1.0, 2.0, 3.0]), lucid.Tensor([10.0, 20.0]))
print("meshgrid   :", gx.shape, gy.shape, "  diag:", lucid.diag(lucid.Tensor([1.0, 2.0])).tolist())

# %% [markdown]
# ## 5. More layers
#
# Activations from MobileNet and friends, 3-D convolution and pooling, transposed 1-D convolution,
# adaptive max pooling, resampling (`Upsample`, `F.interpolate`), padding modes, channel dropout and
# stochastic depth, instance normalisation, bilinear layers, `Unfold`/`Fold`, parameter
# containers, three more losses, and gradient clipping. Each is checked against its formula.

# %% tags=["nbval-check-output"]
t = lucid.Tensor([-4.0, -1.0, 0.5, 3.5, 7.0])
a = t.numpy()
checks = {
    "ReLU6":       (nn.ReLU6()(t),       np.clip(a, 0, 6)),
    "Hardsigmoid": (nn.Hardsigmoid()(t), np.clip(a + 3, 0, 6) / 6),
    "Hardswish":   (nn.Hardswish()(t),   a * np.clip(a + 3, 0, 6) / 6),
    "Mish":        (nn.Mish()(t),        a * np.tanh(np.log1p(np.exp(a)))),
    "Softplus":    (nn.Softplus()(t),    np.log1p(np.exp(a))),
    "SELU":        (nn.SELU()(t),        1.0507009873554805 * np.where(
                                             a > 0, a, 1.6732632423543772 * np.expm1(a))),
}
for name, (ours, ref) in checks.items():
    print(f"{name:12s}", np.allclose(ours.numpy(), ref))

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
vol = lucid.random.randn(1, 2, 4, 6, 6, dtype=lucid.Float32)
print("Conv3d          :", nn.Conv3d(2, 5, kernel_size=3, padding=1)(vol).shape)
print("MaxPool3d       :", nn.MaxPool3d(2)(vol).shape, " AvgPool3d:", nn.AvgPool3d(2)(vol).shape)
seq = lucid.random.randn(1, 2, 5, dtype=lucid.Float32)
print("ConvTranspose1d :", nn.ConvTranspose1d(2, 3, kernel_size=3, stride=2)(seq).shape)
img = lucid.Tensor(np.arange(16.0).reshape(1, 1, 4, 4))
print("AdaptiveMaxPool2d(2):", nn.AdaptiveMaxPool2d(2)(img).numpy().reshape(-1).tolist())
print("Upsample nearest x2 :", nn.Upsample(scale_factor=2)(img).shape)
print("bilinear, corners   :", F.interpolate(img, size=(7, 7), mode="bilinear",
                                             align_corners=True).numpy()[0, 0, [0, -1]][:, [0, -1]]
      .tolist())
print("pad reflect         :", F.pad(lucid.Tensor([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect")
      .numpy().tolist())
print("Dropout2d (eval)    :", np.array_equal(nn.Dropout2d(0.5).eval()(img).numpy(), img.numpy()))
print("DropPath (eval)     :", np.array_equal(nn.DropPath(0.2).eval()(img).numpy(), img.numpy()))
normed = nn.InstanceNorm2d(1)(img).numpy()
print("InstanceNorm2d      : mean", round(float(normed.mean()), 6), " std",
      round(float(normed.std()), 4))
print("F.normalize         :", F.normalize(lucid.Tensor([[3.0, 4.0]])).numpy().tolist())
bil = nn.Bilinear(3, 4, 2)
print("Bilinear            :", bil(lucid.zeros(5, 3), lucid.zeros(5, 4)).shape,
      [n for n, _ in bil.named_parameters()])
cols = nn.Unfold(2, stride=2)(img)   # four 2x2 windows side by side: no overlap
print("Unfold / Fold       :", cols.shape, np.array_equal(
    nn.Fold((4, 4), 2, stride=2)(cols).numpy(), img.numpy()))


# %% tags=["nbval-check-output"]
class Mixture(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(lucid.ones(2)) for _ in range(3)])
        self.named = nn.ParameterDict({"shift": nn.Parameter(lucid.zeros(2))})

print("parameter names:", [n for n, _ in Mixture().named_parameters()])
x_, y_ = lucid.Tensor([0.0, 2.0, -3.0]), lucid.Tensor([0.5, 0.0, 0.0])
print("L1Loss       :", nn.L1Loss()(x_, y_).item(), "(mean of 0.5, 2, 3)")
print("SmoothL1Loss :", round(nn.SmoothL1Loss()(x_, y_).item(), 4),
      "(mean of 0.125, 1.5, 2.5)")
logp = lucid.Tensor(np.log([[0.5, 0.5]]))
q = lucid.Tensor([[0.9, 0.1]])
kl = 0.9 * math.log(0.9 / 0.5) + 0.1 * math.log(0.1 / 0.5)
print("KLDivLoss    :", np.isclose(nn.KLDivLoss(reduction="batchmean")(logp, q).item(), kl))
from lucid.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)

w = nn.Parameter(lucid.zeros(2))
w.grad = np.array([3.0, 4.0], dtype=np.float32)
print("clip_grad_norm_ : norm before", clip_grad_norm_([w], max_norm=1.0).item(),
      " after", round(float(np.linalg.norm(w.grad)), 4))
clip_grad_value_([w], 0.5)
print("clip_grad_value_:", w.grad.tolist())
net = nn.Linear(2, 2)
flat = parameters_to_vector(net.parameters())
vector_to_parameters(flat * 0, net.parameters())
print("parameters as a vector:", flat.shape, " zeroed:",
      all(np.all(p.numpy() == 0) for p in net.parameters()))

# %% [markdown]
# ## 6. More optimizers, schedules and dataset tools
#
# Four more update rules (each PyTorch's formula) on the same quadratic bowl, and five more
# learning-rate schedules, printed epoch by epoch.

# %% tags=["nbval-check-output"]
from lucid.optim import Adadelta, Adamax, NAdam, RAdam
from lucid.optim.lr_scheduler import (
    CyclicLR,
    LinearLR,
    NoamScheduler,
    OneCycleLR,
    SequentialLR,
    StepLR,
)


def minimise(make, steps=200):
    p = nn.Parameter(lucid.Tensor([3.0, -2.0]))
    opt = make([p])
    for _ in range(steps):
        opt.zero_grad()
        ((p * p) * lucid.Tensor([1.0, 10.0])).sum().backward()
        opt.step()
    return float((p * p).sum().item())

for name, make in [("NAdam", lambda ps: NAdam(ps, lr=0.1)), ("RAdam", lambda ps: RAdam(ps, lr=0.1)),
                   ("Adamax", lambda ps: Adamax(ps, lr=0.1)),
                   ("Adadelta", lambda ps: Adadelta(ps, lr=1.0))]:
    print(f"{name:9s} |p|^2 after 200 steps: {minimise(make):.2e} (from 13)")
# (Adadelta has no learning rate to speak of: it learns each step's size from the ratio of
# two running averages, which start at 0, so its first steps are tiny.)

def rates(make, epochs=8):
    opt = lucid.optim.SGD([nn.Parameter(lucid.zeros(1))], lr=0.1)
    sched = make(opt)
    out = []
    for _ in range(epochs):
        out.append(round(opt.param_groups[0]["lr"], 4))
        opt.step()
        sched.step()
    return out

print("LinearLR     :", rates(lambda o: LinearLR(o, start_factor=0.25, total_iters=4)))
print("OneCycleLR   :", rates(lambda o: OneCycleLR(o, max_lr=1.0, total_steps=8,
                                                     cycle_momentum=False)))
print("CyclicLR     :", rates(lambda o: CyclicLR(o, base_lr=0.1, max_lr=0.5, step_size_up=2,
                                                   cycle_momentum=False)))
print("NoamScheduler:", rates(lambda o: NoamScheduler(o, model_size=16, warmup_steps=3)))
print("SequentialLR :", rates(lambda o: SequentialLR(
    o, [LinearLR(o, start_factor=0.5, total_iters=2), StepLR(o, step_size=2, gamma=0.5)],
    milestones=[3])))

# %% tags=["nbval-check-output"]
from lucid.data import ConcatDataset, Subset, TensorDataset

first = TensorDataset(lucid.Tensor(np.arange(3.0)))
second = TensorDataset(lucid.Tensor(np.arange(10.0, 15.0)))
both = ConcatDataset([first, second])
print("ConcatDataset:", len(both), both.cumulative_sizes, [float(both[i][0]) for i in (0, 3, -1)])
evens = Subset(both, [0, 2, 4, 6])
print("Subset       :", len(evens), [float(evens[i][0]) for i in range(len(evens))])

# %% [markdown]
# ## Exercises
#
# ### Exercise 22.1 · A Hessian by hand
#
# Work out the Hessian of $f(x, y) = x^2 y + \sin(x y)$ at $(x, y) = (1, 2)$ by hand: the
# matrix of second derivatives $\begin{pmatrix} f_{xx} & f_{xy} \\ f_{yx} & f_{yy}
# \end{pmatrix}$. Write it as a 2x2 list of numbers (`math.sin` and `math.cos` are allowed).

# %% tags=["solution"]
hessian_by_hand = [
    [2 * 2 - 2**2 * math.sin(2), 2 * 1 + math.cos(2) - 2 * math.sin(2)],
    [2 * 1 + math.cos(2) - 2 * math.sin(2), -(1**2) * math.sin(2)],
]


# %% tags=["check"]
def f_xy(v):
    x, y = v[0], v[1]
    return x * x * y + lucid.sin(x * y)


check("Exercise 22.1", hessian_by_hand, functional.hessian(f_xy, lucid.Tensor([1.0, 2.0])),
      nudge="Second derivatives: differentiate a first derivative once more.",
      hint="differentiate twice, one variable at a time; the derivative of sin(xy) with respect "
           "to x is y·cos(xy), and the product rule gives f_xy.")

# %% [markdown]
# ### Exercise 22.2 · The third derivative
#
# For $f(x) = x^4$, what is $f'''(1)$? The check computes it as section 1 does: `grad` three
# times, with `create_graph=True`.

# %% tags=["solution"]
third_derivative = 24.0

# %% tags=["check"]
x_check = lucid.Tensor(1.0, requires_grad=True)
(g1,) = grad(x_check ** 4, x_check, create_graph=True)
(g2,) = grad(g1, x_check, create_graph=True)
(g3,) = grad(g2, x_check)
check("Exercise 22.2", third_derivative, g3, nudge="Each derivative lowers the power by one.",
                                             hint="4x³, then 12x², then ...")


# %% [markdown]
# ### Exercise 22.3 · A Hessian-vector product from two gradients
#
# Write `hvp_by_hand(f, x, v)`: the product $H v$ of the Hessian of the scalar function `f` at
# `x` (a Tensor that requires grad) with the vector `v`, without building $H$. Use `grad` twice:
# the gradient $g(x)$ with `create_graph=True`, then the gradient of the number $g \cdot v$. The
# check compares it with `functional.hvp`.

# %% tags=["solution"]
def hvp_by_hand(f, x, v):
    """H(x) @ v for a scalar function f: the gradient of (grad f(x)) · v."""
    (g,) = grad(f(x), x, create_graph=True)
    (hv,) = grad((g * v).sum(), x)
    return hv


# %% tags=["check"]
def cubic_sum(t):
    return (t ** 3).sum()


def quadratic_form(t):
    return t @ lucid.Tensor(A) @ t


def f_xy(v):
    x, y = v[0], v[1]
    return x * x * y + lucid.sin(x * y)


x_a = lucid.Tensor([0.5, -1.0, 2.0], requires_grad=True)
x_b = lucid.Tensor([1.0, 2.0], requires_grad=True)
check_function("Exercise 22.3", hvp_by_hand, lambda f, x, v: functional.hvp(f, x, v)[1],
               [(cubic_sum, x_a, lucid.Tensor([1.0, 0.0, 0.0])),
                (cubic_sum, x_a, lucid.Tensor([1.0, 2.0, 3.0])),
                (quadratic_form, x_a, lucid.Tensor([0.0, 1.0, -1.0])),
                (f_xy, x_b, lucid.Tensor([1.0, 1.0]))],
               nudge="A Hessian-vector product needs no Hessian: differentiate a dot product.",
               hint="the gradient of g·v with respect to x is H v, because H is the Jacobian "
                    "of g. The first grad needs create_graph=True, or g has no graph to "
                    "differentiate.")


# %% [markdown]
# ### Exercise 22.4 · Least squares with `lucid.linalg.solve`
#
# Write `least_squares(X, y)`: the weights $w$ that minimise $\lVert X w - y \rVert^2$, for a
# Tensor `X` of shape `(n, d)` (more rows than columns) and a Tensor `y` of shape `(n,)`.
# Setting the gradient $2 X^\top (X w - y)$ to zero gives the *normal equations*
# $X^\top X\, w = X^\top y$: solve them with `lucid.linalg.solve` (section 2), not with an
# inverse. Return a Tensor of shape `(d,)`; because every step is a Lucid op, gradients flow
# through it.

# %% tags=["solution"]
def least_squares(X, y):
    """The w of shape (d,) that minimises |X w - y|², from the normal equations."""
    return lucid.linalg.solve(X.mT @ X, X.mT @ y)


# %% tags=["check"]
def numpy_least_squares(X, y):
    return np.linalg.lstsq(X.numpy(), y.numpy(), rcond=None)[0]


rng = np.random.default_rng(18)
cases = [(lucid.Tensor(rng.standard_normal((n, d))), lucid.Tensor(rng.standard_normal(n)))
         for n, d in [(5, 2), (8, 3), (20, 4)]]
check_function("Exercise 22.4", least_squares, numpy_least_squares, cases,
               entries="the d weights",
               nudge="Section 2 solves a linear system A w = b; which A and b give the "
                     "minimum?",
               hint="A = X.mT @ X (d x d) and b = X.mT @ y (d,): lucid.linalg.solve(A, b).")


# %% [markdown]
# ### Exercise 22.5 · Patches back into images, with `einops`
#
# Section 3 cut images `(b, c, h·p, w·p)` into patches `(b, h·w, c·p·p)` with `rearrange`.
# Write `from_patches(patches, h, w, p)`, the way back: one `einops.rearrange` call that
# turns the patches into the images they came from.

# %% tags=["solution"]
def from_patches(patches, h, w, p):
    """Images (b, c, h·p, w·p) from their patches (b, h·w, c·p·p)."""
    return einops.rearrange(patches, "b (h w) (c p1 p2) -> b c (h p1) (w p2)", h=h, w=w,
                            p1=p, p2=p)


# %% tags=["check"]
def numpy_from_patches(patches, h, w, p):
    x = patches.numpy()
    b, c = x.shape[0], x.shape[2] // (p * p)
    x = x.reshape(b, h, w, c, p, p).transpose(0, 3, 1, 4, 2, 5)
    return x.reshape(b, c, h * p, w * p)


rng = np.random.default_rng(5)
check_function("Exercise 22.5", from_patches, numpy_from_patches,
               [(lucid.Tensor(rng.standard_normal((2, 4, 12))), 2, 2, 2),
                (lucid.Tensor(rng.standard_normal((1, 6, 9))), 2, 3, 3),
                (lucid.Tensor(rng.standard_normal((3, 1, 4))), 1, 1, 2)],
               nudge="Read section 3's pattern from right to left.",
               hint="swap the two sides of section 3's pattern, and name h and w (p1 = p2 = p) "
                    "so that einops can split h·w and c·p·p.")

# %% [markdown]
# **Next:** [23 · Past one machine: data parallelism](23_data_parallel.ipynb): training one model
# in several processes at once, and the all-reduce that keeps them in step.
