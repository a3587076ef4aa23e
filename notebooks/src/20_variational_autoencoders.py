# %% [markdown]
# # 20 · Variational autoencoders: the idea and the loss
#
# Every model so far answered a question *about* an image: which digit is it? A **generative
# model** learns what the images themselves look like, well enough to **make new ones**. In this
# chapter and the next we build the classic one, the **variational autoencoder** (VAE), for the
# 8x8 digits of chapter 08. This chapter takes it apart: the idea, the model, and the two pieces
# of mathematics that make it trainable; [chapter 21](21_latent_spaces_and_gans.ipynb) trains
# it, looks at what it learned, and meets a second generative model, the GAN.
#
# | § | what |
# |---|---|
# | 1 | the idea: a latent code $z$, a decoder $p(x \mid z)$, an encoder $q(z \mid x)$, the bound |
# | 2 | the data: the digits as pixel probabilities in [0, 1] |
# | 3 | the model: `lucid.models.generative.VAE`, encoder to $(\mu, \log\sigma^2)$, decoder |
# | 4 | the **reparameterisation trick** $z = \mu + \sigma \varepsilon$, and why it works |
# | 5 | the loss: reconstruction (BCE) + KL divergence, the KL term derived |
#
# **You need:** [02 · Autograd and the DAG](02_autograd_and_the_dag.ipynb) (gradients through a
# graph) and [08 · Training an MLP](08_training_an_mlp.ipynb) (the digits, the loss). Some
# probability helps: a Gaussian's density and what an expectation is.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import lucid
import lucid.nn.functional as F
import lucid_viz
from lucid.data import DataLoader, TensorDataset, random_split
from lucid.models import summarize
from lucid.models.generative import VAE, vae_loss
from lucid_viz.exercises import check, check_function, check_grad

lucid.random.seed(0)      # parameter inits, the noise of the VAE, DataLoader shuffling
plt.rcParams.update({"font.size": 12})   # readable when projected

# %% [markdown]
# ## 1. The idea: make new images
#
# A classifier models $p(y \mid x)$, the label given the image. A generative model models
# $p(x)$, the images themselves: which ones are likely, and, above all, how to **draw a new
# one**. Writing a density over 64 pixels directly is hopeless, so a VAE tells a story with a
# hidden cause, a **latent code** $z$ of a few numbers:
#
# 1. draw a code from a fixed, simple **prior**: $z \sim p(z) = \mathcal{N}(0, I)$;
# 2. a network, the **decoder**, turns the code into pixel probabilities: $p_\theta(x \mid z)$.
#
# To generate, we only need these two steps. To *train* the decoder we need, for each training
# image $x$, codes that could have made it; the true posterior $p_\theta(z \mid x)$ is out of
# reach, so a second network, the **encoder**, guesses it: $q_\phi(z \mid x) =
# \mathcal{N}(\mu_\phi(x), \operatorname{diag} \sigma^2_\phi(x))$. How good a guess is follows
# from one identity, true for any $q$. Bayes' rule gives $p(x) = p(x \mid z)\,p(z) /
# p(z \mid x)$ for every $z$, so $\log p(x)$ is also its own average over $z \sim q$; add and
# subtract $\log q(z \mid x)$ inside that average and group the terms:
#
# $$\begin{aligned}
# \log p_\theta(x) &= \mathbb{E}_q\Big[\log p_\theta(x \mid z)
#   - \log \frac{q_\phi(z \mid x)}{p(z)} + \log \frac{q_\phi(z \mid x)}{p_\theta(z \mid x)}\Big]
#   \\
# &= \underbrace{\mathbb{E}_{q}\big[\log p_\theta(x \mid z)\big]
#   - \mathrm{KL}\big(q_\phi(z \mid x)\,\|\,p(z)\big)}_{\text{the evidence lower bound (ELBO)}}
#   + \underbrace{\mathrm{KL}\big(q_\phi(z \mid x)\,\|\,p_\theta(z \mid x)\big)}_{\geq\, 0}.
# \end{aligned}$$
#
# A KL divergence is never negative, so the ELBO is a lower bound on $\log p_\theta(x)$, and
# raising it does two good things at once: the data gets more likely, and the encoder's guess
# gets closer to the true posterior. The VAE minimises the negative ELBO, in two parts:
#
# $$\mathcal{L}(x) =
#   \underbrace{-\mathbb{E}_{q}\big[\log p_\theta(x \mid z)\big]}_{\text{reconstruction}}
#   + \underbrace{\mathrm{KL}\big(q_\phi(z \mid x)\,\|\,\mathcal{N}(0, I)\big)}_{
#     \text{keep the codes near the prior}}.$$
#
# The first term says: encode $x$, decode the code, and the result should look like $x$ (an
# *autoencoder*). The second says: the codes must not wander off where the prior never draws,
# so that decoding a code *drawn from the prior* (step 1 above) gives a sensible image.

