"""lucid.models: small models to train in a notebook, and ``summarize``."""

from lucid.models.mlp import MLP
from lucid.models.imgclf import (VGG, BasicBlock, Bottleneck, LeNet5, ResNet,
                                 VisionTransformer, lenet_5, resnet_18, resnet_34, resnet_50,
                                 vgg_11, vgg_16, vit_b_16, vit_tiny)
from lucid.models.text import GPT
from lucid.models.generative import VAE, Discriminator, Generator, vae_loss, weights_init
from lucid.models.util import Summary, summarize
