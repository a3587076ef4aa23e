"""Transformers: ``TransformerEncoderLayer``, ``TransformerDecoderLayer``, their stacks
``TransformerEncoder`` / ``TransformerDecoder``, ``Transformer``, and positional encodings --
PyTorch's sub-module names, defaults and formulas, so a PyTorch state dict loads.

An encoder layer (``norm_first=False``, the original "post-norm")::

    x = norm1(x + dropout1(self_attn(x, x, x)))
    x = norm2(x + dropout2(linear2(dropout(activation(linear1(x))))))

``norm_first=True`` ("pre-norm") normalises before each block instead:
``x = x + dropout1(self_attn(norm1(x)))``, and so on.  A decoder layer adds a second attention
block, ``multihead_attn(x, memory, memory)``, between the two.  Each layer keeps the attention
weights of its last call in ``attn_weights`` (averaged over the heads, no gradient) for
plotting.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lucid.nn import functional as F
from lucid.nn import init
from lucid.nn.containers import ModuleList
from lucid.nn.layers.attention import MultiHeadAttention
from lucid.nn.layers.dropout import Dropout
from lucid.nn.layers.embedding import Embedding
from lucid.nn.layers.linear import Linear
from lucid.nn.layers.norm import LayerNorm
from lucid.nn.module import Module
from lucid.nn.parameter import Buffer
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer", "PositionalEncoding",
           "LearnedPositionalEncoding"]


def _activation(kind: str, activation: Any) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise ValueError(f"{kind}: activation must be 'relu', 'gelu' or a function, got "
                     f"{activation!r}")


class _Layer(Module):
    """What the encoder and decoder layers share: the feed-forward block and its norms."""

    def _feed_forward(self, d_model: int, dim_feedforward: int, dropout: float,
                      activation: Any, layer_norm_eps: float, bias: bool, dtype: Any,
                      device: str, norms: int) -> None:
        kind = type(self).__name__
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype, device=device)
        for k in range(1, norms + 1):
            setattr(self, f"norm{k}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                dtype=dtype, device=device))
        for k in range(1, norms + 1):
            setattr(self, f"dropout{k}", Dropout(dropout))
        self.activation = _activation(kind, activation)
        self.attn_weights: Tensor | None = None

    def _ff(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))

    def _block(self, x: Tensor, k: int, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """Residual block k: ``x + dropout_k(sublayer(norm_k(x)))`` with ``norm_first``,
        else ``norm_k(x + dropout_k(sublayer(x)))``."""
        norm, drop = getattr(self, f"norm{k}"), getattr(self, f"dropout{k}")
        if self.norm_first:
            return x + drop(sublayer(norm(x)))
        return norm(x + drop(sublayer(x)))

    def _attend(self, attn: MultiHeadAttention, q: Tensor, kv: Tensor, mask: Any,
                padding: Any, is_causal: bool) -> Tensor:
        out, weights = attn(q, kv, kv, key_padding_mask=padding, attn_mask=mask,
                            need_weights=True, is_causal=is_causal and mask is None)
        self.attn_weights = None if weights is None else weights.detach()
        return out


class TransformerEncoderLayer(_Layer):
    """Self-attention then a feed-forward block, each with a residual connection and a
    LayerNorm (see the module docstring).  PyTorch's defaults: ``dim_feedforward=2048``,
    ``dropout=0.1``, ``activation="relu"``, ``batch_first=False``, ``norm_first=False``."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype, device=device)
        self._feed_forward(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias,
                           dtype, device, norms=2)
        self.norm_first = norm_first
        self.batch_first = batch_first

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        x = self._block(src, 1, lambda h: self._attend(self.self_attn, h, h, src_mask,
                                                       src_key_padding_mask, is_causal))
        return self._block(x, 2, self._ff)