# %% [markdown]
# ## 2. The data: digits as pixel probabilities
#
# The digits of chapter 08, scaled from 0-16 to [0, 1]. The decoder will give each pixel a
# probability of "ink", $p_\theta(x_i = 1 \mid z)$, so the reconstruction term is a binary
# cross-entropy per pixel. (A grey pixel of 0.25 is read as a target probability of 0.25: binary
# cross-entropy accepts any target in [0, 1].) We keep 80% of the images to train on and 20% to
# test with.

# %% tags=["nbval-check-output"]
from sklearn.datasets import load_digits

digits = load_digits()
X_all = (digits.data / 16.0).astype(np.float32)   # (1797, 64), pixels in [0, 1]
y_all = digits.target                             # the digit: for colouring plots only

train_idx, test_idx = (part.indices for part in random_split(range(len(X_all)), [0.8, 0.2]))
X_train = X_all[train_idx]
X_test = lucid.Tensor(X_all[test_idx])
y_test = y_all[test_idx]
n_train, n_test = len(train_idx), len(test_idx)
train_loader = DataLoader(TensorDataset(X_train), batch_size=32, shuffle=True)

print("train / test images:", n_train, n_test)
print("pixel values from", X_all.min(), "to", X_all.max(), " dtype", X_all.dtype)
print("batches per epoch:", len(train_loader))


# %% [markdown]
# A small helper draws rows of 8x8 images; we use it for originals, reconstructions and samples.

# %%
def show_rows(rows, labels, title=None):
    """One row of 8x8 images per entry of `rows` (each an array (n, 64)), labelled on the left."""
    n = len(rows[0])
    side = min(0.9, 7.0 / n)                    # inches per image: at most 9 inches in all
    fig, axes = plt.subplots(len(rows), n, figsize=(side * n + 2.0, side * len(rows) + 0.6),
                             squeeze=False)
    for r, (images, label) in enumerate(zip(rows, labels)):
        for c in range(n):
            axes[r, c].imshow(np.asarray(images[c]).reshape(8, 8), cmap="gray_r",
                              vmin=0, vmax=1)
            axes[r, c].set_xticks([])
            axes[r, c].set_yticks([])
        axes[r, 0].set_ylabel(label, rotation=0, ha="right", va="center")
    if title:
        fig.suptitle(title)
    plt.show()


show_rows([X_all[:12]], ["digits"], title="The first twelve digits, pixels in [0, 1]")

# %% [markdown]
# ## 3. The model: `lucid.models.generative.VAE`
#
# `VAE(in_features, hidden, latent)` is the VAE of PyTorch's examples, layer for layer (at the
# example's sizes, 784-400-20, its PyTorch `state_dict` loads), here with our sizes: 64 pixels
# in, a hidden layer of 128 and a latent code of 8 numbers.
#
# * **Encoder:** $h = \mathrm{relu}(\mathrm{fc1}(x))$, then two heads: $\mu = \mathrm{fc21}(h)$
#   and $\log\sigma^2 = \mathrm{fc22}(h)$. The second head gives the **log**-variance: a linear
#   layer can output any real number, and $\sigma^2 = e^{\log \sigma^2}$ is then positive
#   whatever the weights, with no constraint to enforce.
# * **Sampling:** $z = \mu + \sigma\,\varepsilon$ with $\varepsilon \sim \mathcal{N}(0, I)$
#   (section 4 says why it is written this way).
# * **Decoder:** $\hat{x} = \mathrm{sigmoid}(\mathrm{fc4}(\mathrm{relu}(\mathrm{fc3}(z))))$, one
#   probability per pixel.
#
# `model(x)` returns all three: the reconstruction, $\mu$ and $\log\sigma^2$.

