"""``nn.MultiHeadAttention``: PyTorch's ``nn.MultiheadAttention`` (same weights, same masks)."""

from __future__ import annotations

from typing import Any

from lucid.nn import init
from lucid.nn.functional.attention import attention, causal_mask
from lucid.nn.functional.linear import linear
from lucid.nn.layers.linear import Linear, _parameter, _size
from lucid.nn.module import Module
from lucid.ops import chunk, logical_not, logical_or
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["MultiHeadAttention", "MultiheadAttention"]


class MultiHeadAttention(Module):
    """Multi-head attention: h heads attend in parallel in subspaces of size d = E / h.

        Q = query W_q^T + b_q,  K = key W_k^T + b_k,  V = value W_v^T + b_v
        head_i = softmax(Q_i K_i^T / sqrt(d) + mask) V_i       (Q_i: the i-th d columns)
        output = concat(head_1, ..., head_h) W_o^T + b_o

    Weights as PyTorch stores them: ``in_proj_weight`` (3E, E) = [W_q; W_k; W_v] (Xavier
    uniform), ``in_proj_bias`` (3E,) (zeros) and ``out_proj`` = Linear(E, E) (bias zeros), so a
    PyTorch ``state_dict`` loads as is.  ``batch_first=True`` (Lucid's default) takes
    (N, L, E) inputs; ``False`` takes (L, N, E); unbatched (L, E) works either way.

    ``forward`` returns ``(output, weights)`` like PyTorch: the attention weights averaged over
    the heads, (N, L, S) (``average_attn_weights=False``: (N, h, L, S); ``need_weights=False``:
    None).  Masks follow PyTorch's ``MultiheadAttention``: a bool ``attn_mask`` (L, S) or
    (N·h, L, S) is True where attention is **not** allowed, a float one is added to the
    scores; a bool ``key_padding_mask`` (N, S) is True at keys to ignore (padding).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 batch_first: bool = True, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.embed_dim = _size("MultiHeadAttention", "embed_dim", embed_dim, 1)
        self.num_heads = _size("MultiHeadAttention", "num_heads", num_heads, 1)
        if self.embed_dim % self.num_heads:
            raise ValueError(
                f"MultiHeadAttention: embed_dim ({embed_dim}) must be divisible by num_heads "
                f"({num_heads})"
            )
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1], got {dropout}")
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        e = self.embed_dim
        self.in_proj_weight = _parameter("MultiHeadAttention", (3 * e, e), dtype, device)
        if bias:
            self.in_proj_bias = _parameter("MultiHeadAttention", (3 * e,), dtype, device)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(e, e, bias=bias, dtype=dtype, device=device)
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, ...]:
        w, b, e = self.in_proj_weight, self.in_proj_bias, self.embed_dim
        if query is key and key is value:  # self-attention: one matmul for Q, K and V
            return chunk(linear(query, w, b), 3, axis=-1)
        return tuple(
            linear(x, w[i * e:(i + 1) * e], None if b is None else b[i * e:(i + 1) * e])
            for i, x in enumerate((query, key, value))
        )

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        e, h, d = self.embed_dim, self.num_heads, self.head_dim
        unbatched = query.ndim == 2
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.ndim != query.ndim or t.ndim not in (2, 3) or t.shape[-1] != e:
                raise ValueError(
                    f"MultiHeadAttention: {name} of shape {fmt(t.shape)}: expected "
                    f"{'(N, L, E)' if self.batch_first else '(L, N, E)'} or unbatched (L, E) "
                    f"with E = embed_dim = {e}, the same number of axes for query, key, value"
                )
        same = query is key and key is value
        if unbatched:
            query, key, value = (t.unsqueeze(0) for t in (query, key, value))
        elif not self.batch_first:
            query, key, value = (t.swapaxes(0, 1) for t in (query, key, value))
        if same:
            key = value = query
        n, length, source = query.shape[0], query.shape[1], key.shape[1]
        if key.shape[:2] != value.shape[:2] or key.shape[0] != n:
            raise ValueError(
                f"MultiHeadAttention: key {fmt(key.shape)} and value {fmt(value.shape)} must "
                f"share the batch size {n} and the number of positions"
            )
        q, k, v = (
            x.reshape(n, -1, h, d).swapaxes(1, 2) for x in self._project(query, key, value)
        )
        add_mask, block = self._masks(attn_mask, key_padding_mask, is_causal, n, length,
                                      source, query.device)
        out, weights = attention(q, k, v, add_mask, block, self.dropout, self.training)
        out = self.out_proj(out.swapaxes(1, 2).reshape(n, length, e))
        if unbatched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.swapaxes(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(axis=1)
        return out, (weights.squeeze(0) if unbatched else weights)

    def _masks(self, attn_mask: Any, key_padding_mask: Any, is_causal: bool, n: int,
               length: int, source: int, device: str) -> tuple[Any, Any]:
        """(additive float mask, bool mask True = blocked), shaped to broadcast to
        (N, h, L, S)."""
        add = block = None
        if attn_mask is None and is_causal:
            block = logical_not(causal_mask(length, source, device))
        elif attn_mask is not None:
            if attn_mask.shape == (n * self.num_heads, length, source):
                attn_mask = attn_mask.reshape(n, self.num_heads, length, source)
            elif attn_mask.shape != (length, source):
                raise ValueError(
                    f"MultiHeadAttention: attn_mask of shape {fmt(attn_mask.shape)}: expected "
                    f"(L, S) = ({length}, {source}) or (N·num_heads, L, S) = "
                    f"({n * self.num_heads}, {length}, {source})"
                )
            if attn_mask.dtype.base_dtype is bool:
                block = attn_mask
            else:
                add = attn_mask
        if key_padding_mask is not None:
            if key_padding_mask.shape != (n, source):
                raise ValueError(
                    f"MultiHeadAttention: key_padding_mask of shape "
                    f"{fmt(key_padding_mask.shape)}: expected (N, S) = ({n}, {source})"
                )
            pad = key_padding_mask.reshape(n, 1, 1, source)
            if pad.dtype.base_dtype is bool:
                block = pad if block is None else logical_or(block, pad)
            else:
                add = pad if add is None else add + pad
        return add, block

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}, batch_first={self.batch_first}")


MultiheadAttention = MultiHeadAttention  # PyTorch's spelling
