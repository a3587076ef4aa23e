"""A GPT (a decoder-only Transformer language model) in nanoGPT's layout: the same module and
parameter names (``transformer.wte``, ``transformer.h.0.attn.c_attn`` ...), formulas and init,
so a nanoGPT state dict loads.

For token ids ``idx`` (B, T)::

    x = drop(wte[idx] + wpe[0..T-1])                  token + learned position embeddings
    for each block:                                   pre-norm residual blocks
        x = x + attn(ln_1(x))                         causal multi-head self-attention
        x = x + mlp(ln_2(x))                          Linear(d, 4d), GELU, Linear(4d, d)
    logits = lm_head(ln_f(x))                         (B, T, vocab_size)

Causal attention lets position t see positions 0..t only, so the logits at t are a
prediction of token t+1 from the tokens so far; training minimises the cross-entropy of
those predictions against the sequence shifted by one.

Parameters (d = d_model, L = n_layer, V = vocab_size, with biases)::

    V·d (wte) + block_size·d (wpe) + L·(12d² + 13d) + 2d (ln_f)  [+ V·d if lm_head is untied]

Init (nanoGPT's, after GPT-2): every Linear and Embedding weight ~ N(0, 0.02²), biases 0,
LayerNorms 1 and 0, and the two projections back into the residual stream (``c_proj``)
~ N(0, (0.02/sqrt(2L))²), so the residual sum does not grow with depth.
"""

from __future__ import annotations

import math
from typing import Any

from lucid import nn, random
from lucid.creation import arange
from lucid.engine.mode import no_grad
from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.functional.attention import attention, causal_mask
from lucid.nn.layers.linear import _size
from lucid.ops import chunk, concatenate, logical_not, masked_fill, softmax, topk
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32, Int64

