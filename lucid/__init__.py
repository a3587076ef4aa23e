"""Lucid: a small, complete deep-learning framework written to be read.

Layers, bottom-up (imports flow one way):  types (dtypes) -> backends -> engine (grad mode
and the backward walk) -> tensor -> ops (the catalogue) -> autograd (grad, gradcheck) ->
creation/random -> linalg/einops -> nn -> optim/data -> models.
"""

from lucid import types
from lucid.engine.mode import count_flops, enable_grad, flops_enabled, grad_enabled, no_grad
from lucid.tensor import Tensor, tensor
from lucid.types import (
    Complex,
    Complex64,
    Float,
    Float16,
    Float32,
    Float64,
    Int,
    Int8,
    Int16,
    Int32,
    Int64,
    Numeric,
)
from lucid import ops  # noqa: E402  (registers ops, attaches Tensor methods and operators)
from lucid.ops import *  # noqa: F403,E402  (every public function of the catalogue)
from lucid.ops.base import Op  # noqa: E402  (your own op: subclass it, see lucid.Op)
from lucid.creation import *  # noqa: F403,E402
from lucid import random  # noqa: E402
from lucid.random import rand, randn  # noqa: E402
from lucid.backends import gpu_available, gpu_status  # noqa: E402
from lucid import autograd  # noqa: E402
from lucid import linalg  # noqa: E402  (lucid.linalg.inv, .svd, ...: matrix functions)
from lucid import einops  # noqa: E402  (lucid.einops.rearrange, ...: einops on Lucid ops)
from lucid import nn  # noqa: E402
from lucid import data, optim  # noqa: E402
from lucid import models  # noqa: E402
from lucid.serialization import load, save  # noqa: E402

__version__ = "0.1.0"
