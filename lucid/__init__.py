"""Lucid: a small, complete deep-learning framework written to be read.

Layers, bottom-up (imports flow one way):  types (dtypes) -> backends -> engine (grad mode
and the backward walk) -> tensor -> ops (the catalogue) -> autograd (grad, gradcheck) ->
creation/random -> linalg/einops -> nn -> optim/data -> models.
"""

from lucid import types
from lucid.engine.mode import count_flops, enable_grad, flops_enabled, grad_enabled, no_grad
from lucid.engine.mode import inference_mode, set_grad_enabled
from lucid.tensor import Size, Tensor, tensor
from lucid.types import (
    Bool,
    Complex,
    Complex64,
    Complex128,
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
    UInt8,
)
from lucid import ops  # noqa: E402  (registers ops, attaches Tensor methods and operators)
from lucid.ops import *  # noqa: F403,E402  (every public function of the catalogue)
from lucid.ops.base import Op  # noqa: E402  (your own op: subclass it, see lucid.Op)
from lucid.creation import *  # noqa: F403,E402
from lucid import random  # noqa: E402
from lucid.random import rand, randn  # noqa: E402
from lucid.random import (  # noqa: E402  (PyTorch's names for the random stream)
    Generator,
    bernoulli,
    manual_seed,
    multinomial,
    normal,
    rand_like,
    randint,
    randint_like,
    randn_like,
    randperm,
)
from lucid.backends import device, gpu_available, gpu_status  # noqa: E402
from lucid import accelerator, amp, backends, cuda  # noqa: E402  (PyTorch's lucid.cuda ...)
from lucid.amp import autocast  # noqa: E402
from lucid.types import get_default_dtype, set_default_dtype  # noqa: E402
from lucid.ops.pytorch import MaxMin  # noqa: E402

# PyTorch's dtype names: lucid.float32, lucid.float (32 bits, as in PyTorch), lucid.long, ...
globals().update(types.PYTORCH_NAMES)
# named, because programs build dtype tables with it (nanoGPT's {"bfloat16": ...}), but not a
# Lucid dtype (NumPy has no bfloat16): a tensor asked for it raises, naming the dtypes there are
bfloat16 = "bfloat16"
from lucid import autograd  # noqa: E402
from lucid import linalg  # noqa: E402  (lucid.linalg.inv, .svd, ...: matrix functions)
from lucid import distributed  # noqa: E402  (collectives on MLX's distributed engine)
from lucid import einops  # noqa: E402  (lucid.einops.rearrange, ...: einops on Lucid ops)
from lucid import nn  # noqa: E402
from lucid import distributions  # noqa: E402  (Categorical, Normal: REINFORCE, VAEs)
from lucid import data, optim  # noqa: E402
from lucid import models  # noqa: E402
from lucid import utils  # noqa: E402  (lucid.utils.data: torch.utils.data's names)
from lucid.serialization import load, save  # noqa: E402



def compile(model=None, **options):  # noqa: A001 (PyTorch's name: torch.compile)
    """PyTorch's ``torch.compile(model)``: the model itself -- Lucid runs every op as it is
    called (that is what its drawings and step-by-step backward show), so there is nothing to
    compile; the results are the same.  Usable as a decorator too."""
    if model is None:
        return lambda fn: fn
    return model


__version__ = "0.1.0"
