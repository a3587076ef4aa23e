# %% [markdown]
# # 17 · Gradients through time: vanishing, exploding, clipping
#
# Chapter 16 trained an LSTM and a plain RNN to reverse a sequence: the LSTM learned to use
# symbols read 15 steps earlier, the RNN did not. This chapter measures why. Backward through a
# recurrent network multiplies one Jacobian per time step, and a product of many factors
# shrinks or grows **exponentially**:
#
# | § | what |
# |---|---|
# | 1 | the task and the model of chapter 16, in one cell |
# | 2 | vanishing gradients through time: $\lVert \partial L / \partial h_t \rVert$, and why |
# | 3 | exploding gradients, and gradient clipping with `clip_grad_norm_` |
#
# **You need:** [16 · Recurrent networks](16_recurrent_networks.ipynb) (the cells, the LSTM's
# gates, the reverse task), [03 · Backward, step by step](03_backward_step_by_step.ipynb) (the
# chain rule along a graph) and [09 · Reading a training run](09_reading_a_training_run.ipynb)
# (the training loop, gradient norms).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.autograd import grad
from lucid.data import DataLoader
from lucid.data.datasets import ReverseTask
from lucid.nn.utils import clip_grad_norm_, clip_grad_value_
from lucid.optim import SGD
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid_viz.exercises import check, check_function

np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 1. The task and the model of chapter 16
#
# The reverse task (8 random symbols, `<sep>`, the 8 symbols backwards; prompt targets ignored
# with -100), the `Embedding` → recurrent layer → `Linear` model, and the training loop with Adam
# or SGD, a cosine schedule and `clip_grad_norm_` (section 3), exactly as chapter 16 wrote them:

# %%
lucid.random.seed(0)
train_set = ReverseTask(4000, length=8, vocab=10)
test_set = ReverseTask(1000, length=8, vocab=10)
VOCAB = train_set.vocab_size                 # 10 symbols and <sep>


class NextToken(nn.Module):
    """Embedding -> recurrent layer -> Linear: scores for the next token at every step."""

    def __init__(self, recurrent=nn.LSTM, vocab_size=VOCAB, embed=16, hidden=96):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.rnn = recurrent(embed, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x):                      # x: (N, L) token numbers
        out, _ = self.rnn(self.embed(x))       # (N, L, hidden): the state at every step
        return self.head(out)                  # (N, L, vocab_size)


def sequence_loss(logits, y):
    return F.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))   # -100: ignored


def train(model, optimizer, epochs, max_norm=math.inf, desc="training (epochs)"):
    """Train on train_set; return the loss and the total gradient norm of every step."""
    loader = DataLoader(train_set, batch_size=64, shuffle=True)
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    losses, norms = [], []
    model.train()
    for _ in trange(epochs, desc=desc):
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = sequence_loss(model(xb), yb)
            loss.backward()
            norms.append(clip_grad_norm_(model.parameters(), max_norm).item())
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
    return losses, norms


def answer_accuracy(model, task=test_set):
    """The fraction right at each answer position, and of whole answers right."""
    model.eval()
    with lucid.no_grad():
        predicted = model(task.tensors[0]).numpy().argmax(axis=-1)
    answer = slice(task.prompt_length - 1, None)              # the positions that count
    right = predicted[:, answer] == task.tensors[1].numpy()[:, answer]
    return right.mean(axis=0), right.all(axis=1).mean()


# %% [markdown]
# ## 2. Vanishing gradients through time
#
# How much does the loss at the end of a sequence depend on the state $t$ steps earlier? Run a
# cell over $T = 50$ random inputs, keep every state $h_1, \dots, h_T$, and let the loss read
# only the last one ($L = \sum h_T$).
#
# `backward()` fills `.grad` of the leaves only (the weights); we want the gradient at the
# intermediate states. **`lucid.autograd.grad(outputs, inputs)`** gives it: for each tensor in
# `inputs` (any tensor of the graph, a leaf or not) it returns $\partial\,\text{outputs} /
# \partial\,\text{input}$, as a tuple, and it writes no `.grad` anywhere. A small example first,
# $y = \sum_i (3 a_i)^2$ with $b = 3a$ in between, so $\partial y / \partial b = 2b$:

# %% tags=["nbval-check-output"]
a = lucid.Tensor([1.0, 2.0], requires_grad=True)
b = 3 * a                                   # an intermediate tensor, not a leaf
y = (b ** 2).sum()
(dy_db,) = grad(y, b)                       # one input -> a tuple of one gradient
print("dy/db =", dy_db.numpy(), "  2b =", 2 * b.numpy(), "  a.grad is still", a.grad)


