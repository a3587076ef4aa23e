"""The variational autoencoder (Kingma & Welling, 2014) of the PyTorch examples
(``examples/vae``): an MLP encoder to a Gaussian over a latent code, an MLP decoder back to
pixel probabilities -- the same layers ``fc1``, ``fc21``, ``fc22``, ``fc3``, ``fc4``, so their
state dicts load.

    h      = relu(fc1(x))                          x: (N, 784) pixels in [0, 1]
    mu     = fc21(h),  logvar = fc22(h)            q(z | x) = N(mu, diag(exp(logvar)))
    z      = mu + exp(logvar / 2) · eps,  eps ~ N(0, I)    (the reparameterisation trick)
    recon  = sigmoid(fc4(relu(fc3(z))))            p(x | z): a Bernoulli per pixel

Writing the sample as ``mu + sigma · eps`` with the noise ``eps`` drawn outside the graph makes
z a differentiable function of mu and logvar, so the loss's gradient reaches the encoder.
"""

from __future__ import annotations

from typing import Any

from lucid import nn, random
from lucid.nn import functional as F
from lucid.ops import exp, sigmoid
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float32

__all__ = ["VAE", "vae_loss", "loss_function"]


class VAE(nn.Module):
    """``forward(x)`` returns ``(recon, mu, logvar)``: the reconstruction (N, in_features) and
    the latent Gaussian's mean and log-variance (N, latent).  ``x`` may be (N, in_features) or
    images (N, 1, 28, 28): it is flattened to (N, in_features) first, as the example's
    ``x.view(-1, 784)``.  The noise is drawn from ``lucid.random`` in training and in
    evaluation alike, as in the example; ``decode(z)`` turns codes into samples."""

    def __init__(self, in_features: int = 784, hidden: int = 400, latent: int = 20,
                 dtype: Any = Float32, device: str = "cpu") -> None:
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.in_features, self.hidden, self.latent = in_features, hidden, latent
        self.fc1 = nn.Linear(in_features, hidden, **kw)
        self.fc21 = nn.Linear(hidden, latent, **kw)
        self.fc22 = nn.Linear(hidden, latent, **kw)
        self.fc3 = nn.Linear(latent, hidden, **kw)
        self.fc4 = nn.Linear(hidden, in_features, **kw)

    def encode(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(mu, logvar) of q(z | x)."""
        h = F.relu(self.fc1(x))
        return self.fc21(h), self.fc22(h)

    def reparameterize(self, mu: Tensor, logvar: Tensor) -> Tensor:
        """z = mu + exp(logvar / 2) · eps, eps ~ N(0, I) from ``lucid.random``."""
        std = exp(0.5 * logvar)
        eps = random.randn(*std.shape, dtype=std.dtype, device=std.device)
        return mu + eps * std

    def decode(self, z: Tensor) -> Tensor:
        """Pixel probabilities sigmoid(fc4(relu(fc3(z)))), (N, in_features)."""
        return sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        if x.size % self.in_features:
            raise ValueError(f"VAE: input of shape {fmt(x.shape)} does not split into rows of "
                             f"in_features={self.in_features} values")
        mu, logvar = self.encode(x.reshape(-1, self.in_features))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def vae_loss(recon: Tensor, x: Tensor, mu: Tensor, logvar: Tensor) -> Tensor:
    """The negative evidence lower bound of a batch, summed over it (the example's
    ``loss_function``)::

        BCE = -sum [x log recon + (1 - x) log(1 - recon)]      reconstruction, in nats
        KLD = -1/2 sum (1 + logvar - mu² - exp(logvar))         KL(q(z | x) || N(0, I))

    returns BCE + KLD.  ``x`` is flattened to recon's shape (pixels must lie in [0, 1]).
    """
    bce = F.binary_cross_entropy(recon, x.reshape(recon.shape), reduction="sum")
    kld = -0.5 * (1 + logvar - mu * mu - exp(logvar)).sum()
    return bce + kld


loss_function = vae_loss  # the PyTorch example's name
