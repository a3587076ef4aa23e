"""``python -m benchmarks [--quick]``: run every benchmark and print one table."""

from __future__ import annotations

import argparse
import gc
import platform

import numpy as np

from benchmarks import b1_overhead, b4_scaling
from benchmarks.common import optional, print_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    torch = optional("torch")
    # Move everything the imports created (PyTorch alone makes hundreds of thousands of
    # objects) out of the garbage collector's view, so full collections during a benchmark
    # scan only what the benchmark builds, for every system alike.
    gc.freeze()
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"torch {torch.__version__ if torch else 'not installed (columns show -)'}")
    rows = []
    for bench in (b1_overhead, b4_scaling):
        rows += bench.run(quick=args.quick)
    print_table(rows, ["lucid", "torch"])


if __name__ == "__main__":
    main()
