"""Generative models: a variational autoencoder and a DCGAN."""

from lucid.models.generative.vae import VAE, loss_function, vae_loss
from lucid.models.generative.dcgan import Discriminator, Generator, weights_init
