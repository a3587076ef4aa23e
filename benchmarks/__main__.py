"""``python -m benchmarks [--quick]``: run every benchmark and print one table."""

from __future__ import annotations

import argparse
import gc
import os
import platform

import numpy as np

from benchmarks import (
    b1_overhead,
    b2_mlp,
    b3_cnn,
    b4_scaling,
    b5_sequences,
    b7_gpt,
    b_distributed,
    b_gpu,
    b_viz,
)
from benchmarks.common import optional, print_table


def _blas() -> str:
    """Which BLAS NumPy's matmul runs on (NumPy's GEMM speed is most of B2/B3)."""
    threadpoolctl = optional("threadpoolctl")
    if threadpoolctl is None:
        return "unknown (threadpoolctl not installed)"
    libs = [d for d in threadpoolctl.threadpool_info() if d.get("user_api") == "blas"]
    return ", ".join(f"{d.get('internal_api')} {d.get('version')} "
                     f"({d.get('architecture', '?')}, {d.get('num_threads')} threads)"
                     for d in libs) or "none found"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    torch = optional("torch")
    mlx = optional("mlx.core")
    # Move everything the imports created (PyTorch alone makes hundreds of thousands of
    # objects) out of the garbage collector's view, so full collections during a benchmark
    # scan only what the benchmark builds, for every system alike.
    gc.freeze()
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'not installed (columns show -)'}, "
          f"mlx {f'{mlx.__version__} on {mlx.default_device()}' if mlx else 'not installed'}")
    print(f"BLAS: {_blas()}  (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '-')}, "
          f"OPENBLAS_L2_SIZE={os.environ.get('OPENBLAS_L2_SIZE', '-')})")
    rows = []
    for bench in (b1_overhead, b2_mlp, b3_cnn, b4_scaling, b5_sequences, b7_gpt, b_gpu, b_viz,
                  b_distributed):
        rows += bench.run(quick=args.quick)
    print_table(rows, ["lucid", "lucid-gpu", "mlx", "torch"],
                ratios=[("lucid", "torch"), ("lucid-gpu", "mlx")])


if __name__ == "__main__":
    main()
