"""torchvision's model builders on :mod:`lucid.models`: ``resnet18``, ``resnet34``,
``resnet50``, ``vgg11``, ``vgg16``, ``vit_b_16`` -- the same layers, parameter names and
initialisation as torchvision's, so their state dicts load into one another.

    model = lucid.vision.models.resnet18(num_classes=10)

There are no pretrained weights to download: ``weights`` must be None (``pretrained=False``,
the old spelling, is accepted).  To start from trained weights, load a state dict saved with
``lucid.save`` (or converted from PyTorch) with ``model.load_state_dict(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lucid.models.imgclf.resnet import ResNet, resnet_18, resnet_34, resnet_50
from lucid.models.imgclf.vgg import VGG, vgg_11, vgg_16
from lucid.models.imgclf.vit import VisionTransformer
from lucid.models.imgclf.vit import vit_b_16 as _vit_b_16

__all__ = ["ResNet", "VGG", "VisionTransformer", "resnet18", "resnet34", "resnet50", "vgg11",
           "vgg16", "vit_b_16"]


def _builder(name: str, build: Callable[..., Any]) -> Callable[..., Any]:
    def model(*, weights: Any = None, progress: bool = True, pretrained: bool = False,
              num_classes: int = 1000, **kwargs: Any) -> Any:
        if weights is not None or pretrained:
            raise ValueError(f"{name}: Lucid has no pretrained weights to download; build the "
                             f"model with weights=None and load trained weights with "
                             f"model.load_state_dict(lucid.load(path))")
        return build(num_classes=num_classes, **kwargs)

    model.__name__ = model.__qualname__ = name
    model.__doc__ = (f"torchvision's ``{name}(weights=None, progress=True, **kwargs)``: "
                     f"``{build.__name__}`` of :mod:`lucid.models` (``num_classes`` and the "
                     "other keyword arguments pass through).")
    return model


resnet18 = _builder("resnet18", resnet_18)
resnet34 = _builder("resnet34", resnet_34)
resnet50 = _builder("resnet50", resnet_50)
vgg11 = _builder("vgg11", vgg_11)
vgg16 = _builder("vgg16", vgg_16)
vit_b_16 = _builder("vit_b_16", _vit_b_16)
