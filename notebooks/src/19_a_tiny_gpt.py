# %% [markdown]
# # 19 · A tiny GPT
#
# Chapter 18 wrote attention out and built a Transformer layer part by part. Here we stack such
# layers into a small **GPT** - a language model that predicts the next character - train it on
# Shakespeare, and look inside it:
#
# | § | what | Lucid |
# |---|---|---|
# | 1 | the text and the loss to beat, from chapter 18 | `CharDataset` |
# | 2 | the GPT: tied weights, one prediction per position | `lucid.models.text.GPT` |
# | 3 | training it, and its text before and after | `GPT.generate` |
# | 4 | what a trained head looks at | `GPT.attn_weights` |
# | 5 | where the FLOPs go, and how attention's share grows with length | `summarize` |
#
# **You need:** [18 · Attention](18_attention.ipynb) (attention, the causal mask, a pre-norm
# Transformer layer, the text and the unigram entropy) and
# [08 · Training an MLP](08_training_an_mlp.ipynb) (the training loop, cross-entropy).

# %%
import inspect
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn.functional as F
import lucid_viz
from lucid.data import DataLoader, Subset
from lucid.data.datasets import CharDataset, tiny_shakespeare
from lucid.models import summarize
from lucid.models.text import GPT
from lucid.optim import Adam
from lucid_viz.exercises import check, check_function

