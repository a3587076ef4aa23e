"""The Vision Transformer (Dosovitskiy et al., 2021), laid out as torchvision's
``VisionTransformer``: the same module and parameter names, counts and init, so the keys of a
torchvision state dict match.

An image becomes a sequence: a convolution with kernel = stride = ``patch_size`` (``conv_proj``)
cuts it into (H/p)·(W/p) patches and maps each to a vector of ``hidden_dim``; a learned
``class_token`` is put in front, learned position embeddings are added, and a stack of pre-norm
Transformer encoder blocks runs over the tokens::

    x = x + dropout(self_attention(ln_1(x)))          (multi-head self-attention)
    x = x + mlp(ln_2(x))                              (Linear, GELU, Dropout, Linear, Dropout)

The class token's final vector, after ``encoder.ln``, goes through ``heads.head`` to the
logits.  Every LayerNorm has eps = 1e-6, as torchvision's.

Init (torchvision's): ``conv_proj.weight`` ~ truncated N(0, 1/fan_in) (cut at ±2), bias 0;
``class_token`` 0; ``encoder.pos_embedding`` ~ N(0, 0.02²); attention as
``nn.MultiHeadAttention`` (Xavier-uniform in-projection, zero biases); the MLP's Linear
weights Xavier-uniform, biases N(0, 1e-6²); ``heads.head`` weight and bias 0, so a fresh model
predicts the uniform distribution.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Any

import numpy as np

from lucid import nn, random
from lucid.engine.mode import no_grad
from lucid.nn import init
from lucid.ops import concatenate
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32, Float64

__all__ = ["VisionTransformer", "EncoderBlock", "Encoder", "MLPBlock", "vit_b_16", "vit_tiny"]


def _trunc_normal_(tensor: Tensor, std: float, a: float = -2.0, b: float = 2.0) -> Tensor:
    """Fill with N(0, std²) samples kept inside [a, b] (outside ones are drawn again), as
    ``torch.nn.init.trunc_normal_`` with its default cut at ±2 (absolute, not in stds)."""
    values = random.randn(*tensor.shape, dtype=Float64).numpy() * std
    outside = (values < a) | (values > b)
    while outside.any():
        values[outside] = random.randn(int(outside.sum()), dtype=Float64).numpy() * std
        outside = (values < a) | (values > b)
    with no_grad():
        tensor.copy_(Tensor(values))
    return tensor


class MLPBlock(nn.Sequential):
    """Linear(hidden_dim, mlp_dim), GELU, Dropout, Linear(mlp_dim, hidden_dim), Dropout
    (children ``0`` .. ``4``, as torchvision's); Xavier-uniform weights, N(0, 1e-6²) biases."""

    def __init__(self, in_dim: int, mlp_dim: int, dropout: float, **kw: Any) -> None:
        super().__init__(nn.Linear(in_dim, mlp_dim, **kw), nn.GELU(), nn.Dropout(dropout),
                         nn.Linear(mlp_dim, in_dim, **kw), nn.Dropout(dropout))
        for m in self:
            if isinstance(m, nn.Linear):
                init.xavier_uniform_(m.weight)
                init.normal_(m.bias, std=1e-6)


class EncoderBlock(nn.Module):
    """One pre-norm Transformer encoder block (see the module docstring).  The attention
    weights of the last call, averaged over the heads, stay in ``attn_weights`` (N, L, L), for
    plotting (no gradient)."""

    def __init__(self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float,
                 attention_dropout: float, **kw: Any) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden_dim, eps=1e-6, **kw)
        self.self_attention = nn.MultiHeadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout,
                                                    batch_first=True, **kw)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = nn.LayerNorm(hidden_dim, eps=1e-6, **kw)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout, **kw)
        self.attn_weights: Tensor | None = None

    def forward(self, input: Tensor) -> Tensor:
        h = self.ln_1(input)
        h, weights = self.self_attention(h, h, h, need_weights=True)
        self.attn_weights = weights.detach()
        x = input + self.dropout(h)
        return x + self.mlp(self.ln_2(x))


