# %% [markdown]
# # 21 · Latent spaces and GANs
#
# [Chapter 20](20_variational_autoencoders.ipynb) built a variational autoencoder and its loss,
# reconstruction + KL, term by term. Now we train it on the digits and look at what it learned:
#
# | § | what |
# |---|---|
# | 1 | the data and the yardstick of chapter 20, in one cell |
# | 2 | training, with both terms of the loss on one picture |
# | 3 | reconstructions, samples from the prior, and which latent dimensions the model uses |
# | 4 | a 2-D latent space: the digits on a map, and the map decoded |
# | 5 | the other generative model in the package, the DCGAN, and the game it is trained by |
#
# **You need:** [20 · Variational autoencoders](20_variational_autoencoders.ipynb) (the model,
# the loss), [08 · Training an MLP](08_training_an_mlp.ipynb) (the training loop) and
# [10 · Convolutional networks](10_convolutional_networks.ipynb) (convolutions and BatchNorm, for
# section 5).

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
from tqdm.auto import trange  # progress bars: a widget in Jupyter, text elsewhere

import lucid
import lucid.nn.functional as F
from lucid.data import DataLoader, TensorDataset, random_split
from lucid.models import summarize
from lucid.models.generative import VAE, Discriminator, Generator, vae_loss
from lucid.optim import Adam
from lucid_viz.exercises import check, check_function

lucid.random.seed(0)      # parameter inits, the noise of the VAE, DataLoader shuffling
plt.rcParams.update({"font.size": 12})   # readable when projected

# %% [markdown]
# ## 1. The data and the yardstick, from chapter 20
#
# The digits as pixel probabilities in [0, 1], 80% to train on and 20% to test with, and the
# yardstick of chapter 20's section 5: a decoder that ignores the code can do no better than
# drawing the **average digit** for every image, at about 27 nats per image. Everything the VAE
# gets below that must come through its code.

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

mean_image = X_train.mean(axis=0).clip(1e-6, 1 - 1e-6)
mean_bce = -(X_train * np.log(mean_image) + (1 - X_train) * np.log(1 - mean_image)).sum(axis=1)
print("train / test images:", n_train, n_test)
print(f"the average digit for every image: {mean_bce.mean():.1f} nats per image")


# %% [markdown]
# The helper of chapter 20 that draws rows of 8x8 images:

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


# %% [markdown]
# ## 2. Training
#
# The loop of chapter 08, with the VAE loss instead of cross-entropy and Adam as the optimizer.
# There are no labels: the image is its own target. To see the two terms separately we compute
# the reconstruction term once more (without a graph, `lucid.no_grad()`) and get the KL term as
# the difference; after each epoch we measure the whole loss on the test images. All figures
# are per image, in nats.

# %%
EPOCHS = 80


def train(model, epochs=EPOCHS, lr=3e-3):
    """Adam on vae_loss. Returns the reconstruction and KL terms per epoch (training images,
    averaged over the epoch's steps) and the test loss after each epoch, all per image."""
    optimizer = Adam(model.parameters(), lr=lr)
    history = {"reconstruction": [], "kl": [], "test": []}
    for _ in trange(epochs, desc=f"VAE with {model.latent} latent dimensions (epochs)"):
        model.train()
        bce_sum = loss_sum = 0.0
        for (xb,) in train_loader:                   # no labels: x is its own target
            optimizer.zero_grad()
            recon, mu, logvar = model(xb)            # encode, sample z, decode
            loss = vae_loss(recon, xb, mu, logvar)   # BCE + KL, summed over the batch
            loss.backward()
            optimizer.step()
            with lucid.no_grad():                    # the first term alone, for the plot
                bce_sum += F.binary_cross_entropy(recon, xb, reduction="sum").item()
            loss_sum += loss.item()
        history["reconstruction"].append(bce_sum / n_train)
        history["kl"].append((loss_sum - bce_sum) / n_train)
        model.eval()
        with lucid.no_grad():
            recon, mu, logvar = model(X_test)
            history["test"].append(vae_loss(recon, X_test, mu, logvar).item() / n_test)
    return history


lucid.random.seed(0)
model = VAE(in_features=64, hidden=128, latent=8)
history = train(model)
print(f"after {EPOCHS} epochs: reconstruction {history['reconstruction'][-1]:.2f}, "
      f"KL {history['kl'][-1]:.2f}, test loss {history['test'][-1]:.2f} nats per image")