np.set_printoptions(precision=3, suppress=True)
plt.rcParams.update({"font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12})
lucid.random.seed(0)

# %% [markdown]
# ## 1. The text and the loss to beat
#
# As in chapter 18, section 5: the shipped "tiny Shakespeare", served as windows of
# `BLOCK` = 32 characters by `CharDataset` (`y` is `x` shifted by one), the first 90% of the
# text for training and the last 10% for validation, and the loss a model must beat to show it
# uses the context: the unigram entropy $H$ of the training text.

# %% tags=["nbval-check-output"]
text = tiny_shakespeare()
BLOCK = 32
chars = CharDataset(text, BLOCK)
split = int(0.9 * len(chars))
train_set = Subset(chars, range(split - BLOCK))          # windows inside text[:split]
val_set = Subset(chars, range(split, len(chars)))        # windows inside text[split:]
train_ids, val_ids = chars.ids[:split], chars.ids[split:]
p = np.bincount(train_ids, minlength=chars.vocab_size) / train_ids.size
H = float(-(p * np.log(p)).sum())                            # every character occurs: p > 0
unigram_val = float(-np.log(p[val_ids]).mean())              # the same model, on unseen text
print(f"vocabulary V = {chars.vocab_size}; training windows {len(train_set):,}, "
      f"validation windows {len(val_set):,}")
print(f"ln V = {math.log(chars.vocab_size):.3f} nats, unigram entropy H = {H:.3f} nats "
      f"(on validation {unigram_val:.3f})")

# %% [markdown]
# ## 2. The GPT
#
# `lucid.models.text.GPT` is a decoder-only Transformer in nanoGPT's layout, about 200 lines of
# Python (`print(inspect.getsource(GPT))` shows them all). For token ids `idx` of shape $(B, T)$:
#
# ```
# x = wte[idx] + wpe[0..T-1]            token embedding + learned position embedding
# for each block:                       pre-norm blocks (chapter 18, section 4)
#     x = x + attn(ln_1(x))             causal multi-head self-attention
#     x = x + mlp(ln_2(x))              Linear(d, 4d), GELU, Linear(4d, d)
# logits = lm_head(ln_f(x))             (B, T, vocab_size): a prediction at every position
# ```
#
# Ours has 2 blocks, 4 heads and $d$ = `d_model` = 64. One block, printed, and the source of its
# class: the two residual lines above, as code.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
model = GPT(chars.vocab_size, BLOCK, n_layer=2, n_head=4, d_model=64)
print(model.transformer.h[0])
print(inspect.getsource(type(model.transformer.h[0])))

# %% [markdown]
# **Tied weights.** The output layer `lm_head` scores each character $c$ by a dot product
# $h \cdot w_c$ with a vector per character, and the input embedding `wte` holds a vector per
# character too. GPT uses *one* matrix for both (`tie_weights=True`, the default): a character's
# input vector is its output vector. That saves $V \cdot d$ parameters and tends to help small
# models. The parameter counts, against the formula in `GPT`'s docstring (`help(GPT)`)
# ($V d + T_\text{max} d + L(12d^2 + 13d) + 2d$):

# %% tags=["nbval-check-output"]
V, T_max, n_layer, dm = chars.vocab_size, BLOCK, 2, 64
print("lm_head.weight is wte.weight:", model.lm_head.weight is model.transformer.wte.weight)
n_params = sum(p.size for p in model.parameters())
print(f"parameters: {n_params:,}   formula: "
      f"{V * dm + T_max * dm + n_layer * (12 * dm**2 + 13 * dm) + 2 * dm:,}")
print("parameter tensors:", len(list(model.parameters())),
      "  state_dict entries:", len(model.state_dict()),
      "(the shared matrix under both names, as nanoGPT saves it)")

# %% [markdown]
# **One forward pass, $B \cdot T$ predictions.** `model(idx, targets)` returns
# `(logits, loss)`: the logits of every position, and the mean cross-entropy against the
# targets. Thanks to the causal mask, the logits at position $t$ depend only on characters
# $0..t$, so all $T$ predictions of a window are honest next-character guesses, trained at
# once. Check it: change the last character, and only the last position's logits move.

# %% tags=["nbval-check-output"]
line = "BUCKINGHAM:\nWhy let it strike?"
a = chars.encode(line)[None]                      # (1, T): a batch of one
b = chars.encode(line[:-1] + "!")[None]
with lucid.no_grad():
    logits_a, _ = model(a)
    logits_b, _ = model(b)
print("logits:", logits_a.shape, "(B, T, V)")
print("positions 0..T-2 unchanged:", np.allclose(logits_a.numpy()[:, :-1],
                                                 logits_b.numpy()[:, :-1]))
print("position T-1 changed:      ", not np.allclose(logits_a.numpy()[:, -1],
                                                     logits_b.numpy()[:, -1]))

# %% [markdown]
# Every `Linear` and `Embedding` weight starts small ($\mathcal{N}(0, 0.02^2)$), so the logits
# start near 0 and the prediction near uniform: the first loss should be close to $\ln V$
# (chapter 08's sanity check).
#
# A `DataLoader` over the training windows serves shuffled batches of 32 windows
# (`CharDataset.gather` cuts a whole batch in one indexing step); the validation batch is fixed:
# 128 windows spread evenly over the unseen text.

# %% tags=["nbval-check-output"]
loader = DataLoader(train_set, batch_size=32, shuffle=True)
val_x, val_y = val_set.gather(np.linspace(0, len(val_set) - 1, 128).astype(np.int64))
xb, yb = next(iter(loader))
print("a batch:", xb.shape, xb.dtype, yb.shape)
with lucid.no_grad():
    print(f"loss before training: {model(xb, yb)[1].item():.2f}   "
          f"ln V = {math.log(chars.vocab_size):.2f}")


# %% [markdown]
# **Generating text.** `model.generate(idx, n)` appends $n$ characters, one at a time: run the
# model on the last `block_size` characters, take the last position's logits, divide them by
# the `temperature`, keep only the `top_k` largest if asked, and draw the next character from
# their softmax with `lucid.random` (so `lucid.random.seed` makes it repeatable). Untrained,
# the model draws characters almost uniformly:

# %%
def sample(model, prompt="BUCKINGHAM:\n", n=120, temperature=1.0, top_k=None):
    """`n` characters generated after `prompt`, with the sampling draws seeded."""
    lucid.random.seed(1)
    model.eval()
    ids = model.generate(chars.encode(prompt)[None], n, temperature=temperature, top_k=top_k)
    return chars.decode(ids[0])


print(sample(model))

# %% [markdown]
# ## 3. Training
#
# The loop of chapter 08, with Adam (learning rate $3 \cdot 10^{-3}$) for 250 steps of 32
# windows: 8,000 windows, 3% of the training windows (they overlap, so together they still
# cover much of the text), and 256,000 next-character predictions. Every 25 steps we measure the
# loss on the fixed validation batch.

# %%
lucid.random.seed(0)              # the batches below do not depend on what was drawn above
STEPS, EVAL_EVERY = 250, 25
optimizer = Adam(model.parameters(), lr=3e-3)


def validation_loss(model):
    model.eval()
    with lucid.no_grad():
        loss = model(val_x, val_y)[1].item()
    model.train()
    return loss


losses, val_steps, val_losses = [], [], []
model.train()
for step, (xb, yb) in zip(trange(STEPS, desc="training (steps)"), loader):
    optimizer.zero_grad()
    _, loss = model(xb, yb)        # logits for every position, and their mean cross-entropy
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if (step + 1) % EVAL_EVERY == 0:
        val_steps.append(step + 1)
        val_losses.append(validation_loss(model))
print(f"first loss {losses[0]:.3f}, last 10 steps {np.mean(losses[-10:]):.3f}, "
      f"validation {val_losses[-1]:.3f} nats")

fig, ax = plt.subplots(figsize=(8.8, 4.2), layout="constrained")
ax.plot(np.arange(1, STEPS + 1), losses, color="#3d6fa6", lw=1.2, label="training batch")
ax.plot(val_steps, val_losses, "o-", color="#b8651b", label="validation (unseen text)")
ax.axhline(math.log(chars.vocab_size), color="grey", ls=":", label="uniform guess, ln V")
ax.axhline(H, color="black", ls="--", label="unigram entropy H (no context)")
ax.set_xlabel("training step")
ax.set_ylabel("cross-entropy (nats per character)")
ax.set_title("A 2-layer GPT on Shakespeare")
ax.grid(alpha=0.3)
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))          # beside the plot
plt.show()

