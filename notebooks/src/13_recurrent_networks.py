# %% [markdown]
# # 13 · Sequences: RNNs, LSTMs and gradients through time
#
# A sentence, a melody, a sensor reading every second: inputs whose order matters and whose
# length varies. A **recurrent network** reads such a sequence one element at a time and carries
# a **state** from each step to the next, its memory of what it has read so far. The same
# weights are used at every step, so one small cell handles a sequence of any length.
#
# This chapter builds one by hand, uses Lucid's recurrent layers, trains one on a task that needs
# memory, and then looks at the problem that makes recurrent networks hard to train: gradients
# that shrink or grow exponentially on their way back through time.
#
# | § | what |
# |---|---|
# | 1 | a recurrent cell written as a Python loop, and its graph, rolled up and unrolled |
# | 2 | `nn.RNN`, `nn.LSTM`, `nn.GRU`: PyTorch's API, parameter names and shapes |
# | 3 | reversing a sequence: `Embedding` + `LSTM` + `Linear`, and a plain RNN on the same task |
# | 4 | vanishing gradients through time: $\lVert \partial L / \partial h_t \rVert$, and why |
# | 5 | exploding gradients, and gradient clipping with `clip_grad_norm_` |
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (the graph and the
# chain rule), [03 · Backward, step by step](03_backward_step_by_step.ipynb),
# [07 · Training an MLP](07_training_an_mlp.ipynb) (the training loop, gradient norms),
# [09 · Layers and losses](09_layers_and_losses.ipynb) (`Embedding`) and
# [10 · Optimizers, schedules and data](10_optimizers_and_data.ipynb).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.autograd import grad
from lucid.data import DataLoader
from lucid.data.datasets import ReverseTask
from lucid.nn.utils import clip_grad_norm_
from lucid.optim import SGD, Adam
from lucid.optim.lr_scheduler import CosineAnnealingLR
from lucid_viz.exercises import check, check_function

np.set_printoptions(precision=4, suppress=True)
plt.rcParams.update({"font.size": 12})   # figures readable on a projector
lucid.random.seed(0)

# %% [markdown]
# ## 1. A recurrent cell is a loop
#
# The simplest recurrent cell (Elman's RNN) reads the input $x_t$ and the previous state
# $h_{t-1}$ and writes the new state:
#
# $$h_t = \tanh\left(W_{ih}\, x_t + b_{ih} + W_{hh}\, h_{t-1} + b_{hh}\right), \qquad h_0 = 0.$$
#
# $W_{ih}$ (hidden × input) and $W_{hh}$ (hidden × hidden) are the **same at every step**. The
# state $h_t$ is all the cell knows about $x_1, \dots, x_t$. `nn.RNNCell(input_size,
# hidden_size)` is one such step, with PyTorch's parameter names; here it is next to the formula
# written out with Lucid ops, on a batch of 2:

# %% tags=["nbval-check-output"]
cell = nn.RNNCell(3, 4)                     # input_size 3, hidden_size 4
for name, p in cell.named_parameters():
    print(f"{name:10s} {p.shape}")

x_t = lucid.random.randn(2, 3, dtype=lucid.Float32)     # one time step: a batch of 2 inputs
h_prev = lucid.random.randn(2, 4, dtype=lucid.Float32)  # and their states
by_hand = lucid.tanh(x_t @ cell.weight_ih.T + cell.bias_ih
                     + h_prev @ cell.weight_hh.T + cell.bias_hh)
print("the formula == RNNCell:", np.allclose(by_hand.numpy(), cell(x_t, h_prev).numpy(),
                                             atol=1e-6))


# %% [markdown]
# A whole sequence is a Python `for` loop over the time steps, with one cell called again and
# again. The input is laid out `(T, batch, features)`, time first, as PyTorch's recurrent layers
# expect by default; the state starts at zero (in the input's dtype).

# %%
class TinyRNN(nn.Module):
    """An RNN written out: one RNNCell called once per time step; returns the last state."""

    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = nn.RNNCell(input_size, hidden_size)

    def forward(self, x):                                    # x: (T, batch, input_size)
        h = lucid.zeros(x.shape[1], self.cell.hidden_size, dtype=x.dtype)   # h_0 = 0
        h.name = "zero state"                                # (a name for the drawing)
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)                           # the same weights every step
        return h                                             # h_T: (batch, hidden_size)


tiny = TinyRNN(3, 4)
x_long = lucid.random.randn(20, 2, 3, dtype=lucid.Float32)   # 20 steps, a batch of 2
x_short = x_long[:3]                                         # the first 3 steps