class TransformerDecoderLayer(_Layer):
    """Masked self-attention, attention over the encoder's ``memory``, then a feed-forward
    block; each with a residual connection and a LayerNorm (``norm1``..``norm3``)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: Any = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype, device=device)
        self.multihead_attn = MultiHeadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype,
                                                 device=device)
        self._feed_forward(d_model, dim_feedforward, dropout, activation, layer_norm_eps, bias,
                           dtype, device, norms=3)
        self.norm_first = norm_first
        self.batch_first = batch_first

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = self._block(tgt, 1, lambda h: self._attend(self.self_attn, h, h, tgt_mask,
                                                       tgt_key_padding_mask, tgt_is_causal))
        x = self._block(x, 2, lambda h: self._attend(self.multihead_attn, h, memory,
                                                     memory_mask, memory_key_padding_mask,
                                                     memory_is_causal))
        return self._block(x, 3, self._ff)


class _Stack(Module):
    """``num_layers`` copies of one layer (``layers.0`` ...), then ``norm`` if given."""

    def __init__(self, layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def _run(self, x: Tensor, *args: Any) -> Tensor:
        for layer in self.layers:
            x = layer(x, *args)
        return x if self.norm is None else self.norm(x)


class TransformerEncoder(_Stack):
    """``num_layers`` copies of ``encoder_layer`` (``layers.0`` ...), then ``norm`` if given."""

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        return self._run(src, mask, src_key_padding_mask, is_causal)


class TransformerDecoder(_Stack):
    """``num_layers`` copies of ``decoder_layer`` (``layers.0`` ...), then ``norm`` if given."""

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None,
                memory_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        return self._run(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                         memory_key_padding_mask, tgt_is_causal, memory_is_causal)


class Transformer(Module):
    """The encoder-decoder Transformer (Vaswani et al.) with PyTorch's defaults
    (``d_model=512``, ``nhead=8``, 6 + 6 layers, ``dim_feedforward=2048``, ``dropout=0.1``) and
    init (Xavier-uniform on every matrix).  ``forward(src, tgt, ...)`` returns the decoder's
    output; masks as PyTorch takes them (see ``generate_square_subsequent_mask``)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Any = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        common = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                      layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                      norm_first=norm_first, bias=bias, dtype=dtype, device=device)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **common), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype, device=device))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **common), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype, device=device))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None, src_key_padding_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                src_is_causal: bool = False, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                            memory_key_padding_mask, tgt_is_causal, memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: str = "cpu",
                                        dtype: Any = Float32) -> Tensor:
        """The causal mask (sz, sz): 0 on and below the diagonal, -inf above it (position i
        may attend to positions <= i), as PyTorch makes it."""
        mask = np.triu(np.full((sz, sz), -np.inf), k=1)
        return Tensor(mask, dtype=dtype, device=device)


class PositionalEncoding(Module):
    """Sinusoidal positions added to the input (Vaswani et al.)::

        pe[pos, 2i] = sin(pos / 10000^(2i/d)),   pe[pos, 2i+1] = cos(pos / 10000^(2i/d))

    a buffer ``pe`` (max_len, d_model); ``forward(x)`` returns ``dropout(x + pe[:L])`` for x of
    shape (L, N, d) -- or (N, L, d) with ``batch_first`` -- or (L, d)."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0,
                 batch_first: bool = False, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        pos = np.arange(max_len)[:, None]
        div = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = np.zeros((max_len, d_model))
        pe[:, 0::2] = np.sin(pos * div)
        pe[:, 1::2] = np.cos(pos * div[: d_model // 2])
        self.pe = Buffer(pe, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)
        self.batch_first = batch_first

    def forward(self, x: Tensor) -> Tensor:
        axis = 1 if (self.batch_first and x.ndim == 3) else 0
        length = x.shape[axis]
        if length > self.pe.shape[0]:
            raise ValueError(f"PositionalEncoding: sequence of length {length} is longer than "
                             f"max_len={self.pe.shape[0]}")
        pe = self.pe[:length]
        if x.ndim == 3:
            pe = pe.unsqueeze(0) if axis == 1 else pe.unsqueeze(1)
        return self.dropout(x + pe)


class LearnedPositionalEncoding(Module):
    """A learned vector per position (BERT's, GPT's): an ``embedding`` (max_len, d_model)
    whose row ``pos`` is added at position ``pos``; shapes as :class:`PositionalEncoding`."""

    def __init__(self, max_len: int, d_model: int, dropout: float = 0.0,
                 batch_first: bool = False, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.embedding = Embedding(max_len, d_model, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)
        self.batch_first = batch_first

    def forward(self, x: Tensor) -> Tensor:
        axis = 1 if (self.batch_first and x.ndim == 3) else 0
        length = x.shape[axis]
        pe = self.embedding(Tensor(np.arange(length), device=x.device))
        if x.ndim == 3:
            pe = pe.unsqueeze(0) if axis == 1 else pe.unsqueeze(1)
        return self.dropout(x + pe)
