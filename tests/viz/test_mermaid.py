"""Drawing.to_mermaid(): the drawing's view, names, devices and FLOPs as Mermaid text."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid_viz


def _neuron():
    x1 = lucid.Tensor(2.0, requires_grad=True)
    w1 = lucid.Tensor(-3.0, requires_grad=True)
    b = lucid.Tensor(6.88, requires_grad=True)
    with lucid.count_flops():
        return lucid.tanh(x1 * w1 + b)


def _nodes(text):
    return re.findall(r"^\s+(\w+)(?:\[\[|\[\(|\(\[|\[)\"(.*?)\"", text, re.M)


def _edges(text):
    return re.findall(r"^\s+(\w+) (?:-->|-\.->\|[^|]*\|) (\w+)$", text, re.M)


def test_a_small_graph_lists_every_node_and_edge_with_labels_and_units():
    drawing = lucid_viz.draw(_neuron())
    text = drawing.to_mermaid()
    # no multiply-adds in the graph: the unit line speaks of FLOPs only
    assert text.startswith("---\ntitle: \"Lucid graph / forward: 3 FLOPs / 6 nodes, 3 ops / "
                           "FLOPs: one per element operation\"\n---")
    assert "\nflowchart TB\n" in text
    nodes = dict(_nodes(text))
    assert len(nodes) == len(drawing.graph.nodes) == 6
    assert nodes["n5"] == "Tanh n5 (output)<br/>scalar Float64<br/>1 FLOP"
    assert sorted(_edges(text)) == sorted((e.src, e.dst) for e in drawing.graph.edges)
    assert "classDef cpu_op fill:#cfe2f3" in text
    assert lucid_viz.draw(_neuron()).to_mermaid() == text  # deterministic


def test_modules_become_subgraphs_and_depth_collapses_them():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 2), nn.ReLU()))
    x = lucid.zeros(2, 4, dtype=lucid.Float32)
    full = lucid_viz.draw(model, x).to_mermaid()
    assert re.search(r'subgraph cluster_0\["0 \(Linear\)<br/>24 MACs \+ 6 FLOPs"\]', full)
    assert "0.weight<br/>(3,4) Float32" in full
    collapsed = lucid_viz.draw(model, x, depth=1, flops_unit="2*MACs").to_mermaid()
    boxes = [label for _, label in _nodes(collapsed) if label.startswith("2 (Sequential)")]
    assert boxes and "FLOPs" in boxes[0] and "MACs" not in boxes[0]
    assert len(_nodes(collapsed)) < len(_nodes(full))


def test_a_device_move_is_a_dashed_labelled_edge():
    pytest.importorskip("mlx.core")
    x = lucid.Tensor(np.ones(3, np.float32), requires_grad=True)
    with lucid.count_flops():
        y = (x * 2).to("gpu").sum()
    text = lucid_viz.draw(y).to_mermaid()
    assert re.search(r'-\.->\|"→ gpu"\|', text)
    assert "classDef gpu_op fill:#fde3c8" in text