# %%
epochs = np.arange(1, EPOCHS + 1)
fig, (ax_rec, ax_kl) = plt.subplots(1, 2, figsize=(9, 4.0))
ax_rec.plot(epochs, history["reconstruction"], color="#3d6fa6", linewidth=2,
            label="reconstruction (train)")
ax_rec.plot(epochs, np.add(history["reconstruction"], history["kl"]), color="#3d6fa6",
            linestyle="--", linewidth=1.5, label="reconstruction + KL (train)")
ax_rec.plot(epochs, history["test"], color="#b8651b", linewidth=1.5,
            label="reconstruction + KL (test)")
ax_rec.axhline(mean_bce.mean(), color="grey", linestyle=":", linewidth=1.5,
               label="the average digit")
ax_rec.set_ylabel("nats per image")
ax_kl.plot(epochs, history["kl"], color="#6a3d9a", linewidth=2, label="KL (train)")
ax_kl.set_ylabel("KL (nats per image)")
for ax in (ax_rec, ax_kl):
    ax.set_xlabel("epoch")
    ax.grid(alpha=0.3)
    ax.legend()
fig.suptitle("The VAE's loss, term by term")
plt.tight_layout()
plt.show()

# %% [markdown]
# per image before training (chapter 20, section 5) to about 21, far below the 27 of the average
# digit: the code carries information about each image. The KL term moves the other way: it starts
# near 0 (every code at the prior, nothing encoded) and **rises** to a few nats, the information the
# encoder has found worth paying for. The total (dashed) keeps falling: each nat of KL buys more
# than a nat of reconstruction. The test loss follows the training loss closely: the model has not
# overfitted. (Each point of the training curves averages one epoch's steps, taken while the model
# changed; the exact figures vary a little between machines, the shape does not.)
#
# ## 3. What the VAE learned
#
# **Reconstructions.** Encode a test image, decode its code. We decode the mean code $\mu$ (no
# noise), the encoder's best guess:

# %%
model.eval()
with lucid.no_grad():
    mu, logvar = model.encode(X_test[:12])
    reconstructions = model.decode(mu).numpy()
show_rows([X_test[:12].numpy(), reconstructions], ["original", "VAE"],
          title="Test digits and their reconstructions through 8 numbers")

# %% [markdown]
# The reconstructions are blurred versions of the originals: the right digit in most cases,
# smooth strokes, the fine detail averaged away. Eight numbers hold much less than 64 pixels,
# and the KL term makes those eight numbers expensive.
#
# **Samples from the prior.** Now the generative part: draw codes from $\mathcal{N}(0, I)$,
# the prior, and decode them. No image goes in.

# %%
lucid.random.seed(4)
with lucid.no_grad():
    samples = model.decode(lucid.random.randn(24, 8, dtype=lucid.Float32))
samples = samples.numpy()
show_rows([samples[:12], samples[12:]], ["sample", "sample"],
          title="New digits: codes drawn from N(0, I), decoded")

# %% [markdown]
# Most samples look like digits, some like a blend of two. The blends are the honest part of
# the picture: codes the prior draws between the regions the training digits occupy decode to
# something in between.
#
# **Which latent dimensions are used?** The KL term of each latent dimension, averaged over the
# test images, measures how much that dimension says about the image:

# %%
with lucid.no_grad():
    mu, logvar = model.encode(X_test)
kl_per_dim = (0.5 * (mu * mu + lucid.exp(logvar) - 1 - logvar)).numpy().mean(axis=0)
fig, ax = plt.subplots(figsize=(7, 3.5))
ax.bar(np.arange(8), kl_per_dim, color="#3d6fa6")
ax.set_xlabel("latent dimension")
ax.set_ylabel("KL (nats per image)")
ax.set_title("KL term per latent dimension, test images")
ax.grid(axis="y", alpha=0.3)
plt.show()
print("KL per dimension (nats):", [round(float(v), 3) for v in kl_per_dim])
print("dimensions in use (KL > 0.05 nats):", int((kl_per_dim > 0.05).sum()), "of 8")

# %% [markdown]
# Some dimensions carry almost nothing: for every image the encoder gives them
# $\mu \approx 0$, $\sigma \approx 1$, the prior itself, at a KL cost of about 0, and the
# decoder learns to ignore them. The KL term charges for every nat a dimension carries, and on
# 8x8 digits a few dimensions are worth it while the rest are not. (Which ones and how many can
# differ between runs and machines.) This switching-off is common in VAEs; with many more
# dimensions than the data needs it is called *posterior collapse*.
#
# ## 4. A 2-D latent space
#
# With only **two** latent dimensions the codes can be drawn on a plane. The same training
# function, a new model:

