"""lucid_viz.render: the DOT a graph becomes, and the Drawing a notebook shows.

Checks read the DOT structure (node ids, edges, labels, clusters) and a few SVG facts (fill
colours); no test compares whole SVG bytes.
"""

from __future__ import annotations

import html
import re
import time

import pytest

import lucid
from lucid import nn
from lucid.models.imgclf.resnet import resnet_18
from lucid_viz import draw, graphviz_bin, to_dot, trace
from lucid_viz.render import HIGHLIGHT, PALETTES, ModuleInfo, trace_with_modules

needs_dot = pytest.mark.skipif(graphviz_bin.find_dot() is None,
                               reason="no Graphviz here (pip install graphviz-pure)")

_NODE = re.compile(r'^\s*"([^"]+)" \[label="((?:[^"\\]|\\.)*)"(.*)\];$', re.M)
_EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(.*);$', re.M)
_TITLE = re.compile(r'^  graph \[.*label="((?:[^"\\]|\\.)*)"\];$', re.M)


def nodes(dot: str) -> dict[str, tuple[str, str]]:
    """Drawn node id -> (label with real newlines, the other attributes); legend left out."""
    return {m[1]: (m[2].replace("\\n", "\n"), m[3]) for m in _NODE.finditer(dot)
            if not m[1].startswith("legend:")}


def edges(dot: str) -> dict[tuple[str, str], str]:
    return {(m[1], m[2]): m[3] for m in _EDGE.finditer(dot) if not m[1].startswith("legend:")}


def title(dot: str) -> str:
    return _TITLE.search(dot)[1].replace("\\n", "\n")


def clusters(dot: str) -> list[str]:
    """The module clusters, in order (the legend's cluster, around the picture, left out)."""
    return [c for c in re.findall(r'subgraph "cluster_([^"]+)"', dot) if c != "legend"]


# -- known graphs ------------------------------------------------------------------------

def mlp():
    lucid.random.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return model, lucid.random.rand((5, 4))


def seed_conv():
    """Seed 002's conv example."""
    lucid.random.seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, kernel_size=3, padding=1), nn.ReLU(),
                          nn.Conv2d(16, 32, kernel_size=3, padding=1))
    return model, lucid.random.rand((1, 3, 32, 32))


@pytest.fixture(scope="module")
def resnet():
    lucid.random.seed(0)
    model = resnet_18(num_classes=10)
    graph, info = trace_with_modules(model, lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32))
    return graph, info


def test_two_layer_mlp_nodes_edges_and_roles():
    model, x = mlp()
    graph = trace(model, x)
    roles = [n.role for n in graph.nodes]
    assert len(graph.nodes) == 8 and len(graph.edges) == 7
    assert sorted(roles) == sorted(["input"] + ["parameter"] * 4 + ["intermediate"] * 2
                                   + ["output"])
    dot = to_dot(graph)
    drawn = nodes(dot)
    assert set(drawn) == {n.id for n in graph.nodes}
    assert set(edges(dot)) == {(e.src, e.dst) for e in graph.edges}
    assert clusters(dot) == ["0", "1", "2"]
    labels = {n.name: drawn[n.id][0] for n in graph.nodes if n.role == "parameter"}
    assert labels["0.weight"].startswith("0.weight\n(8,4) Float32")
    assert labels["2.bias"].startswith("2.bias\n(2,) Float32")
    out = graph.node(graph.output)
    assert drawn[out.id][0].startswith(f"Linear {out.id} (output)")
    assert 'peripheries="2"' in drawn[out.id][1]
    inp = next(n for n in graph.nodes if n.role == "input")
    assert drawn[inp.id][0] == f"input {inp.id}\n(5,4) Float64"  # unnamed: what it is, its id


