"""The VAE and the DCGAN: the PyTorch examples' layouts, parameter counts (formula and PyTorch),
the loss against NumPy, outputs equal to PyTorch's, init, training and devices."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.models import VAE, Discriminator, Generator, summarize, vae_loss, weights_init
from tests.parity import assert_grads_match_torch

RNG = np.random.default_rng(0)


def _generator_count(nz, g, nc):
    """The tutorial's generator: 4x4 kernels, no biases, BatchNorm after all but the last."""
    convs = nz * 8 * g + 8 * g * 4 * g + 4 * g * 2 * g + 2 * g * g + g * nc
    return 16 * convs + 2 * (8 * g + 4 * g + 2 * g + g)


def _discriminator_count(nc, d):
    convs = nc * d + d * 2 * d + 2 * d * 4 * d + 4 * d * 8 * d + 8 * d
    return 16 * convs + 2 * (2 * d + 4 * d + 8 * d)


# ------------------------------------------------------------------------------------------
# VAE


def test_vae_count_names_and_summary():
    model = VAE()
    want = (784 * 400 + 400) + 2 * (400 * 20 + 20) + (20 * 400 + 400) + (400 * 784 + 784)
    s = summarize(model, (2, 784), print_summary=False)
    assert s.total_params == want == 652_824
    assert [r.name for r in s.rows] == ["fc1", "fc21", "fc22", "fc3", "fc4"]
    assert list(model.state_dict())[::2] == [f"{n}.weight" for n in
                                             ("fc1", "fc21", "fc22", "fc3", "fc4")]


def test_vae_forward_is_the_formula_with_lucid_random_noise():
    lucid.random.seed(0)
    model = VAE(16, 8, 3, dtype=lucid.Float64)
    x = RNG.random((5, 1, 4, 4))  # images: flattened to (5, 16) as the example's view(-1, 784)
    lucid.random.seed(11)
    recon, mu, logvar = model(lucid.Tensor(x))
    lucid.random.seed(11)
    eps = lucid.random.randn(5, 3).numpy()
    sd = model.state_dict()

    def lin(name, v):
        return v @ sd[name + ".weight"].T + sd[name + ".bias"]

    h = np.maximum(lin("fc1", x.reshape(5, 16)), 0)
    np.testing.assert_allclose(mu.numpy(), lin("fc21", h), rtol=1e-12)
    np.testing.assert_allclose(logvar.numpy(), lin("fc22", h), rtol=1e-12)
    z = lin("fc21", h) + eps * np.exp(0.5 * lin("fc22", h))
    want = 1 / (1 + np.exp(-lin("fc4", np.maximum(lin("fc3", z), 0))))
    np.testing.assert_allclose(recon.numpy(), want, rtol=1e-12)
    mean_image = 1 / (1 + np.exp(-lin("fc4", np.maximum(lin("fc3", mu.numpy()), 0))))
    np.testing.assert_allclose(model.decode(mu).numpy(), mean_image, rtol=1e-12)


def test_vae_loss_is_bce_plus_kld():
    recon, x = RNG.uniform(0.05, 0.95, (4, 6)), (RNG.random((4, 6)) > 0.5).astype(float)
    mu, logvar = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    got = vae_loss(*(lucid.Tensor(a) for a in (recon, x, mu, logvar)))
    bce = -(x * np.log(recon) + (1 - x) * np.log(1 - recon)).sum()
    kld = -0.5 * (1 + logvar - mu ** 2 - np.exp(logvar)).sum()
    assert got.item() == pytest.approx(bce + kld, rel=1e-12)


def test_vae_refuses_inputs_that_are_not_rows_of_in_features():
    with pytest.raises(ValueError, match=r"VAE: input of shape \(2,5\) does not split into rows "
                                         r"of in_features=4 values"):
        VAE(4, 3, 2)(lucid.zeros(2, 5))


def test_vae_trains():
    lucid.random.seed(3)
    model = VAE(64, 32, 4)
    patterns = (RNG.random((4, 64)) > 0.7).astype(np.float32)  # four images, eight copies each
    x = lucid.Tensor(patterns[np.arange(32) % 4])
    opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        recon, mu, logvar = model(x)
        loss = vae_loss(recon, x, mu, logvar)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