# %% [markdown]
# The loss leaves $\ln V$ at once and reaches $H$ within about twenty steps: the first thing
# the model learns is which characters are common (spaces, `e`, `o`, `t` ...), which needs no
# context at all. Everything below the dashed line is **context**: which letters follow which,
# where words end, that a line break follows a name and a colon. The validation loss stays
# close to the training loss: the model has seen most of the text once at most, so there is
# little to overfit yet.

# %% tags=["nbval-check-output"]
print("validation loss below the unigram entropy by more than 0.5 nats:",
      val_losses[-1] < H - 0.5)

# %% [markdown]
# And the text it writes now, from the same prompt and the same random draws as before, then at
# two other **temperatures**. The temperature trades variety for safety: the logits are divided
# by it, so below 1 the likely characters get even likelier (safer, more repetitive text), above
# 1 the distribution flattens (more surprising, more mistakes).

# %%
print(sample(model))
for temperature in (0.5, 1.5):
    print(f"--- temperature {temperature}:")
    print(sample(model, n=100, temperature=temperature))

# %% [markdown]
# No Shakespeare yet, but the shape of it: short lines that start with a capital, words of
# plausible length separated by spaces, punctuation at the ends of words, and frequent short
# words such as "the" (or attempts at them); at 0.5 the same few words come back again and
# again, at 1.5 the spelling falls apart.

# %% [markdown]
# ## 4. What does a trained head look at?
#
# After a forward pass, `model.attn_weights` holds each block's attention maps,
# $(B, h, T, T)$: one map per head. Run the model on two lines of the unseen text, a speaker's
# name and the start of the speech, and summarise every head, over the queries of the second
# line: how much weight goes to the **previous character**, to the **start of the current
# word** (the last space or line break before the query), and to the whole **name line**
# `BUCKINGHAM:⏎`.

# %%
line = "BUCKINGHAM:\nWhy, then resolve me"
model.eval()
with lucid.no_grad():
    model(chars.encode(line)[None])
print(len(model.attn_weights), "blocks, each", model.attn_weights[0].shape, "(B, heads, T, T)")
labels = [{" ": "␣", "\n": "⏎"}.get(c, c) for c in line]     # spaces and line breaks, visible
second = range(line.index("\n") + 1, len(line))          # the queries of the second line