# %% [markdown]
# `lucid_viz.draw` notices that the 20 calls of the cell are identical, each fed by the one
# before, and **rolls them up**: one call is drawn, labelled "× 20 calls", with the total cost of
# all twenty. Read the edges: the weights feed **every call** (one set of weights for the whole
# sequence), `x[t]` is sliced off the input for each call, the zero state feeds the **first call**
# only, and the dashed **next call** edge is the recurrence: this call's $h_t$ is the next call's
# $h_{t-1}$.

# %%
lucid_viz.draw(tiny, x_long)

# %% [markdown]
# With `rollup=False` every call is drawn (here for 3 steps, so that it fits): the same four ops
# three times, each cluster feeding the next. This **unrolled** graph is what backward walks: a
# chain as deep as the sequence is long. The chain rule through it, from the last step back to
# the first, is called **backpropagation through time** (BPTT); nothing about it is special,
# it is `backward()` on this graph.

# %%
lucid_viz.draw(tiny, x_short, rollup=False, max_nodes=None)

# %% [markdown]
# The unrolled graph grows by the same number of nodes with every step (a GetItem for `x[t]`,
# two Linear, an Add and a Tanh), which is why the roll-up matters for long sequences:

# %% tags=["nbval-check-output"]
for steps in (3, 20, 100):
    graph = lucid_viz.trace(tiny, lucid.zeros(steps, 2, 3, dtype=lucid.Float32))
    print(f"{steps:3d} steps: {len(graph.nodes):4d} nodes")

# %% [markdown]
# ## 2. `nn.RNN`, `nn.LSTM`, `nn.GRU`
#
# Lucid's recurrent layers run the loop for you, with PyTorch's API, so a PyTorch `state_dict`
# loads into them and the outputs match:
#
# * `nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
#   batch_first=False, dropout=0.0, bidirectional=False)`; `nn.LSTM` and `nn.GRU` take the same
#   arguments (without `nonlinearity`).
# * The input is `(L, N, input_size)`: sequence length first. With `batch_first=True` it is
#   `(N, L, input_size)`, the layout a data loader gives.
# * They return **`(output, h_n)`**; an LSTM returns `(output, (h_n, c_n))`.
#   `output` holds the top layer's state at **every** step, `(L, N, D·hidden_size)` (batch first
#   if asked); `h_n` holds the **last** state of every layer and direction,
#   `(num_layers·D, N, hidden_size)`, with $D = 2$ for `bidirectional=True` (a second loop that
#   reads the sequence backwards; its states are concatenated to the forward ones) and 1
#   otherwise. The initial state is zero unless you pass one as the second argument.
#
# The parameters are `weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}` for
# layer $k$ (with a `_reverse` twin per layer when bidirectional). The gates are stacked in
# one matrix: 1 block for the RNN, 3 for the GRU, 4 for the LSTM, so `weight_ih_l0` is
# `(gates·hidden, input)`:

# %% tags=["nbval-check-output"]
for layer in (nn.RNN(3, 4), nn.GRU(3, 4), nn.LSTM(3, 4)):
    shapes = ", ".join(f"{name} {p.shape}" for name, p in layer.named_parameters())
    print(f"{type(layer).__name__:4s}: {shapes}")

# %% [markdown]
# The layer computes exactly what our loop does. A `TinyRNN` whose cell gets the layer's weights
# (the names differ only by the `_l0` suffix) returns the layer's `h_n`, and `output` at the last
# step is that same state:

# %% tags=["nbval-check-output"]
rnn = nn.RNN(3, 4)
tiny.cell.load_state_dict({name.removesuffix("_l0"): p for name, p in rnn.state_dict().items()})
output, h_n = rnn(x_long)
print("output", output.shape, " h_n", h_n.shape)
print("our loop == nn.RNN     :", np.allclose(tiny(x_long).numpy(), h_n[0].numpy(), atol=1e-6))
print("output[-1] == h_n[0]   :", np.allclose(output[-1].numpy(), h_n[0].numpy()))
rnn_bf = nn.RNN(3, 4, batch_first=True)
print("batch_first: (N, L, 3) ->", rnn_bf(x_long.swapaxes(0, 1))[0].shape)

