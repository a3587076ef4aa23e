"""lucid.distributed: several processes training one model, on MLX's distributed engine.

Each process ("rank") runs the same program on its own share of the data; collectives make
their tensors agree.  The transport is MLX's (``mlx.core.distributed``): a ring over TCP that
runs on any machines, MPI, or NCCL on CUDA machines -- Lucid adds no transport of its own.
Start the processes with the launcher, which wraps ``mlx.launch``::

    python -m lucid.distributed.launch -n 2 train.py

and inside ``train.py``::

    import lucid.distributed as dist
    dist.init()                                   # the group mlx.launch set up
    total = dist.all_reduce(x, op="sum")          # the same on every rank; differentiable
    rows = dist.all_gather(x)                     # every rank's x, stacked along axis 0
    dist.broadcast(w, src=0)                      # rank 0's w everywhere (in place)

Run without a launcher, a program is a world of one process (rank 0 of 1) and every call
still works.  A rank that crashes, is killed or hangs makes the others stop with an error
within ``timeout`` seconds (``init(timeout=...)``, or ``LUCID_DIST_TIMEOUT``), never a hang.
``lucid.nn.parallel.DistributedDataParallel`` builds data-parallel training on these.
"""

from lucid.distributed.world import (
    TIMEOUT_EXIT_CODE,
    DistributedError,
    barrier,
    get_backend,
    get_rank,
    get_timeout,
    get_world_size,
    init,
    is_initialized,
)
from lucid.distributed.collectives import (
    AllGather,
    AllReduce,
    all_gather,
    all_reduce,
    broadcast,
    ring_bytes,
)



def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: object = None, world_size: int = -1, rank: int = -1,
                       **kwargs: object) -> None:
    """PyTorch's name for :func:`init`: join the launcher's group.  PyTorch's backend names
    ("nccl", "gloo") are not MLX's, so the launcher's choice is taken; ranks and sizes come
    from ``python -m lucid.distributed.launch``."""
    init(None)


def destroy_process_group(group: object = None) -> None:
    """Nothing to tear down: MLX's group lives as long as the process."""


def is_available() -> bool:
    """True: a program without a launcher is a world of one process."""
    return True


__all__ = ["init_process_group", "destroy_process_group", "is_available",
           "init", "is_initialized", "get_rank", "get_world_size", "get_backend", "get_timeout",
           "all_reduce", "all_gather", "broadcast", "barrier", "ring_bytes", "AllReduce",
           "AllGather", "DistributedError", "TIMEOUT_EXIT_CODE"]
