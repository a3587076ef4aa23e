"""ResNet-18 (He et al., 2016), laid out as torchvision's ``resnet18``.

A residual block learns a correction to its input: ``y = relu(F(x) + shortcut(x))``.  The
shortcut is the identity, or a 1x1 strided convolution + BatchNorm where the shape changes.
"""

from __future__ import annotations

from typing import Any

from lucid import nn

__all__ = ["BasicBlock", "ResNet", "resnet_18"]


class BasicBlock(nn.Module):
    """Two 3x3 conv + BatchNorm layers and a shortcut."""

    expansion = 1

    def __init__(self, in_channels: int, channels: int, stride: int = 1, **kw: Any) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels, 3, stride=stride, padding=1, bias=False,
                               **kw)
        self.bn1 = nn.BatchNorm2d(channels, **kw)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False, **kw)
        self.bn2 = nn.BatchNorm2d(channels, **kw)
        if stride != 1 or in_channels != channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, channels, 1, stride=stride, bias=False, **kw),
                nn.BatchNorm2d(channels, **kw),
            )
        else:
            self.downsample = None

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.relu(out + shortcut)


class ResNet(nn.Module):
    """Stem (7x7 conv, max-pool), four stages of blocks, global average pool, classifier."""

    def __init__(self, layers: tuple[int, int, int, int], num_classes: int = 1000,
                 in_channels: int = 3, dtype: Any = None, device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.conv1 = nn.Conv2d(in_channels, 64, 7, stride=2, padding=3, bias=False, **kw)
        self.bn1 = nn.BatchNorm2d(64, **kw)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        channels = 64
        for i, (n_blocks, width) in enumerate(zip(layers, (64, 128, 256, 512))):
            stride = 1 if i == 0 else 2
            blocks = []
            for j in range(n_blocks):
                blocks.append(BasicBlock(channels, width, stride if j == 0 else 1, **kw))
                channels = width
            setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes, **kw)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        return self.fc(x.reshape(x.shape[0], -1))


def resnet_18(num_classes: int = 1000, **kwargs: Any) -> ResNet:
    """ResNet-18: BasicBlocks (2, 2, 2, 2); 11.7M parameters for 1000 classes."""
    return ResNet((2, 2, 2, 2), num_classes=num_classes, **kwargs)