# %% [markdown]
# With the list of all 50 states as `inputs`, one call gives $\partial L / \partial h_t$ for
# every $t$ at once. (Chapter 22 uses the same function for second derivatives.)

# %%
def unroll(cell, steps=50, batch=16, seed=1):
    """Run a cell over `steps` random inputs from a zero state; return every state h_1 ... h_T.

    The inputs are drawn after lucid.random.seed(seed): the same for every cell we compare."""
    lucid.random.seed(seed)
    x = lucid.random.randn(steps, batch, cell.input_size, dtype=lucid.Float32)
    h = lucid.zeros(batch, cell.hidden_size, dtype=lucid.Float32)
    c = lucid.zeros(batch, cell.hidden_size, dtype=lucid.Float32)   # (LSTM only)
    states = []
    for t in range(steps):
        if isinstance(cell, nn.LSTMCell):
            h, c = cell(x[t], (h, c))
        else:
            h = cell(x[t], h)
        states.append(h)
    return states


def state_gradient_norms(cell, steps=50):
    """||dL/dh_t|| for t = 1 ... steps, where L = sum(h_T) reads the last state only."""
    states = unroll(cell, steps)
    return np.array([g.norm().item() for g in grad(states[-1].sum(), states)])


def per_step_factor(norms):
    """The average factor by which the gradient shrinks (or grows) per step back."""
    return (norms[0] / norms[-1]) ** (1 / (len(norms) - 1))


# %% [markdown]
# Four cells with 8 inputs and 32 hidden units, all with PyTorch's initialisation: a tanh RNN,
# an LSTM, and two LSTMs whose **forget-gate bias** is set to 1 and to 3 (more on those below).
# The forget gate is the second block of rows ($H$ to $2H$) of the stacked biases; the two
# biases add, so we set one and zero the other, in place under `no_grad` as `nn.init` does.

# %% tags=["nbval-check-output"]
HIDDEN = 32


def lstm_with_forget_bias(bias):
    cell = nn.LSTMCell(8, HIDDEN)
    with lucid.no_grad():
        cell.bias_ih[HIDDEN:2 * HIDDEN] = bias      # gate order i, f, g, o: f is block 2
        cell.bias_hh[HIDDEN:2 * HIDDEN] = 0.0
    return cell


lucid.random.seed(0)
cells = {"tanh RNN": nn.RNNCell(8, HIDDEN), "LSTM": nn.LSTMCell(8, HIDDEN),
         "LSTM, forget bias 1": lstm_with_forget_bias(1.0),
         "LSTM, forget bias 3": lstm_with_forget_bias(3.0)}
through_time = {name: state_gradient_norms(c) for name, c in cells.items()}
for name, norms in through_time.items():
    print(f"{name:20s} ||dL/dh_50|| = {norms[-1]:5.2f}   ||dL/dh_1|| = {norms[0]:.1e}   "
          f"per step back: x {per_step_factor(norms):.2f}")


# %%
def plot_through_time(curves, title):
    """One line per entry of ``curves`` (label -> the norms at steps 1..50), on a log scale."""
    fig, ax = plt.subplots(figsize=(9, 5))
    for (label, norms), marker in zip(curves.items(), "osd^"):
        ax.plot(np.arange(1, len(norms) + 1), norms, marker=marker, markersize=4, label=label)
    ax.set(yscale="log", xlabel="time step t (the loss reads step 50)",
           ylabel=r"$\Vert\partial L / \partial h_t\Vert$", title=title)
    ax.grid(alpha=0.3)
    ax.legend()
    plt.show()


plot_through_time(through_time, "How much of the gradient reaches step t")