def test_seed_conv_example_counts_and_flops_match_tensor_flops():
    model, x = seed_conv()
    graph = trace(model, x)
    assert len(graph.nodes) == 12 and len(graph.edges) == 11
    assert [n.op for n in graph.nodes if not n.is_leaf] == [
        "Conv", "Reshape", "Add", "ReLU", "Conv", "Reshape", "Add"]
    assert sum(n.role == "parameter" for n in graph.nodes) == 4
    with lucid.count_flops():
        y = model(x)
    assert graph.total_flops == y.flops == 5_226_496

    dot = to_dot(graph)
    drawn = nodes(dot)
    assert len(drawn) == 12 and len(edges(dot)) == 11
    for n in graph.nodes:  # convolutions count MACs, everything else FLOPs
        if not n.is_leaf:
            unit = "MACs" if n.op == "Conv" else "FLOPs"
            assert f"\n{n.flops:,} {unit}" in drawn[n.id][0]
    assert "\n442,368 MACs" in drawn["n2"][0]  # the first conv: 32*32*16 outputs x 27 MACs
    assert drawn["n5"][0].startswith("Add n5")
    assert "\n16,384 FLOPs" in drawn["n5"][0]  # its bias add: one per output element
    cost = graph.cost()
    assert (cost.macs, cost.flops) == (442_368 + 4_718_592, 16_384 * 2 + 32_768)
    assert cost.seed_count == y.flops
    assert "forward: 5,160,960 MACs + 65,536 FLOPs" in title(dot)
    assert "MACs: multiply-adds" in dot and "unit:" not in title(dot)  # once, in the legend

    doubled = to_dot(graph, flops_unit="2*MACs")
    assert f"forward: {cost.in_flops:,} FLOPs" in title(doubled)
    assert "\n884,736 FLOPs" in nodes(doubled)["n2"][0]
    assert "\n16,384 FLOPs" in nodes(doubled)["n5"][0]  # an add is one FLOP either way
    assert to_dot(graph, flops_unit="FLOPs") == doubled

    both = to_dot(graph, backward=True)
    assert f"backward: {graph.cost(True).text()}" in title(both)
    assert f"bwd {graph.node('n8').cost(True).text()}" in nodes(both)["n8"][0]


def test_flops_of_a_plain_tensor_graph_match_tensor_flops():
    lucid.random.seed(1)
    a = lucid.random.rand((3, 4), requires_grad=True)
    b = lucid.random.rand((4, 5), requires_grad=True)
    with lucid.count_flops():
        y = ((a @ b).relu() * 2.0).sum()
    dot = draw(y).dot()
    assert "forward: 60 MACs + 45 FLOPs" in title(dot)  # the matmul; ReLU, * 2 and the sum
    assert "\n60 MACs" in nodes(dot)[trace(y).nodes[2].id][0]  # MatMul: 3*5*4


def test_uncounted_flops_are_said_not_zero():
    a = lucid.random.rand((3,), requires_grad=True)
    dot = to_dot(trace((a * 3.0).sum()))
    assert "not counted: record the graph inside" in title(dot)
    assert "FLOPs" not in nodes(dot)["n2"][0]  # said once, in the title, not on every node


# -- devices -------------------------------------------------------------------------------

def mixed_graph():
    pytest.importorskip("mlx.core", reason="MLX is not installed")
    lucid.random.seed(2)
    a = lucid.random.rand((2, 3), requires_grad=True)
    with lucid.count_flops():
        b = (a * 2.0).to("gpu")
        y = (b @ lucid.ones(3, 4, device="gpu")).sum()
    return trace(y)


def test_device_colours_and_the_cross_device_edge_in_dot():
    graph = mixed_graph()
    dot = to_dot(graph)
    drawn = nodes(dot)
    for n in graph.nodes:
        group = "op" if not n.is_leaf else ("data" if n.role in ("input", "constant")
                                            else "parameter")
        assert f'fillcolor="{PALETTES[n.device][group]}"' in drawn[n.id][1]
    crossing = [(k, v) for k, v in edges(dot).items() if "→" in v]
    assert len(crossing) == 1
    (src, dst), attrs = crossing[0]
    assert graph.node(src).device == "cpu" and graph.node(dst).device == "gpu"
    assert 'label=" → gpu"' in attrs and "dashed" in attrs
    assert ">cpu ops<" in dot and ">gpu ops<" in dot  # two devices: the legend names them
    assert "copied to another device" in dot


@needs_dot
def test_both_device_colours_present_in_the_svg():
    svg = draw(mixed_graph()).svg()
    for device in ("cpu", "gpu"):
        assert f'fill="{PALETTES[device]["op"]}"' in svg
    model, x = mlp()
    cpu_only = draw(model, x).svg()
    assert f'fill="{PALETTES["cpu"]["op"]}"' in cpu_only
    assert f'fill="{PALETTES["gpu"]["op"]}"' not in cpu_only


# -- modules: depth, collapse, roll-up, guard on ResNet-18 ---------------------------------

