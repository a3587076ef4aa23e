"""Image classifiers."""

from lucid.models.imgclf.lenet import LeNet5, lenet_5
from lucid.models.imgclf.resnet import BasicBlock, ResNet, resnet_18