# %% [markdown]
# On a log scale the tanh RNN's line is straight: the gradient shrinks by the **same factor**
# with every step back, about 0.5, so the state 20 steps back receives $0.5^{20} \approx
# 10^{-6}$ of the signal. Why a constant factor? The chain rule through the unrolled graph.
#
# **The RNN.** $h_k = \tanh(a_k)$ with $a_k = W_{ih} x_k + W_{hh} h_{k-1} + b$, so one step
# back multiplies by the Jacobian
#
# $$\frac{\partial h_k}{\partial h_{k-1}} = \operatorname{diag}\!\left(1 - h_k^2\right) W_{hh},
# \qquad
# \frac{\partial L}{\partial h_t} = \Big(\frac{\partial h_{t+1}}{\partial h_t}\Big)^{\!\top}
# \cdots \Big(\frac{\partial h_T}{\partial h_{T-1}}\Big)^{\!\top}
# \frac{\partial L}{\partial h_T},$$
#
# a product of $T - t$ matrices, each $W_{hh}$ with its rows scaled by
# $\tanh'(a) = 1 - \tanh^2(a) \le 1$ (1 only at $a = 0$, falling to 0 as a unit saturates).
# Over many steps, powers of $W_{hh}$ grow or shrink like $\rho^{k}$, where $\rho$ is the
# largest magnitude of its eigenvalues (its spectral radius), and the $\tanh'$ factors can only
# shrink them further. So with $\rho < 1$ the gradient shrinks **geometrically**, $T - t$ times
# over. PyTorch's initialisation draws $W_{hh}$ from $U(-1/\sqrt{H}, 1/\sqrt{H})$: entries of
# variance $1/(3H)$, and for such an $H \times H$ random matrix $\rho \approx \sqrt{H} \cdot
# \sqrt{1/(3H)} = 1/\sqrt{3} \approx 0.58$. The $\tanh'$ factors take a bit more:

# %% tags=["nbval-check-output"]
W_hh = cells["tanh RNN"].weight_hh.numpy()
print("largest |eigenvalue| of W_hh:", round(float(np.abs(np.linalg.eigvals(W_hh)).max()), 2))
print("measured factor per step    :", round(per_step_factor(through_time["tanh RNN"]), 2))

# %% [markdown]
# That is the **vanishing gradient**: the weights receive almost no signal about how an input
# from far back should have been used, so the RNN of chapter 16 never learned the far answer
# positions. The signal is not wrong, it is too small to matter next to the gradient from the
# near positions.
#
# **The LSTM.** Its cell state has a second path back in time. From
# $c_k = f_k \odot c_{k-1} + i_k \odot g_k$, the direct Jacobian is
#
# $$\frac{\partial c_k}{\partial c_{k-1}} = \operatorname{diag}(f_k),$$
#
# no weight matrix and no $\tanh'$: along the cell path the gradient is multiplied only by the
# forget gates, $\prod_k f_k$, because the new cell state is the old one **plus** an update (the
# same idea as the residual connections of chapter 11). When the forget gates are close to 1, the
# gradient travels far. But look at the plain "LSTM" line: at PyTorch's initialisation all biases
# are near 0, so $f = \sigma(\approx 0) \approx 0.5$, and the cell path halves the gradient at
# every step, about as fast as the RNN loses it. The architecture *allows* long memory; the
# forget gates must be *open* to use it. A **forget-gate bias** of 1 (a common initialisation,
# $\sigma(1) \approx 0.73$) slows the decay, a bias of 3 ($\sigma(3) \approx 0.95$) nearly stops
# it after the first few steps, and training opens the gates wherever memory lowers the loss:
# the LSTM of chapter 16 learned to reach 15 steps back, starting from the default. (The first
# step back, from $h_T$ into the cell state, goes through $o_T \odot \tanh'(c_T)$ and costs a
# factor of its own: the drop at the right end of the biased lines.)
#
# The GRU's $h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$ has the same kind of path, scaled by
# the update gate $z_t$.
#
# ## 3. Exploding gradients, and clipping
#
# The same product can also **grow**: if the factors are larger than 1, the gradient increases
# geometrically on its way back. Multiply the RNN's $W_{hh}$ by 2 or 3 (in place, under
# `no_grad`) and measure again:

# %% tags=["nbval-check-output"]
scaled = {}
for scale in (1, 2, 3):
    lucid.random.seed(0)
    scaled[scale] = nn.RNNCell(8, HIDDEN)
    with lucid.no_grad():
        scaled[scale].weight_hh.mul_(scale)
by_scale = {scale: state_gradient_norms(c) for scale, c in scaled.items()}
for scale, norms in by_scale.items():
    radius = np.abs(np.linalg.eigvals(scaled[scale].weight_hh.numpy())).max()
    print(f"W_hh x {scale}: largest |eigenvalue| {radius:.2f}   ||dL/dh_50|| = {norms[-1]:5.2f}"
          f"   ||dL/dh_1|| = {norms[0]:.1e}")

# %%
plot_through_time({f"$W_{{hh}}$ x {scale}": norms for scale, norms in by_scale.items()},
                  "tanh RNN: vanishing and exploding gradients")