def word_start(i):
    """The position of the last space or line break before position i."""
    return max(j for j in range(i) if line[j] in " \n")


looks = {}                                                # (block, head) -> the three shares
for block, w in enumerate(model.attn_weights):
    for head in range(model.n_head):
        m = w.numpy()[0, head]                            # (T, T): queries x keys
        looks[block, head] = (np.mean([m[i, i - 1] for i in second]),
                              np.mean([m[i, word_start(i)] for i in second]),
                              m[second.start:, :second.start].sum(axis=1).mean())
        print(f"block {block} head {head}:  previous character {looks[block, head][0]:.2f}   "
              f"start of the word {looks[block, head][1]:.2f}   "
              f"name line {looks[block, head][2]:.2f}")

# %% [markdown]
# Heads specialise, and the two blocks differ: in the first, some heads look close by; in the
# second, much of the weight goes far back, to the name line. Below, the head of the first
# block that looks most at the start of the current word. In the run stored with this
# notebook it sends each character's weight a few positions back, to the previous character
# and often to the space where the word began (the `t`, `h` and `e` of "then" and the `r` and
# `e` of "resolve" give a good share to the space before their word). Which word am I in, and
# how far into it: that is what a character model needs most to guess the next letter.

# %%
head = max(range(model.n_head), key=lambda h: looks[0, h][1])
lucid_viz.plot_attention(model.attn_weights[0][0, head], labels,
                         title=f"block 0, head {head}: back to the start of the word")

# %% [markdown]
# And the head of the second block that looks most at the name line. In the stored run most
# letters of the second line send their weight to one landmark, the end of the name
# (`:` and the line break): "a speech has just begun". Whether the head really uses that, or
# merely parks its weight there when nothing nearby is useful (trained Transformers often use
# a few early tokens as such a resting place), one map cannot tell; that takes experiments,
# such as changing the name and watching the predictions.
#
# Which head learns what is not designed, and it changes from one training run to the next.
# (`lucid_viz.plot_attention(model.attn_weights[1], labels, sample=0)` draws all the heads of a
# block side by side, one panel each: wide, with 32 characters a panel.)

# %%
head = max(range(model.n_head), key=lambda h: looks[1, h][2])
lucid_viz.plot_attention(model.attn_weights[1][0, head], labels,
                         title=f"block 1, head {head}: looking back at the name line")

# %% [markdown]
# ## 5. Where the FLOPs go
#
# `summarize` (chapter 06) runs the model once on zeros and counts every layer's work. The
# input is token ids, so it needs `dtype=lucid.Int64`. Two things to notice in the table:
#
# * `wte` and `lm_head` show the **same** 3,968 parameters: the tied matrix is one tensor, used
#   by two layers; the total counts it once.
# * The attention itself ($QK^\top$, the softmax and the weighted sum of $V$) belongs to no leaf
#   layer: it runs in `CausalSelfAttention.forward`, so the table lists it under
#   "ops outside leaf layers" (with the residual additions).
#
#
# After the table, the attention's share of the work: `summary.modules` holds the cost of every
# module, its children included, and the attention block of a layer is the two projections
# (`c_attn`, `c_proj`) plus the attention core.

# %% tags=["nbval-check-output"]
summary = summarize(model, (1, BLOCK), dtype=lucid.Int64)
mods = summary.modules
attn = sum(mods[f"transformer.h.{i}.attn"].in_flops for i in range(2))
proj = sum(mods[f"transformer.h.{i}.attn.{part}"].in_flops
           for i in range(2) for part in ("c_attn", "c_proj"))
total = summary.total.in_flops
print(f"whole forward pass:        {total:>10,} FLOPs")
print(f"attention blocks:          {attn:>10,} FLOPs  ({attn / total:.1%})")
print(f"  of which the projections {proj:>10,} FLOPs  ({proj / total:.1%})")
print(f"  of which the core        {attn - proj:>10,} FLOPs  ({(attn - proj) / total:.1%})")