def test_resnet_depth_1_boxes_with_summed_flops(resnet):
    graph, info = resnet
    dot = to_dot(graph, depth=1, modules=info)
    drawn = nodes(dot)
    boxes = sorted(k for k in drawn if k.startswith("m:"))
    assert boxes == sorted(f"m:{p}" for p in ("conv1", "bn1", "relu", "maxpool", "layer1",
                                              "layer2", "layer3", "layer4", "avgpool", "fc"))
    assert len(drawn) == 12  # + the input and the top-level reshape
    assert clusters(dot) == []
    macs = [int(re.search(r"\n([\d,]+) MACs", label)[1].replace(",", ""))
            for label, _ in drawn.values() if "MACs" in label]
    flops = [int(re.search(r"([\d,]+) FLOPs", label)[1].replace(",", ""))
             for label, _ in drawn.values() if "FLOPs" in label]
    assert (sum(macs), sum(flops)) == (graph.cost().macs, graph.cost().flops)
    assert f"forward: {graph.cost().text()}" in title(dot)
    assert drawn["m:layer1"][0].startswith("layer1 (Sequential)\n(1,64,8,8)")
    assert "147,968 params" in drawn["m:layer1"][0]
    assert 'peripheries="2"' in drawn["m:fc"][1]  # holds the output
    chain = ["n0", "m:conv1", "m:bn1", "m:relu", "m:maxpool", "m:layer1", "m:layer2",
             "m:layer3", "m:layer4", "m:avgpool"]
    assert set(zip(chain, chain[1:])) <= set(edges(dot))


def test_resnet_depth_2_rolls_up_identical_blocks(resnet):
    graph, info = resnet
    dot = to_dot(graph, depth=2, modules=info)
    drawn = nodes(dot)
    rolled = [k for k, (label, _) in drawn.items() if "×" in label]
    assert rolled == ["m:layer1.0"]
    label = drawn["m:layer1.0"][0]
    assert label.startswith("BasicBlock × 2\nlayer1.0 ... layer1.1")
    assert 'shape="box3d"' in drawn["m:layer1.0"][1]
    assert "m:layer1.1" not in drawn
    # layer2.0 has a downsample shortcut, layer2.1 does not: not identical, not rolled
    assert {"m:layer2.0", "m:layer2.1"} <= set(drawn)
    assert clusters(dot) == ["layer1", "layer2", "layer3", "layer4"]
    assert ("m:layer1.0", "m:layer2.0") in edges(dot)

    unrolled = to_dot(graph, depth=2, modules=info, rollup=False)
    assert "×" not in unrolled
    assert ("m:layer1.0", "m:layer1.1") in edges(unrolled)


def test_resnet_depth_3_residual_add_and_shared_relu(resnet):
    graph, info = resnet
    dot = to_dot(graph, depth=3, modules=info)
    drawn = nodes(dot)
    # BasicBlock calls its one ReLU twice: two boxes, one per call
    assert drawn["m:layer1.0.relu#1"][0].startswith("layer1.0.relu (ReLU) (call 1)")
    assert "m:layer1.0.relu#2" in drawn
    # the residual add, written in BasicBlock.forward, is drawn inside the block's cluster
    block = dot[dot.index('subgraph "cluster_layer1.0"'):dot.index('subgraph "cluster_layer1.1"')]
    adds = [nid for nid, (label, _) in nodes(block).items() if label.startswith("Add n")]
    # (the recorder stamps it with the innermost module call running: the block itself)
    assert len(adds) == 1 and graph.node(adds[0]).module == "layer1.0"


def test_module_paths_read_from_the_graph_alone_match_the_module_info(resnet):
    graph, info = resnet
    names_only = ModuleInfo(scopes={}, types=info.types)
    for depth in (1, 2, 3, None):
        assert (to_dot(graph, depth=depth, modules=names_only, max_nodes=None)
                == to_dot(graph, depth=depth, modules=info, max_nodes=None))


def test_op_level_resnet_and_the_node_guard(resnet):
    graph, info = resnet
    full = to_dot(graph, modules=info, max_nodes=None)
    assert len(nodes(full)) == len(graph.nodes) == 412
    assert "collapsed" not in title(full)
    assert "layer1.0.conv1.weight\n(64,64,3,3)" in full.replace("\\n", "\n")

    guarded = to_dot(graph, modules=info)  # default max_nodes=150
    drawn = nodes(guarded)
    assert len(drawn) <= 150
    assert re.search(r"collapsed to depth=\d+: the requested view has 412 nodes, more than "
                     r"max_nodes=150", title(guarded).replace("\n", " "))
    assert f"drawn as {len(drawn)}" in title(guarded)

    tight = to_dot(graph, depth=2, modules=info, max_nodes=12)
    assert len(nodes(tight)) <= 12 and "collapsed to depth=1" in title(tight)

    tiny = to_dot(graph, modules=info, max_nodes=5)
    drawn = nodes(tiny)
    assert len(drawn) <= 5 and "rest" in drawn
    assert "nodes nearest the output" in title(tiny).replace("\n", " ")
    assert "m:fc" in drawn  # the output's box is kept


