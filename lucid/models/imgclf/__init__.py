"""Image classifiers."""

from lucid.models.imgclf.lenet import LeNet5, lenet_5
from lucid.models.imgclf.resnet import (BasicBlock, Bottleneck, ResNet, resnet_18, resnet_34,
                                        resnet_50)
from lucid.models.imgclf.vgg import VGG, vgg_11, vgg_16
from lucid.models.imgclf.vit import VisionTransformer, vit_b_16, vit_tiny
