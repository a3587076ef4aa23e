"""Spec rows: the collectives of lucid.distributed and DDP's gradient_sync marker.

The table runs in one process, a world of size 1, where a collective returns its input: these
rows hold the ops to the table's rules (forward, gradcheck, FLOPs, errors).  What they do
across ranks is tested with real processes in tests/test_distributed.py.
"""

from __future__ import annotations

import numpy as np

import lucid
import lucid.distributed as dist
from lucid.nn.parallel import GradientSync
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, unary


def _rows(shape=(3, 4)):
    return ((rand((5,)),), (rand(shape),), (rand((2, 3, 4)),))


SPECS = [
    *[Spec("all_reduce", lambda a, op=op: dist.all_reduce(a, op=op), lambda a: a.copy(),
           unary(), label=op, flops=(FlopsCase((rand((3, 4)),), 0, 0),))
      for op in ("sum", "mean", "max", "min")],
    Spec("all_gather", dist.all_gather, lambda a: a.copy(), _rows(),
         flops=(FlopsCase((rand((3, 4)),), 0, 0),),
         errors=(ErrorCase(lambda: dist.all_gather(lucid.tensor(1.0)), ValueError,
                           r"all_gather: input \(\) is a 0-d tensor"),
                 ErrorCase(lambda: dist.all_gather([], lucid.ones(2)), TypeError,
                           r"PyTorch's in-place form"))),
    Spec("all_reduce", lambda a: dist.all_reduce(a * 1), lambda a: a.copy(), unary(),
         label="errors",
         errors=(ErrorCase(lambda: dist.all_reduce(lucid.ones(2), op="prod"), ValueError,
                           r"all_reduce: op must be one of"),
                 ErrorCase(lambda: dist.all_reduce(lucid.tensor(np.arange(3)), op="mean"),
                           TypeError, r"all_reduce: op='mean' needs a float tensor"))),
    Spec("gradient_sync", lambda a: GradientSync.apply(a), lambda a: a.copy(), unary(),
         flops=(FlopsCase((rand((3, 4)),), 0, 0),)),
]