# %% [markdown]
# Count it by hand for one block and a sequence of $T$ tokens: the projections are
# $3Td^2 + Td^2$ MACs and the MLP $8Td^2$ - all **linear** in $T$ - while $QK^\top$ and the
# weighted sum are $T \cdot T \cdot d$ MACs each: **quadratic** in $T$. So the core's share of a
# block is about $2T^2d / (12Td^2 + 2T^2d) = T / (6d + T)$: small for our $T = 32$, half of the
# work at $T = 6d = 384$. That is why long contexts are expensive, and why so much research
# goes into cheaper attention. The same model at longer lengths:

# %% tags=["nbval-check-output"]
def core_share(T):
    """The attention core's share of a 2-layer, d=64 GPT's forward FLOPs at length T."""
    long_model = GPT(chars.vocab_size, T, n_layer=2, n_head=4, d_model=64)
    s = summarize(long_model, (1, T), dtype=lucid.Int64, print_summary=False)
    core = sum(s.modules[f"transformer.h.{i}.attn"].in_flops
               - s.modules[f"transformer.h.{i}.attn.c_attn"].in_flops
               - s.modules[f"transformer.h.{i}.attn.c_proj"].in_flops for i in range(2))
    return s.total.in_flops, core / s.total.in_flops


for T in (32, 128, 384, 1024):
    flops, share = core_share(T)
    print(f"T = {T:4d}: {flops:>13,} FLOPs, attention core {share:5.1%}   "
          f"(T / (6d + T) = {T / (6 * 64 + T):5.1%})")

# %% [markdown]
# (The measured share is a little above $T/(6d+T)$: the core also scales, masks and
# softmaxes every score, a few FLOPs each, which the formula leaves out, as it leaves out
# `lm_head` and the LayerNorms. The mask saves nothing here: the masked scores are computed,
# then set to $-\infty$.)
#
# ## Exercises
#
# ### Exercise 19.1 · Count the parameters
#
# How many parameters does `GPT(vocab_size=40, block_size=16, n_layer=3, n_head=2,
# d_model=32)` have with tied weights (the default)? And with `tie_weights=False`, where
# `lm_head` has its own matrix? Work it out from the parts: two embedding tables; per block two
# LayerNorms (a scale and a shift each), `c_attn` ($d \to 3d$) and `c_proj` ($d \to d$) with
# biases, and the MLP ($d \to 4d \to d$) with biases; the final LayerNorm; `lm_head` (no bias).

# %% tags=["solution"]
params_tied = (40 * 32 + 16 * 32                            # wte (V x d), wpe (T_max x d)
               + 3 * (2 * 2 * 32                            # ln_1, ln_2
                      + 32 * 96 + 96 + 32 * 32 + 32         # c_attn, c_proj
                      + 32 * 128 + 128 + 128 * 32 + 32)     # the MLP's c_fc, c_proj
               + 2 * 32)                                    # ln_f (lm_head: the wte matrix)
params_untied = params_tied + 40 * 32                       # lm_head's own V x d matrix

# %% tags=["check"]
lucid.random.seed(0)
config = dict(vocab_size=40, block_size=16, n_layer=3, n_head=2, d_model=32)
nudge = "List the GPT's layers (section 2 prints one block) and count each one's parameters."
hint = ("a Linear(a, b) with bias has a·b + b parameters, a LayerNorm(d) has 2d; the number of "
        "heads does not matter. Tied, the embedding wte and lm_head share one V x d matrix.")
check("Exercise 19.1 (tied)", params_tied,
      sum(p.size for p in GPT(**config).parameters()), nudge=nudge,
      hint=hint)
check("Exercise 19.1 (untied)", params_untied,
      sum(p.size for p in GPT(**config, tie_weights=False).parameters()), nudge=nudge,
      hint=hint)

# %% [markdown]
# ### Exercise 19.2 · Greedy decoding
#
# With `top_k=1`, `generate` keeps only the single most likely character before drawing.
# Generate 40 characters from the trained model with `top_k=1` twice, after
# `lucid.random.seed(1)` and after `lucid.random.seed(2)`: will the two texts be the same?
# Answer `True` or `False`. (And does the temperature matter then?)

# %% tags=["solution"]
greedy_same = True

