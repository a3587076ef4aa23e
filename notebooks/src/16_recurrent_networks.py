# %% [markdown]
# # 16 · Recurrent networks: RNNs, LSTMs and GRUs
#
# A sentence, a melody, a sensor reading every second: inputs whose order matters and whose
# length varies. A **recurrent network** reads such a sequence one element at a time and carries
# a **state** from each step to the next, its memory of what it has read so far. The same
# weights are used at every step, so one small cell handles a sequence of any length.
#
# This chapter builds one by hand, uses Lucid's recurrent layers, and trains one on a task that
# needs memory. The next chapter looks at the problem that makes recurrent networks hard to
# train: gradients that shrink or grow exponentially on their way back through time.
#
# | § | what |
# |---|---|
# | 1 | a recurrent cell written as a Python loop, and its graph, rolled up and unrolled |
# | 2 | `nn.RNN`, `nn.LSTM`, `nn.GRU`: PyTorch's API, parameter names and shapes |
# | 3 | reversing a sequence: `Embedding` + `LSTM` + `Linear`, and a plain RNN on the same task |
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (the graph and the chain
# rule), [03 · Backward, step by step](03_backward_step_by_step.ipynb),
# [09 · Reading a training run](09_reading_a_training_run.ipynb) (the training loop, gradient
# norms),
# [13 · Embeddings, activations and losses](13_activations_and_losses.ipynb) (`Embedding`) and
# [14 · Optimizers, schedules and data](14_optimizers_and_data.ipynb).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.data import DataLoader
from lucid.data.datasets import ReverseTask
from lucid.nn.utils import clip_grad_norm_
from lucid.optim import Adam
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
# chapter 17 shows why that plus matters.
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
# The model: an `Embedding` turns each token into a vector of 16 numbers (chapter 13), an `LSTM`
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
# $\ln 11 \approx 2.40$ (chapter 08's sanity check):

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
# The training loop is chapter 08's, with Adam and a cosine schedule. It records the loss and
# the total gradient norm of every step: `clip_grad_norm_(parameters, max_norm)` returns the
# norm of all gradients together, and with `max_norm=inf` it changes nothing (chapter 17
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
# Three test sequences, and what the trained LSTM answers after `<sep>`; then the accuracy. The
# exact figures depend on this machine's floating-point rounding, so the checked statement is a
# band.

# %%
with lucid.no_grad():
    predicted = model(test_set.tensors[0][:3]).numpy().argmax(axis=-1)
for prompt, guess in zip(test_set.prompts[:3], predicted):
    print(f"prompt {text(prompt)}   answer {text(guess[8:])}")

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

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 4.4))
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
# from far back, because the training signal about them hardly reaches its weights. Chapter 17
# measures that signal.

# %% tags=["nbval-check-output"]
print("the RNN is better at the first answer token than at the last:",
      rnn_per_position[0] > rnn_per_position[-1] + 0.2)

# %% [markdown]
# **What to remember**
#
# * A recurrent network is a loop over time with shared weights: one cell, called once per step,
#   carries a state forward. Backward through the unrolled loop is called BPTT.
# * `nn.RNN`, `nn.LSTM` and `nn.GRU` run the loop for you, with PyTorch's shapes and parameter
#   names (`batch_first`, `(output, h_n)`, the gates stacked in one matrix).
# * On a task that needs memory, the LSTM learns to use inputs from 15 steps back; the plain RNN
#   gets the near answers right and the far ones wrong.
#
# ## Exercises
#
# ### Exercise 16.1 · Shapes of a stacked, bidirectional LSTM
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
check("Exercise 16.1", {"output": output_shape, "h_n": h_n_shape, "c_n": c_n_shape},
      {"output": out_13.shape, "h_n": h_13.shape, "c_n": c_13.shape},
      nudge="Section 1 prints the shapes of output, h_n and c_n: which axes does each have?",
      hint="batch_first applies to the input and to output only, not to h_n and c_n; output "
           "holds both directions of the top layer side by side, h_n one state per layer and "
           "direction.")

# %% [markdown]
# ### Exercise 16.2 · Count the parameters of a GRU
#
# How many numbers does `nn.GRU(input_size=10, hidden_size=20, num_layers=2)` learn? Work it
# out from the parameter shapes of section 2 (the second layer reads the first layer's states),
# and give one whole number.

