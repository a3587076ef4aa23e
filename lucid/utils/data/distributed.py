"""``torch.utils.data.distributed``'s name: :class:`lucid.data.DistributedSampler`."""

from lucid.data.distributed import DistributedSampler

__all__ = ["DistributedSampler"]
