# %% [markdown]
# # 18 · Attention
#
# A recurrent network (chapter 16) reads a sequence one step at a time and squeezes everything
# it has seen into one state vector. **Attention** lets every position look back at every
# earlier position directly, and decide by itself which ones matter. In this chapter we write
# attention out by hand and build up to a Transformer layer; the next chapter trains a small
# **GPT** on Shakespeare with it - a language model that predicts the next character - and this
# chapter ends by getting its text ready:
#
# | § | what | Lucid |
# |---|---|---|
# | 1 | attention by hand: $QK^\top/\sqrt{d}$, softmax, weighted sum of $V$ | `F`, `nn` |
# | 2 | the causal mask, and a first attention map | `lucid_viz.plot_attention` |
# | 3 | positional encodings: sinusoidal and learned | `nn.PositionalEncoding` |
# | 4 | a Transformer layer, part by part (post-norm and pre-norm) | `nn.TransformerEncoderLayer` |
# | 5 | the text, the characters, and the loss to beat | `CharDataset` |
#
# **You need:** [16 · Recurrent networks](16_recurrent_networks.ipynb) (sequence models, next-step
# prediction), [08 · Training an MLP](08_training_an_mlp.ipynb) (the training loop, cross-entropy),
# [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb), and section 7 of
# [13 · Embeddings, activations and losses](13_activations_and_losses.ipynb)
# (`nn.MultiHeadAttention`, `is_causal`).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
import lucid_viz
from lucid.data import Subset
from lucid.data.datasets import CharDataset, tiny_shakespeare
from lucid_viz.exercises import check, check_function