# %% [markdown]
# With $W_{hh} \times 1$ the gradient vanishes, with $\times 2$ it shrinks only slowly, with
# $\times 3$ it grows: the earliest states get gradients a hundred times larger than the last
# one.
# ($\tanh$ limits the growth: a unit that saturates has $\tanh' \approx 0$ and passes little
# back. A ReLU RNN has no such brake.) In training this shows up as rare, **huge** gradients:
# one batch lands on a steep wall of the loss surface, and one SGD step of
# $\text{lr} \times \lVert g \rVert$ throws the weights far away, undoing what was learned.
#
# **Gradient clipping** caps the step. `clip_grad_norm_(parameters, max_norm)` treats all the
# gradients as one long vector $g$, and if its norm is above `max_norm`, scales every gradient
# by the same factor:
#
# $$g \leftarrow g \cdot \min\!\left(1, \frac{\text{max\_norm}}{\lVert g \rVert + 10^{-6}}\right).$$
#
# The **direction** is kept, only the length is capped; it returns the norm **before** clipping.
# Call it between `backward()` and `optimizer.step()`. On the $\times 3$ cell:

# %% tags=["nbval-check-output"]
exploding = scaled[3]
exploding.zero_grad()
states = unroll(exploding)
states[-1].sum().backward()                 # fills p.grad of the cell's four parameters


def flat_grad(module):
    return np.concatenate([np.ravel(p.grad) for p in module.parameters()])


before = flat_grad(exploding)
total = clip_grad_norm_(exploding.parameters(), max_norm=1.0)
after = flat_grad(exploding)
print(f"norm returned by clip_grad_norm_: {total.item():.4g}")
print(f"norm of the gradient, before {np.linalg.norm(before):.4g}, "
      f"after {np.linalg.norm(after):.4f}")
cosine = before @ after / (np.linalg.norm(before) * np.linalg.norm(after))
print(f"cosine between the two directions: {cosine:.4f}")

# %% [markdown]
# ### Training with and without clipping
#
# A plain RNN on the reverse task again, this time with plain SGD (no momentum) at a learning
# rate of 4: large, to learn fast, and too large for the occasional steep gradient. Two runs from
# the same initialisation, with the same batches: one unclipped, one with `max_norm=0.5`.

# %%
runs = {}
for max_norm in (math.inf, 0.5):
    lucid.random.seed(3)                     # the same start and the same batches for both
    net = NextToken(nn.RNN)
    losses, norms = train(net, SGD(net.parameters(), lr=4.0), epochs=4, max_norm=max_norm,
                          desc=f"max_norm={max_norm}")
    runs[max_norm] = (losses, norms, answer_accuracy(net)[0].mean())
for max_norm, (losses, norms, accuracy) in runs.items():
    print(f"max_norm={max_norm}: largest gradient norm {max(norms):5.1f}, "
          f"loss in the last epoch {np.mean(losses[-len(losses) // 4:]):.2f}, "
          f"test accuracy {accuracy:.3f}")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4.4))
for max_norm, (losses, norms, _) in runs.items():
    label = "no clipping" if max_norm == math.inf else f"clipped at {max_norm:g}"
    ax1.plot(losses, label=label, linewidth=1)
    ax2.plot(norms, label=label, linewidth=1)
ax1.axhline(math.log(VOCAB), color="grey", linestyle=":", label="ln 11 (guessing)")
ax1.set(yscale="log", xlabel="training step", ylabel="cross-entropy (nats)",
        title="Training loss")
ax1.set_yticks([1, 2, 5, 10, 20, 50], ["1", "2", "5", "10", "20", "50"])
ax1.minorticks_off()
ax2.axhline(0.5, color="grey", linestyle=":", label="max_norm")
ax2.set(yscale="log", xlabel="training step", ylabel="total gradient norm (before clipping)",
        title="Gradient norm")
for ax in (ax1, ax2):
    ax.legend()
fig.tight_layout()
plt.show()

# %% tags=["nbval-check-output"]
unclipped, clipped = runs[math.inf][0], runs[0.5][0]
guessing = math.log(VOCAB)
print("without clipping the loss went above 2 x ln 11:", max(unclipped) > 2 * guessing)
print("with clipping it stayed below 1.5 x ln 11     :", max(clipped) < 1.5 * guessing)
print("clipping ends with the lower loss             :",
      np.mean(clipped[-20:]) < np.mean(unclipped[-20:]))

