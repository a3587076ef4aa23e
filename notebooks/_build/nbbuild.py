"""What every notebook build script shares: cell constructors and the build step.

A build script holds a notebook's text as a list of ``md(...)`` / ``code(...)`` cells and calls
:func:`main` with ``{key: (file name, cells)}``; ``main`` executes each notebook in a fresh
kernel (from notebooks/, as JupyterLab would) and writes it with its outputs.  Cell ids are
``<key>-<index>`` and no execution timestamps are recorded, so rebuilding an unchanged notebook
changes nothing but widget model ids.

Cells whose printed numbers are the lesson carry the cell tag ``nbval-check-output`` (nbval then
compares their stored output; a tag, not a comment, so students never see a test marker in the
code); keep those deterministic: no timings, addresses or temporary paths.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent.parent  # notebooks/
CHECK_TAG = "nbval-check-output"

#: the setup lines that keep the one-time "MLX has no GPU" warning out of stored outputs
#: (notebook 04 is about it; on Linux without a GPU MLX runs "gpu" tensors on its CPU device)
QUIET_MLX = '''
# On Linux without a GPU, MLX runs "gpu" tensors on its CPU device and Lucid warns once.
# We know that already (notebook 04 is about it), so keep the warning out of the outputs.
warnings.filterwarnings("ignore", message="MLX has no GPU")
'''


def setup(*imports: str, then: str = "") -> str:
    """A first code cell: ``imports``, the MLX warning filter, ``then`` (more set-up lines),
    and ``lucid.random.seed(0)``."""
    lines = "\n".join(["import warnings", "", *imports])
    return lines + "\n" + QUIET_MLX + "\n" + then + "lucid.random.seed(0)\n"


def md(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def code(text: str, check: bool = False) -> nbformat.NotebookNode:
    """A code cell; ``check=True`` tags it for nbval, which then compares its stored output."""
    cell = nbformat.v4.new_code_cell(text.strip("\n"))
    if check:
        cell.metadata["tags"] = [CHECK_TAG]
    return cell


def build(key: str, name: str, cells: list, run: bool = True) -> None:
    """Write notebooks/<name> from ``cells``, executed (with outputs) unless ``run=False``."""
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    t0 = time.perf_counter()
    if run:
        NotebookClient(nb, kernel_name="python3", timeout=120, record_timing=False,
                       coalesce_streams=True,  # one stream output per cell, however it arrived
                       resources={"metadata": {"path": str(HERE)}}).execute()
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{key}-{i:02d}"
    nbformat.write(nb, HERE / name)
    what = f"executed in {time.perf_counter() - t0:.1f} s" if run else "written, not run"
    print(f"{name}: {what}")


def main(notebooks: dict[str, tuple[str, list]], argv: list[str] | None = None) -> None:
    """``build_xx.py [KEY ...] [--no-run]``: build the named notebooks (default: all)."""
    argv = sys.argv[1:] if argv is None else argv
    run = "--no-run" not in argv
    keys = [a for a in argv if not a.startswith("--")] or list(notebooks)
    unknown = [k for k in keys if k not in notebooks]
    if unknown:
        raise SystemExit(f"unknown notebook key(s) {unknown}; choose from {list(notebooks)}")
    for key in keys:
        name, cells = notebooks[key]
        build(key, name, cells, run=run)