# %%
lucid.random.seed(0)
model_2d = VAE(in_features=64, hidden=128, latent=2)
history_2d = train(model_2d)
print(f"latent 2: test loss {history_2d['test'][-1]:.2f} nats per image "
      f"(latent 8: {history['test'][-1]:.2f})")

# %% [markdown]
# Each test image's mean code $\mu$, coloured by its digit (the labels were never used in
# training):

# %%
model_2d.eval()
with lucid.no_grad():
    mu_2d, _ = model_2d.encode(X_test)
mu_2d = mu_2d.numpy()
fig, ax = plt.subplots(figsize=(8, 6.5))
cmap = plt.get_cmap("tab10")
for digit in range(10):
    where = y_test == digit
    ax.scatter(mu_2d[where, 0], mu_2d[where, 1], s=18, color=cmap(digit), label=str(digit))
ax.set_xlabel(r"$z_1$ (standard deviations of the prior)")
ax.set_ylabel(r"$z_2$ (standard deviations of the prior)")
ax.set_title("Test digits in the 2-D latent space (mean codes)")
ax.legend(title="digit", loc="center left", bbox_to_anchor=(1.0, 0.5))
ax.grid(alpha=0.3)
plt.tight_layout()
plt.show()

# %% [markdown]
# Digits of one class gather in one region, and similar-looking classes sit side by side. The
# whole cloud stays within a few units of the origin: the KL term keeps it where the prior
# draws. Since the plane is only two numbers wide, we can also **decode the plane itself**: a
# grid of codes from -2 to 2 in each direction, each decoded to an 8x8 image.

# %%
steps = 12
grid = np.linspace(-2.0, 2.0, steps)
codes = np.array([[z1, z2] for z2 in grid[::-1] for z1 in grid], dtype=np.float32)
with lucid.no_grad():
    decoded = model_2d.decode(lucid.Tensor(codes)).numpy()
# one 8x8 tile per code, each framed by a 1-pixel border (NaN, drawn in light blue)
tiles = np.pad(decoded.reshape(steps, steps, 8, 8), ((0, 0), (0, 0), (1, 1), (1, 1)),
               constant_values=np.nan)
canvas = tiles.transpose(0, 2, 1, 3).reshape(10 * steps, 10 * steps)
grey_with_frames = plt.get_cmap("gray_r").copy()
grey_with_frames.set_bad("#cfe2f3")
fig, ax = plt.subplots(figsize=(7.5, 7.5))
half = 2.0 + 2.0 / (steps - 1)             # half a tile beyond the outermost codes
ax.imshow(canvas, cmap=grey_with_frames, vmin=0, vmax=1, extent=(-half, half, -half, half))
ax.set_xlabel(r"$z_1$ (standard deviations of the prior)")
ax.set_ylabel(r"$z_2$ (standard deviations of the prior)")
ax.set_title("The 2-D latent space, decoded")
plt.show()

# %% [markdown]
# Moving across the picture morphs one digit into the next: the decoder is a smooth function of
# the code, and the KL term has packed the classes together so that there are few empty regions
# between them. Compare with the scatter plot above: each region of the map shows the digit
# whose codes lie there.
#
# ## 5. Another generative model: the DCGAN
#
# `lucid.models.generative` holds a second generative model, the **DCGAN** (the one of
# PyTorch's DCGAN tutorial). It has no encoder and no likelihood. A **generator** $G$ turns
# noise into an image, with transposed convolutions that double the image size at each step
# (chapter 12 shows `ConvTranspose2d`), BatchNorm and ReLU, and a Tanh at the end (pixels in
# $(-1, 1)$). A **discriminator** $D$, a CNN like chapter 10's, gives the probability that an
# image is real. The two are trained against each other: $D$ learns to tell real images from
# $G$'s, and $G$ learns to fool $D$. That game is harder to train than a VAE (it needs many more
# steps and some care) and we do not play it here; we look at the two networks, sized for 8x8
# single-channel images, and write the game's two losses in the exercises:

# %% tags=["nbval-check-output"]
generator = Generator(nz=8, ngf=32, nc=1, image_size=8)
discriminator = Discriminator(ndf=32, nc=1, image_size=8)
g_summary = summarize(generator, (1, 8, 1, 1))
d_summary = summarize(discriminator, (1, 1, 8, 8))

