"""Distances between two batches of vectors and the losses built on them, as PyTorch's:
``nn.CosineSimilarity``, ``nn.PairwiseDistance``, ``nn.TripletMarginLoss``,
``nn.MarginRankingLoss``, ``nn.CosineEmbeddingLoss`` (each calls its ``F.`` function)."""

from __future__ import annotations

from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.tensor import Tensor

__all__ = ["CosineSimilarity", "PairwiseDistance", "TripletMarginLoss", "MarginRankingLoss",
           "CosineEmbeddingLoss"]


class CosineSimilarity(Module):
    """``F.cosine_similarity(x1, x2, dim, eps)``."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``F.pairwise_distance(x1, x2, p, eps, keepdim)``."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class TripletMarginLoss(Module):
    """``F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction)``."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__()
        self.margin, self.p, self.eps, self.swap, self.reduction = margin, p, eps, swap, reduction

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                     self.swap, self.reduction)


class MarginRankingLoss(Module):
    """``F.margin_ranking_loss(x1, x2, y, margin, reduction)``."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class CosineEmbeddingLoss(Module):
    """``F.cosine_embedding_loss(x1, x2, y, margin, reduction)``."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)
