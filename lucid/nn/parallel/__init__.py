"""lucid.nn.parallel: training one model on several processes (data parallelism).

    import lucid.distributed as dist
    from lucid.nn.parallel import DistributedDataParallel as DDP
    model = DDP(MLP(...))          # rank 0's weights everywhere; gradients averaged in backward
"""

from lucid.nn.parallel.distributed import DistributedDataParallel, GradientSync

DDP = DistributedDataParallel

__all__ = ["DistributedDataParallel", "DDP", "GradientSync"]
