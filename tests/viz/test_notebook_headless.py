"""In a real kernel, run headless (nbclient): draw, step_backward and %%lucid_flops produce
their outputs with nothing but the Python packages installed (graphviz-pure, no system dot)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

nbformat = pytest.importorskip("nbformat", reason="nbformat comes with the notebooks extra")
nbclient = pytest.importorskip("nbclient", reason="nbclient comes with the notebooks extra")

CELLS = [
    "import lucid, lucid_viz\n"
    "x = lucid.Tensor(0.5, requires_grad=True)\n"
    "with lucid.count_flops():\n"
    "    a = 2 * x\n"
    "    y = a + lucid.exp(a)",
    "lucid_viz.draw(y)",
    "lucid_viz.step_backward(y)",
    "%load_ext lucid_viz",
    "%%lucid_flops\n"
    "w = lucid.Tensor(lucid.ones(4, 5))\n"
    "z = lucid.tanh(lucid.ones(3, 4) @ w)",
]


def test_draw_stepper_and_magic_render_in_a_headless_kernel(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    # the kernel gets a PATH without any system Graphviz: only the interpreter's scripts folder
    env_path = os.path.dirname(sys.executable)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}},
    )
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = env_path
    try:
        assert shutil.which("dot") is None or not shutil.which("dot").startswith("/usr")
        client.execute()
    finally:
        os.environ["PATH"] = old
    outputs = [cell.outputs for cell in nb.cells]
    draw_data = outputs[1][0]["data"]
    assert "image/svg+xml" in draw_data and "<svg" in draw_data["image/svg+xml"]
    stepper_data = outputs[2][0]["data"]
    assert "image/svg+xml" in stepper_data  # the static fallback of the stepper
    assert any("widget" in key for key in stepper_data)  # and the live widget
    printed = "".join(o.get("text", "") for o in outputs[4] if o["output_type"] == "stream")
    assert printed.startswith("lucid_flops: forward 60 MACs + 15 FLOPs (everything in FLOPs, "
                              "1 MAC = 2 FLOPs: 135)")
