"""VGG-11 and VGG-16 (Simonyan & Zisserman, 2015), laid out as torchvision's ``vgg11`` and
``vgg16``: ``features`` (3x3 convolutions with padding 1 and ReLU, 2x2 max-pools), a 7x7
adaptive average pool, and ``classifier`` (three Linear layers with ReLU and dropout) -- the
same module and parameter names and counts, and torchvision's init (Kaiming-normal fan-out
convolutions, N(0, 0.01) linear weights, zero biases)."""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.nn import init

__all__ = ["VGG", "vgg_11", "vgg_16"]

M = "M"  # a max-pool in a configuration
CONFIGS = {
    11: (64, M, 128, M, 256, 256, M, 512, 512, M, 512, 512, M),
    16: (64, 64, M, 128, 128, M, 256, 256, 256, M, 512, 512, 512, M, 512, 512, 512, M),
}


class VGG(nn.Module):
    """``features`` from a configuration (channel counts and "M" for max-pools), then the
    classifier on the 512·7·7 pooled features."""

    def __init__(self, config: tuple[Any, ...], num_classes: int = 1000, dropout: float = 0.5,
                 in_channels: int = 3, dtype: Any = None, device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        layers: list[nn.Module] = []
        channels = in_channels
        for item in config:
            if item == M:
                layers.append(nn.MaxPool2d(2, stride=2))
            else:
                layers += [nn.Conv2d(channels, item, 3, padding=1, **kw), nn.ReLU()]
                channels = item
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096, **kw), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(4096, 4096, **kw), nn.ReLU(), nn.Dropout(dropout),
            nn.Linear(4096, num_classes, **kw),
        )
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init.normal_(m.weight, 0.0, 0.01)
                init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.reshape(x.shape[0], -1))


def vgg_11(num_classes: int = 1000, **kwargs: Any) -> VGG:
    """VGG-11 (configuration A); 132,863,336 parameters for 1000 classes."""
    return VGG(CONFIGS[11], num_classes=num_classes, **kwargs)


def vgg_16(num_classes: int = 1000, **kwargs: Any) -> VGG:
    """VGG-16 (configuration D); 138,357,544 parameters for 1000 classes."""
    return VGG(CONFIGS[16], num_classes=num_classes, **kwargs)
