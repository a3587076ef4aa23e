"""The op catalogue.  Each module holds one family; each op is one class (see ``base.py``).

Importing this package registers every op in ``REGISTRY`` and attaches Tensor's operators.
"""

from lucid.ops import conv, device, elementwise, indexing, linalg, nn, reduction, shape  # noqa: F401
from lucid.ops.base import REGISTRY, Op, apply
from lucid.ops.elementwise import *  # noqa: F403
from lucid.ops.indexing import *  # noqa: F403
from lucid.ops.linalg import *  # noqa: F403
from lucid.ops.reduction import *  # noqa: F403
from lucid.ops.shape import *  # noqa: F403
from lucid.ops.nn import *  # noqa: F403
from lucid.ops.conv import *  # noqa: F403
from lucid.ops import tensor_methods  # noqa: F401,E402  (attaches operators to Tensor)

__all__ = ["REGISTRY", "Op", "apply"]