# %% tags=["nbval-check-output"]
model = VAE(in_features=64, hidden=128, latent=8)
print(model)
summary = summarize(model, (1, 64))

# %% tags=["nbval-check-output"]
xb = X_test[:5]
recon, mu, logvar = model(xb)
print("x     :", xb.shape, "  recon:", recon.shape, "  mu:", mu.shape, "  logvar:", logvar.shape)
print("recon lies in (0, 1):", bool((recon.numpy() > 0).all() and (recon.numpy() < 1).all()))
print("methods for the parts:", [m for m in ("encode", "reparameterize", "decode")
                                 if callable(getattr(model, m))])

# %% [markdown]
# ## 4. The reparameterisation trick
#
# Training needs the gradient of the reconstruction term, an *expectation over a random code*
# $z \sim \mathcal{N}(\mu, \sigma^2)$, with respect to $\mu$ and $\sigma$ (and through them, the
# encoder's weights). A sampler is not differentiable: it takes plain numbers (a mean, a
# standard deviation) and hands back plain numbers, and the graph ends there. Draw the code
# directly and autograd sees a leaf with no past:

# %% tags=["nbval-check-output"]
mu = lucid.Tensor(0.5, requires_grad=True, name="mu")
sigma_value = 1.0
z_drawn = lucid.random.randn(1) * sigma_value + mu.item()   # N(0.5, 1), from plain numbers
print("drawn z requires grad:", z_drawn.requires_grad, " parents:", z_drawn._prev)

# %% [markdown]
# The trick: move the randomness into an input that needs no gradient. If
# $\varepsilon \sim \mathcal{N}(0, 1)$, then
#
# $$z = \mu + \sigma\,\varepsilon, \qquad \sigma = e^{\frac{1}{2}\log\sigma^2}$$
#
# has exactly the distribution $\mathcal{N}(\mu, \sigma^2)$, and now $z$ is an ordinary
# differentiable function of $\mu$ and $\log\sigma^2$, with $\varepsilon$ a constant drawn
# beforehand:
#
# $$\frac{\partial z}{\partial \mu} = 1, \qquad \frac{\partial z}{\partial \sigma} =
# \varepsilon, \qquad
# \frac{\partial z}{\partial \log\sigma^2} = \tfrac{1}{2}\,\sigma\,\varepsilon.$$
#
# A tiny example: $\mu = 0.5$, $\log\sigma^2 = 0$ (so $\sigma = 1$), one fixed draw
# $\varepsilon = 0.3$, and a loss $L = z^2$. Then $z = 0.8$, $\partial L / \partial \mu = 2z = 1.6$
# and $\partial L / \partial \log\sigma^2 = 2z \cdot \tfrac{1}{2}\sigma\varepsilon = 0.24$. The
# graph shows the path from the loss back to both leaves; $\varepsilon$ gets a value but no
# gradient.

# %%
mu = lucid.Tensor(0.5, requires_grad=True, name="mu")
logvar = lucid.Tensor(0.0, requires_grad=True, name="logvar")
eps = lucid.Tensor(0.3, name="eps")          # one draw of N(0, 1), fixed beforehand
sigma = lucid.exp(0.5 * logvar)
sigma.name = "sigma"
z = mu + sigma * eps
z.name = "z"
loss = z * z
loss.name = "L"
loss.backward(keep_grad=True)
lucid_viz.draw(loss, show=("data", "grad"))

# %% tags=["nbval-check-output"]
print(f"z = {z.item():.4f}")
print(f"dL/dmu     = {mu.grad.item():.4f}   by hand 2z = {2 * z.item():.4f}")
print(f"dL/dlogvar = {logvar.grad.item():.4f}   by hand 2z * sigma * eps / 2 = "
      f"{2 * z.item() * 1.0 * 0.3 / 2:.4f}")
print("eps has a gradient:", eps.grad is not None)