# %% [markdown]
# ### The LSTM and the GRU
#
# The **LSTM** (long short-term memory) keeps a second state, the **cell state** $c_t$, and four
# gates computed from $x_t$ and $h_{t-1}$, in PyTorch's order $i, f, g, o$ (each
# $\sigma(W_{i\cdot} x_t + b_{i\cdot} + W_{h\cdot} h_{t-1} + b_{h\cdot})$, with $\tanh$ instead of
# $\sigma$ for $g$):
#
# $$c_t = f_t \odot c_{t-1} + i_t \odot g_t, \qquad h_t = o_t \odot \tanh(c_t).$$
#
# The **forget gate** $f_t \in (0, 1)$ decides how much of the old cell state is kept, the
# **input gate** $i_t$ how much of the candidate $g_t$ is written, the **output gate** $o_t$ how
# much of the cell is shown as $h_t$. The new $c_t$ is the old one, scaled, **plus** something:
# section 4 shows why that plus matters.
#
# The **GRU** (gated recurrent unit) has one state and three blocks $r, z, n$:
# $n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))$ and
# $h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$: the update gate $z_t$ mixes the old state
# and the new candidate.
#
# Drawn, an `nn.LSTM` rolls its time steps up into "LSTM step × 5". The input projection
# $W_{ih} x_t + b_{ih} + b_{hh}$ of all steps is one matrix multiply before the loop (the Linear
# outside the step). A step is one op, LSTMStep: the product $W_{hh} h_{t-1}$ (its MACs) and the
# gate arithmetic (its FLOPs). It passes $h$ and $c$ on to the next step stacked together, and
# after the loop the $h$ of every step is taken at once: that is `output`.

# %%
lstm = nn.LSTM(3, 4)
lucid_viz.draw(lstm, x_long[:5])

# %% [markdown]
# ## 3. A task that needs memory: reverse a sequence
#
# `lucid.data.datasets` has four synthetic sequence tasks: `CopyTask`, `ReverseTask`,
# `SortTask` and `AdditionTask`. Each sample is a prompt, a separator token `<sep>`, and the
# answer; the model reads the whole sequence and must predict the **next token** at every
# position. `ReverseTask(n, length=8, vocab=10)`: 8 random symbols from 0-9, then `<sep>` (token
# 10), then the 8 symbols in reverse order.
#
# The dataset gives `x = s[:-1]` (the input) and `y = s[1:]` (the next token), with the targets
# inside the prompt replaced by **-100**: the prompt is random, there is nothing to predict in it.
# -100 is the default `ignore_index` of `F.cross_entropy`, so those positions simply do not count
# in the loss. Below, `|` is `<sep>` and `·` is an ignored target.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
train_set = ReverseTask(4000, length=8, vocab=10)
test_set = ReverseTask(1000, length=8, vocab=10)
VOCAB = train_set.vocab_size                 # 10 symbols and <sep>
print(train_set)


def text(tokens):
    """A row of tokens as text: <sep> as |, an ignored target as ·."""
    return " ".join("|" if t == train_set.sep else "·" if t == -100 else str(t)
                    for t in tokens.tolist())


for i in range(2):
    x, y = train_set[i]
    print(f"x: {text(x)}\ny: {text(y)}\n")


# %% [markdown]
# Where is the hard part? The first answer token is the last symbol of the prompt, read just
# before `<sep>`: the model must predict it 1 step after reading it. The answer token at
# position $j$ (counting from 0) is the symbol read $2j + 1$ steps earlier, so the last one
# needs a memory of 15 steps. A model that forgets quickly gets the first answer tokens right
# and the last ones wrong.
#
# The model: an `Embedding` turns each token into a vector of 16 numbers (chapter 09), an `LSTM`
# with 96 hidden units reads them (`batch_first=True`, as the data loader gives batches
# `(N, L)`), and a `Linear` turns each step's state into 11 scores, one per token. Its output is
# `(N, L, 11)`; `cross_entropy` wants the classes on their own axis, so the loss flattens it to
# `(N·L, 11)` against the `N·L` targets.

# %%
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


# %% [markdown]
# Before training, a model that gives every token the same probability scores
# $\ln 11 \approx 2.40$ (chapter 07's sanity check):

# %% tags=["nbval-check-output"]
lucid.random.seed(1)
model = NextToken(nn.LSTM)
xb, yb = (t[:64] for t in train_set.tensors)       # the first 64 sequences
with lucid.no_grad():
    print(f"loss before training: {sequence_loss(model(xb), yb).item():.2f}   "
          f"ln(11) = {math.log(11):.2f}")
print("parameters:", {name: sum(p.size for p in m.parameters())
                      for name, m in model.named_children()})


# %% [markdown]
# The training loop is chapter 07's, with Adam and a cosine schedule. It records the loss and
# the total gradient norm of every step: `clip_grad_norm_(parameters, max_norm)` returns the
# norm of all gradients together, and with `max_norm=inf` it changes nothing (section 5
# clips).