# %% [markdown]
# Without clipping, training goes well for a dozen steps; then the gradient grows past 1, a
# step of $\text{lr} \times \lVert g \rVert$ overshoots and lands where the loss and its
# gradient are far larger (the spike, far above the $\ln 11$ of a model that guesses), and the
# long steps that follow keep it there: the run spends most of its four epochs above $\ln 11$.
# With clipping, no step is longer than $\text{lr} \times \text{max\_norm} = 2$: the moment
# where the other run blew up passes without harm, the gradient never grows large (the right
# plot shows the norms *before* clipping), and with the same learning rate the loss goes down
# without a spike. Clipping costs one norm per step and is standard practice for recurrent
# networks and Transformers (`max_norm` between 0.5 and 5 is typical). Exactly when the
# unclipped run blows up can differ on another machine; that it does at this learning rate does
# not.
#
# **What to remember**
#
# * A recurrent network is a loop over time with shared weights; backward through the unrolled
#   loop (BPTT) multiplies one Jacobian per step.
# * A product of many factors vanishes or explodes geometrically. For a tanh RNN each factor is
#   $\operatorname{diag}(\tanh') W_{hh}$; the gradient from far back vanishes, and the RNN fails
#   to learn long dependencies.
# * The LSTM's cell state is updated **additively**; along it the gradient is scaled only by the
#   forget gates, so it survives as long as they are open (a forget-gate bias helps at the start).
# * Exploding gradients are capped with `clip_grad_norm_`, between `backward()` and `step()`.

# %% [markdown]
# ## Exercises
#
# ### Exercise 17.1 · A product of Jacobians
#
# A scalar linear RNN, $h_t = w \, h_{t-1} + x_t$, runs for 30 steps from $h_0$, and the loss is
# $L = h_{30}$. What is $\partial L / \partial h_0$ for $w = 0.9$, and for $w = 1.1$? Give both
# numbers to 3 significant digits (a calculator is allowed).

# %% tags=["solution"]
grad_w_small = 0.9 ** 30
grad_w_large = 1.1 ** 30


# %% tags=["check"]
def linear_rnn_grad(w, steps=30):
    h0 = lucid.Tensor(0.5, requires_grad=True)
    h = h0
    for _ in range(steps):
        h = w * h + 1.0                      # x_t = 1: the inputs do not change the answer
    (g,) = grad(h, h0)
    return g.item()


check("Exercise 17.1", [grad_w_small, grad_w_large], [linear_rnn_grad(0.9), linear_rnn_grad(1.1)],
      rtol=5e-3, nudge="Backward through time multiplies by the same factor at every step.",
                 hint="each step back multiplies by dh_t/dh_{t-1} = w; how many steps are there?")


# %% [markdown]
# ### Exercise 17.2 · An LSTM step by hand
#
# Write one LSTM step in NumPy: from the input `x` `(N, input)`, the states `h` and `c`
# `(N, hidden)` and the four parameters in PyTorch's layout (`W_ih` `(4·hidden, input)`, `W_hh`
# `(4·hidden, hidden)`, `b_ih` and `b_hh` `(4·hidden,)`, the gates stacked in the order
# $i, f, g, o$), return `(h_new, c_new)` as in chapter 16, section 2. The check compares with
# `nn.LSTMCell` given the same weights.

# %% tags=["solution"]
def lstm_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    """One LSTM step: (h', c') from x, (h, c) and the stacked gate weights (i, f, g, o)."""
    def sigmoid(a):
        return 1 / (1 + np.exp(-a))

    z = x @ W_ih.T + b_ih + h @ W_hh.T + b_hh            # (N, 4·hidden)
    i, f, g, o = np.split(z, 4, axis=1)
    c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h_new = sigmoid(o) * np.tanh(c_new)
    return h_new, c_new


# %% tags=["check"]
def lucid_lstm_step(x, h, c, W_ih, W_hh, b_ih, b_hh):
    step = nn.LSTMCell(x.shape[1], h.shape[1], dtype=lucid.Float64)
    step.load_state_dict({"weight_ih": lucid.Tensor(W_ih), "weight_hh": lucid.Tensor(W_hh),
                          "bias_ih": lucid.Tensor(b_ih), "bias_hh": lucid.Tensor(b_hh)})
    return step(lucid.Tensor(x), (lucid.Tensor(h), lucid.Tensor(c)))


