"""LeNet-5 (LeCun et al., 1998) for 1x32x32 inputs (pad 28x28 digits by 2)."""

from __future__ import annotations

from typing import Any

from lucid import nn

__all__ = ["LeNet5", "lenet_5"]


class LeNet5(nn.Module):
    """conv 5x5 (6) -> pool -> conv 5x5 (16) -> pool -> fc 120 -> fc 84 -> fc classes.

    Tanh activations and average pooling, as in the paper.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, dtype: Any = None,
                 device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 6, kernel_size=5, **kw), nn.Tanh(), nn.AvgPool2d(2),
            nn.Conv2d(6, 16, kernel_size=5, **kw), nn.Tanh(), nn.AvgPool2d(2),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 5 * 5, 120, **kw), nn.Tanh(),
            nn.Linear(120, 84, **kw), nn.Tanh(),
            nn.Linear(84, num_classes, **kw),
        )

    def forward(self, x):
        return self.classifier(self.features(x))


def lenet_5(num_classes: int = 10, **kwargs: Any) -> LeNet5:
    return LeNet5(num_classes=num_classes, **kwargs)