np.set_printoptions(precision=3, suppress=True)
plt.rcParams.update({"font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12})
lucid.random.seed(0)

# %% [markdown]
# ## 1. Scaled dot-product attention, written out
#
# Each of $L$ positions has three vectors of size $d$: a **query** $q_i$ ("what am I looking
# for?"), a **key** $k_j$ ("what do I contain?") and a **value** $v_j$ ("what do I pass on?"),
# stacked as the rows of $Q$, $K$ and $V$. Attention is three steps:
#
# $$\text{scores} = \frac{Q K^\top}{\sqrt{d}}, \qquad
#   \text{weights} = \operatorname{softmax}_\text{row}(\text{scores}), \qquad
#   \text{output} = \text{weights} \; V .$$
#
# Score $(i, j)$ is how well query $i$ matches key $j$. The softmax turns each row into
# probabilities (between 0 and 1, summing to 1), and output row $i$ is the average of the value
# rows weighted by them. Every step is an ordinary Lucid op, so the gradient comes for free.

# %% tags=["nbval-check-output"]
L, d = 4, 8
Q = lucid.random.randn(L, d, dtype=lucid.Float64)
K = lucid.random.randn(L, d, dtype=lucid.Float64)
V = lucid.random.randn(L, d, dtype=lucid.Float64)

scores = Q @ K.mT / math.sqrt(d)          # (L, L): query i against key j
weights = F.softmax(scores, axis=-1)      # each row: probabilities over the keys
out = weights @ V                         # (L, d): each row a weighted average of V's rows

print("weights:\n", weights.numpy())
print("rows sum to 1:", np.allclose(weights.numpy().sum(axis=-1), 1))
print("same as F.scaled_dot_product_attention:",
      np.allclose(out.numpy(), F.scaled_dot_product_attention(Q, K, V).numpy()))

# %% [markdown]
# **Why divide by $\sqrt{d}$?** If the entries of $q$ and $k$ are independent with mean 0 and
# variance 1, their dot product $q \cdot k = \sum_{m=1}^{d} q_m k_m$ is a sum of $d$ terms of
# variance 1: its variance is $d$, its standard deviation $\sqrt{d}$. Large scores make the
# softmax **saturate**: one weight near 1, the others near 0, and then its gradient is nearly
# zero (a small change of a score barely changes the weights), so the queries and keys stop
# learning. Dividing by $\sqrt{d}$ brings the scores back to standard deviation 1, whatever $d$.
# Below: 500 queries against 16 keys each, and the largest weight of each row, on average.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
for dim in (4, 64, 1024):
    q = lucid.random.randn(500, dim, dtype=lucid.Float64)
    k = lucid.random.randn(16, dim, dtype=lucid.Float64)
    raw = q @ k.mT
    top_raw = F.softmax(raw, axis=-1).numpy().max(axis=-1).mean()
    top_scaled = F.softmax(raw / math.sqrt(dim), axis=-1).numpy().max(axis=-1).mean()
    print(f"d = {dim:4d}: std of q.k {raw.numpy().std():6.2f}, "
          f"of q.k/sqrt(d) {raw.numpy().std() / math.sqrt(dim):4.2f};  "
          f"largest weight: {top_raw:.2f} unscaled, {top_scaled:.2f} scaled")

# %% [markdown]
# **Several heads.** `nn.MultiHeadAttention(E, h)` (chapter 13) first projects its inputs with
# learned matrices, $Q = X W_q^\top + b_q$ (the same for $K$, $V$), then cuts the $E$ features
# into $h$ heads of $E/h$ features each, runs the three steps above in every head at once, puts
# the heads side by side again and applies an output projection. Its weights are stored as
# PyTorch stores them: `in_proj_weight` is $W_q$, $W_k$, $W_v$ stacked, `out_proj` a `Linear`.
# Reproducing it by hand:

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
E, heads = 16, 4
mha = nn.MultiHeadAttention(E, heads)                 # batch_first: (N, L, E)
x = lucid.random.randn(1, 5, E, dtype=lucid.Float32)  # one sequence of 5 vectors
out, per_head = mha(x, x, x, average_attn_weights=False)

W_q, W_k, W_v = lucid.chunk(mha.in_proj_weight, 3, axis=0)
b_q, b_k, b_v = lucid.chunk(mha.in_proj_bias, 3, axis=0)


def split_heads(t):
    """(N, L, E) -> (N, heads, L, E/heads): each head gets its own E/heads features."""
    return t.reshape(1, 5, heads, E // heads).swapaxes(1, 2)


q, k, v = (split_heads(x @ W.T + b) for W, b in ((W_q, b_q), (W_k, b_k), (W_v, b_v)))
w_by_hand = F.softmax(q @ k.mT / math.sqrt(E // heads), axis=-1)   # (1, 4, 5, 5)
y = (w_by_hand @ v).swapaxes(1, 2).reshape(1, 5, E)                # heads side by side
print("weights per head:", per_head.shape, " same:",
      np.allclose(w_by_hand.numpy(), per_head.numpy(), atol=1e-6))
print("output:", out.shape, " same:", np.allclose(mha.out_proj(y).numpy(), out.numpy(),
                                                     atol=1e-6))

# %% [markdown]
# ## 2. The causal mask
#
# A language model predicts the next token from the ones before it, so position $i$ must not
# look at positions $j > i$. The standard trick: add $-\infty$ to those scores before the
# softmax. $e^{-\infty} = 0$, so they get weight exactly 0, and the remaining weights still sum
# to 1. `nn.Transformer.generate_square_subsequent_mask(L)` makes that additive mask, as
# PyTorch does:

# %% tags=["nbval-check-output"]
mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=lucid.Float64)
print(mask.numpy())
causal = F.softmax(scores + mask, axis=-1)      # the scores of section 1, masked
print(causal.numpy())
print("is_causal=True does the same:", np.allclose(
    (causal @ V).numpy(), F.scaled_dot_product_attention(Q, K, V, is_causal=True).numpy()))
print("so does attn_mask=mask:      ", np.allclose(
    (causal @ V).numpy(), F.scaled_dot_product_attention(Q, K, V, attn_mask=mask).numpy()))

# %% [markdown]
# (Careful with **boolean** masks, whose meaning PyTorch flips between functions:
# `F.scaled_dot_product_attention` takes `True` where attention is *allowed*,
# `nn.MultiHeadAttention` `True` where it is *blocked*. A float mask of 0 and $-\infty$ means
# the same everywhere.)
#
# **An attention map you can read.** Give each word of "the cat sat on the mat" a one-hot vector
# over the 5 different words, and use $3 \times$ that vector as its query and its key. Then the
# score of two positions is $9/\sqrt{5} \approx 4$ when they hold the same word and 0 otherwise:
# each word looks for earlier copies of itself. `lucid_viz.plot_attention(weights, tokens)`
# draws the weights, one row per query (the position attending), one column per key.

# %%
words = "the cat sat on the mat".split()
vocab = sorted(set(words))
one_hot = lucid.Tensor(np.eye(len(vocab))[[vocab.index(w) for w in words]])   # (6, 5)
qk = 3 * one_hot
word_mask = nn.Transformer.generate_square_subsequent_mask(len(words), dtype=lucid.Float64)
word_weights = F.softmax(qk @ qk.mT / math.sqrt(len(vocab)) + word_mask, axis=-1)
lucid_viz.plot_attention(word_weights, words, title="Each word attends to earlier copies "
                                                    "of itself (causal)")

# %% [markdown]
# Read it row by row: the first "the" can only see itself (weight 1). Every other word splits
# its weight between itself (score 4) and each earlier, different word (score 0): "mat" keeps
# $e^4 / (e^4 + 5) \approx 0.92$ for itself. The second "the" finds the first one and splits its
# weight between the two copies, about 0.49 each. Everything above the diagonal is 0: the mask.
# In a trained model the queries and keys are learned, so *what* a head looks for is learned too.
#
# ## 3. Where is each token? Positional encodings
#
# Attention has no idea of order. Shuffle the input positions, and the output of
# `MultiHeadAttention` is the same set of vectors, shuffled the same way: "the cat sat" and
# "sat cat the" look alike to it.

# %% tags=["nbval-check-output"]
perm = [2, 0, 4, 1, 3]
out_shuffled, _ = mha(x[:, perm], x[:, perm], x[:, perm])
print("output of the shuffled input == shuffled output:",
      np.allclose(out_shuffled.numpy(), out.numpy()[:, perm], atol=1e-6))

# %% [markdown]
# So the order must be put into the inputs: add to each token's vector a vector that depends on
# its **position**. Two common choices:
#
# * **Sinusoidal** (the original Transformer, `nn.PositionalEncoding(d_model)`): a fixed table,
#   $\;PE_{p, 2i} = \sin(p\,\omega_i)$, $PE_{p, 2i+1} = \cos(p\,\omega_i)$ with
#   $\omega_i = 10000^{-2i/d}$: sine waves of geometrically growing wavelengths, from $2\pi$ up
#   to almost $10000 \cdot 2\pi$ positions. It is a buffer, not a parameter (chapter 07), and
#   works for any position up to `max_len`.
# * **Learned** (BERT, GPT; `nn.LearnedPositionalEncoding(max_len, d_model)`): an `Embedding`
#   with one trained vector per position, random at the start. It only knows the positions it
#   was trained on.

# %% tags=["nbval-check-output"]
sinusoidal = nn.PositionalEncoding(d_model=64, max_len=128)
learned = nn.LearnedPositionalEncoding(max_len=128, d_model=64)
print("sinusoidal: buffer", [(n, b.shape) for n, b in sinusoidal.named_buffers()],
      " parameters:", sum(p.size for p in sinusoidal.parameters()))
print("learned:    parameters", [(n, p.shape) for n, p in learned.named_parameters()])
tokens = lucid.zeros(2, 10, 64)                              # (N, L, d): 2 sequences of 10
print("adds pe[:10] to each sequence:", np.allclose(
    nn.PositionalEncoding(64, batch_first=True)(tokens).numpy()[1],
    sinusoidal.pe.numpy()[:10]))

# %% [markdown]
# On the left the table itself: each row of the picture is one feature, each column one
# position. On the right the dot product of every pair of position vectors: it depends only on
# the **distance** $|p - p'|$ (the bands parallel to the diagonal), because
# $\sin a \sin b + \cos a \cos b = \cos(a - b)$. Near positions look alike, far ones do not, and
# "3 positions back" looks the same everywhere in the sequence - easy for attention to use.

# %%
pe = sinusoidal.pe.numpy()                       # (128 positions, 64 features)
fig, (left, right) = plt.subplots(1, 2, figsize=(8.8, 4.2), layout="constrained")
image = left.imshow(pe.T, aspect="auto", cmap="RdBu", vmin=-1, vmax=1, interpolation="nearest")
left.set_xlabel("position (tokens)")
left.set_ylabel("feature")
left.set_title("sinusoidal positional encoding")
fig.colorbar(image, ax=left, label="value")
image = right.imshow(pe @ pe.T, cmap="viridis", interpolation="nearest")
right.set_xlabel("position (tokens)")
right.set_ylabel("position (tokens)")
right.set_title("dot product of two positions' vectors")
fig.colorbar(image, ax=right, label="dot product")
plt.show()

# %% tags=["nbval-check-output"]
S = pe @ pe.T
print("pe[10].pe[15] == pe[60].pe[65]:", np.isclose(S[10, 15], S[60, 65]))
print("a position with itself:", round(float(S[7, 7]), 3), "= d/2 = 32")

# %% [markdown]
# ## 4. A Transformer layer, part by part
#
# `nn.TransformerEncoderLayer` is attention plus a small MLP applied to every position alone,
# each wrapped in a **residual connection** (chapter 11) and a **LayerNorm**. Its parts, under
# PyTorch's names:
#
# | part | what it does |
# |---|---|
# | `self_attn` | multi-head self-attention: each position gathers information from the others |
# | `linear1`, activation, `dropout`, `linear2` | feed-forward: one small MLP, at each position |
# | `norm1`, `norm2` | LayerNorm: each vector to mean 0, variance 1; then a learned scale, shift |
# | `dropout1`, `dropout2` | dropout on each block's output before it is added back |
#
# Where the norms sit is the `norm_first` switch:
#
# * `norm_first=False` (**post-norm**, as in "Attention Is All You Need", 2017, and PyTorch's
#   default):
#   $x \leftarrow \mathrm{norm}_1(x + \mathrm{attn}(x))$, then
#   $x \leftarrow \mathrm{norm}_2(x + \mathrm{ff}(x))$;
# * `norm_first=True` (**pre-norm**, GPT-2 and most models since):
#   $x \leftarrow x + \mathrm{attn}(\mathrm{norm}_1(x))$, then
#   $x \leftarrow x + \mathrm{ff}(\mathrm{norm}_2(x))$.
#
# Pre-norm leaves the residual path $x \to x + \dots$ untouched, so the gradient reaches early
# layers through a plain sum in every layer, and deep stacks train without tricks. A pre-norm
# layer by hand (PyTorch's defaults otherwise: `dropout=0.1`, which we switch off here, and
# `batch_first=False`, which we switch on):

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
layer = nn.TransformerEncoderLayer(d_model=E, nhead=4, dim_feedforward=64, dropout=0.0,
                                   batch_first=True, norm_first=True)
print(layer)
n1 = layer.norm1(x)
h = x + layer.self_attn(n1, n1, n1)[0]                               # attention block
by_hand = h + layer.linear2(F.relu(layer.linear1(layer.norm2(h))))   # feed-forward block
print("pre-norm layer by hand:", np.allclose(by_hand.numpy(), layer(x).numpy(), atol=1e-6))
print("parameters:", sum(p.size for p in layer.parameters()),
      "= 4E²+4E (attention) + 2·E·64+64+E (feed-forward) + 4E (norms) =",
      4 * E**2 + 4 * E + 2 * E * 64 + 64 + E + 4 * E)
print("attention weights kept for plotting (averaged over heads):", layer.attn_weights.shape)

# %% [markdown]
# The visible difference: a post-norm layer ends with a LayerNorm, so every output vector has
# mean 0 and standard deviation 1 (before the learned scale and shift, which start at 1 and 0);
# a pre-norm layer's output is the raw residual stream. That is why a pre-norm model such as
# GPT puts one more LayerNorm (`ln_f`) after its last layer.

# %% tags=["nbval-check-output"]
lucid.random.seed(0)
post = nn.TransformerEncoderLayer(E, 4, dim_feedforward=64, dropout=0.0, batch_first=True)
for name, module in (("post-norm", post), ("pre-norm ", layer)):
    rows = module(3 * x).numpy()[0]
    print(f"{name}: per-position mean {np.abs(rows.mean(axis=-1)).max():.3f} (largest |.|), "
          f"std from {rows.std(axis=-1).min():.2f} to {rows.std(axis=-1).max():.2f}")

# %% [markdown]
# ## 5. The text, its characters, and the loss to beat
#
# Lucid ships the first 300,000 characters of "tiny Shakespeare" (speeches from the plays), so
# nothing is downloaded. A **character-level** model reads and writes one character at a time.

# %% tags=["nbval-check-output"]
text = tiny_shakespeare()
print(f"{len(text):,} characters; it begins:\n")
print(text[:230])

# %% [markdown]
# `CharDataset(text, block_size)` numbers the distinct characters (sorted: `stoi` maps a
# character to its id, `itos` back, `encode`/`decode` convert whole strings) and serves every
# window of `block_size + 1` characters as a pair: the input `x` (the first `block_size`) and
# the target `y`, the same window shifted by one. So `y[t]` is the character that follows
# `x[0..t]`: **one window holds `block_size` next-character questions**, with contexts from 1 to
# `block_size` characters long.

# %% tags=["nbval-check-output"]
BLOCK = 32
chars = CharDataset(text, BLOCK)
print("vocabulary:", chars.vocab_size, "characters:", repr("".join(chars.itos)))
print("windows:", f"{len(chars):,}")
x0, y0 = chars[0]
print("x:", repr(chars.decode(x0)))
print("y:", repr(chars.decode(y0)))
print("ids of 'First':", chars.encode("First").tolist())

# %% [markdown]
# We train on the windows in the first 90% of the text and keep the last 10% (a different
# play, as it happens) to measure the model on text it has never seen. `Subset` picks the
# windows by number; the training windows stop `BLOCK` characters before the validation text
# starts, so no window straddles the two.

# %% tags=["nbval-check-output"]
split = int(0.9 * len(chars))
train_set = Subset(chars, range(split - BLOCK))          # windows inside text[:split]
val_set = Subset(chars, range(split, len(chars)))        # windows inside text[split:]
print("training windows:", f"{len(train_set):,}", "  validation windows:", f"{len(val_set):,}")
train_ids, val_ids = chars.ids[:split], chars.ids[split:]

# %% [markdown]
# **What would "learning" mean here?** The loss is the cross-entropy of the next character,
# $-\ln p_\text{model}(\text{next char} \mid \text{context})$ averaged over positions, in
# **nats** (natural log). Two reference points:
#
# * A model that knows nothing gives every character probability $1/V$: loss $\ln V$. An
#   untrained GPT is close to this.
# * The best model that **ignores the context** predicts every character with its frequency
#   $p_c$ in the training text. Its loss is the **unigram entropy**
#   $H = -\sum_c p_c \ln p_c$, and no context-free model does better (Gibbs' inequality: the
#   cross-entropy $-\sum_c p_c \ln q_c$ is smallest at $q = p$).
#
# So the model has learned something about *sequences* only when its loss on unseen text falls
# below $H$: then it uses the characters before to predict the next.

# %% tags=["nbval-check-output"]
p = np.bincount(train_ids, minlength=chars.vocab_size) / train_ids.size
H = float(-(p * np.log(p)).sum())                            # every character occurs: p > 0
unigram_val = float(-np.log(p[val_ids]).mean())              # the same model, on unseen text
print(f"uniform guess, ln V:          {math.log(chars.vocab_size):.3f} nats")
print(f"unigram entropy H (training): {H:.3f} nats")
print(f"unigram model on validation:  {unigram_val:.3f} nats")
print("most frequent characters:", [chars.itos[i] for i in np.argsort(-p)[:8]])

# %% [markdown]
# ## Exercises
#
# ### Exercise 18.1 · Predict the shapes
#
# `mha = nn.MultiHeadAttention(embed_dim=24, num_heads=3)` is called with a query of shape
# `(2, 7, 24)` (2 sequences of 7 positions) and a key and value of shape `(2, 5, 24)`, and
# `average_attn_weights=False`. What are the shapes of the output and of the weights? Write
# them as tuples.

# %% tags=["solution"]
out_shape = (2, 7, 24)
weights_shape = (2, 3, 7, 5)

# %% tags=["check"]
lucid.random.seed(0)
mha_check = nn.MultiHeadAttention(embed_dim=24, num_heads=3)
kv_check = lucid.random.randn(2, 5, 24, dtype=lucid.Float32)
out_check, w_check = mha_check(lucid.random.randn(2, 7, 24, dtype=lucid.Float32), kv_check,
                               kv_check, average_attn_weights=False)
nudge = "Section 1 prints the shapes of an attention call; which axes does each result keep?"
hint = ("one output vector per query position; one weight per (sequence, head, query, key). "
        "The keys and the queries need not be equally many.")
check("Exercise 18.1 (output)", out_shape, out_check.shape, nudge=nudge, hint=hint)
check("Exercise 18.1 (weights)", weights_shape, w_check.shape, nudge=nudge, hint=hint)


# %% [markdown]
# ### Exercise 18.2 · Causal attention, by hand
#
# Write `causal_attention(q, k, v)` for Lucid tensors of shape `(..., L, d)` (any number of
# leading axes: batch, heads): the scores $QK^\top/\sqrt{d}$, the causal mask (section 2),
# the softmax over the keys, and the weighted sum of the values. Use Lucid ops
# (`@`, `.mT`, `F.softmax`, `nn.Transformer.generate_square_subsequent_mask` or
# `lucid.masked_fill`). The check compares with `F.scaled_dot_product_attention(q, k, v,
# is_causal=True)`.

# %% tags=["solution"]
def causal_attention(q, k, v):
    """softmax(q k^T / sqrt(d) + causal mask) v over the last two axes."""
    length, dim = q.shape[-2], q.shape[-1]
    mask = nn.Transformer.generate_square_subsequent_mask(length, dtype=q.dtype)
    return F.softmax(q @ k.mT / math.sqrt(dim) + mask, axis=-1) @ v


# %% tags=["check"]
lucid.random.seed(0)
cases = [tuple(lucid.random.randn(*shape, dtype=lucid.Float64) for _ in range(3))
         for shape in [(4, 8), (2, 3, 5, 4), (1, 6), (2, 2, 9, 16)]]
check_function("Exercise 18.2", causal_attention,
               lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), cases,
               nudge="Write section 1's attention with the causal mask of section 2.",
               hint="the mask adds -inf above the diagonal (key after query), before the "
                    "softmax; divide by the square root of the last axis of q; softmax over "
                    "the last axis (the keys).")

# %% [markdown]
# ### Exercise 18.3 · The unigram entropy, by hand
#
# The loss to beat in section 5 was the unigram entropy $H = -\sum_c p_c \ln p_c$. Compute it
# by hand for the "text" `abracadabra`: count each letter, turn the counts into frequencies,
# and give $H$ in nats (to 4 digits; `math.log` is the natural log).

# %% tags=["solution"]
unigram_entropy = -(5 / 11 * math.log(5 / 11) + 2 * (2 / 11) * math.log(2 / 11)
                    + 2 * (1 / 11) * math.log(1 / 11))

# %% tags=["check"]
# The check asks Lucid for the loss of the best context-free model: it scores every letter
# with the log of its frequency, at every position of the word.
word = "abracadabra"
letters = sorted(set(word))
ids = np.array([letters.index(c) for c in word])
freq_logits = np.log(np.bincount(ids) / len(word))
check("Exercise 18.3", unigram_entropy,
      F.cross_entropy(lucid.Tensor(np.tile(freq_logits, (len(word), 1))), lucid.Tensor(ids)),
      rtol=1e-4,
      nudge="Count each letter of the word first.",
      hint="five letters occur: a (how often?), b, r, c, d. p_c = count / 11, and H sums "
           "-p_c ln p_c over the five letters.")

# %% [markdown]
# ### Exercise 18.4 · The parameters of multi-head attention
#
# How many parameters does `nn.MultiheadAttention(embed_dim=24, num_heads=4)` have? It projects
# the input to queries, keys and values (each `Linear(24, 24)` with bias, stored together as
# `in_proj_weight` and `in_proj_bias`) and the heads' concatenated outputs back with
# `out_proj`, a `Linear(24, 24)` with bias.

# %% tags=["solution"]
mha_params = 2400

# %% tags=["check"]
check("Exercise 18.4", mha_params,
      sum(p.size for p in nn.MultiheadAttention(embed_dim=24, num_heads=4).parameters()),
      nudge="Count four Linear(24, 24) layers with bias; does the number of heads change it?",
      hint="each Linear(24, 24) with bias has 24·24 + 24 parameters; the heads split the 24 "
           "dimensions, they add none.")

# %% [markdown]
# **Next:** [19 · A tiny GPT](19_a_tiny_gpt.ipynb) stacks these layers into a GPT, trains it on
# the text of section 5, and looks at what its heads learned.