# %% [markdown]
# One draw gives a noisy gradient; its **average** over many draws is the gradient of the
# expectation. For $L = z^2$ the expectation is known in closed form,
# $\mathbb{E}[z^2] = \mu^2 + \sigma^2$, so its exact gradients are $2\mu$ and (since
# $\partial \sigma^2 / \partial \log\sigma^2 = \sigma^2$) simply $\sigma^2$. With
# $\mu = 0.5$, $\sigma^2 = 2$ and 200,000 draws of $\varepsilon$ at once, the mean of $z^2$
# backpropagates to both:

# %% tags=["nbval-check-output"]
lucid.random.seed(1)
mu = lucid.Tensor(0.5, requires_grad=True)
logvar = lucid.Tensor(math.log(2.0), requires_grad=True)
eps = lucid.random.randn(200_000)             # 200,000 draws of N(0, 1)
z = mu + lucid.exp(0.5 * logvar) * eps        # 200,000 samples of N(0.5, 2)
(z * z).mean().backward()
print(f"d E[z^2] / d mu    : Monte Carlo {mu.grad.item():.3f}   exact 2 mu    = {2 * 0.5:.3f}")
print(f"d E[z^2] / d logvar: Monte Carlo {logvar.grad.item():.3f}   exact sigma^2 = {2.0:.3f}")

# %% [markdown]
# The two agree to within the Monte Carlo error (about 0.01 for 200,000 draws here): the
# average of the reparameterised gradients is an unbiased estimate of the gradient of the
# expectation.
#
# That is all `VAE.reparameterize(mu, logvar)` does, one $\varepsilon$ per latent number, drawn
# from `lucid.random` (so `lucid.random.seed` fixes it). During training each image gets a fresh
# draw at every step, and the average over steps does what the 200,000 draws did here.
#
# ## 5. The loss: reconstruction + KL
#
# **Reconstruction.** With a Bernoulli probability $\hat{x}_i$ per pixel,
# $-\log p_\theta(x \mid z) = -\sum_i \big[x_i \log \hat{x}_i + (1 - x_i) \log(1 - \hat{x}_i)\big]$:
# the binary cross-entropy, **summed** over the 64 pixels (and over the images of a batch), in
# nats. One sample $z$ per image stands in for the expectation $\mathbb{E}_q$.
#
# **The KL term, derived.** For one latent dimension, $q = \mathcal{N}(\mu, \sigma^2)$ and
# $p = \mathcal{N}(0, 1)$:
#
# $$\log q(z) = -\tfrac{1}{2}\log(2\pi\sigma^2) - \frac{(z - \mu)^2}{2\sigma^2}, \qquad
#   \log p(z) = -\tfrac{1}{2}\log(2\pi) - \frac{z^2}{2}.$$
#
# The KL divergence is the expectation of their difference under $q$. Two expectations do all
# the work, $\mathbb{E}_q[(z - \mu)^2] = \sigma^2$ and $\mathbb{E}_q[z^2] = \mu^2 + \sigma^2$:
#
# $$\mathrm{KL}(q\,\|\,p) = \mathbb{E}_q\big[\log q(z) - \log p(z)\big]
#   = -\tfrac{1}{2}\log\sigma^2 - \tfrac{1}{2} + \tfrac{1}{2}(\mu^2 + \sigma^2)
#   = \tfrac{1}{2}\big(\mu^2 + \sigma^2 - 1 - \log\sigma^2\big).$$
#
# The $\log(2\pi)$ terms cancel. The encoder's Gaussian has a diagonal covariance, so its
# dimensions are independent and their KL terms add: summed over the latent dimensions (and the
# images of a batch), this is the package's `-0.5 * (1 + logvar - mu² - exp(logvar)).sum()`.
# Each term is $\geq 0$, and $0$ only at $\mu = 0$, $\sigma = 1$: the prior itself. It grows
# like $\mu^2 / 2$ when a code moves away from 0, and without bound when $\sigma \to 0$ (a code
# pinned to one point): that is the price the encoder pays for being precise.

