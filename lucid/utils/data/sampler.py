"""``torch.utils.data.sampler``'s names: the samplers of :mod:`lucid.data.sampler`."""

from lucid.data.sampler import *  # noqa: F403  (one implementation, two spellings)
from lucid.data.sampler import __all__ as __all__