def test_guard_truncates_a_graph_without_modules():
    x = lucid.random.rand((2,), requires_grad=True)
    y = x
    with lucid.count_flops():
        for _ in range(40):
            y = y * 1.01
        y = y.sum()
    dot = to_dot(trace(y), max_nodes=10)
    drawn = nodes(dot)
    out = trace(y).output
    assert len(drawn) == 10 and "rest" in drawn and f"Sum {out} (output)" in drawn[out][0]
    assert drawn["rest"][0].startswith("... ")


# -- highlights (the stepper's API), notes, options ------------------------------------------

def test_highlight_nodes_and_edges():
    model, x = seed_conv()
    graph = trace(model, x)
    dot = to_dot(graph, highlight_nodes=["n6"], highlight_edges=[("n5", "n6")])
    attrs = nodes(dot)["n6"][1]
    assert f'color="{HIGHLIGHT}"' in attrs and 'penwidth="3"' in attrs
    assert "penwidth" not in nodes(dot)["n5"][1]
    assert f'color="{HIGHLIGHT}", penwidth="2.5"' in edges(dot)[("n5", "n6")]
    assert "penwidth" not in edges(dot)[("n6", "n8")]

    edge = next(e for e in graph.edges if e.dst == "n8" and e.index == 0)
    custom = to_dot(graph, highlight_nodes={"n8": "#00aa00"}, highlight_edges={edge: "#0000ff"})
    assert 'color="#00aa00"' in nodes(custom)["n8"][1]
    assert 'color="#0000ff"' in edges(custom)[("n6", "n8")]

    one = to_dot(graph, highlight_nodes="n6", highlight_edges=("n5", "n6"))
    assert one == dot  # a single id / a single edge, not its characters

    noted = to_dot(graph, notes={"n6": "grad norm 0.5"})
    assert nodes(noted)["n6"][0].endswith("\ngrad norm 0.5")


def test_highlight_inside_a_collapsed_box_marks_the_box(resnet):
    graph, info = resnet
    conv = next(n.id for n in graph.nodes if n.module == "layer2.0.conv1")
    dot = to_dot(graph, depth=1, modules=info, highlight_nodes=[conv])
    assert "penwidth" in nodes(dot)["m:layer2"][1]
    assert sum("penwidth" in attrs for _, attrs in nodes(dot).values()) == 1


def test_bad_options_fail_at_draw_time():
    model, x = mlp()
    with pytest.raises(TypeError, match="unknown option"):
        draw(model, x, dpeth=1)
    with pytest.raises(ValueError, match="depth"):
        draw(model, x, depth=0)
    with pytest.raises(ValueError, match="flops_unit"):
        draw(model, x, flops_unit="GFLOPs")
    with pytest.raises(TypeError, match="no inputs"):
        draw(model(x), x)


def test_draw_accepts_tensor_graph_and_model_and_restores_training_mode():
    model, x = mlp()
    assert model.training
    d = draw(model, x, depth=1)
    assert model.training  # traced in eval mode, then put back
    graph = trace(model, x)
    assert draw(graph).dot() == to_dot(graph)
    assert "Sequential" in title(d.dot())
    assert repr(d) == "<lucid_viz.Drawing: 8 nodes, 3 ops, 240 MACs + 90 FLOPs>"


def test_draw_a_plain_function():
    x = lucid.random.rand((2, 3))
    dot = draw(lambda t: (t * 2.0).sum(), x).dot()
    assert [label.split("\n")[0] for label, _ in nodes(dot).values()] == [
        "input n0", "constant n1", "Mul n2", "Sum n3 (output)"]
    assert nodes(dot)["n1"][0].endswith("\nvalue 2")  # a constant shows its value


def test_dot_is_deterministic_and_has_no_addresses():
    runs = []
    for _ in range(2):
        model, x = seed_conv()
        runs.append(draw(model, x).dot())
        lucid.random.seed(0)
        runs.append(draw(resnet_18(num_classes=10), lucid.zeros(1, 3, 32, 32), depth=2).dot())
    assert runs[0] == runs[2] and runs[1] == runs[3]
    assert not re.search(r"0x[0-9a-f]{6,}", runs[0] + runs[1])