# %%
mus = np.linspace(-3, 3, 121)
sigmas = np.linspace(0.05, 3, 121)
fig, (ax_mu, ax_sigma) = plt.subplots(1, 2, figsize=(9, 3.8))
ax_mu.plot(mus, 0.5 * mus**2, color="#3d6fa6", linewidth=2)
ax_mu.set_xlabel(r"$\mu$ (with $\sigma = 1$)")
ax_mu.set_ylabel("KL to N(0, 1) (nats)")
ax_sigma.plot(sigmas, 0.5 * (sigmas**2 - 1 - np.log(sigmas**2)), color="#b8651b", linewidth=2)
ax_sigma.set_xlabel(r"$\sigma$ (with $\mu = 0$)")
ax_sigma.set_ylabel("KL to N(0, 1) (nats)")
for ax in (ax_mu, ax_sigma):
    ax.grid(alpha=0.3)
fig.suptitle("The KL term is 0 at the prior and grows away from it")
plt.tight_layout()
plt.show()

# %% [markdown]
# The derivation, checked by Monte Carlo: draw many $z$ from $q$ (by the trick), average
# $\log q(z) - \log p(z)$, and compare with the closed form.

# %% tags=["nbval-check-output"]
lucid.random.seed(2)
mu_q, logvar_q = 1.5, math.log(0.5)
z = mu_q + math.exp(0.5 * logvar_q) * lucid.random.randn(400_000)
log_q = -0.5 * math.log(2 * math.pi) - 0.5 * logvar_q - (z - mu_q) ** 2 / (2 * math.exp(logvar_q))
log_p = -0.5 * math.log(2 * math.pi) - z ** 2 / 2
closed_form = 0.5 * (mu_q**2 + math.exp(logvar_q) - 1 - logvar_q)
print(f"KL by Monte Carlo: {(log_q - log_p).mean().item():.3f}")
print(f"KL closed form   : {closed_form:.3f}")

# %% [markdown]
# **The loss of a batch** is the two terms added: `vae_loss(recon, x, mu, logvar)` (PyTorch's
# example calls it `loss_function`, and so may you). Computed by hand from its parts on a batch
# of test images, with the untrained model:

# %% tags=["nbval-check-output"]
lucid.random.seed(3)
recon, mu, logvar = model(X_test[:32])
bce = F.binary_cross_entropy(recon, X_test[:32], reduction="sum")
kl = 0.5 * (mu * mu + lucid.exp(logvar) - 1 - logvar).sum()
total = vae_loss(recon, X_test[:32], mu, logvar)
print("vae_loss == BCE + KL:", np.isclose(total.item(), (bce + kl).item()))
print(f"per image: reconstruction {bce.item() / 32:.1f} nats, KL {kl.item() / 32:.2f} nats")
print(f"64 pixels x ln 2 = {64 * math.log(2):.1f} nats")

# %% [markdown]
# A sanity check, as in chapter 08: an untrained decoder says about 0.5 for every pixel, and
# $-[x \log 0.5 + (1 - x) \log 0.5] = \ln 2$ whatever $x$ is, so the reconstruction term starts
# near $64 \ln 2 \approx 44.4$ nats per image. The KL term starts small: the untrained encoder's
# $\mu$ and $\log\sigma^2$ are all close to 0, near the prior.
#
# How low can the reconstruction term go? A perfect decoder would give $\hat{x} = x$, and the
# binary cross-entropy is then the *entropy* of the grey pixels, $-\sum_i [x_i \log x_i +
# (1 - x_i)\log(1 - x_i)]$, not 0 (only black-and-white pixels cost nothing). And a decoder that
# ignores the code can do no better than drawing the **average digit** for every image:

# %% tags=["nbval-check-output"]
with np.errstate(divide="ignore", invalid="ignore"):
    entropy = -np.nansum(X_train * np.log(X_train) + (1 - X_train) * np.log(1 - X_train), axis=1)
mean_image = X_train.mean(axis=0).clip(1e-6, 1 - 1e-6)
mean_bce = -(X_train * np.log(mean_image) + (1 - X_train) * np.log(1 - mean_image)).sum(axis=1)
print(f"reconstruction floor (entropy of the pixels): {entropy.mean():.1f} nats per image")
print(f"the average digit for every image           : {mean_bce.mean():.1f} nats per image")

# %% [markdown]
# So between about 44 (untrained) and 13.7 (perfect) lies what the VAE can win, and 27.1 is
# what a decoder that ignores $z$ would reach. Everything below 27.1 must come through the code,
# and every nat of information in the code is charged by the KL term.