__all__ = ["GPT", "Block", "CausalSelfAttention", "MLP"]


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which position t attends to positions <= t::

        q, k, v = split(c_attn(x))                    one Linear(d, 3d) for all three
        head_i  = softmax(q_i k_i^T / sqrt(d / n_head) + causal mask) v_i
        y       = resid_dropout(c_proj(concat(head_1, ..., head_h)))

    The attention weights of the last call stay in ``attn_weights`` (B, n_head, T, T), one
    map per head (no gradient), for plotting; in training mode with dropout they are the
    weights after dropout, as PyTorch returns them.  ``attn_dropout`` is applied inside the
    attention function (to the weights), so it is named here for nanoGPT's layout.
    """

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, bias: bool = True,
                 **kw: Any) -> None:
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"CausalSelfAttention: d_model ({d_model}) must be divisible by "
                             f"n_head ({n_head}): each head gets d_model / n_head features")
        self.c_attn = nn.Linear(d_model, 3 * d_model, bias=bias, **kw)
        self.c_proj = nn.Linear(d_model, d_model, bias=bias, **kw)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.d_model, self.dropout = n_head, d_model, dropout
        self.attn_weights: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        h = self.n_head
        q, k, v = (z.reshape(b, t, h, d // h).swapaxes(1, 2)
                   for z in chunk(self.c_attn(x), 3, axis=-1))  # each (B, h, T, d/h)
        blocked = logical_not(causal_mask(t, t, x.device))  # True above the diagonal
        y, weights = attention(q, k, v, block=blocked, dropout_p=self.attn_dropout.p,
                               training=self.training)
        self.attn_weights = weights.detach()
        y = y.swapaxes(1, 2).reshape(b, t, d)  # the heads side by side again
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """``dropout(c_proj(gelu(c_fc(x))))``: Linear(d, 4d), exact GELU, Linear(4d, d)."""

    def __init__(self, d_model: int, dropout: float = 0.0, bias: bool = True,
                 **kw: Any) -> None:
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model, bias=bias, **kw)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d_model, d_model, bias=bias, **kw)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """A pre-norm Transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, d_model: int, n_head: int, dropout: float = 0.0, bias: bool = True,
                 **kw: Any) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model, bias=bias, **kw)
        self.attn = CausalSelfAttention(d_model, n_head, dropout, bias, **kw)
        self.ln_2 = nn.LayerNorm(d_model, bias=bias, **kw)
        self.mlp = MLP(d_model, dropout, bias, **kw)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """A character- (or token-) level GPT; see the module docstring for the formulas.

    ``forward(idx, targets=None)`` returns ``(logits, loss)`` as nanoGPT does: logits
    (B, T, vocab_size) for every position, and the mean cross-entropy against ``targets``
    (B, T) when given (entries -1 are ignored), else None.  (nanoGPT returns only the last
    position's logits when there are no targets; Lucid returns all of them.)

    ``tie_weights=True`` (nanoGPT's choice, after Press & Wolf 2017) makes ``lm_head`` use the
    token embedding matrix ``wte``: a token's input vector and its output scoring vector are
    the same, which saves vocab_size·d_model parameters and lets a nanoGPT state dict (which
    holds the shared matrix under both names) load as is.  ``bias=False`` drops the biases of
    every Linear and LayerNorm, as nanoGPT's option.

    After a forward pass, ``attn_weights`` lists each block's attention maps
    (B, n_head, T, T).
    """

    def __init__(self, vocab_size: int, block_size: int, n_layer: int = 2, n_head: int = 4,
                 d_model: int = 64, dropout: float = 0.0, bias: bool = True,
                 tie_weights: bool = True, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("block_size", block_size),
                            ("n_layer", n_layer), ("n_head", n_head), ("d_model", d_model)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"GPT: {name} must be a positive int, got {value!r}")
        kw = {"dtype": dtype, "device": device}
        self.vocab_size, self.block_size = vocab_size, block_size
        self.n_layer, self.n_head, self.d_model = n_layer, n_head, d_model
        self.transformer = nn.ModuleDict({
            "wte": nn.Embedding(vocab_size, d_model, **kw),
            "wpe": nn.Embedding(block_size, d_model, **kw),
            "drop": nn.Dropout(dropout),
            "h": nn.ModuleList(Block(d_model, n_head, dropout, bias, **kw)
                               for _ in range(n_layer)),
            "ln_f": nn.LayerNorm(d_model, bias=bias, **kw),
        })
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False, **kw)
        if tie_weights:
            self.transformer.wte.weight = self.lm_head.weight
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                init.zeros_(m.bias)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))

    @property
    def attn_weights(self) -> list[Tensor | None]:
        """Each block's attention maps from the last forward pass, (B, n_head, T, T)."""
        return [block.attn.attn_weights for block in self.transformer.h]

    def forward(self, idx: Tensor, targets: Tensor | None = None) -> tuple[Tensor, Any]:
        if not isinstance(idx, Tensor) or idx.ndim != 2:
            got = fmt(idx.shape) if isinstance(idx, Tensor) else type(idx).__name__
            raise ValueError(f"GPT: idx must be a Tensor of token ids of shape (B, T), got "
                             f"{got}")
        t = idx.shape[1]
        if t > self.block_size:
            raise ValueError(f"GPT: a sequence of {t} tokens is longer than block_size="
                             f"{self.block_size}; pass at most the last {self.block_size} "
                             "tokens (idx[:, -block_size:])")
        tr = self.transformer
        pos = arange(t, dtype=Int64, device=idx.device)
        x = tr.drop(tr.wte(idx) + tr.wpe(pos))
        for block in tr.h:
            x = block(x)
        logits = self.lm_head(tr.ln_f(x))
        if targets is None:
            return logits, None
        if targets.shape != idx.shape:
            raise ValueError(f"GPT: targets of shape {fmt(targets.shape)} must have idx's "
                             f"shape {fmt(idx.shape)} (the next token at every position)")
        loss = F.cross_entropy(logits.reshape(-1, self.vocab_size), targets.reshape(-1),
                               ignore_index=-1)
        return logits, loss

    def generate(self, idx: Tensor, max_new_tokens: int, temperature: float = 1.0,
                 top_k: int | None = None) -> Tensor:
        """Append ``max_new_tokens`` sampled tokens to ``idx`` (B, T); returns (B, T + new).

        Each step feeds the last ``block_size`` tokens, divides the last position's logits
        by ``temperature`` (below 1: sharper, above 1: flatter), keeps only the ``top_k``
        largest if given, and draws the next token from the softmax with ``lucid.random``
        (so ``lucid.random.seed`` makes it repeatable).  Call ``model.eval()`` first when the
        model has dropout, as with nanoGPT.
        """
        max_new_tokens = _size("GPT.generate", "max_new_tokens", max_new_tokens, 0)
        if not temperature > 0:
            raise ValueError(f"GPT.generate: temperature must be > 0, got {temperature}")
        if top_k is not None:
            top_k = min(_size("GPT.generate", "top_k", top_k, 1), self.vocab_size)
        with no_grad():
            for _ in range(max_new_tokens):
                logits, _ = self(idx[:, -self.block_size:])
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    kth = topk(logits, top_k, axis=-1)[0][:, -1:]
                    logits = masked_fill(logits, logits < kth, float("-inf"))
                idx = concatenate([idx, _sample(softmax(logits, axis=-1))], axis=1)
        return idx


def _sample(probs: Tensor) -> Tensor:
    """One index per row of ``probs`` (B, V), drawn with probability probs[b, i]: the first i
    whose cumulative probability exceeds u·total, u ~ U[0, 1) from ``lucid.random``."""
    cdf = probs.cumsum(axis=-1)
    u = random.rand(probs.shape[0], 1, dtype=probs.dtype, device=probs.device) * cdf[:, -1:]
    return (cdf <= u).astype(Int64).sum(axis=-1, keepdims=True)
