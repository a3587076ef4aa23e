"""ResNets (He et al., 2016), laid out as torchvision's ``resnet18/34/50`` (same module and
parameter names, same parameter counts).

A residual block learns a correction to its input: ``y = relu(F(x) + shortcut(x))``.  The
shortcut is the identity, or a 1x1 strided convolution + BatchNorm where the shape changes.
ResNet-18 and -34 stack BasicBlocks (two 3x3 convolutions); ResNet-50 stacks Bottlenecks
(1x1 down to ``width``, 3x3, 1x1 up to 4·width), with the stride on the 3x3 convolution as
torchvision ("ResNet v1.5").
"""

from __future__ import annotations

from typing import Any

from lucid import nn

__all__ = ["BasicBlock", "Bottleneck", "ResNet", "resnet_18", "resnet_34", "resnet_50"]


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


class Bottleneck(nn.Module):
    """1x1 conv (to ``channels``), 3x3 conv (stride here), 1x1 conv (to 4·channels), each with
    BatchNorm, and a shortcut."""

    expansion = 4

    def __init__(self, in_channels: int, channels: int, stride: int = 1, **kw: Any) -> None:
        super().__init__()
        out = channels * self.expansion
        self.conv1 = nn.Conv2d(in_channels, channels, 1, bias=False, **kw)
        self.bn1 = nn.BatchNorm2d(channels, **kw)
        self.conv2 = nn.Conv2d(channels, channels, 3, stride=stride, padding=1, bias=False, **kw)
        self.bn2 = nn.BatchNorm2d(channels, **kw)
        self.conv3 = nn.Conv2d(channels, out, 1, bias=False, **kw)
        self.bn3 = nn.BatchNorm2d(out, **kw)
        self.relu = nn.ReLU()
        if stride != 1 or in_channels != out:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out, 1, stride=stride, bias=False, **kw),
                nn.BatchNorm2d(out, **kw),
            )
        else:
            self.downsample = None

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        shortcut = x if self.downsample is None else self.downsample(x)
        return self.relu(out + shortcut)


class ResNet(nn.Module):
    """Stem (7x7 conv, max-pool), four stages of blocks, global average pool, classifier."""

    def __init__(self, layers: tuple[int, int, int, int], num_classes: int = 1000,
                 in_channels: int = 3, dtype: Any = None, device: str = "cpu",
                 block: type = BasicBlock) -> None:
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
                blocks.append(block(channels, width, stride if j == 0 else 1, **kw))
                channels = width * block.expansion
            setattr(self, f"layer{i + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes, **kw)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        return self.fc(x.reshape(x.shape[0], -1))


def resnet_18(num_classes: int = 1000, **kwargs: Any) -> ResNet:
    """ResNet-18: BasicBlocks (2, 2, 2, 2); 11.7M parameters for 1000 classes."""
    return ResNet((2, 2, 2, 2), num_classes=num_classes, **kwargs)


def resnet_34(num_classes: int = 1000, **kwargs: Any) -> ResNet:
    """ResNet-34: BasicBlocks (3, 4, 6, 3); 21,797,672 parameters for 1000 classes."""
    return ResNet((3, 4, 6, 3), num_classes=num_classes, **kwargs)


def resnet_50(num_classes: int = 1000, **kwargs: Any) -> ResNet:
    """ResNet-50: Bottlenecks (3, 4, 6, 3); 25,557,032 parameters for 1000 classes."""
    return ResNet((3, 4, 6, 3), num_classes=num_classes, block=Bottleneck, **kwargs)