# %% [markdown]
# ## Exercises
#
# ### Exercise 20.1 · Predict the KL term
#
# An encoder gives one image the code distribution $\mu = (1, 0)$,
# $\log\sigma^2 = (0, \ln 4)$. What is its KL term, $\mathrm{KL}(q \,\|\, \mathcal{N}(0, I))$,
# in nats? Work it out with the formula of section 5 (a number, to 4 digits; `math.log` is
# allowed).

# %% tags=["solution"]
kl_predicted = 0.5 * ((1 + 1 - 1 - 0) + (0 + 4 - 1 - math.log(4)))

# %% tags=["check"]
# a reconstruction equal to its 0/1 target costs 0 nats, so vae_loss is the KL term alone
x_binary = lucid.Tensor([[1.0, 0.0, 1.0, 1.0]])
check("Exercise 20.1", kl_predicted,
      vae_loss(x_binary, x_binary, lucid.Tensor([[1.0, 0.0]]),
               lucid.Tensor([[0.0, math.log(4)]])),
      rtol=1e-3,
      nudge="Section 4 gives the KL term per dimension.",
      hint="one term per dimension, 1/2 (mu² + sigma² - 1 - log sigma²), with sigma² = "
           "exp(logvar); then add the two.")

# %% [markdown]
# ### Exercise 20.2 · Predict the gradients through the trick
#
# $\mu = 1$, $\log\sigma^2 = \ln 9$ (so $\sigma = 3$), a fixed draw $\varepsilon = -0.5$,
# $z = \mu + \sigma\varepsilon$ and the loss $L = (z - 2)^2$. Give
# $[\partial L/\partial\mu,\ \partial L/\partial\log\sigma^2]$.

# %% tags=["solution"]
gradients_predicted = [-5.0, 3.75]


# %% tags=["check"]
def loss_through_the_trick(mu, logvar):
    z = mu + lucid.exp(0.5 * logvar) * -0.5
    return (z - 2) ** 2


check_grad("Exercise 20.2", gradients_predicted, loss_through_the_trick, 1.0, math.log(9),
           nudge="Follow the reparameterisation: z depends on mu and logvar through which "
                 "formula?",
           hint="first z, then dL/dz = 2(z - 2); multiply by dz/dmu = 1 and by "
                "dz/dlogvar = sigma·eps/2.")


# %% [markdown]
# ### Exercise 20.3 · Implement the reparameterisation
#
# Write `reparameterize(mu, logvar, eps)`: the sample $z = \mu + \sigma\,\varepsilon$ with
# $\sigma = e^{\log\sigma^2 / 2}$, for Lucid tensors `mu` and `logvar` and a fixed draw `eps`,
# built from Lucid ops so that gradients reach `mu` and `logvar`. The check runs your function
# and the package's `VAE.reparameterize` on the same draw, backpropagates $\sum z^2$ through
# both, and compares the gradients with respect to `mu` and `logvar`.

# %% tags=["solution"]
def reparameterize(mu, logvar, eps):
    """A sample z = mu + exp(logvar / 2) * eps of N(mu, exp(logvar)), differentiable in mu and
    logvar (eps is a draw of N(0, 1), fixed beforehand)."""
    return mu + lucid.exp(0.5 * logvar) * eps


# %% tags=["check"]
lucid.random.seed(0)
reference_vae = VAE(in_features=4, hidden=3, latent=3)   # only its reparameterize is used


def package_sample_squared(mu, logvar):
    lucid.random.seed(7)                                 # the draw of eps, repeated below
    return reference_vae.reparameterize(mu, logvar) ** 2


def your_gradients(mu, logvar):
    lucid.random.seed(7)
    eps = lucid.random.randn(3)
    mu_t = lucid.Tensor(mu, requires_grad=True)
    logvar_t = lucid.Tensor(logvar, requires_grad=True)
    loss = (reparameterize(mu_t, logvar_t, eps) ** 2).sum()
    if loss.requires_grad:             # a z made outside Lucid's graph reaches neither input
        loss.backward()
    return [np.zeros(3) if t.grad is None else t.grad for t in (mu_t, logvar_t)]