# -- display never raises; save ---------------------------------------------------------------

def test_mimebundle_without_any_binary_shows_dot_and_a_hint(monkeypatch):
    monkeypatch.setattr(graphviz_bin, "find_dot", lambda: None)
    model, x = mlp()
    d = draw(model, x)
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/plain"}
    text = bundle["text/plain"]
    assert text.splitlines()[0].startswith("lucid_viz: no Graphviz found")
    assert "pip install graphviz-pure" in text.splitlines()[0]
    assert d.dot() in text
    with pytest.raises(graphviz_bin.GraphvizNotFound):
        d.svg()  # the explicit call does raise


def test_mimebundle_with_a_broken_or_misnamed_binary(monkeypatch, tmp_path):
    model, x = mlp()
    monkeypatch.setenv(graphviz_bin.ENV_VAR, str(tmp_path / "nope"))
    text = draw(model, x)._repr_mimebundle_()["text/plain"]
    assert "LUCID_DOT" in text.splitlines()[0] and "digraph lucid" in text

    def boom(*args, **kwargs):
        raise RuntimeError("segfault")

    monkeypatch.delenv(graphviz_bin.ENV_VAR)
    monkeypatch.setattr(graphviz_bin, "render", boom)
    text = draw(model, x)._repr_mimebundle_(include={"image/svg+xml", "text/plain"})["text/plain"]
    assert "Graphviz failed (RuntimeError: segfault)" in text


@needs_dot
def test_mimebundle_with_graphviz_has_svg():
    model, x = mlp()
    bundle = draw(model, x)._repr_mimebundle_()
    assert bundle["image/svg+xml"].lstrip().startswith("<?xml")
    assert bundle["text/plain"].startswith("<lucid_viz.Drawing")
    assert set(draw(model, x)._repr_mimebundle_(exclude={"image/svg+xml"})) == {"text/plain"}


def test_save_dot_and_unknown_suffix(tmp_path):
    model, x = seed_conv()
    d = draw(model, x)
    assert d.save(tmp_path / "g.dot").read_text() == d.dot()
    with pytest.raises(ValueError, match="suffix"):
        d.save(tmp_path / "g.jpeg")


@needs_dot
def test_save_svg_and_png(tmp_path):
    model, x = seed_conv()
    d = draw(model, x)
    svg = d.save(tmp_path / "g.svg").read_text()
    assert "<svg" in svg and "442,368 MACs" in svg
    assert d.save(tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")


@needs_dot
def test_resnet_draw_targets():
    """Issue 5's targets: depth=1 under 2 s; the whole op-level graph (guarded) under 10 s."""
    lucid.random.seed(0)
    model = resnet_18(num_classes=10)
    x = lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32)
    start = time.perf_counter()
    svg = draw(model, x, depth=1).svg()
    assert time.perf_counter() - start < 2.0 and "<svg" in svg
    start = time.perf_counter()
    svg = draw(model, x).svg()
    assert time.perf_counter() - start < 10.0 and "collapsed to depth=" in svg


def test_an_op_level_resnet_block_flows_one_way():
    """Each edge of the drawn block points down the page: a layer called twice (the block's
    one ReLU) is one cluster per call, so no edge has to run back up to it."""
    if graphviz_bin.find_dot() is None:
        pytest.skip("no Graphviz dot")
    lucid.random.seed(0)
    block = resnet_18(num_classes=10).layer1[0]
    # (every op, as asked: not collapsed to fit the page)
    drawing = draw(block, lucid.zeros(1, 64, 8, 8, dtype=lucid.Float32), fit=False)
    assert 'subgraph "cluster_relu#1"' in drawing.dot()
    assert "relu (ReLU) (call 2)" in drawing.dot()
    svg = drawing.svg()
    y = {}
    node = r'<g id="node\d+" class="node">\s*<title>([^<]+)</title>(.*?)</g>'
    for title, body in re.findall(node, svg, re.S):
        first = re.search(r'<text[^>]* y="([-\d.]+)"', body)
        y[html.unescape(title)] = float(first[1])
    edges = [html.unescape(t).split("->") for t in
             re.findall(r'<g id="edge\d+" class="edge">\s*<title>([^<]+)</title>', svg)]
    drawn = [(a, b) for a, b in edges if a in y and b in y and not a.startswith("legend")]
    assert len(drawn) >= 30
    assert all(y[a] < y[b] for a, b in drawn), [(a, b) for a, b in drawn if y[a] >= y[b]]
