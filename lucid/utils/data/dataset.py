"""``torch.utils.data.dataset``'s names: the datasets of :mod:`lucid.data.dataset`."""

from lucid.data.dataset import *  # noqa: F403  (one implementation, two spellings)
from lucid.data.dataset import __all__ as __all__
