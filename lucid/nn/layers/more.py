"""More of PyTorch's layers, each calling a function of ``lucid.nn.functional``: padding
(``nn.ReflectionPad2d``, ``ZeroPad2d``, ...), distances and the losses built on them
(``nn.CosineSimilarity``, ``nn.TripletMarginLoss``, ...), and activations (``nn.PReLU``,
``nn.Hardtanh``, ``nn.LogSigmoid``, ...)."""

from __future__ import annotations

from typing import Any

from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.tensor import Tensor

__all__ = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "CosineSimilarity", "PairwiseDistance", "TripletMarginLoss",
           "MarginRankingLoss", "CosineEmbeddingLoss", "PReLU", "Hardtanh", "LogSigmoid",
           "Softsign", "GLU", "Softmin", "Threshold"]


class _Pad(Module):
    """``F.pad(x, padding, mode, value)``; an int pads every side of the last ``n`` axes."""

    mode = "constant"
    axes = 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.axes)
        self.padding = tuple(padding)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        if self.mode == "constant":
            return F.pad(x, self.padding, "constant", self.value)
        return F.pad(x, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}" + (f", value={self.value}" if self.mode == "constant" else "")


def _pad_class(name: str, mode: str, axes: int, constant: bool) -> type:
    def init(self: Any, padding: Any, value: float = 0.0) -> None:
        _Pad.__init__(self, padding, value if constant else 0.0)

    if not constant:
        def init(self: Any, padding: Any) -> None:  # noqa: F811 (no value to give)
            _Pad.__init__(self, padding)

    doc = (f"Pad the last {axes} axes ({mode} padding, PyTorch's nn.{name}): "
           "``padding`` is an int or (left, right" + (", top, bottom" if axes > 1 else "")
           + (", front, back" if axes > 2 else "") + ").")
    return type(name, (_Pad,), {"mode": mode, "axes": axes, "__init__": init, "__doc__": doc,
                                "__module__": __name__})


ZeroPad1d = _pad_class("ZeroPad1d", "constant", 1, False)
ZeroPad2d = _pad_class("ZeroPad2d", "constant", 2, False)
ConstantPad1d = _pad_class("ConstantPad1d", "constant", 1, True)
ConstantPad2d = _pad_class("ConstantPad2d", "constant", 2, True)
ConstantPad3d = _pad_class("ConstantPad3d", "constant", 3, True)
ReflectionPad1d = _pad_class("ReflectionPad1d", "reflect", 1, False)
ReflectionPad2d = _pad_class("ReflectionPad2d", "reflect", 2, False)
ReplicationPad1d = _pad_class("ReplicationPad1d", "replicate", 1, False)
ReplicationPad2d = _pad_class("ReplicationPad2d", "replicate", 2, False)
ReplicationPad3d = _pad_class("ReplicationPad3d", "replicate", 3, False)


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


class PReLU(Module):
    """max(x, 0) + a min(x, 0) with a learned slope ``a`` (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(Tensor([init] * num_parameters, dtype="float32"))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val)


class LogSigmoid(Module):
    """log(sigmoid(x)), without overflow."""

    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)


class Softmin(Module):
    """softmax(-x) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmin(x, self.dim)


class Threshold(Module):
    """x where x > threshold, else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value)