# %% [markdown]
# Noise of shape $(N, n_z, 1, 1)$ becomes images $(N, 1, 8, 8)$; the discriminator turns each
# into one probability, $(N, 1, 1, 1)$. The defaults, `Generator()` and `Discriminator()`, are
# the tutorial's networks for 64x64 colour images, whose PyTorch weights load.

# %% tags=["nbval-check-output"]
lucid.random.seed(5)
with lucid.no_grad():
    fake = generator(lucid.random.randn(4, 8, 1, 1, dtype=lucid.Float32))
    p_real = discriminator(fake)
print("generated images:", fake.shape, " values in (-1, 1):",
      bool((np.abs(fake.numpy()) < 1).all()))
print("discriminator says:", p_real.shape)
print(f"parameters of the tutorial's generator: {sum(p.size for p in Generator().parameters()):,}")

# %% [markdown]
# ## Exercises
#
# ### Exercise 21.1 · What a code-blind decoder costs
#
# A decoder that ignores its code says $\hat{x}_i = 0.25$ for every pixel. What is its
# reconstruction term, in nats, for an image whose 64 pixels are 16 ones and 48 zeros? (A number
# to 4 digits; `math.log` is allowed.)

# %% tags=["solution"]
blind_reconstruction = -(16 * math.log(0.25) + 48 * math.log(0.75))

# %% tags=["check"]
image_check = lucid.Tensor(np.repeat([1.0, 0.0], [16, 48]))
check("Exercise 21.1", blind_reconstruction,
      F.binary_cross_entropy(lucid.full((64,), 0.25), image_check, reduction="sum"),
      rtol=1e-4,
      nudge="The reconstruction term is the binary cross-entropy summed over the pixels "
            "(chapter 20, section 5).",
      hint="a pixel of 1 costs -log 0.25, a pixel of 0 costs -log(1 - 0.25); add 16 of the "
           "first and 48 of the second.",
      mistakes={"that is the mean over the pixels; the term is their sum":
                lambda v: np.isclose(v * 64, -(16 * math.log(0.25) + 48 * math.log(0.75)),
                                     rtol=1e-3)})


# %% [markdown]
# ### Exercise 21.2 · A walk between two digits
#
# Write `interpolate(model, x_a, x_b, steps)`: encode the two images `x_a` and `x_b` (Tensors of
# shape `(1, 64)`) to their mean codes $\mu_a$ and $\mu_b$, take `steps` codes evenly spaced on
# the straight line from $\mu_a$ to $\mu_b$ (both ends included), and return their decodings as
# a NumPy array of shape `(steps, 64)`. The check walks between test digits with the 8-D model of
# section 2 and compares.

# %% tags=["solution"]
def interpolate(model, x_a, x_b, steps):
    """Decode `steps` codes on the line from x_a's mean code to x_b's."""
    with lucid.no_grad():
        mu_a, _ = model.encode(x_a)
        mu_b, _ = model.encode(x_b)
        t = lucid.Tensor(np.linspace(0.0, 1.0, steps)[:, None], dtype=mu_a.dtype)
        return model.decode(mu_a + t * (mu_b - mu_a)).numpy()


# %% tags=["check"]
def walk(i, j, steps):
    model.eval()
    return interpolate(model, X_test[i:i + 1], X_test[j:j + 1], steps)


def reference_walk(i, j, steps):
    model.eval()
    with lucid.no_grad():
        mu, _ = model.encode(X_test[[i, j]])
        a, b = mu.numpy()
        codes = np.stack([a + t * (b - a) for t in np.linspace(0.0, 1.0, steps)])
        return model.decode(lucid.Tensor(codes, dtype=mu.dtype)).numpy()


def pixel_blend(i, j, steps):  # the slip: a cross-fade of the two images, not of their codes
    a, b = X_test.numpy()[[i, j]]
    return np.stack([a + t * (b - a) for t in np.linspace(0.0, 1.0, steps)])


check_function("Exercise 21.2", walk, reference_walk, [(0, 1, 5), (3, 7, 8), (2, 2, 3)],
               rtol=1e-4, atol=1e-6,
               nudge="Section 3 encodes test images and decodes their mean codes; walk between "
                     "two of those codes.",
               hint="mu_a, _ = model.encode(x_a), the same for x_b; the codes mu_a + t (mu_b - "
                    "mu_a) for t in np.linspace(0, 1, steps); decode them all at once, inside "
                    "lucid.no_grad().",
               mistakes={"that blends the pixels of the two images; blend their codes, then "
                         "decode": pixel_blend})


