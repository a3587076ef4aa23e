"""NumPy float64 references for the programs' first steps: the layers written out."""

from __future__ import annotations

import math

import numpy as np

erf = np.vectorize(math.erf)


def linear(x, state, prefix):
    y = x @ state[f"{prefix}.weight"].astype(np.float64).T
    b = state.get(f"{prefix}.bias")
    return y if b is None else y + b


def relu(x):
    return np.maximum(x, 0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def leaky_relu(x, slope):
    return np.where(x > 0, x, slope * x)


def log_softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def cross_entropy(logits, labels):
    return -log_softmax(logits)[np.arange(len(labels)), labels].mean()


def layer_norm(x, state, prefix, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * state[f"{prefix}.weight"] + state[f"{prefix}.bias"]


def batch_norm_train(x, state, prefix, eps=1e-5):
    """BatchNorm in training mode: the batch's statistics over every axis but channels."""
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    w, b = state[f"{prefix}.weight"].reshape(shape), state[f"{prefix}.bias"].reshape(shape)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def conv2d(x, w, b=None, stride=1, padding=0):
    """Cross-correlation, (N, C, H, W) * (O, C, kh, kw), by explicit windows."""
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def max_pool2d(x, k):
    n, c, h, w = x.shape
    return x[:, :, :h // k * k, :w // k * k].reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


def lstm(x, state, prefix, hidden, layer=0):
    """One LSTM layer, batch first, PyTorch's gate order (i, f, g, o), zero initial state."""
    w_ih, w_hh = state[f"{prefix}.weight_ih_l{layer}"], state[f"{prefix}.weight_hh_l{layer}"]
    b = state[f"{prefix}.bias_ih_l{layer}"] + state[f"{prefix}.bias_hh_l{layer}"]
    n, t, _ = x.shape
    h, c = np.zeros((n, hidden)), np.zeros((n, hidden))
    outs = []
    for s in range(t):
        gates = x[:, s] @ w_ih.T + h @ w_hh.T + b
        i, f, g, o = np.split(gates, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs, axis=1)


def f64(state):
    return {k: np.asarray(v, dtype=np.float64) if np.issubdtype(np.asarray(v).dtype,
                                                               np.floating) else v
            for k, v in state.items()}


# --------------------------------------------------------------------------------------------
# the programs' first losses


def quickstart_first_loss(state, data):
    s = f64(state)
    x, y = (np.stack(c) for c in zip(*data[0][:16]))
    h = x.reshape(len(x), -1).astype(np.float64)
    h = relu(linear(h, s, "linear_relu_stack.0"))
    h = relu(linear(h, s, "linear_relu_stack.2"))
    return cross_entropy(linear(h, s, "linear_relu_stack.4"), y)


def cifar_first_loss(state, data):
    s = f64(state)
    x, y = data[0]
    h = max_pool2d(relu(conv2d(x.astype(np.float64), s["conv1.weight"], s["conv1.bias"])), 2)
    h = max_pool2d(relu(conv2d(h, s["conv2.weight"], s["conv2.bias"])), 2)
    h = h.reshape(len(h), -1)
    h = relu(linear(h, s, "fc1"))
    h = relu(linear(h, s, "fc2"))
    return cross_entropy(linear(h, s, "fc3"), y)


def char_lstm_first_loss(state, batches):
    s = f64(state)
    x, y = batches[0]
    e = s["embed.weight"][x]
    h = lstm(e, s, "lstm", s["lstm.weight_hh_l0"].shape[1])
    logits = linear(h, s, "head")
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def gpt_first_loss(state, batches, n_head=2, n_layer=2):
    s = f64(state)
    idx, targets = batches[0]
    b, t = idx.shape
    x = s["transformer.wte.weight"][idx] + s["transformer.wpe.weight"][np.arange(t)]
    c = x.shape[-1]
    mask = np.tril(np.ones((t, t))) == 0
    for layer in range(n_layer):
        p = f"transformer.h.{layer}"
        h = layer_norm(x, s, f"{p}.ln_1")
        q, k, v = np.split(linear(h, s, f"{p}.attn.c_attn"), 3, axis=-1)
        q, k, v = (a.reshape(b, t, n_head, c // n_head).transpose(0, 2, 1, 3) for a in (q, k, v))
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(c // n_head)
        att = np.where(mask, -np.inf, att)
        att = np.exp(log_softmax(att))
        y = (att @ v).transpose(0, 2, 1, 3).reshape(b, t, c)
        x = x + linear(y, s, f"{p}.attn.c_proj")
        h = layer_norm(x, s, f"{p}.ln_2")
        x = x + linear(gelu(linear(h, s, f"{p}.mlp.c_fc")), s, f"{p}.mlp.c_proj")
    logits = linear(layer_norm(x, s, "transformer.ln_f"), s, "lm_head")
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def vae_eval_loss(state, samples):
    """The eval-mode loss (z = mu), per sample, summed over the data set."""
    s = f64(state)
    x = np.stack([smp[0] for smp in samples]).reshape(len(samples), -1).astype(np.float64)
    h1 = relu(linear(x, s, "fc1"))
    mu, logvar = linear(h1, s, "fc21"), linear(h1, s, "fc22")
    recon = sigmoid(linear(relu(linear(mu, s, "fc3")), s, "fc4"))
    bce = -(x * np.maximum(np.log(recon), -100) + (1 - x) * np.maximum(np.log(1 - recon),
                                                                       -100)).sum()
    kld = -0.5 * np.sum(1 + logvar - mu ** 2 - np.exp(logvar))
    return (bce + kld) / len(samples)


def dcgan_first_d_real(state, data):
    """D(x) on the first real batch (BatchNorm on batch statistics) and its BCE loss."""
    s = f64(state)
    x = data[0][0].astype(np.float64)
    h = leaky_relu(conv2d(x, s["D.main.0.weight"], stride=2, padding=1), 0.2)
    h = conv2d(h, s["D.main.2.weight"], stride=2, padding=1)
    h = leaky_relu(batch_norm_train(h, s, "D.main.3"), 0.2)
    out = sigmoid(conv2d(h, s["D.main.5.weight"])).reshape(-1)
    return out.mean(), -np.log(out).mean()


def mha_self(x, s, prefix, n_head, mask):
    """nn.MultiheadAttention(x, x, x) for x (S, N, E): packed in-projection, heads, additive
    mask, out-projection."""
    seq, n, e = x.shape
    d = e // n_head
    qkv = x @ s[f"{prefix}.in_proj_weight"].T + s[f"{prefix}.in_proj_bias"]
    q, k, v = (a.reshape(seq, n, n_head, d).transpose(1, 2, 0, 3) for a in np.split(qkv, 3, -1))
    att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + mask
    y = (np.exp(log_softmax(att)) @ v).transpose(2, 0, 1, 3).reshape(seq, n, e)
    return linear(y, s, f"{prefix}.out_proj")


def transformer_lm_first_loss(state, data, n_head=2, n_layers=2, bptt=5):
    s = f64(state)
    src = data[0][:bptt]
    target = data[0][1:bptt + 1].reshape(-1)
    e = s["embedding.weight"].shape[1]
    x = s["embedding.weight"][src] * math.sqrt(e) + s["pos_encoder.pe"][:len(src)]
    mask = np.where(np.triu(np.ones((len(src), len(src))), 1) == 1, -np.inf, 0.0)
    for i in range(n_layers):
        p = f"transformer_encoder.layers.{i}"
        x = layer_norm(x + mha_self(x, s, f"{p}.self_attn", n_head, mask), s, f"{p}.norm1")
        ff = linear(relu(linear(x, s, f"{p}.linear1")), s, f"{p}.linear2")
        x = layer_norm(x + ff, s, f"{p}.norm2")
    logits = linear(x, s, "linear")
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), target)


def positional_encoding(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    div = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = np.zeros((max_len, 1, d_model))
    pe[:, 0, 0::2], pe[:, 0, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe


def word_lm_first_loss(state, data, n_layers=2, bptt=5):
    """examples/word_language_model's first batch: a sequence-first stacked LSTM, the decoder
    tied to the embedding."""
    s = f64(state)
    src, target = data[0][:bptt], data[0][1:bptt + 1].reshape(-1)
    np.testing.assert_array_equal(s["decoder.weight"], s["encoder.weight"])  # tied
    h = s["encoder.weight"][src].transpose(1, 0, 2)  # (batch, seq, emb)
    for layer in range(n_layers):
        h = lstm(h, s, "rnn", s["rnn.weight_hh_l0"].shape[1], layer)
    logits = linear(h.transpose(1, 0, 2), s, "decoder")
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), target)


# --------------------------------------------------------------------------------------------
# layers of the programs from public examples (super-resolution, LBFGS sine waves, seq2seq)


def pixel_shuffle(x, r):
    """(N, C r^2, H, W) -> (N, C, H r, W r): out[n, c, h r + i, w r + j] = x[n, c r^2 + i r
    + j, h, w]."""
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(
        n, c // (r * r), h * r, w * r)


def lstm_cell(x, h, c, state, prefix):
    """One step of an LSTMCell, PyTorch's gate order (i, f, g, o)."""
    gates = (x @ state[f"{prefix}.weight_ih"].T + state[f"{prefix}.bias_ih"]
             + h @ state[f"{prefix}.weight_hh"].T + state[f"{prefix}.bias_hh"])
    i, f, g, o = np.split(gates, 4, axis=1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


def gru_step(x, h, state, prefix):
    """One step of a one-layer GRU, PyTorch's gate order (r, z, n)."""
    gi = x @ state[f"{prefix}.weight_ih_l0"].T + state[f"{prefix}.bias_ih_l0"]
    gh = h @ state[f"{prefix}.weight_hh_l0"].T + state[f"{prefix}.bias_hh_l0"]
    ir, iz, inn = np.split(gi, 3, axis=-1)
    hr, hz, hn = np.split(gh, 3, axis=-1)
    r, z = sigmoid(ir + hr), sigmoid(iz + hz)
    n = np.tanh(inn + r * hn)
    return (1 - z) * n + z * h


def affine_grid(theta, h, w):
    """PyTorch's affine_grid, align_corners=False: (N, H, W, 2)."""
    xs, ys = (2 * np.arange(w) + 1) / w - 1, (2 * np.arange(h) + 1) / h - 1
    base = np.stack([*np.meshgrid(xs, ys), np.ones((h, w))], axis=-1)  # (H, W, 3): x, y, 1
    return np.einsum("hwk,nck->nhwc", base, theta)


def grid_sample(x, grid):
    """PyTorch's grid_sample: bilinear, zero padding, align_corners=False."""
    n, c, h, w = x.shape
    ix, iy = ((grid[..., 0] + 1) * w - 1) / 2, ((grid[..., 1] + 1) * h - 1) / 2
    x0, y0 = np.floor(ix).astype(int), np.floor(iy).astype(int)
    out = np.zeros((n, c) + grid.shape[1:3])
    batch = np.arange(n)[:, None, None]
    for xx, yy in ((x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)):
        inside = (xx >= 0) & (xx < w) & (yy >= 0) & (yy < h)
        weight = (1 - np.abs(ix - xx)) * (1 - np.abs(iy - yy)) * inside
        picked = x[batch, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]  # (N, Ho, Wo, C)
        out += picked.transpose(0, 3, 1, 2) * weight[:, None]
    return out