def lstm_case(rng, n, inputs, hidden):
    return (rng.standard_normal((n, inputs)), rng.standard_normal((n, hidden)),
            rng.standard_normal((n, hidden)), rng.standard_normal((4 * hidden, inputs)),
            rng.standard_normal((4 * hidden, hidden)), rng.standard_normal(4 * hidden),
            rng.standard_normal(4 * hidden))


lucid.random.seed(0)                          # (nn.LSTMCell draws an initialisation first)
rng_13 = np.random.default_rng(0)
check_function("Exercise 17.2", lstm_step, lucid_lstm_step,
               [lstm_case(rng_13, 1, 2, 3), lstm_case(rng_13, 5, 4, 6)],
               nudge="An LSTM step computes four gates from one affine map of x and h.",
               hint="z = x W_ih^T + b_ih + h W_hh^T + b_hh has 4·hidden columns: split it into "
                    "four blocks i, f, g, o; g takes tanh, the other three the sigmoid.")


# %% [markdown]
# ### Exercise 17.3 · Clipping by the total norm
#
# Write `clip_by_total_norm(grads, max_norm)` for a list of NumPy arrays (one gradient per
# parameter, of any shapes): return the list of clipped gradients (new arrays) and the total
# norm before clipping, with the formula of section 3 (the $10^{-6}$ included, and no change
# when the norm is below `max_norm`). The check compares with `clip_grad_norm_`.

# %% tags=["solution"]
def clip_by_total_norm(grads, max_norm):
    """Scale all gradients by one factor so that their joint L2 norm is at most max_norm."""
    total = math.sqrt(sum(float(np.sum(g * g)) for g in grads))
    scale = min(1.0, max_norm / (total + 1e-6))
    return [g * scale for g in grads], total


# %% tags=["check"]
def lucid_clip(grads, max_norm):
    params = [nn.Parameter(lucid.zeros(g.shape)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.copy()
    total = clip_grad_norm_(params, max_norm)
    return [p.grad for p in params], total.item()


def flattened(clip):
    """Run a clipping function on copies; its clipped gradients and the norm, in one array."""
    def run(grads, max_norm):
        clipped, total = clip([g.copy() for g in grads], max_norm)
        return np.concatenate([np.ravel(g) for g in clipped] + [[total]])
    run.__name__ = "clip_by_total_norm"
    return run


rng_13 = np.random.default_rng(1)
check_function("Exercise 17.3", flattened(clip_by_total_norm), flattened(lucid_clip),
               [([np.array([3.0, 4.0])], 1.0),
                ([np.array([0.3, -0.4])], 1.0),
                ([rng_13.standard_normal((3, 4)), rng_13.standard_normal(4),
                  rng_13.standard_normal((2, 2, 2))], 2.0)],
               nudge="Clipping by the total norm scales every gradient by one factor.",
               hint="the total norm is sqrt of the sum of the squares of every entry of every "
                    "gradient; every gradient is multiplied by the same min(1, max_norm / "
                    "(total + 1e-6)).")


# %% [markdown]
# ### Exercise 17.4 · Clipping each value
#
# `clip_grad_value_(params, clip)` clips every gradient entry to `[-clip, clip]` on its own.
# Write `clip_by_value(grads, clip)` for a list of NumPy arrays: the clipped copies. The check
# compares with `clip_grad_value_` on the same gradients.

# %% tags=["solution"]
def clip_by_value(grads, clip):
    """Every entry of every gradient clipped to [-clip, clip]."""
    return [np.clip(g, -clip, clip) for g in grads]


# %% tags=["check"]
def lucid_clip_value(grads, clip):
    params = [nn.Parameter(lucid.zeros(g.shape)) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.copy()
    clip_grad_value_(params, clip)
    return np.concatenate([np.ravel(p.grad) for p in params])


def flat_clip_by_value(grads, clip):
    return np.concatenate([np.ravel(g) for g in clip_by_value([g.copy() for g in grads], clip)])


rng = np.random.default_rng(4)
check_function("Exercise 17.4", flat_clip_by_value, lucid_clip_value,
               [([np.array([3.0, -4.0, 0.5])], 1.0),
                ([rng.standard_normal((2, 3)), rng.standard_normal(4)], 0.5)],
               entries="every gradient's entries, one after the other",
               nudge="Unlike clip_by_total_norm, each entry is clipped on its own.",
               hint="np.clip(g, -clip, clip) for every gradient g.")

# %% [markdown]
# **Next:** [18 · Attention](18_attention.ipynb) replaces the recurrence by attention: every
# position looks at every earlier one directly, with no product of Jacobians in between.