# %% tags=["solution"]
gru_parameters = (3 * 20 * (10 + 20) + 2 * 3 * 20) + (3 * 20 * (20 + 20) + 2 * 3 * 20)

# %% tags=["check"]
lucid.random.seed(0)
gru_13 = nn.GRU(input_size=10, hidden_size=20, num_layers=2)
check("Exercise 16.2", gru_parameters, sum(p.size for p in gru_13.parameters()),
      nudge="A GRU has three gates; count each layer's weights and biases.",
      hint="per layer: weight_ih is (3·hidden, layer input), weight_hh is (3·hidden, hidden), "
           "and there are two biases of 3·hidden each.")


# %% [markdown]
# ### Exercise 16.3 · An RNN layer, written out
#
# Write `rnn_forward(x, W_ih, W_hh, b_ih, b_hh)` in NumPy for a one-layer tanh RNN: `x` is
# `(L, N, input)` (sequence first, as `nn.RNN` reads it by default), the state starts at zero,
# and every step applies the formula of section 1 with the same weights. Return
# `(output, h_n)` as `nn.RNN` does: `output` `(L, N, hidden)` holds the state after every step,
# `h_n` `(1, N, hidden)` the last state of the (one) layer. The check compares with `nn.RNN`
# given the same weights.

# %% tags=["solution"]
def rnn_forward(x, W_ih, W_hh, b_ih, b_hh):
    """A one-layer tanh RNN over x (L, N, input) from a zero state: (output, h_n)."""
    h = np.zeros((x.shape[1], W_hh.shape[0]))
    states = []
    for x_t in x:                                         # one step per position
        h = np.tanh(x_t @ W_ih.T + b_ih + h @ W_hh.T + b_hh)
        states.append(h)
    return np.stack(states), h[None]


# %% tags=["check"]
def lucid_rnn_forward(x, W_ih, W_hh, b_ih, b_hh):
    layer = nn.RNN(x.shape[2], W_hh.shape[0], dtype=lucid.Float64)
    layer.load_state_dict({"weight_ih_l0": lucid.Tensor(W_ih), "weight_hh_l0": lucid.Tensor(W_hh),
                           "bias_ih_l0": lucid.Tensor(b_ih), "bias_hh_l0": lucid.Tensor(b_hh)})
    return layer(lucid.Tensor(x))


def rnn_case(rng, length, n, inputs, hidden):
    return (rng.standard_normal((length, n, inputs)), rng.standard_normal((hidden, inputs)),
            0.5 * rng.standard_normal((hidden, hidden)), rng.standard_normal(hidden),
            rng.standard_normal(hidden))


lucid.random.seed(0)                          # (nn.RNN draws an initialisation first)
rng_13 = np.random.default_rng(2)
check_function("Exercise 16.3", rnn_forward, lucid_rnn_forward,
               [rnn_case(rng_13, 1, 1, 2, 3), rnn_case(rng_13, 6, 4, 3, 5)],
               hint="a loop over the L positions; the state h is (N, hidden) and starts at zero; "
                    "output stacks the states of all steps on a new first axis, h_n is the last "
                    "state with a leading axis of 1.")

# %% [markdown]
# ### Exercise 16.4 · The last output and the last state
#
# For a one-layer, one-direction `nn.LSTM(4, 6, batch_first=True)` run on a `(2, 5, 4)` input,
# is `output[:, -1]` equal to `h_n[0]`? Answer `True` or `False`.

# %% tags=["solution"]
last_output_is_h_n = True

# %% tags=["check"]
lucid.random.seed(0)
lstm_check = nn.LSTM(4, 6, batch_first=True)
out_check, (h_check, c_check) = lstm_check(lucid.random.randn(2, 5, 4))
check("Exercise 16.4", last_output_is_h_n,
      bool(np.allclose(out_check.numpy()[:, -1], h_check.numpy()[0])),
      nudge="What does output hold at each step, and what does h_n hold (section 1)?",
      hint="output holds the hidden state of the top layer at every step; h_n the last hidden "
           "state of every layer and direction.")

# %% [markdown]
# **Next:** [17 · Gradients through time](17_gradients_through_time.ipynb) measures why: how much
# of the gradient reaches a state $t$ steps back, in an RNN and in an LSTM, and how clipping
# tames gradients that explode.
