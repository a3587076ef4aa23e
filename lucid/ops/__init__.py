"""The op catalogue.  Each module holds one family; each op is one class (see ``base.py``).

Importing this package registers every op in ``REGISTRY``; the public functions derived from
the classes (``FUNCTIONS``) become this package's names (``lucid.ops.exp``, re-exported as
``lucid.exp``), and their Tensor methods and operators are attached.
"""

from lucid.ops import (  # noqa: F401  (each import registers a family)
    activation,
    contraction,
    conv,
    decomp,
    device,
    elementwise,
    indexing,
    loss,
    nonzero_unique_histogram,
    recurrent,
    reduction,
    shape,
)
from lucid.ops.base import FUNCTIONS, REGISTRY, Op, apply, public
from lucid.ops import inplace  # noqa: F401,E402  (x.add_(), x.zero_(), ...: in-place methods)
from lucid.ops import graph_xp  # noqa: F401,E402  (backward rules on Lucid ops: create_graph)
from lucid.ops import backward  # noqa: F401,E402  (Tensor.backward: seeds the walk)
from lucid.ops import tensor_methods  # noqa: F401,E402  (attaches methods and operators)
from lucid.ops import pytorch  # noqa: F401,E402  (PyTorch's spellings: dim=, x.view, cat ...)
from lucid.ops import sparse  # noqa: F401,E402  (spmm, to_sparse ...: on dense tensors)

globals().update(FUNCTIONS)

__all__ = sorted(FUNCTIONS)  # the functions alone: `from lucid.ops import *`
