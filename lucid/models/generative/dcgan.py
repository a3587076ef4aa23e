"""The DCGAN (Radford et al., 2016) of PyTorch's DCGAN tutorial: a ``Generator`` that turns a
noise vector (N, nz, 1, 1) into an image (N, nc, 64, 64) with values in (-1, 1), and a
``Discriminator`` that gives the probability that an image is real.  The same ``main``
Sequential, layer by layer, so the tutorial's state dicts load.

Generator: a ConvTranspose2d (kernel 4, stride 1, no padding) from 1x1 to 4x4, then
ConvTranspose2d (kernel 4, stride 2, padding 1) layers that double the size, each followed by
BatchNorm2d and ReLU, the last one by Tanh; channels ngf·8 -> ngf·4 -> ngf·2 -> ngf -> nc.
Discriminator: the mirror image -- Conv2d (kernel 4, stride 2, padding 1) halving the size,
LeakyReLU(0.2), BatchNorm2d on all but the first, and a last Conv2d (kernel 4, stride 1) to one
value per image, then Sigmoid.  No layer has a bias (BatchNorm's shift plays that role).

``image_size`` (Lucid's addition; the tutorial's is 64) picks the number of doubling layers:
4·2^k (32 for CIFAR-sized images, 64 as the tutorial) starts from 4x4, 7·2^k (28 for MNIST)
from 7x7 (first and last kernels 7).  The first layer has ngf·2^(k-1) channels, so 64 gives
the tutorial's network exactly.

``weights_init`` (the tutorial's): convolution weights ~ N(0, 0.02²), BatchNorm weights
~ N(1, 0.02²) and biases 0; apply it with ``model.apply(weights_init)``.
"""

from __future__ import annotations

from typing import Any

from lucid import nn
from lucid.nn import init
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["Generator", "Discriminator", "weights_init"]


def _stages(cls: str, image_size: int) -> tuple[int, int]:
    """(base, k): image_size = base · 2^k with base 4 or 7 and k >= 1."""
    size, k = image_size, 0
    while isinstance(size, int) and size > 7 and size % 2 == 0:
        size, k = size // 2, k + 1
    if isinstance(image_size, bool) or size not in (4, 7) or k < 1:
        raise ValueError(f"{cls}: image_size must be 4·2^k or 7·2^k with k >= 1 (e.g. 28, 32, "
                         f"64), got {image_size!r}")
    return size, k


class Generator(nn.Module):
    """Noise (N, nz, 1, 1) -> images (N, nc, image_size, image_size) in (-1, 1)."""

    def __init__(self, nz: int = 100, ngf: int = 64, nc: int = 3, image_size: int = 64,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device, "bias": False}
        base, k = _stages("Generator", image_size)
        self.nz, self.ngf, self.nc, self.image_size = nz, ngf, nc, image_size
        channels = ngf * 2 ** (k - 1)
        layers: list[nn.Module] = [nn.ConvTranspose2d(nz, channels, base, 1, 0, **kw),
                                   nn.BatchNorm2d(channels, dtype=dtype, device=device),
                                   nn.ReLU()]
        for _ in range(k - 1):
            layers += [nn.ConvTranspose2d(channels, channels // 2, 4, 2, 1, **kw),
                       nn.BatchNorm2d(channels // 2, dtype=dtype, device=device), nn.ReLU()]
            channels //= 2
        layers += [nn.ConvTranspose2d(channels, nc, 4, 2, 1, **kw), nn.Tanh()]
        self.main = nn.Sequential(*layers)

    def forward(self, z: Tensor) -> Tensor:
        if z.ndim != 4 or tuple(z.shape[1:]) != (self.nz, 1, 1):
            raise ValueError(f"Generator: noise of shape {fmt(z.shape)}: expected (N, nz, 1, 1) "
                             f"= (N, {self.nz}, 1, 1), e.g. lucid.random.randn(N, {self.nz}, 1, "
                             "1)")
        return self.main(z)


class Discriminator(nn.Module):
    """Images (N, nc, image_size, image_size) -> the probability each is real, (N, 1, 1, 1)
    (flatten it with ``.reshape(-1)`` for ``F.binary_cross_entropy``, as the tutorial's
    ``.view(-1)``)."""

    def __init__(self, ndf: int = 64, nc: int = 3, image_size: int = 64,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device, "bias": False}
        base, k = _stages("Discriminator", image_size)
        self.ndf, self.nc, self.image_size = ndf, nc, image_size
        layers: list[nn.Module] = [nn.Conv2d(nc, ndf, 4, 2, 1, **kw), nn.LeakyReLU(0.2)]
        channels = ndf
        for _ in range(k - 1):
            layers += [nn.Conv2d(channels, channels * 2, 4, 2, 1, **kw),
                       nn.BatchNorm2d(channels * 2, dtype=dtype, device=device),
                       nn.LeakyReLU(0.2)]
            channels *= 2
        layers += [nn.Conv2d(channels, 1, base, 1, 0, **kw), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)

    def forward(self, x: Tensor) -> Tensor:
        want = (self.nc, self.image_size, self.image_size)
        if x.ndim != 4 or tuple(x.shape[1:]) != want:
            raise ValueError(f"Discriminator: input of shape {fmt(x.shape)}: expected (N, "
                             f"{want[0]}, {want[1]}, {want[2]})")
        return self.main(x)


def weights_init(m: nn.Module) -> None:
    """The tutorial's init, for ``model.apply(weights_init)``: Conv / ConvTranspose weights
    ~ N(0, 0.02²); BatchNorm weights ~ N(1, 0.02²), biases 0."""
    name = type(m).__name__
    if "Conv" in name:
        init.normal_(m.weight, 0.0, 0.02)
    elif "BatchNorm" in name:
        init.normal_(m.weight, 1.0, 0.02)
        init.constant_(m.bias, 0.0)
