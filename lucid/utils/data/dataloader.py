"""``torch.utils.data.dataloader``'s names: :class:`DataLoader`, ``default_collate`` and
``get_worker_info``."""

from lucid.data.dataloader import DataLoader
from lucid.data.dataset import default_collate
from lucid.data.worker import get_worker_info

__all__ = ["DataLoader", "default_collate", "get_worker_info"]