def test_vae_matches_the_pytorch_example():
    torch = pytest.importorskip("torch")
    nn, tF = torch.nn, torch.nn.functional

    class TorchVAE(nn.Module):  # examples/vae/main.py, with the noise passed in
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(784, 400), nn.Linear(400, 20), nn.Linear(
                400, 20)
            self.fc3, self.fc4 = nn.Linear(20, 400), nn.Linear(400, 784)

        def forward(self, x, eps):
            h1 = tF.relu(self.fc1(x.view(-1, 784)))
            mu, logvar = self.fc21(h1), self.fc22(h1)
            z = mu + eps * torch.exp(0.5 * logvar)
            return torch.sigmoid(self.fc4(tF.relu(self.fc3(z)))), mu, logvar

    torch.manual_seed(0)
    theirs, ours = TorchVAE(), VAE()
    assert sum(p.numel() for p in theirs.parameters()) == 652_824
    ours.load_state_dict({k: lucid.Tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = RNG.random((8, 1, 28, 28)).astype(np.float32)
    lucid.random.seed(4)
    recon, mu, logvar = ours(lucid.Tensor(x))
    lucid.random.seed(4)
    eps = torch.tensor(lucid.random.randn(8, 20, dtype=lucid.Float32).numpy())
    r, m, lv = theirs(torch.tensor(x), eps)
    np.testing.assert_allclose(recon.numpy(), r.detach().numpy(), rtol=1e-4, atol=1e-6)
    want = tF.binary_cross_entropy(r, torch.tensor(x).view(-1, 784), reduction="sum") - 0.5 * (
        1 + lv - m.pow(2) - lv.exp()).sum()
    got = vae_loss(recon, lucid.Tensor(x), mu, logvar)
    assert got.item() == pytest.approx(want.item(), rel=1e-5)
    want.backward()
    got.backward()
    assert_grads_match_torch(ours, theirs)


# ------------------------------------------------------------------------------------------
# DCGAN


def test_dcgan_counts_are_the_tutorials():
    g, d = Generator(), Discriminator()
    assert sum(p.size for p in g.parameters()) == _generator_count(100, 64, 3) == 3_576_704
    assert sum(p.size for p in d.parameters()) == _discriminator_count(3, 64) == 2_765_568
    kinds = [type(m).__name__ for m in g.main]
    assert kinds == ["ConvTranspose2d", "BatchNorm2d", "ReLU"] * 4 + ["ConvTranspose2d", "Tanh"]
    kinds = [type(m).__name__ for m in d.main]
    assert kinds == ["Conv2d", "LeakyReLU"] + ["Conv2d", "BatchNorm2d", "LeakyReLU"] * 3 + [
        "Conv2d", "Sigmoid"]
    assert d.main[1].negative_slope == 0.2
    assert all(m.bias is None for m in (*g.main, *d.main) if "Conv" in type(m).__name__)


def test_dcgan_summaries_and_classroom_sizes():
    lucid.random.seed(5)
    for size, first in ((64, (1, 64, 4, 4)), (32, (1, 32, 4, 4)), (28, (1, 16, 7, 7))):
        g, d = Generator(nz=10, ngf=8, nc=1, image_size=size), Discriminator(8, 1, size)
        s = summarize(g, (1, 10, 1, 1), print_summary=False)
        assert s.rows[0].output_shape == first and s.rows[-1].output_shape == (1, 1, size, size)
        s = summarize(d, (1, 1, size, size), print_summary=False)
        assert s.rows[-1].output_shape == (1, 1, 1, 1)
    assert g.main[0].kernel_size == (7, 7) and d.main[-2].kernel_size == (7, 7)


def test_dcgan_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"Generator: image_size must be 4·2\^k or 7·2\^k with "
                                         r"k >= 1 \(e.g. 28, 32, 64\), got 48"):
        Generator(image_size=48)
    with pytest.raises(ValueError, match=r"Discriminator: image_size must be .* got 4"):
        Discriminator(image_size=4)
    with pytest.raises(ValueError, match=r"Generator: noise of shape \(2,100\): expected "
                                         r"\(N, nz, 1, 1\) = \(N, 100, 1, 1\)"):
        Generator()(lucid.zeros(2, 100))
    with pytest.raises(ValueError, match=r"Discriminator: input of shape \(2,3,32,32\): "
                                         r"expected \(N, 3, 64, 64\)"):
        Discriminator()(lucid.zeros(2, 3, 32, 32))


def test_weights_init_is_the_tutorials():
    lucid.random.seed(6)
    g = Generator(ngf=16).apply(weights_init)
    w = np.concatenate([m.weight.numpy().ravel() for m in g.main if "Conv" in type(m).__name__])
    assert abs(w.mean()) < 1e-3 and abs(w.std() - 0.02) < 5e-4
    bn = np.concatenate([m.weight.numpy() for m in g.main if "BatchNorm" in type(m).__name__])
    assert abs(bn.mean() - 1.0) < 0.005 and abs(bn.std() - 0.02) < 0.005
    assert all(float(np.abs(m.bias.numpy()).max()) == 0.0 for m in g.main
               if "BatchNorm" in type(m).__name__)


def test_discriminator_then_generator_steps_lower_their_losses():
    lucid.random.seed(7)
    g = Generator(nz=8, ngf=4, nc=1, image_size=32).apply(weights_init)
    d = Discriminator(ndf=4, nc=1, image_size=32).apply(weights_init)
    real = lucid.Tensor(np.tanh(RNG.standard_normal((8, 1, 32, 32))).astype(np.float32))
    z = lucid.random.randn(8, 8, 1, 1, dtype=lucid.Float32)
    ones, zeros = lucid.ones(8, dtype=lucid.Float32), lucid.zeros(8, dtype=lucid.Float32)
    opt_d = lucid.optim.Adam(d.parameters(), lr=2e-3, betas=(0.5, 0.999))
    fake = g(z).detach()
    d_losses = []
    for _ in range(5):
        opt_d.zero_grad()
        loss = (F.binary_cross_entropy(d(real).reshape(-1), ones)
                + F.binary_cross_entropy(d(fake).reshape(-1), zeros))
        loss.backward()
        opt_d.step()
        d_losses.append(loss.item())
    assert d_losses[-1] < 0.7 * d_losses[0]
    opt_g = lucid.optim.Adam(g.parameters(), lr=2e-3, betas=(0.5, 0.999))
    # the judge stays as it is (in training mode, as in the tutorial's generator step)
    g_losses = []
    for _ in range(5):
        opt_g.zero_grad()
        loss = F.binary_cross_entropy(d(g(z)).reshape(-1), ones)
        loss.backward()
        opt_g.step()
        g_losses.append(loss.item())
    assert g_losses[-1] < 0.9 * g_losses[0]


def test_small_models_match_on_gpu():
    pytest.importorskip("mlx.core")
    lucid.random.seed(8)
    g = Generator(nz=6, ngf=4, nc=1, image_size=28).apply(weights_init)
    d = Discriminator(ndf=4, nc=1, image_size=28).apply(weights_init)
    vae = VAE(20, 10, 3)
    z = RNG.standard_normal((2, 6, 1, 1)).astype(np.float32)
    x = RNG.random((2, 20)).astype(np.float32)
    lucid.random.seed(9)
    cpu = [g(lucid.Tensor(z)).numpy(), d(g(lucid.Tensor(z))).numpy(), vae(lucid.Tensor(x))[0]]
    for m in (g, d, vae):
        m.to("gpu")
    lucid.random.seed(9)  # the same noise on either device: lucid.random draws it
    gpu = [g(lucid.Tensor(z, device="gpu")), d(g(lucid.Tensor(z, device="gpu"))),
           vae(lucid.Tensor(x, device="gpu"))[0]]
    for a, b in zip(gpu, cpu):
        assert a.device == "gpu"
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-4, atol=1e-5)