# %%
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


EPOCHS = 8
lstm_losses, lstm_norms = train(model, Adam(model.parameters(), lr=1e-2), EPOCHS)
lstm_per_position, lstm_whole = answer_accuracy(model)
print(f"LSTM: {lstm_per_position.mean():.3f} of the answer tokens right, "
      f"{lstm_whole:.3f} of the answers right in full (test set)")

# %% [markdown]
# Three test sequences, and what the trained LSTM answers after `<sep>`:

# %%
with lucid.no_grad():
    predicted = model(test_set.tensors[0][:3]).numpy().argmax(axis=-1)
for prompt, guess in zip(test_set.prompts[:3], predicted):
    print(f"prompt {text(prompt)}   answer {text(guess[8:])}")

# %% [markdown]
# The exact figures depend on this machine's floating-point rounding; the checked statement is a
# band:

# %% tags=["nbval-check-output"]
print("LSTM gets >= 95% of the answer tokens right:", lstm_per_position.mean() >= 0.95)

# %% [markdown]
# ### The same task for a plain RNN
#
# The same model with `nn.RNN` in place of `nn.LSTM`, the same data, optimizer and epochs:

# %%
lucid.random.seed(1)
plain = NextToken(nn.RNN)
rnn_losses, rnn_norms = train(plain, Adam(plain.parameters(), lr=1e-2), EPOCHS)
rnn_per_position, rnn_whole = answer_accuracy(plain)
print(f"RNN: {rnn_per_position.mean():.3f} of the answer tokens right, "
      f"{rnn_whole:.3f} of the answers right in full (test set)")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
ax1.plot(lstm_losses, label="LSTM", linewidth=1)
ax1.plot(rnn_losses, label="RNN", linewidth=1)
ax1.set(yscale="log", xlabel="training step (batch of 64)", ylabel="cross-entropy (nats)",
        title="Training loss")
ax1.legend()
positions = np.arange(8)
ax2.plot(positions, lstm_per_position, "o-", label="LSTM")
ax2.plot(positions, rnn_per_position, "s-", label="RNN")
ax2.set_xticks(positions, [f"{j}\n({2 * j + 1})" for j in positions])
ax2.set(xlabel="answer position j\n(steps since the symbol was read)",
        ylabel="fraction right (test set)", ylim=(0, 1.05), title="Accuracy per answer position")
ax2.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# The RNN learns more slowly and, more tellingly, its accuracy **falls with the distance**: it
# gets the first answer token (read 1 step earlier) almost always right and the last ones (read
# 13 and 15 steps earlier) far less often. The LSTM's line stays flat near the top. The RNN does
# not lack room (96 numbers of state could hold 8 symbols); it does not *learn* to use inputs
# from far back, because the training signal about them hardly reaches its weights. Section 4
# measures that signal.

# %% tags=["nbval-check-output"]
print("the RNN is better at the first answer token than at the last:",
      rnn_per_position[0] > rnn_per_position[-1] + 0.2)


# %% [markdown]
# ## 4. Vanishing gradients through time
#
# How much does the loss at the end of a sequence depend on the state $t$ steps earlier? Run a
# cell over $T = 50$ random inputs, keep every state $h_1, \dots, h_T$, and let the loss read
# only the last one ($L = \sum h_T$). `grad(loss, states)` (chapter 10) gives
# $\partial L / \partial h_t$ for every intermediate state at once, without touching any `.grad`.

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
# from far back should have been used, so the RNN of section 3 never learned the far answer
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
# same idea as the residual connections of chapter 08). When the forget gates are close to 1, the
# gradient travels far. But look at the plain "LSTM" line: at PyTorch's initialisation all biases
# are near 0, so $f = \sigma(\approx 0) \approx 0.5$, and the cell path halves the gradient at
# every step, about as fast as the RNN loses it. The architecture *allows* long memory; the
# forget gates must be *open* to use it. A **forget-gate bias** of 1 (a common initialisation,
# $\sigma(1) \approx 0.73$) slows the decay, a bias of 3 ($\sigma(3) \approx 0.95$) nearly stops
# it after the first few steps, and training opens the gates wherever memory lowers the loss:
# the LSTM of section 3 learned to reach 15 steps back, starting from the default. (The first
# step back, from $h_T$ into the cell state, goes through $o_T \odot \tanh'(c_T)$ and costs a
# factor of its own: the drop at the right end of the biased lines.)
#
# The GRU's $h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}$ has the same kind of path, scaled by
# the update gate $z_t$.
#
# ## 5. Exploding gradients, and clipping
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
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5))
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
# ### Exercise 13.1 · Shapes of a stacked, bidirectional LSTM
#
# `nn.LSTM(input_size=5, hidden_size=6, num_layers=2, bidirectional=True, batch_first=True)`
# reads a batch of 4 sequences of length 7, `x` of shape `(4, 7, 5)`, and returns
# `output, (h_n, c_n)`. Predict the three shapes (tuples of whole numbers).

