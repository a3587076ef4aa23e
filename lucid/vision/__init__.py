"""lucid.vision: torchvision's names on Lucid -- ``datasets``, ``transforms``, ``utils`` and
``models``.

    import lucid.vision
    from lucid.vision import datasets, transforms

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train = datasets.MNIST("~/data", train=True, download=True, transform=tf)
    lucid.vision.utils.save_image(images, "batch.png", nrow=8)

A PyTorch program's ``import torchvision`` becomes ``import lucid.vision``.  Images are NumPy
arrays ``(H, W[, C])`` where torchvision has PIL images, and Lucid Tensors ``(C, H, W)`` after
``ToTensor``, as torchvision's tensors.
"""

from lucid.vision import datasets, models, transforms, utils

__all__ = ["datasets", "models", "transforms", "utils"]
