"""``nn.Embedding``: a learnable lookup table of vectors, one row per token id."""

from __future__ import annotations

from typing import Any

from lucid.engine.mode import no_grad
from lucid.nn import init
from lucid.nn.functional.embedding import embedding
from lucid.nn.layers.linear import _parameter, _size
from lucid.nn.module import Module
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["Embedding"]


class Embedding(Module):
    """y[...] = weight[idx[...]]: weight (num_embeddings, embedding_dim) ~ N(0, 1) (PyTorch's
    init).  The row at ``padding_idx`` (if given) starts at zero and receives no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.num_embeddings = _size("Embedding", "num_embeddings", num_embeddings)
        self.embedding_dim = _size("Embedding", "embedding_dim", embedding_dim)
        if padding_idx is not None:
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ValueError(
                    f"Embedding: padding_idx {padding_idx} must be within num_embeddings "
                    f"({self.num_embeddings})"
                )
            padding_idx %= self.num_embeddings
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.weight = _parameter("Embedding", (self.num_embeddings, self.embedding_dim), dtype,
                                 device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                values = self.weight.numpy().copy()
                values[self.padding_idx] = 0
                fresh = Tensor(values, dtype=self.weight.dtype, device=self.weight.device)
                self.weight._data = fresh._data
                self.weight._version += 1

    def forward(self, idx: Tensor) -> Tensor:
        return embedding(idx, self.weight, self.padding_idx, self.max_norm, self.norm_type)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