check_grad("Exercise 20.3", your_gradients, package_sample_squared,
           [0.5, -1.0, 2.0], [0.0, -2.0, 1.2],
           nudge="z must be computed so that backward can reach mu and logvar.",
           hint="build z from Lucid operations on mu and logvar (lucid.exp, +, *), not from "
                ".item() or NumPy values: only then can backward reach them. And sigma is the "
                "square root of the variance.")


# %% [markdown]
# ### Exercise 20.4 · Implement the VAE loss
#
# Write `vae_loss_numpy(recon, x, mu, logvar)` for NumPy arrays: the binary cross-entropy of
# `recon` against `x`, summed over every pixel of every image, plus the KL term of section 5,
# summed over every latent dimension of every image. The check compares it with
# `lucid.models.generative.vae_loss` on a few batches.

# %% tags=["solution"]
def vae_loss_numpy(recon, x, mu, logvar):
    """BCE(recon, x) summed + KL(N(mu, exp(logvar)) || N(0, I)) summed, in nats."""
    bce = -(x * np.log(recon) + (1 - x) * np.log(1 - recon)).sum()
    kl = 0.5 * (mu**2 + np.exp(logvar) - 1 - logvar).sum()
    return bce + kl


# %% tags=["check"]
def package_loss(recon, x, mu, logvar):
    return vae_loss(*(lucid.Tensor(a) for a in (recon, x, mu, logvar)))


rng = np.random.default_rng(0)
loss_cases = [(rng.uniform(0.05, 0.95, (n, 6)), rng.uniform(0, 1, (n, 6)),
               rng.normal(size=(n, k)), rng.normal(size=(n, k))) for n, k in [(1, 2), (4, 3)]]
check_function("Exercise 20.4", vae_loss_numpy, package_loss, loss_cases,
               nudge="The loss of section 5 has two terms; write each as it is written there.",
               hint="both terms are sums over everything, not means; the cross-entropy has a "
                    "minus sign in front; the KL term needs sigma² = exp(logvar), per dimension "
                    "as in Exercise 20.1.")


# %% [markdown]
# ### Exercise 20.5 · The KL divergence between any two Gaussians
#
# Section 5 derived the KL term for a standard normal prior. Some VAEs learn their prior too, and
# then need it for two arbitrary Gaussians. Derive $\mathrm{KL}\big(\mathcal{N}(\mu_1,
# \sigma_1^2)\,\|\,\mathcal{N}(\mu_2, \sigma_2^2)\big)$ the same way (write out both log
# densities, take the expectation under the first) and implement it as
# `kl_gaussians(mu1, var1, mu2, var2)`, for numbers, with variances `var1` $= \sigma_1^2$ and
# `var2` $= \sigma_2^2$. The check integrates $q \log(q/p)$ numerically on a fine grid.

# %% tags=["solution"]
def kl_gaussians(mu1, var1, mu2, var2):
    """KL(N(mu1, var1) || N(mu2, var2)) in nats."""
    return 0.5 * (math.log(var2 / var1) + (var1 + (mu1 - mu2) ** 2) / var2 - 1)


# %% tags=["check"]
def kl_by_integration(mu1, var1, mu2, var2):
    s1 = math.sqrt(var1)
    z = np.linspace(mu1 - 14 * s1, mu1 + 14 * s1, 400_001)
    log_q = -0.5 * np.log(2 * np.pi * var1) - (z - mu1) ** 2 / (2 * var1)
    log_p = -0.5 * np.log(2 * np.pi * var2) - (z - mu2) ** 2 / (2 * var2)
    return np.trapezoid(np.exp(log_q) * (log_q - log_p), z)


check_function("Exercise 20.5", kl_gaussians, kl_by_integration,
               [(0.0, 1.0, 0.0, 1.0), (1.2, 0.5, 0.0, 1.0), (0.5, 0.25, -1.0, 2.0),
                (2.0, 3.0, 1.0, 0.5)],
               rtol=1e-6, atol=1e-9,
               nudge="Start from the definition of the KL divergence between two Gaussians.",
               hint="E_q[(z - mu2)²] = var1 + (mu1 - mu2)²; the answer for mu2 = 0, var2 = 1 "
                    "must give back section 5's formula.")

# %% [markdown]
# **Next:** [21 · Latent spaces and GANs](21_latent_spaces_and_gans.ipynb): the VAE trained, its
# samples, its latent space drawn as a map, and the DCGAN.