class Encoder(nn.Module):
    """Adds ``pos_embedding`` (1, seq_length, hidden_dim), then dropout, the blocks
    ``layers.encoder_layer_0`` ... and the final LayerNorm ``ln``."""

    def __init__(self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int,
                 mlp_dim: int, dropout: float, attention_dropout: float, **kw: Any) -> None:
        super().__init__()
        self.pos_embedding = nn.Parameter(np.zeros((1, seq_length, hidden_dim)), **kw)
        init.normal_(self.pos_embedding, std=0.02)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(OrderedDict(
            (f"encoder_layer_{i}", EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                attention_dropout, **kw))
            for i in range(num_layers)
        ))
        self.ln = nn.LayerNorm(hidden_dim, eps=1e-6, **kw)

    def forward(self, input: Tensor) -> Tensor:
        return self.ln(self.layers(self.dropout(input + self.pos_embedding)))


class VisionTransformer(nn.Module):
    """A ViT for (N, in_channels, image_size, image_size) images; ``forward`` returns
    (N, num_classes) logits.  Lucid adds ``in_channels`` (torchvision's is fixed at 3), so
    greyscale digits need no copying into three channels; torchvision's optional pre-logits
    layer (``representation_size``) and convolutional stem are not offered."""

    def __init__(self, image_size: int, patch_size: int, num_layers: int, num_heads: int,
                 hidden_dim: int, mlp_dim: int, dropout: float = 0.0,
                 attention_dropout: float = 0.0, num_classes: int = 1000, in_channels: int = 3,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"VisionTransformer: image_size ({image_size}) must be divisible "
                             f"by patch_size ({patch_size}), so the patches tile the image")
        kw = {"dtype": dtype, "device": device}
        self.image_size, self.patch_size = image_size, patch_size
        self.hidden_dim, self.mlp_dim = hidden_dim, mlp_dim
        self.in_channels, self.num_classes = in_channels, num_classes
        self.conv_proj = nn.Conv2d(in_channels, hidden_dim, patch_size, stride=patch_size, **kw)
        self.class_token = nn.Parameter(np.zeros((1, 1, hidden_dim)), **kw)
        self.seq_length = (image_size // patch_size) ** 2 + 1  # the patches and the class token
        self.encoder = Encoder(self.seq_length, num_layers, num_heads, hidden_dim, mlp_dim,
                               dropout, attention_dropout, **kw)
        self.heads = nn.Sequential(OrderedDict(head=nn.Linear(hidden_dim, num_classes, **kw)))

        fan_in = in_channels * patch_size * patch_size
        _trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
        init.zeros_(self.conv_proj.bias)
        init.zeros_(self.heads.head.weight)
        init.zeros_(self.heads.head.bias)

    def _process_input(self, x: Tensor) -> Tensor:
        """(N, C, H, W) images -> (N, (H/p)·(W/p), hidden_dim) patch vectors."""
        want = (self.in_channels, self.image_size, self.image_size)
        if x.ndim != 4 or tuple(x.shape[1:]) != want:
            raise ValueError(
                f"VisionTransformer: input of shape {fmt(x.shape)}: expected (N, {want[0]}, "
                f"{want[1]}, {want[2]}) -- the position embeddings are learned for "
                f"{want[1]}x{want[2]} images (resize them, or build the model with "
                "image_size=...)"
            )
        x = self.conv_proj(x)  # (N, hidden_dim, H/p, W/p)
        return x.reshape(x.shape[0], self.hidden_dim, -1).swapaxes(1, 2)

    def forward(self, x: Tensor) -> Tensor:
        x = self._process_input(x)
        cls = self.class_token.expand(x.shape[0], -1, -1)
        x = self.encoder(concatenate([cls, x], axis=1))
        return self.heads(x[:, 0])


def vit_b_16(num_classes: int = 1000, image_size: int = 224, **kwargs: Any) -> VisionTransformer:
    """ViT-B/16: 16x16 patches of 224x224 images, 12 blocks, 12 heads, hidden 768, MLP 3072;
    86,567,656 parameters for 1000 classes (torchvision's ``vit_b_16``)."""
    return VisionTransformer(image_size, 16, 12, 12, 768, 3072, num_classes=num_classes,
                             **kwargs)


def vit_tiny(num_classes: int = 10, image_size: int = 32, patch_size: int = 4,
             in_channels: int = 3, **kwargs: Any) -> VisionTransformer:
    """A ViT for a notebook: 4 blocks, 4 heads, hidden 64, MLP 128 (about 0.14M parameters).

    The defaults fit CIFAR-10 (32x32 RGB in 4x4 patches: 64 patches + the class token); for
    MNIST use ``vit_tiny(image_size=28, patch_size=7, in_channels=1)`` (16 patches of 7x7).
    """
    return VisionTransformer(image_size, patch_size, 4, 4, 64, 128, num_classes=num_classes,
                             in_channels=in_channels, **kwargs)