# %% tags=["check"]
model.eval()
texts = []
for s in (1, 2):
    lucid.random.seed(s)
    texts.append(chars.decode(model.generate(chars.encode("BUCKINGHAM:\n")[None], 40,
                                             top_k=1)[0]))
check("Exercise 19.2", greedy_same, texts[0] == texts[1],
      nudge="What does top_k keep, and what can a random draw choose from then?",
      hint="after top_k=1 every logit but the largest is -inf: what is the softmax of that, "
           "and what can a random draw from it give?")

# %% [markdown] tags=["answer"]
# Greedy decoding is deterministic, and the temperature no longer matters (dividing the logits
# by a positive number does not change which is largest). It is also dull: printed below, it
# soon falls into a loop, which is why sampling with a temperature or a larger `top_k` is used
# for text.

# %% tags=["answer"]
lucid.random.seed(1)
print(chars.decode(model.generate(chars.encode("BUCKINGHAM:\n")[None], 40, top_k=1)[0]))


# %% [markdown]
# ### Exercise 19.3 · The next character's probabilities
#
# Write `next_char_probs(logits, temperature=1.0, top_k=None)` in NumPy: from the logits of the
# last position, a vector of $V$ numbers, return the probabilities that `generate` draws the
# next character from (section 2, *Generating text*): divide the logits by the temperature,
# keep only the `top_k` largest if `top_k` is given (every other character gets probability 0),
# and take the softmax. The check compares with the same steps done by Lucid's ops.

# %% tags=["solution"]
def next_char_probs(logits, temperature=1.0, top_k=None):
    """The sampling distribution of the next character, from the last position's logits."""
    z = logits / temperature
    if top_k is not None:
        kth = np.sort(z)[-top_k]                          # the k-th largest logit
        z = np.where(z < kth, -np.inf, z)
    e = np.exp(z - z.max())                               # (shifted: no overflow)
    return e / e.sum()


# %% tags=["check"]
def lucid_next_char_probs(logits, temperature=1.0, top_k=None):
    z = lucid.Tensor(logits)[None] / temperature          # (1, V), as generate has it
    if top_k is not None:
        kth = lucid.topk(z, top_k, axis=-1)[0][:, -1:]
        z = lucid.masked_fill(z, z < kth, float("-inf"))
    return F.softmax(z, axis=-1)[0]


rng_16 = np.random.default_rng(3)
logits_16 = rng_16.standard_normal(10) * 2
check_function("Exercise 19.3", next_char_probs, lucid_next_char_probs,
               [(logits_16, 1.0, None), (logits_16, 0.5, None), (logits_16, 2.0, 3),
                (logits_16, 1.0, 1)],
               hint="z = logits / temperature; with top_k, every z below the k-th largest "
                    "becomes -inf (np.sort gives the k-th largest); then exp(z - max) / sum.")


# %% [markdown]
# ### Exercise 19.4 · A sliding-window causal mask
#
# A GPT's query may look at its own position and every earlier one. Some models also limit it to
# the last `window` positions. Write `allowed(T, window)`: a `(T, T)` NumPy array of booleans,
# `True` where query `i` may look at key `j` - that is, $j \le i$ and $i - j < $ `window`.

# %% tags=["solution"]
def allowed(T, window):
    """(T, T) booleans: True where query i may attend to key j."""
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    return (j <= i) & (i - j < window)


# %% tags=["check"]
def numpy_allowed(T, window):
    ones = np.ones((T, T), dtype=bool)
    return np.tril(ones) & np.triu(ones, -(window - 1))


check_function("Exercise 19.4", allowed, numpy_allowed, [(4, 4), (6, 2), (5, 1), (3, 10)],
               entries="query i (row), key j (column)",
               nudge="Write the two conditions on i and j separately, then combine them.",
               hint="with i = np.arange(T)[:, None] and j = np.arange(T)[None, :], the mask is "
                    "(j <= i) & (i - j < window).")

# %% [markdown]
# **Next:** [20 · Variational autoencoders](20_variational_autoencoders.ipynb) learns to generate
# images instead of text.