def test_dcgan_matches_the_tutorial_in_pytorch():
    torch = pytest.importorskip("torch")
    nn = torch.nn
    nz, ngf, ndf, nc = 16, 4, 4, 3

    def tutorial_weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class TorchGenerator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
                nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, x):
            return self.main(x)

    class TorchDiscriminator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid())

        def forward(self, x):
            return self.main(x)

    torch.manual_seed(0)
    tg, td = TorchGenerator().apply(tutorial_weights_init), TorchDiscriminator().apply(
        tutorial_weights_init)
    g, d = Generator(nz, ngf, nc), Discriminator(ndf, nc)
    for ours, theirs in ((g, tg), (d, td)):
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert sum(p.size for p in ours.parameters()) == sum(
            p.numel() for p in theirs.parameters())
        ours.load_state_dict({k: lucid.Tensor(v.numpy()) for k, v in
                              theirs.state_dict().items()})
    assert sum(p.numel() for p in tg.parameters()) == _generator_count(nz, ngf, nc)
    assert sum(p.numel() for p in td.parameters()) == _discriminator_count(nc, ndf)
    z = RNG.standard_normal((4, nz, 1, 1)).astype(np.float32)
    for train in (True, False):  # batch statistics, then the running ones
        for m in (g, d, tg, td):
            m.train(train)
        want = tg(torch.tensor(z))
        got = g(lucid.Tensor(z))
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(d(got).numpy(), td(want).detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