# %% tags=["solution"]
output_shape = (4, 7, 12)
h_n_shape = (4, 4, 6)
c_n_shape = (4, 4, 6)

# %% tags=["check"]
lucid.random.seed(0)
lstm_2x2 = nn.LSTM(input_size=5, hidden_size=6, num_layers=2, bidirectional=True,
                   batch_first=True)
out_13, (h_13, c_13) = lstm_2x2(lucid.zeros(4, 7, 5, dtype=lucid.Float32))
check("Exercise 13.1", {"output": output_shape, "h_n": h_n_shape, "c_n": c_n_shape},
      {"output": out_13.shape, "h_n": h_13.shape, "c_n": c_13.shape},
      hint="batch_first applies to the input and to output only, not to h_n and c_n; output "
           "holds both directions of the top layer side by side, h_n one state per layer and "
           "direction.")

# %% [markdown]
# ### Exercise 13.2 · Count the parameters of a GRU
#
# How many numbers does `nn.GRU(input_size=10, hidden_size=20, num_layers=2)` learn? Work it
# out from the parameter shapes of section 2 (the second layer reads the first layer's states),
# and give one whole number.

# %% tags=["solution"]
gru_parameters = (3 * 20 * (10 + 20) + 2 * 3 * 20) + (3 * 20 * (20 + 20) + 2 * 3 * 20)

# %% tags=["check"]
lucid.random.seed(0)
gru_13 = nn.GRU(input_size=10, hidden_size=20, num_layers=2)
check("Exercise 13.2", gru_parameters, sum(p.size for p in gru_13.parameters()),
      hint="per layer: weight_ih is (3·hidden, layer input), weight_hh is (3·hidden, hidden), "
           "and there are two biases of 3·hidden each.")

# %% [markdown]
# ### Exercise 13.3 · A product of Jacobians
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


check("Exercise 13.3", [grad_w_small, grad_w_large], [linear_rnn_grad(0.9), linear_rnn_grad(1.1)],
      rtol=5e-3, hint="each step back multiplies by dh_t/dh_{t-1} = w; how many steps are there?")


# %% [markdown]
# ### Exercise 13.4 · An LSTM step by hand
#
# Write one LSTM step in NumPy: from the input `x` `(N, input)`, the states `h` and `c`
# `(N, hidden)` and the four parameters in PyTorch's layout (`W_ih` `(4·hidden, input)`, `W_hh`
# `(4·hidden, hidden)`, `b_ih` and `b_hh` `(4·hidden,)`, the gates stacked in the order
# $i, f, g, o$), return `(h_new, c_new)` as in section 2. The check compares with
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
check_function("Exercise 13.4", lstm_step, lucid_lstm_step,
               [lstm_case(rng_13, 1, 2, 3), lstm_case(rng_13, 5, 4, 6)],
               hint="z = x W_ih^T + b_ih + h W_hh^T + b_hh has 4·hidden columns: split it into "
                    "four blocks i, f, g, o; g takes tanh, the other three the sigmoid.")


# %% [markdown]
# ### Exercise 13.5 · Clipping by the total norm
#
# Write `clip_by_total_norm(grads, max_norm)` for a list of NumPy arrays (one gradient per
# parameter, of any shapes): return the list of clipped gradients (new arrays) and the total
# norm before clipping, with the formula of section 5 (the $10^{-6}$ included, and no change
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
check_function("Exercise 13.5", flattened(clip_by_total_norm), flattened(lucid_clip),
               [([np.array([3.0, 4.0])], 1.0),
                ([np.array([0.3, -0.4])], 1.0),
                ([rng_13.standard_normal((3, 4)), rng_13.standard_normal(4),
                  rng_13.standard_normal((2, 2, 2))], 2.0)],
               hint="the total norm is sqrt of the sum of the squares of every entry of every "
                    "gradient; every gradient is multiplied by the same min(1, max_norm / "
                    "(total + 1e-6)).")

# %% [markdown]
# **Next:** [14 · Attention and a tiny GPT](14_attention_and_gpt.ipynb) replaces the recurrence
# by attention: every position looks at every earlier one directly, with no product of
# Jacobians in between.