# %% [markdown]
# ### Exercise 21.3 · The two losses of the GAN game
#
# The discriminator $D$ of section 5 outputs a probability "real". It is trained to say 1 on
# real images and 0 on generated ones: its loss is the binary cross-entropy of its outputs on a
# batch of real images against 1, plus that of its outputs on a batch of fakes against 0 (each
# averaged over its batch). The generator is trained to make $D$ say 1 on its fakes: its loss is
# the binary cross-entropy of $D$'s outputs on the fakes against 1 (the "non-saturating" loss,
# $-\log D(G(z))$, averaged). Write `gan_losses(d_real, d_fake)` for NumPy arrays of $D$'s
# outputs, returning `(discriminator_loss, generator_loss)`. The check compares with
# `F.binary_cross_entropy`.

# %% tags=["solution"]
def gan_losses(d_real, d_fake):
    """(the discriminator's loss, the generator's non-saturating loss), from D's outputs."""
    d_loss = -np.mean(np.log(d_real)) - np.mean(np.log(1 - d_fake))
    g_loss = -np.mean(np.log(d_fake))
    return d_loss, g_loss


# %% tags=["check"]
def lucid_gan_losses(d_real, d_fake):
    real, fake = lucid.Tensor(d_real), lucid.Tensor(d_fake)
    d_loss = (F.binary_cross_entropy(real, lucid.ones(*real.shape))
              + F.binary_cross_entropy(fake, lucid.zeros(*fake.shape)))
    g_loss = F.binary_cross_entropy(fake, lucid.ones(*fake.shape))
    return d_loss.item(), g_loss.item()


def saturating(d_real, d_fake):  # the generator's loss written as log(1 - D(G(z)))
    d_loss, _ = lucid_gan_losses(d_real, d_fake)
    return d_loss, float(np.mean(np.log(1 - d_fake)))


check_function("Exercise 21.3", gan_losses, lucid_gan_losses,
               [(np.array([0.9, 0.8]), np.array([0.1, 0.3])),
                (np.array([0.6, 0.7, 0.95]), np.array([0.2, 0.05, 0.5, 0.4])),
                (np.array([0.5]), np.array([0.5]))],
               nudge="Each loss is a binary cross-entropy: which outputs, against which target?",
               hint="BCE against 1 is -log p, against 0 is -log(1 - p); D's loss is the mean of "
                    "-log d_real plus the mean of -log(1 - d_fake), G's the mean of -log d_fake.",
               mistakes={"that is the saturating generator loss, log(1 - D(G(z))); the "
                         "non-saturating one is -log D(G(z))": saturating})

# %% [markdown]
# ### Exercise 21.4 · Where the game starts
#
# An untrained discriminator that cannot tell real from fake says 0.5 for every image. With the
# losses of Exercise 21.3, what are the discriminator's loss and the generator's loss then?
# Give two numbers (to 4 digits; `math.log` is allowed).

# %% tags=["solution"]
d_loss_at_start = 2 * math.log(2)
g_loss_at_start = math.log(2)

# %% tags=["check"]
half_check = lucid.full((4,), 0.5)
nudge = "Exercise 21.3 writes both losses; put 0.5 in for every output of D."
check("Exercise 21.4 (discriminator)", d_loss_at_start,
      F.binary_cross_entropy(half_check, lucid.ones(4))
      + F.binary_cross_entropy(half_check, lucid.zeros(4)), rtol=1e-4, nudge=nudge,
      hint="-log 0.5 for the real images plus -log(1 - 0.5) for the fakes.",
      mistakes={"that is one of the two terms; the discriminator's loss adds both":
                math.log(2)})
check("Exercise 21.4 (generator)", g_loss_at_start,
      F.binary_cross_entropy(half_check, lucid.ones(4)), rtol=1e-4, nudge=nudge,
      hint="the generator's loss is -log D(G(z)), with D(G(z)) = 0.5.")

# %% [markdown]
# **Next:** [22 · Beyond the first derivative](22_beyond_first_derivatives.ipynb): derivatives of
# derivatives, with a gradient penalty like the one that steadies GAN training, and the rest of
# Lucid's toolbox.
