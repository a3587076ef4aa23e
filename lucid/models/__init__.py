"""lucid.models: small models to train in a notebook, and ``summarize``."""

from lucid.models.mlp import MLP
from lucid.models.imgclf import BasicBlock, LeNet5, ResNet, lenet_5, resnet_18
from lucid.models.util import Summary, summarize
