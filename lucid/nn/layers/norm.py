"""Normalisation layers: ``nn.BatchNorm1d``, ``nn.BatchNorm2d``, ``nn.LayerNorm``,
``nn.GroupNorm`` (formulas in :mod:`lucid.nn.functional.norm`).

Affine weights start at 1 and biases at 0 (PyTorch's init), so a fresh layer only
normalises.  Weights default to ``dtype=lucid.Float32``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.nn import init
from lucid.nn.functional.norm import batch_norm, group_norm, instance_norm, layer_norm
from lucid.nn.layers.linear import _parameter, _size
from lucid.nn.module import Module
from lucid.nn.parameter import Buffer
from lucid.ops import evaluate
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32, Int64, as_numeric

__all__ = ["BatchNorm1d", "BatchNorm2d", "LayerNorm", "GroupNorm", "InstanceNorm1d",
           "InstanceNorm2d"]


class _BatchNorm(Module):
    """Batch normalisation over the channel axis 1 (see ``F.batch_norm``).

    Buffers: ``running_mean`` (zeros), ``running_var`` (ones) and ``num_batches_tracked``
    (an Int64 counter), present when ``track_running_stats``.  In training the layer
    normalises with the batch's statistics and updates the running ones by

        running <- (1 - momentum) running + momentum batch_statistic

    (``momentum=None``: a plain cumulative average, factor 1 / num_batches_tracked).  After
    ``.eval()`` it normalises with the running statistics and updates nothing.

    In data-parallel training (``DistributedDataParallel``) each rank normalises with the
    statistics of its own shard of the batch, as PyTorch's BatchNorm does without
    ``SyncBatchNorm`` (which Lucid does not have): N ranks on shards then differ from one
    process on the whole batch.  DDP copies rank 0's running statistics to every rank before
    each forward.
    """

    _ndims: tuple[int, ...] = ()
    _expect = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, dtype: Any = Float32,
                 device: str = "cpu") -> None:
        super().__init__()
        name = type(self).__name__
        self.num_features = _size(name, "num_features", num_features, 1)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        n = self.num_features
        if affine:
            self.weight = _parameter(name, (n,), dtype, device)
            self.bias = _parameter(name, (n,), dtype, device)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            numeric = as_numeric(Float32 if dtype is None else dtype)
            self.running_mean = Buffer(np.zeros(n), dtype=numeric, device=device)
            self.running_var = Buffer(np.ones(n), dtype=numeric, device=device)
            self.num_batches_tracked = Buffer(np.array(0), dtype=Int64, device=device)
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            counter = self.num_batches_tracked
            counter._data = counter._data * 0
            counter._version += 1

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in self._ndims:
            raise ValueError(f"{name}: expected {self._expect} input, got shape {fmt(x.shape)}")
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"{name}: input {fmt(x.shape)} has {x.shape[1]} channels (axis 1), but the "
                f"layer was built for num_features={self.num_features}"
            )
        counting = self.training and self.track_running_stats
        factor = 0.0 if self.momentum is None else self.momentum
        if counting and self.momentum is None:  # the cumulative average over n batches
            factor = 1.0 / (int(self.num_batches_tracked.item()) + 1)
        # batch statistics in training, or always when no running statistics are kept
        use_batch = self.training or self.running_mean is None
        update = not self.training or self.track_running_stats
        out = batch_norm(
            x,
            self.running_mean if update else None,
            self.running_var if update else None,
            self.weight,
            self.bias,
            use_batch,
            factor,
            self.eps,
        )
        if counting:  # only now: a batch that batch_norm refused is not counted
            counter = self.num_batches_tracked
            counter._data = counter._data + 1
            counter._version += 1
            # computed now, like the running statistics: on "gpu" a lazy "+ 1" would chain
            # every training step onto the one before (about 1 KB of MLX graph a step)
            evaluate(counter)
        return out

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs, one statistic per channel C."""

    _ndims = (2, 3)
    _expect = "2-D (N, C) or 3-D (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs, one statistic per channel C."""

    _ndims = (4,)
    _expect = "4-D (N, C, H, W)"


class LayerNorm(Module):
    """Normalise over the last axes given by ``normalized_shape``, then scale and shift by a
    learnable ``weight`` (ones) and ``bias`` (zeros) of that shape."""

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: Any = Float32,
                 device: str = "cpu") -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(_size("LayerNorm", "normalized_shape", s, 1)
                                      for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = _parameter("LayerNorm", self.normalized_shape, dtype, device)
            if bias:
                self.bias = _parameter("LayerNorm", self.normalized_shape, dtype, device)
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Split the channels into ``num_groups`` groups and normalise each group per sample;
    per-channel ``weight`` (ones) and ``bias`` (zeros) when ``affine``."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        self.num_groups = _size("GroupNorm", "num_groups", num_groups, 1)
        self.num_channels = _size("GroupNorm", "num_channels", num_channels, 1)
        if self.num_channels % self.num_groups:
            raise ValueError(
                f"GroupNorm: num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = _parameter("GroupNorm", (self.num_channels,), dtype, device)
            self.bias = _parameter("GroupNorm", (self.num_channels,), dtype, device)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm: expected input (N, {self.num_channels}, ...), got shape "
                f"{fmt(x.shape)}"
            )
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    """Each channel of each sample normalised over its spatial axes.  PyTorch's defaults:
    ``affine=False`` (no parameters) and ``track_running_stats=False`` (always the statistics
    of the input at hand; Lucid does not keep running ones: passing True is refused)."""

    spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False, dtype: Any = Float32,
                 device: str = "cpu") -> None:
        super().__init__()
        kind = type(self).__name__
        if track_running_stats:
            raise NotImplementedError(f"{kind}: track_running_stats=True is not supported; "
                                      "instance statistics are computed from each input")
        self.num_features = _size(kind, "num_features", num_features, 1)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        if affine:
            self.weight = _parameter(kind, (self.num_features,), dtype, device)
            self.bias = _parameter(kind, (self.num_features,), dtype, device)
            init.ones_(self.weight)
            init.zeros_(self.bias)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        kind = type(self).__name__
        if x.ndim not in (self.spatial + 1, self.spatial + 2):
            raise ValueError(f"{kind}: expected (N, C, {self.spatial} spatial) or (C, "
                             f"{self.spatial} spatial), got shape {x.shape}")
        batched = x.ndim == self.spatial + 2
        y = instance_norm(x if batched else x.unsqueeze(0), weight=self.weight, bias=self.bias,
                          eps=self.eps)
        return y if batched else y.squeeze(0)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, affine={self.affine}"


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L)."""

    spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W)."""

    spatial = 2
